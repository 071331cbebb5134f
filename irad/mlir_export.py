"""irad.export: the differentiated, optimised module of a Python function as a
standalone `.mlir` file that upstream MLIR 22 lowers and runs.

The file holds only standard dialects (func, arith, math, scf, memref) and
builtin metadata, so `mlir-opt` parses it without irad. Public functions carry
`llvm.emit_c_interface`, so C (or ctypes) can call the `_mlir_ciface_<name>`
wrapper after lowering. With `main=True` a `@main()` is added that calls the
entry on the example arguments and prints each result with C's
`printf("%.17g\n")`, one per line, all 17 significant digits (the runner
utilities' `printF64` prints 6): `mlir-runner -e main --entry-point-result=void`
runs it (docs/ir-conventions.md has the commands).

Global arrays `f` reads stay arguments, as in irad's own IR: the public
functions take them after f's arguments (named after them; the file's header
lists them), so the caller passes their current values. `@main` passes the
values they have at export, as constants.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Sequence

from xdsl.dialects import arith, func, llvm
from xdsl.dialects.builtin import (
    Float32Type,
    Float64Type,
    FloatAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    TensorType,
    f64,
    i8,
    i32,
)
from xdsl.ir import Block, Region

from irad.arguments import arguments, normalise_argnums
from irad.frontend.source import error_at
from irad.passes.pipelines import Options
from irad.pipeline import gradient_module, vjp_module
from irad.backends.native.compile import for_mlir_opt
from irad.base.errors import IradError
from irad.base.pytrees import leaf_types
from irad.ir.tensor import dense_attr

KINDS = ("grad", "value_and_grad", "vjp", "iree")


def export(
    f: Callable,
    *args,
    path: str | os.PathLike | None = None,
    kind: str = "grad",
    argnums: int | Sequence[int] = 0,
    main: bool = False,
    target: str = "llvm-cpu",
) -> str | bytes:
    """The MLIR text of `f` differentiated for the example `args`; also written
    to `path` when given.

    kind="grad" or "value_and_grad": the public entry is `@<f>.<kind>`, taking
    f's arguments and returning (the value and) the gradients in `argnums`
    order. kind="vjp": the public augmented primal and pullback, as `irad.vjp`
    runs them. `main=True` (grad kinds) adds `@main()` printing the results at
    `args`, for `mlir-runner`.

    kind="iree": the gradient (`@<f>.grad`, as for kind="grad") compiled by
    IREE for `target`, as the bytes of an IREE module (`.vmfb`) that IREE's
    `iree-run-module --function=<f>.grad` runs.
    """
    if kind not in KINDS:
        raise error_at(f, f"export kind {kind!r} is not one of {', '.join(KINDS)}")
    leaves, signature = arguments(f, args)
    if kind == "vjp":
        if main:
            raise error_at(f, "main=True prints a gradient; use kind='grad' or 'value_and_grad' with it")
        module, _, _, _, hidden, _ = vjp_module(f, signature, False, Options())
    elif kind == "iree":
        return _export_vmfb(f, signature, argnums, path, target)
    else:
        nums = normalise_argnums(f, argnums, signature)
        module, entry, hidden, _ = gradient_module(
            f, signature, nums, kind == "value_and_grad", single=isinstance(argnums, int)
        )
    module, passes = for_mlir_opt(module)
    if main:
        types = leaf_types(signature)
        if not all(isinstance(t, (Float64Type, Float32Type, IntegerType, IndexType)) for t in types):
            raise error_at(f, "export(main=True) bakes scalar arguments into @main; arrays are not supported there\n"
                            "  hint: export with main=False and call the C interface with memref descriptors")
        module.body.block.add_ops(_printing_main(module, entry, (*leaves, *hidden.read())))
    text = f"// irad.export of {getattr(f, '__qualname__', f)} ({kind}); lower with:\n"
    text += f"//   {shlex.join(['mlir-opt', *passes])}\n"
    if hidden.globals:
        names = ", ".join(g.label for g in hidden.globals)
        text += f"// the public functions take these global arrays after f's arguments: {names}\n"
    text += f"{str(module)}\n"
    if path is not None:
        with open(path, "w") as out:
            out.write(text)
    return text


def _export_vmfb(f, signature, argnums, path, target: str) -> bytes:
    from irad.backends import IREE
    from irad.backends.iree import compile as iree

    backend = IREE(target=target)  # checks the target
    nums = normalise_argnums(f, argnums, signature)
    module, _, hidden, _ = gradient_module(
        f, signature, nums, False, single=isinstance(argnums, int), tape=backend.tape_form
    )
    if hidden.globals:
        raise error_at(f, "export(kind='iree') of a function that reads global arrays is not supported\n"
                          "  hint: pass the arrays as arguments")
    data = iree.compile_to_vmfb(module, backend.target)
    if path is not None:
        with open(path, "wb") as out:
            out.write(data)
    return data


def _constant(value, t) -> arith.ConstantOp:
    if isinstance(t, TensorType):  # a global array, as it is at export
        return arith.ConstantOp(dense_attr(value, t))
    if isinstance(t, (Float64Type, Float32Type)):
        return arith.ConstantOp(FloatAttr(float(value), t))
    if isinstance(t, (IntegerType, IndexType)):
        return arith.ConstantOp(IntegerAttr(int(value), t))
    raise TypeError(f"no constant of type {t}")  # arguments admits only the types above


FORMAT = "irad.format"
_FORMAT_TEXT = "%.17g\n\0"  # enough digits to read the same double back


def _printing_main(module: ModuleOp, entry: str, args: tuple) -> list:
    """`@main()`: call `@entry` on `args` and print every (float) result with
    `printf("%.17g\n")` (an llvm.call: func.call has no variadic calls)."""
    symbols = {op.sym_name.data for op in module.ops if hasattr(op, "sym_name")}
    taken = sorted({"main", "printf", FORMAT} & symbols)
    if taken:
        raise IradError(
            f"export(main=True) adds @main, @printf and @{FORMAT}, but the module already "
            f"has @{', @'.join(taken)}\n  hint: rename that Python function, or export with main=False"
        )
    callee = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == entry)
    inputs, outputs = callee.function_type.inputs.data, callee.function_type.outputs.data
    block = Block()
    constants = [_constant(a, t) for a, t in zip(args, inputs)]
    block.add_ops(constants)
    call = func.CallOp(entry, [c.result for c in constants], list(outputs))
    block.add_op(call)
    pointer = llvm.LLVMPointerType()
    for result, t in zip(call.results, outputs):
        if not isinstance(t, Float64Type):
            extended = arith.ExtFOp(result, f64)  # C passes a float as a double
            block.add_op(extended)
            result = extended.result
        text = llvm.AddressOfOp(FORMAT, pointer)
        block.add_ops([text, llvm.CallOp("printf", text.result, result, variadic_args=1, return_type=i32)])
    block.add_op(func.ReturnOp())
    main = func.FuncOp("main", FunctionType.from_lists([], []), Region(block))
    text_type = llvm.LLVMArrayType(len(_FORMAT_TEXT.encode()), i8)
    format_text = llvm.GlobalOp(text_type, FORMAT, "internal", constant=True, value=StringAttr(_FORMAT_TEXT))
    printf = llvm.FuncOp(
        "printf", llvm.LLVMFunctionType([pointer], i32, is_variadic=True), linkage=llvm.LinkageAttr("external")
    )
    return [format_text, printf, main]
