"""irad's pipelines, defined once, as xDSL `PassPipeline`s built from pass names.

    gradient:  irad-differentiate{checkpoint=... inline=... hoist=true},irad-lower-tape,irad-optimize{max-depth=...},irad-symbol-dce
    reversed:  irad-lower-tape,irad-optimize{max-depth=...},irad-symbol-dce
    jvp:       irad-lower-tape,irad-jvp,irad-optimize,irad-symbol-dce
    optimise:  irad-optimize{max-depth=...},irad-symbol-dce

The API, the Jacobians and `irad.export` run them; `irad-opt` and stock
`xdsl-opt` take the same names. `reversed` follows reverse mode run without the
pass (`Differentiator.reverse`, for vjp and jacrev). Whatever differentiates in
reverse mode lowers the tape ops to memref code (irad-lower-tape) before the
optimiser and the backends see them. A module built to be differentiated again
is not inlined (max-depth=0, inline=false): its calls, to rule targets above
all, must meet the rule table again; and its tape ops stay (no
irad-lower-tape): reverse mode follows them with shadow tapes, and the
pipeline that differentiates it lowers them. Forward mode follows the memref
code, so `jvp` lowers them first. Otherwise irad-differentiate inlines the
callees it differentiates before it reverses them (linear compile time in the
depth of a call tree; the optimiser would inline their generated functions
anyway).

Callbacks in `AFTER_PASS` see the module after every pass (the test suite
parses each one with upstream mlir-opt there); with IRAD_VERIFY=1, or
`VERIFY = True`, the module is verified at the end of each pipeline.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, StringAttr
from xdsl.ir import Attribute, Block, Region
from xdsl.passes import ModulePass, PassPipeline

from irad.compiled import error_at, name_of
from irad.frontend import lower_function
from irad.frontend.globals import HiddenGlobals
from irad.ir.dialect import GradOp, JvpOp, ValueAndGradOp, make_context
from irad.ir.metadata import ENTRY, mark_generated
from irad.ir.types import describe, is_differentiable, is_float
from irad.passes.differentiate import Differentiator
from irad.passes.inline import DEFAULT_MAX_DEPTH
from irad.rules import default_table
from irad.universe import IRAD_UNIVERSE

# Verify every module a pipeline leaves (IRAD_VERIFY=1; the tests set it). Off by
# default: a whole-module verify is a tenth of compile time on large call trees.
VERIFY = os.environ.get("IRAD_VERIFY") == "1"

# callback(pass_that_ran, module, last): called after every pass of every pipeline
AFTER_PASS: list[Callable[[ModulePass, ModuleOp, bool], None]] = []


@functools.cache
def context() -> Context:
    return make_context()


def optimise_spec(inline: bool = True) -> str:
    return f"irad-optimize{{max-depth={DEFAULT_MAX_DEPTH if inline else 0}}},irad-symbol-dce"


def _joined(*specs: str) -> str:
    return ",".join(s for s in specs if s)


def reversed_spec(inline: bool = True, tape: str = "memref") -> str:
    """`tape`: the form irad-lower-tape gives the tape, "memref" or "tensor"
    (the backend's `tape_form`). Without inlining (a gradient to be
    differentiated again) the tape ops stay: the outer pipeline lowers them."""
    lower_tape = "irad-lower-tape" if tape == "memref" else f"irad-lower-tape{{form={tape}}}"
    return _joined(lower_tape if inline else "", optimise_spec(inline))


def gradient_spec(checkpoint: bool = False, inline: bool = True, tape: str = "memref") -> str:
    options = f"checkpoint={str(checkpoint).lower()} inline={str(inline).lower()} hoist=true"
    return _joined(f"irad-differentiate{{{options}}}", reversed_spec(inline, tape))


def jvp_spec(inline: bool = True) -> str:
    return _joined("irad-lower-tape,irad-jvp", optimise_spec(inline))


def _after_pass(previous: ModulePass | None, module: ModuleOp, following: ModulePass | None) -> None:
    if previous is not None:
        for callback in AFTER_PASS:
            callback(previous, module, following is None)


@functools.cache
def pipeline(spec: str) -> PassPipeline:
    return PassPipeline.parse_spec(IRAD_UNIVERSE.all_passes, spec, _after_pass)


def run(module: ModuleOp, spec: str) -> None:
    """Run the pipeline `spec` (pass names, as `irad-opt -p` takes them) on `module`."""
    if spec:
        pipeline(spec).apply(context(), module)
    if VERIFY:
        module.verify()


def lowered(f, signature, table=None) -> tuple[ModuleOp, str, HiddenGlobals]:
    """The frontend's module of `f` for `signature`, verified when VERIFY is on
    (the tests), so invalid IR from the frontend fails where it is built; its
    entry's name and the global arrays it takes after `signature`."""
    module, name, hidden = lower_function(f, signature, default_table() if table is None else table)
    if VERIFY:
        module.verify()
    return module, name, hidden


def hidden_types(primal: func.FuncOp, signature) -> list[Attribute]:
    """The types of the hidden arguments (global arrays) `primal` takes after `signature`."""
    return list(primal.function_type.inputs.data[len(signature) :])


def function_named(module: ModuleOp, name: str) -> func.FuncOp:
    return next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == name)


