"""Checked errors in native code: a failed check raises, and the process lives on.

The frontend emits its run-time checks as `cf.assert` (indices, range steps,
int overflow, int `//` and `%` by zero, float -> int conversions), and upstream
MLIR lowers a failed cf.assert to abort(). Natively, instead:

1. `guard` (on the module, before mlir-opt) turns each cf.assert into
   `scf.if (not cond) { func.call @irad_check_failed(id) }`, `id` numbering
   its message. Every function `@f` on a cycle of calls moves into `@f.stack`,
   which takes the thread's stack floor as one more argument and checks its
   frame against it at entry (`@irad_stack_check(floor, id)`), so runaway
   recursion fails a check naming the function before the stack overflows.
2. `runtime` (native/runtime.ll, linked into the JIT module before -O2)
   defines those functions and irad's allocator, and `entries` one entry
   `irad_entry_<f>` around each `_mlir_ciface_<f>` Python calls. The entry takes `_setjmp` on
   a context in its own frame and publishes it in a pthread key (so threads
   never meet); a failed check `_longjmp`s there with its id. The entry frees
   the buffers the call allocated (each buffer's header links it into the
   context's list) and returns the id as a status, or NaN in place of a float
   result with the id kept for `irad_failure()` (`entry_convention`).
3. Python (native/compile.py) reads the id and raises RuntimeCheckError with its
   message, the message the Python backend raises.

No C compiler is needed: the runtime is LLVM IR, and libc provides malloc,
free, _setjmp, _longjmp and the pthread functions. The normal path pays one
_setjmp and a few pthread_setspecific per call, a pthread_getspecific and
four stores per allocation, and a comparison and one more argument per call
of a recursive function. Large buffers come from a process-wide cache
(native/buffers.py) before malloc.

The stack floor is the lowest address of the calling thread's stack
(pthread_getattr_np, asked once per thread) plus an eighth of the stack, at
most STACK_MARGIN bytes: room for the non-recursive calls below the deepest
recursive frame, and for the failure itself.

A failed check leaks nothing: `_longjmp` skips the frees the call would
still have made, and the entry makes them instead.

An allocation that fails (malloc returns NULL, or 2^62 bytes or more are
asked for) is the check OUT_OF_MEMORY: the runtime keeps the size for
`irad_failed_allocation()` and Python raises OutOfMemoryError, a MemoryError.
`guard` also refuses arrays of 2^63 bytes or more (numpy's ValueError) and
checks the bytes of each dynamically sized allocation before MLIR multiplies
them in i64.
"""

from __future__ import annotations

import ctypes
import functools
import math
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources

from xdsl.dialects import arith, cf, func, memref, scf
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IndexType, MemRefType, ModuleOp, TensorType, i1, i32, i64
from xdsl.ir import Block, Region, SSAValue
from xdsl.rewriter import Rewriter

from irad.backends.native import buffers as native_buffers
from irad.base.errors import BackendError, OutOfMemoryError, RuntimeCheckError, check_failure
from irad.ir.builder import IRBuilder
from irad.ir.callgraph import call_cycles
from irad.ir.locations import location, recursion_message, source_location
from irad.ir.metadata import display_name
from irad.ir.symbols import fresh_symbol, functions_by_name

CHECK_FAILED = "irad_check_failed"
STACK_CHECK = "irad_stack_check"
STACK_FLOOR = "irad_stack_floor"
FAILURE = "irad_failure"
FAILED_ALLOCATION = "irad_failed_allocation"
OUT_OF_MEMORY_CALL = "irad_out_of_memory"
MAX_BYTES = 1 << 62  # the runtime refuses larger allocations (runtime.ll: irad_obtain_or_fail)
ENTRY_PREFIX = "irad_entry_"
CIFACE_PREFIX = "_mlir_ciface_"
STACK_MARGIN = 1 << 17  # bytes kept free below the deepest recursive frame (at most)
JMP_BUF_BYTES = 512  # glibc's jmp_buf is 200 bytes on x86-64, 312 on aarch64
HEADER = 32  # bytes before each buffer native code allocates: {prev, next, base, capacity}
OUT_OF_MEMORY = 0x7FFFFFFF  # the id of the check an allocation fails (no message of its own)


