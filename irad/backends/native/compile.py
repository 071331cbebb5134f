"""Native backend: lower a module through upstream MLIR 22 and run machine code.

    xDSL module --(text)--> mlir-opt ([BUFFERIZATION +] LOWERING)
               --(bytecode, a pipe)--> mlir-translate --mlir-to-llvmir
               --> llvmlite: -O0 now, -O2 in the background (tiers.py), MCJIT --> ctypes calls

Every public function gets `llvm.emit_c_interface`, so MLIR also emits a
`_mlir_ciface_<name>` wrapper with a fixed C calling convention:

* scalars are passed and returned by value (f64 -> double, f32 -> float,
  iN -> intN_t, i1 -> bool, index -> int64_t);
* a memref, or a tensor (a memref once bufferized), is passed as a pointer to
  its descriptor `{allocated, aligned, offset, sizes[rank], strides[rank]}`;
* several results, or a memref result, come back through a pointer to a
  struct, passed as the first argument.

Python calls it through an entry (native/checks.py) that turns a failed
check (a cf.assert, or the stack check of a recursive function) into
RuntimeCheckError: the entry returns a status in place of a void result, NaN
in place of a float one (`_convention`). A function with arrays is called
through a trampoline around its entry (native/call.py), which takes numpy
arrays in place and computes array results into arrays numpy allocated
(destination passing); the rest call their entry directly (`_callable`).

Memory: without tensors, a gradient request frees its tape itself
(irad-differentiate puts an `irad.tape_free`, a `memref.dealloc` once lowered,
after its pullback); with tensors, MLIR's buffer-deallocation pipeline frees
everything (see for_mlir_opt), but the small temporaries it put on the stack
(native/stack.py). A public function never frees its arguments
(they are not owned, for the pipeline). Array results are numpy's own
arrays. A memref result (the tape, only ever passed back to native code)
becomes a Python value by one rule (`_claim`): each allocation (a
descriptor's `allocated` pointer) gets exactly one owner, a `NativeBuffer`,
which frees it with libc `free` (memref.alloc lowers to irad's allocator,
malloc with a header: native/runtime.ll) when the last value viewing it
goes; an allocation that is an argument's memory is not owned again, its
values keep the argument alive.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import glob
import hashlib
import operator
import os
import re
import subprocess
import tempfile
import warnings
import weakref
from collections.abc import Callable, Sequence
from typing import NoReturn

import numpy as np
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    BoolAttr,
    DictionaryAttr,
    Float32Type,
    Float64Type,
    FunctionType,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    UnitAttr,
    i1,
    i64,
)
from xdsl.ir import Attribute

from irad.backends import entry
from irad.backends.protocol import CompiledModule

from irad.backends.native import blas as native_blas

from irad.backends.native import buffers as native_buffers

from irad.backends.native import call as native_call

from irad.backends.native import checks as native_checks

from irad.backends.native import fusion as native_fusion

from irad.backends.native import linalg as native_linalg

from irad.backends.native import split_loops as native_split_loops

from irad.backends.native import stack as native_stack
from irad.backends import blocked_sums
from irad.backends.native import tiers, warm_tools
from irad.backends.native.llvm_jit import JitModule, signature
from irad.backends.native.fresh_destinations import linear_fresh_chains
from irad.backends.native.large_splats import fill_large_splats
from irad.backends.native.uint_carriers import narrow_carriers
from irad.backends.native.mlir_tools import INSTALL_HINT, TOOL_SWITCHES, find_tool
from irad.base import config, progress
from irad.base.errors import BackendError, IradWarning
from irad.ir import printing
from irad.ir.text import generic_text
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
    "--convert-math-to-llvm=approximate-log1p=false",  # log1p(x) is libm's, not log(1 + x)
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
# (native/runtime.ll), which frees those of a call that fails a check. Its
# aligned allocation: MLIR's own alignment of a buffer (bufferization asks for
# 64 bytes) goes through an integer (inttoptr), after which LLVM cannot tell
# buffers apart and guards every vectorised loop with runtime alias checks
# (a third more code to compile); the runtime's keeps the pointer's provenance.
TRACKED = {"--finalize-memref-to-llvm": "--finalize-memref-to-llvm=use-generic-functions use-aligned-alloc"}

# Before LOWERING, for modules with tensors: elementwise arith/math on tensors
# and named linalg ops (broadcast, reduce, matmul) become linalg.generic, and
# producers fuse into consumers (a broadcast is read in place instead of being
# materialised: 1.6x on the GMM gradient); the op that computes a result
# computes it into its destination; one-shot bufferization turns tensors
# into memrefs (function boundaries included, identity layouts, so arguments
# are plain strided buffers numpy can hand over); the deallocation pipeline
# frees every temporary and makes every returned buffer a fresh one the caller
# owns; linalg becomes scf loops.
BUFFERIZATION = (
    "--convert-elementwise-to-linalg",
    "--linalg-generalize-named-ops",
    "--linalg-fuse-elementwise-ops",
    # a result computed into its destination (native/call.py); before the
    # canonicalizer and CSE, which would merge or fold away the chains
    # native/fresh_destinations.py keeps apart
    "--eliminate-empty-tensors",
    "--canonicalize",
    "--cse",
    "--one-shot-bufferize=bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map"
    " allow-return-allocs-from-loops",
    "--buffer-deallocation-pipeline=private-function-dynamic-ownership=true",
    "--convert-bufferization-to-memref",
    "--convert-linalg-to-loops",
)
# After one-shot bufferization, small temporaries may move to the stack (native/stack.py).
BUFFERIZE = next(i for i, p in enumerate(BUFFERIZATION) if p.startswith("--one-shot-bufferize"))

# With irad.config's `native_verify_memrefs` (`make memcheck` sets it), every
# memref access is checked at run time (bounds, casts, subviews: MLIR's runtime
# op verification, on the memrefs bufferization leaves); a failed check aborts
# the process with its location.
RUNTIME_VERIFICATION = ("--generate-runtime-verification",)

C_INTERFACE = "llvm.emit_c_interface"
WRITABLE = "bufferization.writable"
_TIMEOUT = 300


# ---- mlir-opt and mlir-translate ---------------------------------------------------
def require_tool(name: str) -> str:
    path = find_tool(name)
    if path is None:
        variable = config.switch(TOOL_SWITCHES[name]).variable
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
        missing = [t for t in ("mlir-opt", "mlir-translate") if find_tool(t) is None]
        variables = " and ".join(f"${config.switch(TOOL_SWITCHES[t]).variable}" for t in missing)
        return (f"backend='native' needs mlir-opt and mlir-translate 22, which are not found "
                f"(looked in {variables}, on PATH and in /usr/lib/llvm-22/bin)\n  hint: {INSTALL_HINT}, "
                f"or set {variables} to the tools of an LLVM/MLIR 22 installation")
    try:
        JitModule.check_llvmlite()
    except BackendError as exc:
        return str(exc)
    return None


def _public_functions(module: ModuleOp) -> list[func.FuncOp]:
    return [op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_visibility is None and op.body.blocks]


def public_interface(module: ModuleOp) -> ModuleOp:
    """A copy of `module` whose public functions get `_mlir_ciface_` wrappers and
    read-only array arguments: bufferization would otherwise reuse an argument's
    buffer for a result, overwriting the caller's numpy array."""
    module = module.clone()
    for op in _public_functions(module):
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


