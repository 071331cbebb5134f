"""IREE backend: compile a module with IREE and run it with IREE's runtime.

    xDSL module (func/arith/math/scf/tensor/linalg, the tape as a tensor)
        --(text)--> iree.compiler (target: llvm-cpu, cuda, rocm, vulkan-spirv)
        --> .vmfb --> iree.runtime (a device of that target) --> numpy

irad's array modules are linalg on tensors, IREE's input format. The one
memref in irad's output is the tape of loops and recursion: for this backend
irad-lower-tape gives it tensor form (`IREE.tape_form`), so a module
IREE gets holds no memref (reverse over reverse through a tape, whose shadow
tapes are memref code, is refused before, by irad-lower-tape); recursion,
and any memref op as a safety net, are refused with an error naming them. iree_forms.for_iree rewrites what IREE 3.13
miscompiles or refuses before it compiles.

f64 stays f64 (`--iree-input-demote-f64-to-f32=false`): irad checks its
gradients in float64. Many GPUs are slow at f64, so float32 programs are the
recommended path there (docs/backends/iree.md). Only `llvm-cpu` was verified.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Attribute

from irad.backends.iree.forms import for_iree
from irad.backends.iree.registers import hazards
from irad.backends.iree.targets import TARGETS, options
from irad.backends.protocol import CompiledModule
from irad.base import config
from irad.base.errors import BackendError, OutOfMemoryError, check_failure
from irad.ir.callgraph import call_cycles

INSTALL_HINT = "pip install -e '.[iree]' (the packages iree-base-compiler and iree-base-runtime)"

# Flags for every target: keep f64 (IREE demotes it to f32 by default);
# each target's own are in targets.py.
COMMON_FLAGS = ("--iree-input-demote-f64-to-f32=false",)


def unavailable_reason() -> str | None:
    """Why backend="iree" cannot run here, or None if it can."""
    try:
        import iree.compiler  # noqa: F401
        import iree.runtime  # noqa: F401
    except ImportError as exc:
        return f"backend='iree' needs IREE's Python packages ({exc}): {INSTALL_HINT}"
    return None


def require_iree() -> None:
    reason = unavailable_reason()
    if reason is not None:
        raise BackendError(f"{reason}\n  hint: install them, or use backend='native' or 'python'")


def flags(target: str) -> list[str]:
    """The compiler flags for `target` (and irad.config's `iree_flags`)."""
    return [*COMMON_FLAGS, *TARGETS[target][0], *config.read("iree_flags").split()]


# ---- compiling ----------------------------------------------------------------------
def check_supported(module: ModuleOp) -> None:
    """Refuse, naming the construct, what IREE cannot compile: recursion,
    memref code, and calls to
    functions irad binds outside the module (np.linalg's LAPACK kernels, a
    rule's Python implementation), which IREE would look for as a module of
    its own at load time."""
    for op in module.ops:
        if isinstance(op, func.FuncOp) and not op.body.blocks:
            implemented = op.attributes.get("irad.python")
            what = implemented.data.replace(":", ".") if implemented is not None else f"@{op.sym_name.data}"
            raise BackendError(
                f"backend='iree' cannot compile a call to {what}: irad runs it outside the compiled "
                "module (np.linalg runs on LAPACK, a rule's function in Python), and an IREE module "
                "holds only its own code\n  hint: use backend='native' or 'python' for this program"
            )
    for cycle in call_cycles(module):
        raise BackendError(
            f"backend='iree' cannot compile recursion: @{', @'.join(cycle)} call themselves, "
            "and IREE 3.13's compiler never returns on a call cycle (its global folding walks "
            "the call graph again and again, docs/backends/iree.md)\n"
            "  hint: use backend='native' or 'python' for it, or write the recursion as a loop"
        )
    for op in module.walk():
        if op.name.startswith(("memref.", "bufferization.")):
            where = op.parent_op()
            while where is not None and not isinstance(where, func.FuncOp):
                where = where.parent_op()
            name = f"@{where.sym_name.data}" if where is not None else "the module"
            raise BackendError(
                f"backend='iree' cannot compile {name}: it holds {op.name}, memref code, and IREE "
                "takes tensors only\n  hint: use backend='native' or 'python' for it"
            )


def compile_to_vmfb(module: ModuleOp, target: str) -> bytes:
    """The IREE bytecode module (.vmfb) of `module` for `target`: compiled to
    IREE's VM dialect, its register allocation checked (iree_registers), then
    serialised."""
    require_iree()
    import iree.compiler as compiler

    check_supported(module)
    try:
        vm = compiler.compile_str(str(for_iree(module)), target_backends=[target],
                                  extra_args=[*flags(target), "--compile-to=vm"])
        allocation = compiler.compile_str(vm, target_backends=[target], extra_args=[
            *flags(target), "--compile-from=vm", "--iree-vm-bytecode-module-output-format=annotated-mlir-text",
            "--mlir-print-debuginfo=false"])
        found = hazards(allocation.decode())
        if found:
            raise BackendError(
                "IREE 3.13 would compute a wrong value for this program: its VM register allocator gives a "
                f"block argument a register still to be read ({'; '.join(found[:3])}; docs/backends/iree.md)\n"
                "  hint: use backend='native' or 'python' for this program"
            )
        return compiler.compile_str(vm, target_backends=[target], extra_args=[*flags(target), "--compile-from=vm"])
    except compiler.CompilerToolError as exc:
        raise BackendError(f"IREE could not compile the module for {target}: {_diagnosis(str(exc))}\n{exc}") from None


def _diagnosis(text: str) -> str:
    """What IREE's diagnostics say irad cannot do on this backend, in a line."""
    illegal = re.search(r"failed to legalize operation '([\w.]+)'.*?: \(([^)]*)\)", text)
    if illegal:
        return (
            f"its host code (IREE's VM, which runs scalar code outside array kernels) has no "
            f"{illegal.group(1)} on ({illegal.group(2)})\n  hint: use backend='native' or 'python' for "
            "this program, or compute the value inside an array operation"
        )
    if "dynamic dimensions must have been resolved" in text:
        return (
            "IREE cannot size the tape (a tensor<?xf64> grown in a loop nest whose trip counts it "
            "cannot follow)\n  hint: use backend='native' or 'python' for this program"
        )
    return "see its diagnostics"


# ---- running --------------------------------------------------------------------------
@functools.cache
def _config(device: str):
    """One runtime configuration (driver instance, device) per device, shared."""
    import iree.runtime as runtime

    try:
        return runtime.Config(device)
    except (RuntimeError, ValueError) as exc:
        raise BackendError(
            f"the IREE runtime has no device {device!r} here: {exc}\n"
            "  hint: irad.IREE(device='local-sync') (or 'local-task') runs the llvm-cpu target"
        ) from None


def _argument(t: Attribute) -> Callable | None:
    """A converter from the Python value to what IREE takes (None: as it is)."""
    if isinstance(t, Float64Type | Float32Type):
        return float  # IREE takes Python numbers, not numpy scalars
    if isinstance(t, IntegerType | IndexType):
        return int  # an i1 too: IREE's ABI has no bool
    if not t.has_static_shape():
        return None  # the tape: a device array from an earlier call
    dtype = _DTYPES.get(str(t.element_type))
    shape = tuple(t.get_shape())

    def to_iree(value):
        array = np.ascontiguousarray(value, dtype=dtype)
        if array.shape != shape:
            raise BackendError(f"an IREE function expected an array of shape {shape} ({t}), got {array.shape}")
        return array

    return to_iree


_DTYPES = {"f64": np.float64, "f32": np.float32, "i64": np.int64, "i32": np.int32, "i1": np.bool_}


def _result(t: Attribute) -> Callable | None:
    """A converter from IREE's result to the Python value (None: as it is):
    static arrays become numpy arrays; the tape stays a device array, to be
    passed back to a later call as it is."""
    if not isinstance(t, TensorType) or not t.has_static_shape():
        return None
    return lambda value: value.to_host()


class IreeModule(CompiledModule):
    """A module compiled by IREE and loaded into the runtime; `function(name)`
    is a public function callable from Python, returning a tuple."""

    def __init__(self, module: ModuleOp, target: str, device: str):
        self.functions = {
            op.sym_name.data: op
            for op in module.ops
            if isinstance(op, func.FuncOp) and op.sym_visibility is None and op.body.blocks
        }
        self.vmfb = compile_to_vmfb(module, target)
        # a failed cf.assert comes back as a RuntimeError holding its message
        self.checks = sorted({op.msg.data for op in module.walk() if op.name == "cf.assert"}, key=len, reverse=True)
        import iree.runtime as runtime

        self.context = runtime.SystemContext(config=_config(device))
        self.context.add_vm_module(runtime.VmModule.copy_buffer(self.context.instance, self.vmfb))

    def function(self, name: str) -> Callable[..., tuple]:
        if name not in self.functions:
            raise BackendError(f"the IREE module has no public function @{name}")
        function_type = self.functions[name].function_type
        entry = self.context.modules.module[name]
        return _callable(entry, function_type.inputs.data, function_type.outputs.data, self.checks)


def _callable(
    entry, inputs: Sequence[Attribute], outputs: Sequence[Attribute], checks: Sequence[str]
) -> Callable[..., tuple]:
    arguments = [(i, c) for i, c in enumerate(map(_argument, inputs)) if c]
    results = [_result(t) for t in outputs]
    single = len(outputs) == 1

    def call(*args):
        if arguments:
            args = list(args)
            for i, to_iree in arguments:
                args[i] = to_iree(args[i])
        try:
            out = entry(*args)
        except RuntimeError as exc:
            raise _check_failed(exc, checks) from None
        out = (out,) if single else () if out is None else tuple(out)
        return _owned(tuple(convert(v) if convert else v for v, convert in zip(out, results)), args)

    return call


def _check_failed(exc: RuntimeError, checks: Sequence[str]) -> Exception:
    """RuntimeCheckError for a failed check (as on the other backends),
    OutOfMemoryError (a MemoryError) for an allocation IREE could not make,
    else a BackendError."""
    text = str(exc)
    for message in checks:
        if message in text:
            return check_failure(message)
    if "RESOURCE_EXHAUSTED" in text:
        return OutOfMemoryError(f"IREE could not allocate a buffer: the process is out of memory: {text}")
    return BackendError(f"the IREE runtime failed: {text}")


def _owned(values: tuple, args: Sequence) -> tuple:
    """The results, each array sharing memory with no argument and no other
    result (IREE returns one buffer twice for `func.return %0, %0`)."""
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    owned = []
    for v in values:
        if isinstance(v, np.ndarray):
            if any(np.shares_memory(v, a) for a in arrays):
                v = v.copy()
            arrays.append(v)
        owned.append(v)
    return tuple(owned)


def compile_module(module: ModuleOp, target: str = "llvm-cpu", device: str | None = None) -> IreeModule:
    target, device = options(target, device)
    return IreeModule(module, target, device)
