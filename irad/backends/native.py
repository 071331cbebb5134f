"""Native backend: lower a module through upstream MLIR 22 and run machine code.

    xDSL module --(text)--> mlir-opt ([BUFFERIZATION +] LOWERING)
               --> mlir-translate --mlir-to-llvmir --> llvmlite: -O2, MCJIT --> ctypes calls

Every public function gets `llvm.emit_c_interface`, so MLIR also emits a
`_mlir_ciface_<name>` wrapper with a fixed C calling convention, which is what
Python calls through ctypes:

* scalars are passed and returned by value (f64 -> double, f32 -> float,
  iN -> intN_t, i1 -> bool, index -> int64_t);
* a memref, or a tensor (a memref once bufferized; a numpy array in Python),
  is passed as a pointer to its descriptor
  `{allocated, aligned, offset, sizes[rank], strides[rank]}`;
* several results, or a memref result, come back through a pointer to a
  struct, passed as the first argument.

Python calls it through an entry (native_checks.py) that turns a failed
check (a cf.assert, or the stack check of a recursive function) into
RuntimeCheckError: the entry returns a status in place of a void result, NaN
in place of a float one (`_convention`).

Memory: without tensors, a gradient request frees its tape itself
(irad-differentiate puts an `irad.tape_free`, a `memref.dealloc` once lowered,
after its pullback); with tensors, MLIR's buffer-deallocation pipeline frees
everything (see for_mlir_opt). A public function never frees its arguments
(they are not owned, for the pipeline) and hands every buffer it returns to
its caller. At the call boundary (`_claim`), the buffers of one call become
Python values by one rule:

* each allocation (a descriptor's `allocated` pointer) gets exactly one owner,
  a `NativeBuffer`, which frees it with libc `free` (memref.alloc lowers to
  irad's allocator, malloc with a header: native_runtime.ll) when the last
  value viewing it goes; an allocation that is an
  argument's memory is not owned again, its values keep the argument alive;
* the arrays a call hands out share memory with nothing else: an array result
  whose allocation is an argument's or an earlier result's (`func.return %0,
  %0` for an output and its residual, two equal gradients) is copied. Only
  that case copies; a memref result (the tape, only ever passed back to native
  code) is shared, not copied.
"""

from __future__ import annotations

import ctypes
import functools
import glob
import operator
import os
import subprocess
import tempfile
import warnings
import weakref
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    BoolAttr,
    DictionaryAttr,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
    TensorType,
    UnitAttr,
    i1,
)
from xdsl.ir import Attribute

from irad.backends import native_checks, native_linalg
from irad.backends.llvm_jit import JitModule, signature
from irad.backends.mlir_tools import INSTALL_HINT, find_tool
from irad.errors import BackendError, IradWarning
from irad.ir import printing
from irad.ir.mlir_ops import expand_for_llvm

# mlir-opt passes from the dialects irad emits (func, arith, math, scf, memref)
# to the LLVM dialect. math-expand-ops turns math.clampf into min/max, which no
# conversion knows; math-to-funcs expands math.ipowi, which has no LLVM
# intrinsic; math-to-llvm takes the ops with intrinsics and math-to-libm the
# rest (erf, cbrt, ...), which become calls into libm. In that order: run
# first, math-to-libm marks every math op illegal and fails on those it has no
# libm function for (copysign, rsqrt).
LOWERING = (
    "--math-expand-ops=ops=clampf",
    "--convert-math-to-funcs",
    "--convert-scf-to-cf",
    "--convert-math-to-llvm",
    "--convert-math-to-libm",
    "--expand-strided-metadata",
    "--lower-affine",  # expand-strided-metadata computes offsets with affine.apply
    "--finalize-memref-to-llvm",
    "--convert-arith-to-llvm",
    "--convert-index-to-llvm",
    "--convert-cf-to-llvm",
    "--convert-func-to-llvm",
    "--reconcile-unrealized-casts",
)

# JIT-compiled here, buffers are allocated and freed by irad's runtime
# (native_runtime.ll), which frees those of a call that fails a check.
TRACKED = {"--finalize-memref-to-llvm": "--finalize-memref-to-llvm=use-generic-functions"}