# irad's functions live in their own namespace in the object code: a function
# named like a C symbol that lowered code calls (sin, which llvm.sin.f64
# becomes; malloc, memcpy, ...) would otherwise *be* that symbol, and the
# call would bind to it (infinite recursion). No C symbol contains a dot.
SYMBOL_PREFIX = "irad."
_C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def symbol(name: str) -> str:
    """The object-code name of irad's function `name`: names a C library could
    define get SYMBOL_PREFIX; the rest (f.grad, ...) are safe already."""
    return SYMBOL_PREFIX + name if _C_IDENTIFIER.fullmatch(name) else name


def namespace_symbols(module: ModuleOp) -> None:
    """Rename, in place, each function `module` defines to `symbol(name)`, and
    every call of it. Declarations (libm, the runtime) keep their names: they
    are the C symbols."""
    renamed = {
        op.sym_name.data: symbol(op.sym_name.data)
        for op in module.ops if isinstance(op, func.FuncOp) and op.body.blocks
    }
    renamed = {old: new for old, new in renamed.items() if old != new}
    if not renamed:
        return
    for op in module.walk():  # calls; attributes (irad.primal, ...) keep naming Python's functions
        for key, value in op.properties.items():
            if isinstance(value, SymbolRefAttr) and value.root_reference.data in renamed:
                op.properties[key] = SymbolRefAttr(renamed[value.root_reference.data], value.nested_references)
        if isinstance(op, func.FuncOp) and op.sym_name.data in renamed:
            if "irad.primal" not in op.attributes:  # a primal: messages still name it as written (metadata.origin)
                op.attributes["irad.primal"] = SymbolRefAttr(op.sym_name.data)
                op.attributes["irad.order"] = IntegerAttr(0, i64)
            op.sym_name = StringAttr(renamed[op.sym_name.data])


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


def _run_tool(args: Sequence[str], text: str, what: str, meanwhile: Callable[[], None] | None = None) -> str:
    return _run_tools([args], text, [what], meanwhile)