# ---- the module, before mlir-opt -----------------------------------------------------
@dataclass(frozen=True)
class Guards:
    """What `guard` put in a module: the message of each check (check `id` is
    index + 1), whether any recursion checks its depth against the stack, and
    where its public functions come from (for an allocation that fails)."""

    messages: list[str]
    depth_checked: bool
    functions: str


def guard(module: ModuleOp) -> Guards:
    """Rewrite `module` in place: cf.asserts call @irad_check_failed, recursive
    functions check their stack."""
    _refuse_arrays_too_big(module)
    messages: list[str] = []

    def number(b: IRBuilder, message: str) -> SSAValue:
        messages.append(message)
        return b.value(arith.ConstantOp.from_int_and_width(len(messages), 32))

    for op in [op for op in module.walk() if isinstance(op, cf.AssertOp)]:
        b = IRBuilder(before=op)
        failed = b.op(arith.XOrIOp(op.arg, b.value(arith.ConstantOp.from_int_and_width(1, i1))))
        call = IRBuilder(Block())
        call.op(func.CallOp(CHECK_FAILED, [number(call, op.msg.data)], []))
        call.op(scf.YieldOp())
        b.op(scf.IfOp(failed, [], Region(call.block)))
        Rewriter.erase_op(op)
    depth_checked = _guard_recursion(module, number)
    if _guard_dynamic_sizes(module):
        module.body.block.add_op(func.FuncOp.external(OUT_OF_MEMORY_CALL, [i64], []))
    if messages:
        module.body.block.add_ops([
            func.FuncOp.external(CHECK_FAILED, [i32], []),
            func.FuncOp.external(STACK_FLOOR, [], [IndexType()]),
            func.FuncOp.external(STACK_CHECK, [IndexType(), i32], []),
        ])
    return Guards(messages, depth_checked, _public_functions(module))