# Before LOWERING, for modules with tensors: elementwise arith/math on tensors
# and named linalg ops (broadcast, reduce, matmul) become linalg.generic, and
# producers fuse into consumers (a broadcast is read in place instead of being
# materialised: 1.6x on the GMM gradient); one-shot bufferization turns tensors
# into memrefs (function boundaries included, identity layouts, so arguments
# are plain strided buffers numpy can hand over); the deallocation pipeline
# frees every temporary and makes every returned buffer a fresh one the caller
# owns; linalg becomes scf loops.
BUFFERIZATION = (
    "--convert-elementwise-to-linalg",
    "--linalg-generalize-named-ops",
    "--linalg-fuse-elementwise-ops",
    "--canonicalize",
    "--cse",
    "--one-shot-bufferize=bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map"
    " allow-return-allocs-from-loops",
    "--buffer-deallocation-pipeline=private-function-dynamic-ownership=true",
    "--convert-bufferization-to-memref",
    "--convert-linalg-to-loops",
)

# Set to 1 (`make memcheck` does), every memref access is checked at run time
# (bounds, casts, subviews: MLIR's runtime op verification, on the memrefs
# bufferization leaves); a failed check aborts the process with its location.
VERIFY_MEMREFS = "IRAD_NATIVE_VERIFY_MEMREFS"
RUNTIME_VERIFICATION = ("--generate-runtime-verification",)

# Set to 1, a module mlir-opt or mlir-translate rejects is kept in a temporary
# file (irad-native-*.mlir) named in the error; by default nothing is written.
KEEP_FAILED_MODULES = "IRAD_KEEP_FAILED_MODULES"
C_INTERFACE = "llvm.emit_c_interface"
WRITABLE = "bufferization.writable"
_TIMEOUT = 300


# ---- mlir-opt and mlir-translate ---------------------------------------------------
def require_tool(name: str) -> str:
    path = find_tool(name)
    if path is None:
        variable = "IRAD_" + name.upper().replace("-", "_")
        raise BackendError(
            f"backend='native' needs {name}, which was found neither in ${variable}, "
            f"nor on PATH, nor in /usr/lib/llvm-22/bin\n  hint: {INSTALL_HINT}, or set "
            f"{variable} to the {name} of an LLVM/MLIR 22 installation"
        )
    return path


def runtime_libraries() -> list[str]:
    """MLIR's C runner utilities, beside mlir-opt: copies between strided
    memrefs (a slice of an array) lower to calls to its `memrefCopy`."""
    opt = require_tool("mlir-opt")
    found = glob.glob(os.path.join(os.path.dirname(os.path.realpath(opt)), "..", "lib", "libmlir_c_runner_utils.so*"))
    return sorted(found)[:1]


def native_tools_available() -> bool:
    return all(find_tool(t) for t in ("mlir-opt", "mlir-translate"))


def unavailable_reason() -> str | None:
    """Why backend="native" cannot run here, or None if it can."""
    if not native_tools_available():
        return f"the native backend needs mlir-opt and mlir-translate 22: {INSTALL_HINT}"
    try:
        JitModule.check_llvmlite()
    except BackendError as exc:
        return str(exc)
    return None


def public_interface(module: ModuleOp) -> ModuleOp:
    """A copy of `module` whose public functions get `_mlir_ciface_` wrappers and
    read-only array arguments: bufferization would otherwise reuse an argument's
    buffer for a result, overwriting the caller's numpy array."""
    module = module.clone()
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_visibility is None and op.body.blocks:
            op.attributes[C_INTERFACE] = UnitAttr()
            inputs = op.function_type.inputs.data
            if any(isinstance(t, TensorType) for t in inputs):
                old = op.arg_attrs.data if op.arg_attrs else [DictionaryAttr({})] * len(inputs)
                op.arg_attrs = ArrayAttr(
                    [
                        DictionaryAttr({**attrs.data, WRITABLE: BoolAttr(False, i1)}) if isinstance(t, TensorType) else attrs
                        for attrs, t in zip(old, inputs)
                    ]
                )
    return module


def drop_prints(module: ModuleOp) -> None:
    """Native code does not print: each `print` is dropped, with one warning per
    statement naming its line (irad/ir/printing.py)."""
    calls = printing.print_calls(module)
    for where in dict.fromkeys(where for _, where in calls):
        warnings.warn(
            f"{where}: the native backend drops this print(...) (it prints only on the "
            "Python backend)", IradWarning, stacklevel=3,
        )
    for call, _ in calls:
        call.detach()
        call.erase()
    for op in [op for op in module.ops if printing.is_print(op)]:
        op.detach()
        op.erase()