def _run_tools(
    commands: Sequence[Sequence[str]], text: str, what: Sequence[str], meanwhile: Callable[[], None] | None = None
) -> str:
    """The output of `commands` run as one pipeline on `text` (each reads the
    one before it through a pipe, so they overlap); `what` names each for its
    error; `meanwhile` runs once they are started. Their diagnostics go to
    files: a pipe nobody read would fill and stop the tool."""
    with contextlib.ExitStack() as files:
        source = files.enter_context(tempfile.TemporaryFile())
        source.write(text.encode())
        source.seek(0)
        errors = [files.enter_context(tempfile.TemporaryFile()) for _ in commands]
        procs: list[subprocess.Popen] = []
        try:
            for args, error in zip(commands, errors):
                procs.append(subprocess.Popen(
                    list(args), stdin=procs[-1].stdout if procs else source, stdout=subprocess.PIPE, stderr=error
                ))
                if len(procs) > 1:
                    procs[-2].stdout.close()  # the next tool holds it; mlir-opt sees a closed reader if that one exits
            if meanwhile is not None:
                meanwhile()
            output = procs[-1].communicate(timeout=_TIMEOUT)[0]
            for proc in procs[:-1]:
                proc.wait(timeout=_TIMEOUT)
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
        for args, name, proc, error in zip(commands, what, procs, errors):
            if proc.returncode != 0:
                error.seek(0)
                _failed(commands, name, proc.returncode, error.read().decode(errors="replace"), text)
    return output.decode()


def _failed(commands: Sequence[Sequence[str]], what: str, status: int, diagnostics: str, text: str) -> NoReturn:
    """A BackendError for a failed tool; with irad.config's `keep_failed_modules`,
    the module it was given is kept in a temporary file (irad-native-*.mlir)
    named in the error; by default nothing is written."""
    if config.read("keep_failed_modules"):
        fd, path = tempfile.mkstemp(prefix="irad-native-", suffix=".mlir")
        with os.fdopen(fd, "w") as out:
            out.write(text)
        first, *rest = (" ".join(args) for args in commands)
        command = " | ".join([f"{first} {path}", *rest])
        kept = f"; the module is saved in {path}\n  command: {command}"
    else:
        variable = config.switch("keep_failed_modules").variable
        kept = f"\n  hint: set {variable}=1 to keep the module in a temporary file"
    raise BackendError(f"{what} failed (exit status {status}){kept}\n{diagnostics.strip()}")


def _has_tensors(module: ModuleOp) -> bool:
    for op in module.walk():
        types = [*op.result_types, *op.operand_types]
        if isinstance(op, func.FuncOp):
            types += [*op.function_type.inputs.data, *op.function_type.outputs.data]
        if any(isinstance(t, TensorType) for t in types):
            return True
    return False


def for_mlir_opt(
    module: ModuleOp, *, tracked: bool = False, destinations: bool = False, split_loops: bool = False
) -> tuple[ModuleOp, tuple[str, ...]]:
    """A copy of `module` ready for mlir-opt, and the passes that take it to the
    LLVM dialect.

    With tensors, MLIR's buffer-deallocation pipeline frees every buffer, and
    it refuses a module that frees memory itself. The tape's own frees
    (growth, and a request's free after its pullback) are dropped then, and
    the pipeline frees the tape like any buffer; private functions pass
    ownership back to their callers, so the tape threaded through them is
    never cloned. `tracked`: buffers are allocated by irad's runtime (TRACKED).
    `destinations`: public functions compute their array results into
    arguments after their own (native_call.destination_passing).
    `split_loops`: large loop nests whose rows are independent run on two
    threads (native/split_loops.py; only for irad's own JIT: the pipeline
    then has a step that is not mlir-opt's).
    """
    module = public_interface(module)
    narrow_carriers(module)  # uint8 in one byte, as numpy holds it (native/uint_carriers.py)
    namespace_symbols(module)
    expand_for_llvm(module)  # math.isinf, math.isnormal, math.expm1
    drop_prints(module)
    if destinations:
        native_call.destination_passing(module, _public_functions(module))
    checks = RUNTIME_VERIFICATION if config.read("native_verify_memrefs") else ()
    lowering = tracked_lowering() if tracked else LOWERING
    if not _has_tensors(module):
        return module, checks + lowering
    for op in [op for op in module.walk() if isinstance(op, memref.DeallocOp)]:
        op.detach()
        op.erase()
    native_fusion.recompute_cheap_producers(module)  # so they fuse into their consumers
    native_fusion.materialise_before_broadcasts(module)  # computed once, not once per broadcast element
    blocked_sums.block_sums(module)  # rounding error O(log n), not O(n)
    linear_fresh_chains(module)  # what mlir-opt's empty-tensor elimination assumes
    fill_large_splats(module)  # filled when run, not spelt out in the LLVM IR
    bufferization = BUFFERIZATION[:BUFFERIZE + 1] + native_stack.promotion(module) + BUFFERIZATION[BUFFERIZE + 1:]
    if split_loops:
        bufferization = native_split_loops.in_pipeline(module, bufferization)
    return module, bufferization + checks + lowering