# ---- from a Python function to an optimised module ------------------------------
# An entry function takes f's arguments, then what the request adds (tangents),
# then the hidden arguments: the global arrays f reads, which the API passes
# last, read at each call.
def entry_block(primal: func.FuncOp, signature, extra=()) -> Block:
    """The block of an entry function into `primal`: `signature`, `extra`, then
    primal's hidden arguments; named like primal's arguments."""
    hidden = hidden_types(primal, signature)
    block = Block(arg_types=[*signature, *extra, *hidden])
    params = primal.body.block.args
    for arg, primal_arg in zip(block.args, params[: len(signature)]):
        arg.name_hint = primal_arg.name_hint
    for arg, primal_arg in zip(block.args[len(block.args) - len(hidden) :], params[len(signature) :]):
        arg.name_hint = primal_arg.name_hint
    return block


def add_entry(module: ModuleOp, primal: func.FuncOp, name: str, block: Block, result_types) -> func.FuncOp:
    """Add the public function `name` with body `block`, marked as `primal`'s entry."""
    entry = func.FuncOp(name, FunctionType.from_lists(block.arg_types, result_types), Region(block))
    mark_generated(entry, primal, ENTRY)
    module.body.block.add_op(entry)
    return entry


def scalar_result_type(f, primal: func.FuncOp) -> Attribute:
    outputs = primal.function_type.outputs.data
    if len(outputs) != 1 or not is_float(outputs[0]):
        shown = ", ".join(describe(t) for t in outputs) or "nothing"
        hint = (
            "use irad.vjp for functions with several outputs"
            if len(outputs) > 1
            else "return a float (a gradient of an int, a bool or nothing is not defined)"
        )
        raise error_at(
            f,
            f"{name_of(f)} must return one float to take its gradient, but returns {shown}\n"
            f"  hint: {hint}",
        )
    return outputs[0]


def gradient_module(
    f: Callable,
    signature: tuple[Attribute, ...],
    wrt: tuple[int, ...],
    with_value: bool,
    checkpoint: bool = False,
    inline: bool = True,
    tape: str = "memref",
) -> tuple[ModuleOp, str, HiddenGlobals]:
    """The differentiated, optimised module, the name of its entry function and
    the global arrays it takes after f's arguments.

    The entry, `@<f>.grad` or `@<f>.value_and_grad`, holds the request op that
    irad-differentiate replaces. It returns the gradients in `wrt` order (the
    request op itself takes increasing indices). `tape` is the tape's form
    (reversed_spec).
    """
    module, name, hidden = lowered(f, signature)
    primal = function_named(module, name)
    primal.sym_visibility = StringAttr("private")  # the entry below is the public one
    out_type = scalar_result_type(f, primal)
    entry_name = f"{name}.{'value_and_grad' if with_value else 'grad'}"
    block = entry_block(primal, signature)
    ordered = sorted(wrt)
    values = [out_type] if with_value else []
    request_types = values + [signature[i] for i in ordered]
    request = (ValueAndGradOp if with_value else GradOp)(name, block.args, ordered, request_types)
    block.add_op(request)
    grads = {i: r for i, r in zip(ordered, request.results[len(values) :])}
    block.add_op(func.ReturnOp(*request.results[: len(values)], *(grads[i] for i in wrt)))
    add_entry(module, primal, entry_name, block, values + [signature[i] for i in wrt])
    run(module, gradient_spec(checkpoint, inline, tape))
    return module, entry_name, hidden


def vjp_module(
    f: Callable, signature: tuple[Attribute, ...], tape: str = "memref"
) -> tuple[ModuleOp, str, str, tuple[Attribute, ...], HiddenGlobals]:
    """The module with the public augmented primal and pullback of `f`, f's
    result types and the global arrays the augmented primal takes after f's
    arguments (never differentiated)."""
    module, name, hidden = lowered(f, signature)
    primal = function_named(module, name)
    out_types = tuple(primal.function_type.outputs.data)
    active = tuple(is_differentiable(t) for t in signature) + (False,) * len(hidden_types(primal, signature))
    generated = Differentiator(module, default_table(), inline=True, hoist=True).reverse(name, active)
    for op in module.ops:
        if isinstance(op, func.FuncOp):
            public = op.sym_name.data in (generated.augmented, generated.pullback)
            op.sym_visibility = None if public else StringAttr("private")
    run(module, reversed_spec(tape=tape))
    return module, generated.augmented, generated.pullback, out_types, hidden


def jvp_module(
    f: Callable, signature: tuple[Attribute, ...], wrt: tuple[int, ...]
) -> tuple[ModuleOp, str, tuple[Attribute, ...], HiddenGlobals]:
    """The module whose public `@<f>.jvp` takes f's arguments, then one tangent
    per `wrt` index (increasing), then the global arrays f reads, and returns
    f's results, then their tangents."""
    module, name, hidden = lowered(f, signature)
    primal = function_named(module, name)
    primal.sym_visibility = StringAttr("private")
    outputs = primal.function_type.outputs.data
    tangents = [signature[i] for i in wrt]
    block = entry_block(primal, signature, tangents)
    n, k = len(signature), len(tangents)
    result_types = [*outputs, *(t for t in outputs if is_differentiable(t))]
    request = JvpOp(name, [*block.args[:n], *block.args[n + k :], *block.args[n : n + k]], wrt, result_types)
    block.add_ops([request, func.ReturnOp(*request.results)])
    entry = add_entry(module, primal, f"{name}.jvp", block, result_types)
    run(module, jvp_spec())
    return module, entry.sym_name.data, tuple(outputs), hidden