def _run_tool(args: Sequence[str], text: str, what: str) -> str:
    proc = subprocess.run(list(args), input=text, capture_output=True, text=True, timeout=_TIMEOUT)
    if proc.returncode == 0:
        return proc.stdout
    if os.environ.get(KEEP_FAILED_MODULES, "") not in ("", "0"):
        fd, path = tempfile.mkstemp(prefix="irad-native-", suffix=".mlir")
        with os.fdopen(fd, "w") as out:
            out.write(text)
        kept = f"; the module is saved in {path}\n  command: {' '.join(args)} {path}"
    else:
        kept = f"\n  hint: set {KEEP_FAILED_MODULES}=1 to keep the module in a temporary file"
    raise BackendError(f"{what} failed (exit status {proc.returncode}){kept}\n{proc.stderr.strip()}")


def _has_tensors(module: ModuleOp) -> bool:
    for op in module.walk():
        types = [*op.result_types, *op.operand_types]
        if isinstance(op, func.FuncOp):
            types += [*op.function_type.inputs.data, *op.function_type.outputs.data]
        if any(isinstance(t, TensorType) for t in types):
            return True
    return False


def for_mlir_opt(module: ModuleOp, *, tracked: bool = False) -> tuple[ModuleOp, tuple[str, ...]]:
    """A copy of `module` ready for mlir-opt, and the passes that take it to the
    LLVM dialect.

    With tensors, MLIR's buffer-deallocation pipeline frees every buffer, and
    it refuses a module that frees memory itself. The tape's own frees
    (growth, and a request's free after its pullback) are dropped then, and
    the pipeline frees the tape like any buffer; private functions pass
    ownership back to their callers, so the tape threaded through them is
    never cloned. `tracked`: buffers are allocated by irad's runtime (TRACKED).
    """
    module = public_interface(module)
    expand_for_llvm(module)  # math.isinf, math.isnormal
    drop_prints(module)
    checks = RUNTIME_VERIFICATION if os.environ.get(VERIFY_MEMREFS, "") not in ("", "0") else ()
    lowering = tracked_lowering() if tracked else LOWERING
    if not _has_tensors(module):
        return module, checks + lowering
    for op in [op for op in module.walk() if isinstance(op, memref.DeallocOp)]:
        op.detach()
        op.erase()
    return module, BUFFERIZATION + checks + lowering


def tracked_lowering() -> tuple[str, ...]:
    """LOWERING with buffers allocated and freed by irad's runtime (TRACKED)."""
    return tuple(TRACKED.get(p, p) for p in LOWERING)


def lower_to_llvm_ir(mlir_text: str, passes: Sequence[str] = LOWERING) -> str:
    """LLVM IR for a module, lowered by mlir-opt 22 with `passes`."""
    opt, translate = require_tool("mlir-opt"), require_tool("mlir-translate")
    llvm_dialect = _run_tool([opt, *passes], mlir_text, "lowering to the LLVM dialect with mlir-opt")
    return _run_tool([translate, "--mlir-to-llvmir"], llvm_dialect, "mlir-translate --mlir-to-llvmir")


# ---- the C calling convention -----------------------------------------------------
_INTEGERS = {1: ctypes.c_bool, 8: ctypes.c_int8, 16: ctypes.c_int16, 32: ctypes.c_int32, 64: ctypes.c_int64}


@functools.cache
def _descriptor(rank: int) -> type[ctypes.Structure]:
    """The C struct of a ranked memref descriptor (what MLIR's LLVM lowering uses)."""
    fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p), ("offset", ctypes.c_int64)]
    if rank:
        fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
    return type(f"MemRefDescriptor{rank}", (ctypes.Structure,), {"_fields_": fields})


def c_type(t: Attribute) -> type:
    """The ctypes type a value of IR type `t` has in the C interface."""
    if isinstance(t, Float64Type):
        return ctypes.c_double
    if isinstance(t, Float32Type):
        return ctypes.c_float
    if isinstance(t, IndexType):
        return ctypes.c_int64
    if isinstance(t, IntegerType) and t.width.data in _INTEGERS:
        return _INTEGERS[t.width.data]
    if _is_buffer(t):
        return _descriptor(len(t.shape))
    raise BackendError(f"the native backend cannot pass a value of type {t} between Python and native code")


def _is_buffer(t: Attribute) -> bool:
    """Passed as a memref descriptor: memrefs, and tensors (memrefs once bufferized)."""
    return isinstance(t, (MemRefType, TensorType))


_DTYPES = {"f64": np.float64, "f32": np.float32, "i64": np.int64, "i32": np.int32, "i1": np.bool_}


def _dtype(t: TensorType) -> np.dtype:
    name = str(t.element_type)
    if name not in _DTYPES:
        raise BackendError(f"the native backend cannot pass a {t} to or from numpy")
    return np.dtype(_DTYPES[name])