# After LOWERING, for irad's JIT: the canonicalizer and CSE on the LLVM dialect fold the
# descriptor structs the conversions build and take apart again (insertvalue, extractvalue):
# the logistic-regression gradient's LLVM IR is half as long (28 KB for 60), which LLVM
# parses and compiles at -O0 in 2.6 ms less of a first call's 13, for 1 ms in mlir-opt.
# No floating-point op is folded or reordered by them (and the -O2 code is made from the same IR).
CLEANUP = ("--canonicalize", "--cse")


def tracked_lowering() -> tuple[str, ...]:
    """LOWERING with buffers allocated and freed by irad's runtime (TRACKED),
    then CLEANUP: the lowering of irad's JIT."""
    return tuple(TRACKED.get(p, p) for p in LOWERING) + CLEANUP


@functools.cache
def _backend_sources() -> str:
    """A digest of this package's source (which writes the runtime and the
    trampolines), for the cache's key."""
    digest = hashlib.sha256()
    folder = os.path.dirname(__file__)
    for name in sorted(os.listdir(folder)):
        if name.endswith((".py", ".ll")):
            with open(os.path.join(folder, name), "rb") as source:
                digest.update(source.read())
    return digest.hexdigest()


def _runtime_inputs() -> list[str]:
    """What decides the runtime's text (_runtime) besides the module: irad's
    source, numpy's array layout, this process's pthread keys."""
    return [_backend_sources(), np.__version__, native_checks.runtime_key()]


@functools.cache
def tools_version() -> str:
    """Which mlir-opt and mlir-translate lower modules (for the cache's key):
    their files, sizes and modification times (asking them would start a
    process, on the path of a cache hit)."""
    found = [os.path.realpath(require_tool(name)) for name in ("mlir-opt", "mlir-translate")]
    return "\n".join(f"{path} {os.stat(path).st_size} {os.stat(path).st_mtime_ns}" for path in found)


def lower_to_llvm_ir(
    mlir_text: str, passes: Sequence[str] = LOWERING, *, checked_later: list | None = None,
    meanwhile: Callable[[], None] | None = None,
) -> str:
    """LLVM IR for a module, lowered by mlir-opt 22 with `passes`. mlir-opt
    writes MLIR bytecode into mlir-translate through a pipe: the two start up
    and run at once, and bytecode is cheaper to write and read than text (on
    the unrolled array LSTM 15% less CPU time for the two). mlir-opt does not
    verify the module after each of its two dozen passes (8% of the two
    tools' CPU time on that LSTM; the same output): mlir-translate verifies
    what it reads, so a pass that broke the module still fails the compile,
    and with irad.config's `keep_failed_modules` (debugging) every pass is checked.
    The two run as a pair started before it was needed, when one waits
    (warm_tools.py: their start-up, 77 ms of CPU for the two, is not on the
    compile's path). Such a pair's IR is read before the tools have ended;
    with `checked_later` (a list) their exit statuses are not waited for:
    a function that raises BackendError if either failed is appended to it,
    to be called before code made from the IR is kept or run (their ending
    then overlaps the caller's work on the IR). `meanwhile`: work of this
    thread's to do while the tools run, once they have their input."""
    with progress.stage("mlir-opt and mlir-translate"):
        return _lower_with_tools(mlir_text, passes, checked_later, meanwhile)


def _lower_with_tools(
    mlir_text: str, passes: Sequence[str], checked_later: list | None, meanwhile: Callable[[], None] | None
) -> str:
    opt, translate = require_tool("mlir-opt"), require_tool("mlir-translate")
    verify = () if config.read("keep_failed_modules") else ("--verify-each=false",)
    split = [i for i, p in enumerate(passes) if native_split_loops.threshold_of(p) is not None]
    if split:  # mlir-opt up to the loops, irad's outlining (xDSL), mlir-opt on
        at = split[0]
        loops = _run_tool([opt, *passes[:at], *verify, *native_split_loops.PRINT_OPTIONS], mlir_text,
                          "lowering to loops with mlir-opt", meanwhile)
        meanwhile = None
        mlir_text = native_split_loops.run_on_text(loops, native_split_loops.threshold_of(passes[at]))
        passes = passes[at + 1:]
    commands = [[opt, *passes, *verify, "--emit-bytecode"], [translate, "--mlir-to-llvmir"]]
    what = ["lowering to the LLVM dialect with mlir-opt", "mlir-translate --mlir-to-llvmir"]
    # the warm pair is the next first call's: split code is made in the background (split_loops.unsplit)
    pipeline = None if split else warm_tools.pipeline_text(passes)
    pair = None if pipeline is None else warm_tools.take(opt, translate) or warm_tools.start(opt, translate)
    if pair is None:
        return _run_tools(commands, mlir_text, what, meanwhile)
    output = pair.run(mlir_text + warm_tools.pipeline_resource(pipeline, verify_each=not verify), _TIMEOUT, meanwhile)
    if output and checked_later is not None:
        checked_later.append(functools.partial(_ended_well, pair, commands, mlir_text, what))
        return output.decode()
    # no IR, or a tool failed (mlir-translate makes IR of the empty module a failed mlir-opt
    # leaves): lowered again cold, whose error is the one to report
    if not output or any(status != 0 for status, _ in pair.statuses(_TIMEOUT)):
        return _run_tools(commands, mlir_text, what)
    return output.decode()