def _refuse_arrays_too_big(module: ModuleOp) -> None:
    """Raise numpy's ValueError (as a RuntimeCheckError) for an array of 2^63
    bytes or more: MLIR's size computation would wrap around (a (2^31, 2^31)
    float64 array is 0 bytes to it) and the code would write far beyond what
    it allocated. Refused while compiling, even on a path that never runs."""
    for op in module.walk():
        for value in op.results:
            shape = value.type.get_shape() if isinstance(value.type, TensorType | MemRefType) else ()
            if any(d < 0 for d in shape):
                continue
            width = getattr(value.type.element_type, "bitwidth", 64) if shape else 0
            if math.prod(shape) * max(width // 8, 1) >= 1 << 63:
                fn = op.parent_op()
                while fn is not None and not isinstance(fn, func.FuncOp):
                    fn = fn.parent_op()
                where = source_location(op) or (fn is not None and source_location(fn)) or location(op)
                raise check_failure(
                    f"{where}: ValueError: array is too big; `arr.size * arr.dtype.itemsize` is larger than the "
                    f"maximum possible size (an array of shape {tuple(shape)} in native code)"
                )


def _guard_dynamic_sizes(module: ModuleOp) -> bool:
    """Before each `memref.alloc` of dynamic sizes (a loop's tape, sized by its
    trip count), fail as out of memory if its bytes reach MAX_BYTES: MLIR
    multiplies the sizes by the element's bytes in i64 and would wrap around
    (a tape of 3·2^61 doubles was 0 bytes to it), so the runtime's own check
    would pass a small buffer the loop then writes far beyond. True if any."""
    allocs = [op for op in module.walk() if isinstance(op, memref.AllocOp) and op.dynamic_sizes]
    for op in allocs:
        static = math.prod(d for d in op.memref.type.get_shape() if d >= 0)
        if static == 0:
            continue
        width = getattr(op.memref.type.element_type, "bitwidth", 64)
        b = IRBuilder(before=op)
        index = IndexType()
        limit = b.value(arith.ConstantOp.from_int_and_width(MAX_BYTES // (static * max(width // 8, 1)), index))
        done = b.value(arith.ConstantOp.from_int_and_width(0, i1))
        product = b.value(arith.ConstantOp.from_int_and_width(1, index))
        for size in op.dynamic_sizes:
            room = b.value(arith.DivUIOp(limit, product))  # product <= limit, never 0
            over = b.value(arith.CmpiOp(size, room, "ugt"))
            done = b.value(arith.OrIOp(done, over))
            product = b.value(arith.SelectOp(over, product, b.value(arith.MuliOp(product, size))))
        call = IRBuilder(Block())
        call.op(func.CallOp(OUT_OF_MEMORY_CALL, [call.value(arith.ConstantOp.from_int_and_width(-1, i64))], []))
        call.op(scf.YieldOp())
        b.op(scf.IfOp(done, [], Region(call.block)))
    return bool(allocs)


def _public_functions(module: ModuleOp) -> str:
    """The module's public functions as a failed allocation names them: by
    their primal's name and `def` (file:line), once each."""
    named: dict[str, None] = {}
    for fn in module.body.block.ops:
        if isinstance(fn, func.FuncOp) and not fn.is_declaration and fn.sym_visibility is None:
            where = source_location(fn)
            named[f"{display_name(fn)}{f' ({where})' if where else ''}"] = None
    return ", ".join(named) or "the module"


def _guard_recursion(module: ModuleOp, number: Callable[[IRBuilder, str], SSAValue]) -> bool:
    """Each function `@f` on a cycle of calls moves into `@f.stack`, which takes
    the thread's stack floor as a last argument, checks its frame against it,
    and passes it on to the functions of its cycle. `@f` asks for the floor
    (one pthread_getspecific) and calls `@f.stack`, so only the first call
    into a cycle pays for it. True if there was a cycle."""
    functions = functions_by_name(module)
    taken = set(functions)
    cycles = call_cycles(module)
    for cycle in cycles:
        stacked: dict[str, tuple[func.FuncOp, SSAValue]] = {}
        for name in cycle:
            fn = functions[name]
            inputs, outputs = fn.function_type.inputs.data, fn.function_type.outputs.data
            body = Region()
            fn.body.move_blocks(body)
            arg_attrs = None if fn.arg_attrs is None else ArrayAttr([*fn.arg_attrs.data, DictionaryAttr({})])
            inner = func.FuncOp(
                fresh_symbol(f"{name}.stack", taken), ([*inputs, IndexType()], outputs), body, "private",
                arg_attrs=arg_attrs,
            )
            taken.add(inner.sym_name.data)
            floor = body.blocks.first.insert_arg(IndexType(), len(inputs))
            b = IRBuilder(before=body.blocks.first.first_op)
            b.op(func.CallOp(STACK_CHECK, [floor, number(b, recursion_message(fn))], []))
            stacked[name] = (inner, floor)
            outer = IRBuilder(Block(arg_types=inputs))
            floor_here = outer.op(func.CallOp(STACK_FLOOR, [], [IndexType()]))
            results = outer.results(func.CallOp(inner.sym_name.data, [*outer.block.args, floor_here], outputs))
            outer.op(func.ReturnOp(*results))
            fn.body.add_block(outer.block)
            module.body.block.insert_op_after(inner, fn)
        for inner, floor in stacked.values():
            for call in [op for op in inner.walk() if isinstance(op, func.CallOp)]:
                callee = stacked.get(call.callee.root_reference.data)
                if callee is not None:
                    direct = func.CallOp(callee[0].sym_name.data, [*call.arguments, floor], call.result_types)
                    direct.location = call.location
                    Rewriter.replace_op(call, direct)
    return bool(cycles)


# ---- Python's side -------------------------------------------------------------------
class Checks:
    """The checks of one native module, for Python: the message of each check
    id and the module's public functions (what `guard` returned), `failure`,
    irad_failure() of its runtime: the id a NaN result stood for, if any, and
    `failed_allocation`, irad_failed_allocation(): the bytes an allocation
    that failed asked for."""

    def __init__(self, guards: Guards, failure: Callable[[], int], failed_allocation: Callable[[], int]):
        self.messages = guards.messages
        self.functions = guards.functions
        self.failure = failure
        self.failed_allocation = failed_allocation

    def failed(self, check: int) -> RuntimeCheckError:
        if check == OUT_OF_MEMORY:
            return out_of_memory(self.failed_allocation(), self.functions)
        return check_failure(self.messages[check - 1])

    def after_nan(self) -> None:
        """A float result was NaN: raise if it stands for a failed check."""
        check = self.failure()
        if check:
            raise self.failed(check)


def out_of_memory(size: int, functions: str) -> OutOfMemoryError:
    """The error of an allocation of `size` bytes that failed in native code of `functions`."""
    if size >= MAX_BYTES:
        what = "a buffer of 2^62 bytes or more (4 EiB: a size no machine has, computed from a run-time int)"
    else:
        what = f"{size:,} bytes ({size / (1 << 30):.3g} GiB)"
    return OutOfMemoryError(
        f"native code of {functions} could not allocate {what}: the process is out of memory (its limit, "
        "`ulimit -v` or RLIMIT_AS / RLIMIT_DATA, or the machine's); the buffers of the call were freed"
        "\n  hint: use smaller arrays, or raise the limit"
    )


# ---- the runtime, LLVM IR -------------------------------------------------------------
@functools.cache
def _keys() -> tuple[int, int, int, int]:
    """Four pthread keys of this process: the running entry's jmp_buf, the id
    of a failure an entry returned NaN for, the thread's stack floor and the
    size of an allocation that failed."""
    libc = ctypes.CDLL(None)
    keys = []
    for _ in range(4):
        key = ctypes.c_uint()
        if libc.pthread_key_create(ctypes.byref(key), None) != 0:
            raise BackendError("the native backend could not create a pthread key for its run-time checks")
        keys.append(key.value)
    return tuple(keys)


def runtime_key() -> str:
    """What `runtime`'s text depends on besides the signatures, for the
    object cache's key: this process's pthread keys."""
    return repr(_keys())


_ENTRY = """
define {result} @"{entry}"({params}) {{
entry:
  %context = alloca [{context_bytes} x i8], align 16
  %head = getelementptr i8, ptr %context, i64 {jmp_bytes}
  store ptr %head, ptr %head
  %head_next = getelementptr i8, ptr %head, i64 8
  store ptr %head, ptr %head_next
  %outer = call ptr @pthread_getspecific(i32 {jmp})
  call i32 @pthread_setspecific(i32 {jmp}, ptr %context)
  %id = call i32 @_setjmp(ptr %context)
  %ok = icmp eq i32 %id, 0
  br i1 %ok, label %run, label %failed, !prof !{{!"branch_weights", i32 1048575, i32 1}}
run:
  {call}
  call void @irad_hand_over(ptr %head)
  call i32 @pthread_setspecific(i32 {jmp}, ptr %outer)
  {returned}
failed:
  call void @irad_free_all(ptr %head)
  call i32 @pthread_setspecific(i32 {jmp}, ptr %outer)
  {failed}
}}
"""


def entry_convention(result: str) -> str:
    """How the entry of a `_mlir_ciface_` function returning LLVM type `result`
    reports a failed check: "nan" (a float result: NaN, id kept for
    irad_failure), "status" (void: the id is returned, 0 if none) or "out" (an
    int result: stored through a pointer passed first, the id returned)."""
    if result in ("double", "float"):
        return "nan"
    return "status" if result == "void" else "out"


# What the entries take from the runtime library (they are compiled apart from it at tier 0: llvm_jit)
_ENTRY_DECLARATIONS = """declare i32 @_setjmp(ptr) returns_twice
declare ptr @pthread_getspecific(i32)
declare i32 @pthread_setspecific(i32, ptr)
declare void @irad_hand_over(ptr)
declare void @irad_free_all(ptr)
declare void @irad_failed_with_nan(i32)
declare i32 @irad_failure()
"""


def runtime(signatures: dict[str, tuple[str, Sequence[str]]]) -> list[str]:
    """The LLVM IR of the runtime: `runtime_library()` and `entries(signatures)`."""
    return [runtime_library(), entries(signatures)]


@functools.cache
def runtime_library() -> str:
    """native/runtime.ll for this process (its pthread keys, the buffer
    cache): the same text for every module."""
    jmp, failed, floor, allocation = _keys()
    text = resources.files(__package__).joinpath("runtime.ll").read_text()
    return string.Template(text).substitute(
        JMP_KEY=jmp, FAILED_KEY=failed, FLOOR_KEY=floor, ALLOCATION_KEY=allocation, OUT_OF_MEMORY=OUT_OF_MEMORY, JMP_BYTES=JMP_BUF_BYTES, HEADER=HEADER,
        STACK_MARGIN=STACK_MARGIN, CACHE=native_buffers.symbol(), CACHE_MIN=native_buffers.MIN_BYTES,
        FIRST=native_buffers.FIRST, BYTES=native_buffers.BYTES, CAPACITY=native_buffers.CAPACITY,
        HITS=native_buffers.HITS, MISSES=native_buffers.MISSES,
    )


def entries(signatures: dict[str, tuple[str, Sequence[str]]]) -> str:
    """LLVM IR with an entry for each public function (linked with
    `runtime_library()`); `signatures` maps its name to the (result,
    parameter) LLVM types of its `_mlir_ciface_` function."""
    jmp = _keys()[0]
    parts = [_ENTRY_DECLARATIONS]
    for name, (result, params) in signatures.items():
        typed = [f"{t} %a{i}" for i, t in enumerate(params)]
        ciface = f'@"{CIFACE_PREFIX}{name}"'
        parts.append(f"declare {result} {ciface}({', '.join(params)})")
        call = f"call {result} {ciface}({', '.join(typed)}) noinline"
        common = dict(entry=ENTRY_PREFIX + name, jmp=jmp, jmp_bytes=JMP_BUF_BYTES, context_bytes=JMP_BUF_BYTES + 16)
        convention = entry_convention(result)
        if convention == "nan":
            parts.append(_ENTRY.format(
                **common, result=result, params=", ".join(typed), call=f"%r = {call}", returned=f"ret {result} %r",
                failed=f"call void @irad_failed_with_nan(i32 %id)\n  ret {result} 0x7FF8000000000000",
            ))
        elif convention == "status":
            parts.append(_ENTRY.format(
                **common, result="i32", params=", ".join(typed), call=call, returned="ret i32 0", failed="ret i32 %id",
            ))
        else:
            parts.append(_ENTRY.format(
                **common, result="i32", params=", ".join(["ptr %out", *typed]),
                call=f"%r = {call}\n  store {result} %r, ptr %out", returned="ret i32 0", failed="ret i32 %id",
            ))
    return "\n".join(parts)


def allocation_base(memory: int) -> int:
    """What malloc returned for a buffer native code allocated at `memory` (the
    `allocated` pointer of its descriptor): the pointer to pass to free."""
    return ctypes.c_void_p.from_address(memory - HEADER + 16).value