_libc_free = ctypes.CDLL(None).free
_libc_free.argtypes = [ctypes.c_void_p]


class NativeBuffer:
    """One allocation native code returned; libc `free` runs on it (on the
    `base` malloc returned, before irad's header: native_runtime.ll) when the
    last value viewing it (a numpy array, a NativeMemRef) goes."""

    __slots__ = ("free", "__weakref__")

    def __init__(self, allocated: int):
        self.free = weakref.finalize(self, _libc_free, native_checks.allocation_base(allocated))


class NativeMemRef:
    """A memref result (the tape) kept for a later native call; its
    descriptor's `owner` keeps the memory alive."""

    __slots__ = ("descriptor",)

    def __init__(self, descriptor: ctypes.Structure):
        self.descriptor = descriptor


def _array_descriptor(t: TensorType) -> Callable:
    """A converter from a numpy array to a descriptor of its data."""
    descriptor, dtype, shape = c_type(t), _dtype(t), tuple(t.get_shape())

    def from_numpy(value):
        array = np.asarray(value, dtype=dtype, order="C")  # identity layout, as bufferized; 0-d stays 0-d
        if array.shape != shape:
            raise BackendError(f"a native function expected an array of shape {shape} ({t}), got {array.shape}")
        d = descriptor()
        d.allocated = d.aligned = array.ctypes.data
        d.offset = 0
        if array.ndim:
            d.sizes[:] = array.shape
            d.strides[:] = [stride // array.itemsize for stride in array.strides]
        d.owner = array  # alive until the call returns
        return d  # ctypes passes it by reference (the argtype is a pointer)

    return from_numpy


def _to_numpy(d: ctypes.Structure, t: TensorType, owner: object) -> np.ndarray:
    """A numpy array over a buffer native code returned, keeping `owner` alive."""
    dtype = _dtype(t)
    shape = tuple(d.sizes) if t.get_shape() else ()
    element_strides = tuple(d.strides) if shape else ()  # a rank-0 descriptor has none
    last = d.offset + sum((n - 1) * s for n, s in zip(shape, element_strides))  # the furthest element
    count = last + 1 if all(shape) else 0
    memory = (ctypes.c_char * (count * dtype.itemsize)).from_address(d.aligned)
    memory.owner = owner
    strides = tuple(s * dtype.itemsize for s in element_strides)
    return np.ndarray(shape, dtype, memory, d.offset * dtype.itemsize, strides)


def _claim(values: Sequence, types: Sequence[Attribute], arguments: Sequence) -> tuple:
    """The Python values of one call's results (the ownership rule of the
    module docstring): one owner per allocation, and arrays that share memory
    with no argument and no other result."""
    owners = {a.allocated: a.owner for a in arguments if isinstance(a, ctypes.Structure)}
    claimed = []
    for value, t in zip(values, types):
        if not _is_buffer(t):
            claimed.append(value)
            continue
        owner = owners.get(value.allocated)
        shared = owner is not None
        if not shared:
            owner = owners[value.allocated] = NativeBuffer(value.allocated)
        if isinstance(t, TensorType):
            array = _to_numpy(value, t, owner)
            claimed.append(array.copy() if shared else array)
        else:
            value.owner = owner
            claimed.append(NativeMemRef(value))
    return tuple(claimed)


def _argument(t: Attribute) -> tuple[type, Callable | None]:
    """The ctypes argument type and a converter from the Python value (None: ctypes converts)."""
    if isinstance(t, TensorType):
        return ctypes.POINTER(c_type(t)), _array_descriptor(t)
    if isinstance(t, MemRefType):
        descriptor = c_type(t)

        def by_reference(value):
            if not isinstance(value, NativeMemRef):
                raise BackendError(f"a native function expected a memref ({t}) from native code, got {value!r}")
            return value.descriptor

        return ctypes.POINTER(descriptor), by_reference
    return c_type(t), None


def _convention(outputs: Sequence[Attribute]) -> str:
    """How the entry of a function with these results reports a failed check
    (native_checks.entry_convention): results through a pointer or none give
    a status, one float gives NaN, one int gives a status and its value
    through a pointer."""
    if len(outputs) != 1 or _is_buffer(outputs[0]):
        return "status"
    return "nan" if isinstance(outputs[0], (Float64Type, Float32Type)) else "out"


def _callable(address: int, function: func.FuncOp, checks: native_checks.Checks) -> Callable[..., tuple]:
    """A Python function calling the entry (native_checks.py) of the C interface
    at `address`; it returns a tuple, or raises RuntimeCheckError for a failed check."""
    inputs = function.function_type.inputs.data
    outputs = function.function_type.outputs.data
    arguments = [_argument(t) for t in inputs]
    converters = [(i, convert) for i, (_, convert) in enumerate(arguments) if convert]
    argtypes = [c for c, _ in arguments]
    convention = _convention(outputs)

    def convert(args: Sequence) -> Sequence:
        if not converters:
            return args
        args = list(args)
        for i, to_c in converters:
            args[i] = to_c(args[i])
        return args

    if convention == "nan":
        c_function = ctypes.CFUNCTYPE(c_type(outputs[0]), *argtypes)(address)

        def call_float(*args):
            result = c_function(*convert(args))
            if result != result:
                checks.after_nan()
            return (result,)

        return call_float

    if not outputs:
        c_function = ctypes.CFUNCTYPE(ctypes.c_int32, *argtypes)(address)

        def call_void(*args):
            check = c_function(*convert(args))
            if check:
                raise checks.failed(check)
            return ()

        return call_void

    fields = [(f"r{i}", c_type(t)) for i, t in enumerate(outputs)]
    results = fields[0][1] if len(outputs) == 1 else type("Results", (ctypes.Structure,), {"_fields_": fields})
    c_function = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.POINTER(results), *argtypes)(address)

    if convention == "out":

        def call_int(*args):
            out = results()
            check = c_function(ctypes.byref(out), *convert(args))
            if check:
                raise checks.failed(check)
            return (out.value,)

        return call_int

    if len(outputs) == 1:

        def call_one(*args):
            out = results()
            args = convert(args)
            check = c_function(ctypes.byref(out), *args)
            if check:
                raise checks.failed(check)
            return _claim((out,), outputs, args)

        return call_one

    fields_of = operator.attrgetter(*(name for name, _ in fields))  # returns a tuple
    if not any(map(_is_buffer, outputs)) and not converters:

        def call_scalars(*args):  # the common case, kept lean: ~1 µs per call
            out = results()
            check = c_function(ctypes.byref(out), *args)
            if check:
                raise checks.failed(check)
            return fields_of(out)

        return call_scalars

    def call(*args):
        out = results()
        args = convert(args)
        check = c_function(ctypes.byref(out), *args)
        if check:
            raise checks.failed(check)
        return _claim(fields_of(out), outputs, args)

    return call