def _ended_well(pair: warm_tools.Pair, commands: Sequence[Sequence[str]], mlir_text: str, what: Sequence[str]) -> None:
    """Raise BackendError if a tool of `pair` failed after its IR was read (a
    failed mlir-opt leaves mlir-translate an empty module; a tool killed while
    writing leaves IR cut short): the module is lowered again cold, whose
    error is the one to report; if that succeeds, the pair's failure is."""
    for name, (status, diagnostics) in zip(what, pair.statuses(_TIMEOUT)):
        if status != 0:
            _run_tools(commands, mlir_text, what)
            raise BackendError(f"{name} ended with exit status {status} after writing its output, which is not "
                               f"used\n{diagnostics.strip()}")


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


_LLVM_SCALARS = {Float64Type: "double", Float32Type: "float", IndexType: "i64"}


def _llvm_scalar(t: Attribute) -> str | None:
    if isinstance(t, IntegerType):
        return f"i{t.width.data}"
    return _LLVM_SCALARS.get(type(t))


def c_interface(function_type: FunctionType) -> tuple[str, list[str]] | None:
    """The (result, parameter) LLVM types of the `_mlir_ciface_` wrapper
    MLIR's func-to-llvm conversion makes for a function of this type (as
    llvm_jit.signature reads them from its LLVM IR): a memref or tensor
    argument is a pointer to its descriptor; one scalar result is returned,
    several results or a memref one come back through a pointer passed
    first. None for a type this does not know."""
    outputs = function_type.outputs.data
    params = ["ptr" if _is_buffer(t) else _llvm_scalar(t) for t in function_type.inputs.data]
    if len(outputs) == 1 and not _is_buffer(outputs[0]):
        result = _llvm_scalar(outputs[0])
    elif outputs:
        result, params = "void", ["ptr", *params]
    else:
        result = "void"
    if result is None or None in params:
        return None
    return result, params


def _is_buffer(t: Attribute) -> bool:
    """Passed as a memref descriptor: memrefs, and tensors (memrefs once bufferized)."""
    return isinstance(t, (MemRefType, TensorType))


_libc_free = ctypes.CDLL(None).free
_libc_free.argtypes = [ctypes.c_void_p]


class NativeBuffer:
    """One allocation native code returned; libc `free` runs on it (on the
    `base` malloc returned, before irad's header: native/runtime.ll) when the
    last value viewing it (a NativeMemRef) goes."""

    __slots__ = ("free", "__weakref__")

    def __init__(self, allocated: int):
        self.free = weakref.finalize(self, _libc_free, native_checks.allocation_base(allocated))


class NativeMemRef:
    """A memref result (the tape) kept for a later native call; its
    descriptor's `owner` keeps the memory alive."""

    __slots__ = ("descriptor",)

    def __init__(self, descriptor: ctypes.Structure):
        self.descriptor = descriptor


def _claim(values: Sequence, types: Sequence[Attribute], arguments: Sequence) -> tuple:
    """The Python values of one call's scalar and memref results (the
    ownership rule of the module docstring): each allocation gets one owner,
    and a memref in an argument's memory keeps that argument alive."""
    owners = {}
    for a in arguments:
        if isinstance(a, NativeMemRef):
            owners[a.descriptor.allocated] = a.descriptor.owner
        elif isinstance(a, np.ndarray):
            owners[a.__array_interface__["data"][0]] = a
    claimed = []
    for value, t in zip(values, types):
        if isinstance(t, MemRefType):
            owner = owners.get(value.allocated)
            if owner is None:
                owner = owners[value.allocated] = NativeBuffer(value.allocated)
            value.owner = owner
            value = NativeMemRef(value)
        claimed.append(value)
    return tuple(claimed)


def _memref_argument(position: int, value) -> ctypes.Structure:
    """The descriptor of a memref argument: a NativeMemRef an earlier call returned."""
    if not isinstance(value, NativeMemRef):
        raise BackendError(f"a native function expected a memref from native code for argument {position}, got {value!r}")
    return value.descriptor