# ---- compiled modules -------------------------------------------------------------
class NativeModule:
    """A module compiled to machine code; `function(name)` is a public function
    callable from Python, returning a tuple (as the Python backend does)."""

    def __init__(self, module: ModuleOp):
        self.functions = {
            op.sym_name.data: op
            for op in module.ops
            if isinstance(op, func.FuncOp) and op.sym_visibility is None and op.body.blocks
        }
        ready, passes = for_mlir_opt(module, tracked=True)
        messages = native_checks.guard(ready)
        self.llvm_ir = lower_to_llvm_ir(str(ready), passes)
        libraries, linked = runtime_libraries(), []
        glue = native_linalg.glue_module(module)  # LAPACK calls for irad.linalg's primitives
        if glue is not None:  # its buffers too are the runtime's, freed by the caller
            linked.append(lower_to_llvm_ir(glue, tracked_lowering()))
            libraries.append(native_linalg.library_path())
        self.jit = JitModule(self.llvm_ir, libraries=libraries, linked=linked, extend=self._runtime)
        failure = ctypes.CFUNCTYPE(ctypes.c_int32)(self.jit.address(native_checks.FAILURE))
        self.checks = native_checks.Checks(messages, failure)

    def _runtime(self, llvm_module) -> str:
        """The runtime of the checks, with an entry for each public function
        (it must report failures as `_callable` expects)."""
        signatures = {name: signature(llvm_module, native_checks.CIFACE_PREFIX + name) for name in self.functions}
        for name, (result, _) in signatures.items():
            expected = _convention(self.functions[name].function_type.outputs.data)
            if native_checks.entry_convention(result) != expected:
                raise BackendError(f"the C interface of @{name} returns {result}, which irad does not expect")
        return native_checks.runtime(signatures)

    def function(self, name: str) -> Callable[..., tuple]:
        if name not in self.functions:
            raise BackendError(f"the native module has no public function @{name}")
        address = self.jit.address(native_checks.ENTRY_PREFIX + name)
        call = _callable(address, self.functions[name], self.checks)
        call.__name__ = name
        call.native_module = self  # the machine code lives as long as the callable
        return call


def compile_module(module: ModuleOp) -> NativeModule:
    return NativeModule(module)