def _argument(t: Attribute) -> type:
    """The ctypes argument type of a scalar or memref in the C interface."""
    return ctypes.POINTER(c_type(t)) if isinstance(t, MemRefType) else c_type(t)


def _results(outputs: Sequence[Attribute]) -> type:
    """The ctypes type of the results that come back through a pointer."""
    if len(outputs) == 1:
        return c_type(outputs[0])
    fields = [(f"r{i}", c_type(t)) for i, t in enumerate(outputs)]
    return type("Results", (ctypes.Structure,), {"_fields_": fields})


def _convention(outputs: Sequence[Attribute]) -> str:
    """How the entry of a function with these results reports a failed check
    (native_checks.entry_convention): results through a pointer or none give
    a status, one float gives NaN, one int gives a status and its value
    through a pointer."""
    if len(outputs) != 1 or _is_buffer(outputs[0]):
        return "status"
    return "nan" if isinstance(outputs[0], (Float64Type, Float32Type)) else "out"


def _callable(address: int, function: func.FuncOp, checks: native_checks.Checks) -> Callable[..., tuple]:
    """A Python function calling the entry (native/checks.py) of the C interface
    at `address`, for a function without arrays; it returns a tuple, or raises
    RuntimeCheckError for a failed check."""
    inputs = function.function_type.inputs.data
    outputs = function.function_type.outputs.data
    argtypes = [_argument(t) for t in inputs]
    memrefs = [i for i, t in enumerate(inputs) if isinstance(t, MemRefType)]
    convention = _convention(outputs)

    def convert(args: Sequence) -> Sequence:
        if not memrefs:
            return args
        args = list(args)
        for i in memrefs:
            args[i] = _memref_argument(i, args[i])
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

    results = _results(outputs)
    c_function = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.POINTER(results), *argtypes)(address)

    if convention == "out":

        def call_int(*args):
            out = results()
            check = c_function(ctypes.byref(out), *convert(args))
            if check:
                raise checks.failed(check)
            return (out.value,)

        return call_int

    fields_of = (lambda out: (out,)) if len(outputs) == 1 else operator.attrgetter(*(f"r{i}" for i in range(len(outputs))))
    if not any(isinstance(t, MemRefType) for t in outputs) and not memrefs:

        def call_scalars(*args):  # the common case, kept lean: ~1 µs per call
            out = results()
            check = c_function(ctypes.byref(out), *args)
            if check:
                raise checks.failed(check)
            return fields_of(out)

        return call_scalars

    def call(*args):
        out = results()
        check = c_function(ctypes.byref(out), *convert(args))
        if check:
            raise checks.failed(check)
        return _claim(fields_of(out), outputs, args)

    return call


def _scalar_entry(
    address: int, function: func.FuncOp, checks: native_checks.Checks, plan: entry.EntryPlan
) -> Callable | None:
    """The call entry (entry.py) of a function of numbers only: `_callable`'s
    call inline (None if it takes or returns memrefs)."""
    inputs = function.function_type.inputs.data
    outputs = function.function_type.outputs.data
    if any(isinstance(t, MemRefType) for t in (*inputs, *outputs)):
        return None
    argtypes = [_argument(t) for t in inputs]
    names = entry.params(len(inputs))
    args = ", ".join(names)
    env: dict = {"_failed": checks.failed, "_after_nan": checks.after_nan}  # ctypes passes `out` by reference
    convention = _convention(outputs)
    if convention == "nan":
        env["_c"] = ctypes.CFUNCTYPE(c_type(outputs[0]), *argtypes)(address)
        lines = [f"r = _c({args})", "if r != r:", "    _after_nan()"]
        returned = ["r"]
    elif not outputs:
        env["_c"] = ctypes.CFUNCTYPE(ctypes.c_int32, *argtypes)(address)
        lines = [f"s = _c({args})", "if s:", "    raise _failed(s)"]
        returned = []
    else:
        env["_R"] = results = _results(outputs)
        env["_c"] = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.POINTER(results), *argtypes)(address)
        lines = ["out = _R()", f"s = _c({', '.join(['out', *names])})", "if s:", "    raise _failed(s)"]
        returned = ["out.value"] if convention == "out" else [f"out.r{i}" for i in range(len(outputs))]
    lines.append(f"return {plan.results.format(*returned)}")
    return entry.define(plan, names, entry.Body([f"    {line}" for line in lines], env), {}, function.sym_name.data)


def _array_caller(
    address: int, sig: native_call.Signature, outputs: Sequence[Attribute], checks: native_checks.Checks
) -> native_call.Caller:
    """A Python function calling the trampoline (native/call.py) at `address`
    of a function with arrays; `outputs` are its results after
    destination passing (scalars, memrefs)."""
    results = _results(outputs) if outputs else None
    # the tuple of the arguments and array results, then the scalars and memrefs among the arguments
    argtypes = [ctypes.py_object] + [_argument(t) for t in sig.inputs if not isinstance(t, native_call.ArraySpec)]
    first = [ctypes.POINTER(results)] if results is not None else []
    function = ctypes.PYFUNCTYPE(ctypes.c_int32, *first, *argtypes)(address)

    def claim(values: Sequence, arguments: Sequence) -> tuple:
        return _claim(values, outputs, arguments)

    return native_call.Caller(sig, function, results, _memref_argument, claim, checks.failed)


# ---- compiled modules -------------------------------------------------------------
class NativeModule(CompiledModule):
    """A module compiled to machine code; `function(name)` is a public function
    callable from Python, returning a tuple (as the Python backend does)."""

    def __init__(self, module: ModuleOp):
        self.signatures = {op.sym_name.data: native_call.signature(op) for op in _public_functions(module)}
        if any(sig.has_arrays for sig in self.signatures.values()):
            native_call.numpy_layout()  # a clear error now if numpy arrays cannot be read in place
        with progress.stage("preparing for mlir-opt"):
            ready, passes = for_mlir_opt(module, tracked=True, destinations=True, split_loops=True)
            # by irad's name; in `ready` and the object code each is called symbol(name)
            named = {symbol(name): name for name in self.signatures}
            self.functions = {named[op.sym_name.data]: op for op in _public_functions(ready)}  # array results are arguments
            blas = native_blas.call_blas(ready)  # large matrix products call BLAS
            guards = native_checks.guard(ready)
            text = generic_text(ready)  # (mlir-opt reads the generic form; written sooner than str's)
        self._mlir = (text, passes)
        # the tools' exit statuses, checked by the JIT before it keeps code (lower_to_llvm_ir); None
        # once it is made: the IR asked for later (inspection, a cache hit's) is waited for whole
        self._unchecked: list[Callable[[], None]] | None = []
        # mlir-opt's output is not the same from run to run (the order and names
        # of the globals bufferization makes), so its input decides the cache's
        # key, with what decides the runtime's text (_runtime): the object code
        # is looked up before mlir-opt runs
        determined_by = [tools_version(), *passes, text, *_runtime_inputs()]
        libraries, glue_ir = runtime_libraries(), []
        if blas:
            libraries.append(native_blas.library_path())
        glue = native_linalg.glue_module(module)  # LAPACK calls for irad.linalg's primitives
        if glue is not None:  # its buffers too are the runtime's, freed by the caller
            glue_ir.append(functools.partial(lower_to_llvm_ir, glue, tracked_lowering()))
            libraries.append(native_linalg.library_path())
            determined_by += [*tracked_lowering(), glue]
        determined_by += libraries
        exported = [native_checks.FAILURE, native_checks.FAILED_ALLOCATION]  # what Python calls: tiering switches these to -O2 code
        for name, sig in self.signatures.items():
            exported.append(native_checks.ENTRY_PREFIX + symbol(name))
            if sig.has_arrays:
                exported.append(native_call.TRAMPOLINE_PREFIX + sig.name)
        if any(sig.has_arrays for sig in self.signatures.values()):
            native_call.python_symbols()  # which the trampolines call
        native_buffers.symbol()  # which the runtime reads
        split = native_split_loops.unsplit(passes) != passes
        # the -O2 child and the next compile's tools start once the first call has returned (tiers.Deferred)
        self._background = tiers.Deferred()
        try:
            self.jit = JitModule(
                self._first_tier, optimised_llvm_ir=(lambda: self.llvm_ir) if split else None,
                libraries=libraries, linked=lambda: [make() for make in glue_ir],
                extend=self._runtime, extend_ahead=self._runtime_ahead, determined_by=determined_by, exported=exported,
                # tier 0's frames are larger: how deep a recursion may go must not depend on the tier
                tierable=not guards.depth_checked, checked=self._tools_ended_well, deferred=self._background,
            )
        except BaseException:
            self._tools_ended_well()  # (ends the tools) a tool that failed explains IR LLVM rejects
            raise
        self._unchecked = None
        failure = ctypes.CFUNCTYPE(ctypes.c_int32)(self.jit.address(native_checks.FAILURE))
        failed_allocation = ctypes.CFUNCTYPE(ctypes.c_uint64)(self.jit.address(native_checks.FAILED_ALLOCATION))
        self.checks = native_checks.Checks(guards, failure, failed_allocation)
        self._background.add(functools.partial(warm_tools.prepare, require_tool("mlir-opt"), require_tool("mlir-translate")))

    @functools.cached_property
    def llvm_ir(self) -> str:
        """The LLVM IR mlir-opt and mlir-translate make of the module (not made
        when its machine code is in the cache, until asked for)."""
        return self._lowered()

    def _lowered(self, meanwhile: Callable[[], None] | None = None) -> str:
        return lower_to_llvm_ir(*self._mlir, checked_later=self._unchecked, meanwhile=meanwhile)

    def _tools_ended_well(self) -> None:
        """Raise BackendError if the tools that wrote `llvm_ir` failed after writing it."""
        while self._unchecked:
            self._unchecked.pop()()

    @functools.cached_property
    def first_tier_llvm_ir(self) -> str:
        """`llvm_ir` with no loop nest split over threads: tier 0's (tiers.py;
        native/split_loops.py's `unsplit` says why)."""
        return self._first_tier()

    def _first_tier(self, meanwhile: Callable[[], None] | None = None) -> str:
        """`first_tier_llvm_ir`, with `meanwhile` run while the tools make it (llvm_jit's)."""
        text, passes = self._mlir
        unsplit = native_split_loops.unsplit(passes)
        if unsplit != passes:
            return lower_to_llvm_ir(text, unsplit, meanwhile=meanwhile)
        if "llvm_ir" not in self.__dict__:
            self.llvm_ir = self._lowered(meanwhile)
        return self.llvm_ir

    def wait_optimised(self, timeout: float | None = None) -> bool:
        """Wait until calls run the -O2 code (tiers.py); False if its
        background compile failed and calls keep running tier 0."""
        return self.jit.wait_optimised(timeout)

    def called(self) -> None:
        self._background.start()

    def _runtime(self, llvm_module) -> list[str]:
        """The runtime of the checks (native_checks.runtime_library), and an
        entry for each public function (it must report failures as
        `_callable` expects) with the trampolines of the functions with arrays."""
        return self._runtime_texts({
            symbol(name): signature(llvm_module, native_checks.CIFACE_PREFIX + symbol(name)) for name in self.functions
        })

    def _runtime_ahead(self) -> list[str] | None:
        """`_runtime`'s texts before the module's LLVM IR exists, from the C
        interface MLIR gives each public function (`c_interface`): tier 0
        compiles them while the tools run (llvm_jit.JitModule's
        `extend_ahead`, which uses them only if `_runtime` then returns the
        same). None for a function whose C interface this cannot tell."""
        signatures = {symbol(name): c_interface(fn.function_type) for name, fn in self.functions.items()}
        if any(s is None for s in signatures.values()):
            return None
        return self._runtime_texts(signatures)

    def _runtime_texts(self, signatures: dict[str, tuple[str, list[str]]]) -> list[str]:
        """`_runtime` for the (result, parameter) LLVM types of each public function's C interface."""
        trampolines = []
        for name in self.functions:
            result, params = signatures[symbol(name)]
            outputs = self.functions[name].function_type.outputs.data
            convention = _convention(outputs)
            if native_checks.entry_convention(result) != convention:
                raise BackendError(f"the C interface of @{name} returns {result}, which irad does not expect")
            if self.signatures[name].has_arrays:
                trampolines.append(native_call.trampoline(
                    self.signatures[name], native_checks.ENTRY_PREFIX + symbol(name), convention, result, params
                ))
        if trampolines:
            native_call.python_symbols()
            trampolines.insert(0, native_call.TRAMPOLINE_DECLARATIONS)
        return [native_checks.runtime_library(), "\n".join([native_checks.entries(signatures), *trampolines])]

    def function(self, name: str) -> Callable[..., tuple]:
        if name not in self.functions:
            raise BackendError(f"the native module has no public function @{name}")
        sig, fn = self.signatures[name], self.functions[name]
        if sig.has_arrays:
            call = self._array_caller(name).python()
        else:
            call = _callable(self.jit.address(native_checks.ENTRY_PREFIX + symbol(name)), fn, self.checks)
        call.__name__ = name
        call.native_module = self  # the machine code lives as long as the callable
        return call

    def _array_caller(self, name: str) -> native_call.Caller:
        sig, fn = self.signatures[name], self.functions[name]
        address = self.jit.address(native_call.TRAMPOLINE_PREFIX + sig.name)
        return _array_caller(address, sig, fn.function_type.outputs.data, self.checks)

    def entry(self, name: str, plan: entry.EntryPlan) -> Callable:
        """The call entry (entry.py) of public function `name`."""
        call = self.function(name)
        if self.signatures[name].has_arrays:
            run = self._array_caller(name).entry(plan)
        else:
            address = self.jit.address(native_checks.ENTRY_PREFIX + symbol(name))
            run = _scalar_entry(address, self.functions[name], self.checks, plan)
            if run is None:
                run = entry.generic(plan, call, name)
        run.native_module = self
        return run


def compile_module(module: ModuleOp) -> NativeModule:
    return NativeModule(module)
