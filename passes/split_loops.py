"""`irad-split-loops`: large loop nests whose rows are independent, run on the caller and the
helper thread of the split products (native/split.py, native/split.ll).

After fusion and bufferization, `--convert-linalg-to-parallel-loops` turns
each linalg op into loops and says which are parallel: an `scf.parallel`
over the op's parallel dimensions (the reduced ones stay `scf.for` inside).
Linalg's semantics make the iterations of a parallel dimension independent
(bufferization writes in place only where that stays so). The native
backend then runs this pass on the module (xDSL, between two mlir-opt runs,
native.lower_to_llvm_ir) and outlines each outermost `scf.parallel` that
does at least `min_work()` work (the elements it writes, each call of a
math function counting MATH_WORK more) and whose first dimension runs
from 0 over at least CHUNKS * ALIGN rows:

    scf.parallel (%i, %j) = (%c0, %c0) to (%c4096, %c128) ... { body }

becomes, in its place,

    %task = llvm.alloca (at the function's entry) : !llvm.struct<(captures)>
    llvm.store <each captured value>, <its field of %task>
    llvm.call @irad_split_rows(<address of @irad.rows.N>, %task, 4096)

    func.func private @irad.rows.N(%task: !llvm.ptr, %lo: i64, %hi: i64) {
      <each captured value loaded from %task>
      scf.parallel (%i, %j) = (%lo, %c0) to (%hi, %c128) ... { body }
    }

`irad_split_rows` (native/split.ll) calls @irad.rows.N for rows lo..hi of
each chunk: the chunks are decided by the row count alone (cut on multiples
of 16), and each element is computed by the same operations in the same
order whoever runs it and wherever its chunk starts (a reduction over an
inner dimension stays whole in its row; a loop that sums over rows is an
`scf.for` and is never outlined): the results are the same bits split or
not. The caller posts the job and takes it back if the helper has not
started, so a busy machine costs no more than one thread (native/split.ll).
Memrefs are captured as their descriptors (an unrealized cast to and from
the LLVM struct, which MLIR's lowering folds), constants are cloned into
the function. A body with anything but arithmetic, math, loads, stores and
loops (a call, an allocation) is left alone.

The native backend runs it (irad/backends/native/split_loops.py decides
when, and with what threshold).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, llvm, memref, scf
from xdsl.dialects.builtin import (
    Float32Type,
    Float64Type,
    FunctionType,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    SymbolRefAttr,
    TensorType,
    UnrealizedConversionCastOp,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, prop_def, result_def
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from irad.base import config




# The runtime's entry the outlined nests are handed to (native/split.ll), and
# the fewest rows worth splitting: its chunks (2) times their alignment (16).
ROWS = "irad_split_rows"
MIN_ROWS = 32

# A loop nest's work: the elements it writes, plus MATH_WORK for each call of
# a math function (tanh, exp, log, ...; libmvec's tanh took about 6x, exp
# 2.5x the time per element of `dh * (1 - h*h)`). Less than MIN_WORK runs on
# the caller alone. Split, in six runs at load 2-11 (bench/split_loops.py,
# docs/benchmarks.md), wall time split / whole: the cheap (4096, 128) loop
# 0.71-1.01, at (2048, 128) 1.06-1.17; tanh at (1024, 128) 0.68-1.15 (four
# of six under 0.9), at (512, 128) 0.75-1.20; exp at (4096, 10) 0.96-1.16.
# The native backend takes it from irad.config's `native_split_min_work`.
MIN_WORK = config.default("native_split_min_work")


MATH_WORK = 4


FUNCTION_PREFIX = "irad.rows."


# In the pipeline, where this pass runs (native.lower_to_llvm_ir): the
# threshold after "=". mlir-opt never sees it.
PASS_NAME = "irad-split-loops"


# Ops a body may hold: what linalg's loops compute with.
_BODY_DIALECTS = ("arith", "math")


_BODY_OPS = (memref.LoadOp, memref.StoreOp, scf.ForOp, scf.ParallelOp, scf.ReduceOp, scf.YieldOp, scf.IfOp)


@irdl_op_definition
class FunctionAddressOp(IRDLOperation):
    """MLIR's `func.constant` (xDSL 0.75 lacks it): a function's address,
    which --convert-func-to-llvm makes an llvm.mlir.addressof."""

    name = "func.constant"
    value = prop_def(SymbolRefAttr)
    result = result_def(FunctionType)

    def __init__(self, callee: str, t: FunctionType):
        super().__init__(properties={"value": SymbolRefAttr(callee)}, result_types=[t])


def _may_split(module: ModuleOp, threshold: int) -> bool:
    """Whether a loop nest of `module` (tensors) may do `threshold` work:
    whether an op makes an array whose elements, times 2 (its store and a
    fused op's) plus MATH_WORK per math function it calls, reach it. A nest
    doing more work per element than its largest op is rare, and a missed
    split costs only time; modules that cannot split are not parsed again."""
    for op in module.walk():
        for t in op.result_types:
            if isinstance(t, TensorType) and t.has_static_shape():
                math_ops = sum(inner.dialect_name() == "math" for inner in op.walk())
                if t.element_count() * (2 + MATH_WORK * math_ops) >= threshold:
                    return True
    return False


def _constant_index(value: SSAValue) -> int | None:
    op = value.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return op.value.value.data
    return None


def _trips(loop: scf.ForOp | scf.ParallelOp) -> int | None:
    """How often the body of `loop` runs (None if not constant)."""
    if isinstance(loop, scf.ForOp):
        bounds = [(loop.lb, loop.ub, loop.step)]
    else:
        bounds = list(zip(loop.lowerBound, loop.upperBound, loop.step))
    trips = 1
    for lower, upper, step in bounds:
        lo, hi, st = (_constant_index(v) for v in (lower, upper, step))
        if lo is None or hi is None or not st:
            return None
        trips *= max(0, -(-(hi - lo) // st))
    return trips


def _work(block: Block) -> int | None:
    """The work of the ops of `block` each time it runs (None if unknown):
    the elements they write and MATH_WORK per math function."""
    total = 0
    for op in block.ops:
        if isinstance(op, memref.StoreOp):
            total += 1
        elif op.dialect_name() == "math":
            total += MATH_WORK
        elif isinstance(op, (scf.ForOp, scf.ParallelOp)):
            trips, inner = _trips(op), _work(op.body.block)
            if trips is None or inner is None:
                return None
            total += trips * inner
        elif isinstance(op, scf.IfOp):
            branches = [_work(r.block) for r in op.regions if r.blocks]
            if any(b is None for b in branches):
                return None
            total += max(branches, default=0)
    return total


def _splittable(loop: scf.ParallelOp, threshold: int) -> bool:
    if loop.res or loop.initVals:
        return False  # a parallel reduction: its order would depend on the chunks
    if _constant_index(loop.lowerBound[0]) != 0 or _constant_index(loop.step[0]) != 1:
        return False
    rows = _constant_index(loop.upperBound[0])
    if rows is None or rows < MIN_ROWS or _trips(loop) is None:
        return False
    row = loop.body.block.args[0]
    for op in loop.body.walk():
        if isinstance(op, scf.ReduceOp) and op.operands:
            return False
        if not (isinstance(op, _BODY_OPS) or op.dialect_name() in _BODY_DIALECTS):
            return False
        if isinstance(op, memref.StoreOp) and row not in op.indices:
            return False  # each row writes its own elements (linalg's parallel loops do)
    work = _work(loop.body.block)
    return work is not None and work * _trips(loop) >= threshold


def _descriptor(t: MemRefType) -> llvm.LLVMStructType:
    """The LLVM struct MLIR lowers a ranked memref to."""
    ptr = llvm.LLVMPointerType()
    fields: list[Attribute] = [ptr, ptr, i64]
    if t.get_shape():
        sizes = llvm.LLVMArrayType(len(t.get_shape()), i64)
        fields += [sizes, sizes]
    return llvm.LLVMStructType.from_type_list(fields)


@dataclass
class _Capture:
    value: SSAValue
    field: Attribute  # its type in the task

    @staticmethod
    def of(value: SSAValue) -> _Capture | None:
        t = value.type
        if isinstance(t, MemRefType):
            return _Capture(value, _descriptor(t))
        if isinstance(t, IndexType):
            return _Capture(value, i64)
        if isinstance(t, (Float64Type, Float32Type, IntegerType)):
            return _Capture(value, t)
        return None

    def store(self, pointer: SSAValue) -> list[Operation]:
        if isinstance(self.value.type, MemRefType):
            cast = UnrealizedConversionCastOp.get([self.value], [self.field])
        elif isinstance(self.value.type, IndexType):
            cast = arith.IndexCastOp(self.value, i64)
        else:
            return [llvm.StoreOp(self.value, pointer)]
        return [cast, llvm.StoreOp(cast.results[0], pointer)]

    def load(self, pointer: SSAValue) -> tuple[list[Operation], SSAValue]:
        loaded = llvm.LoadOp(pointer, self.field)
        if isinstance(self.value.type, MemRefType):
            back = UnrealizedConversionCastOp.get([loaded.results[0]], [self.value.type])
        elif isinstance(self.value.type, IndexType):
            back = arith.IndexCastOp(loaded.results[0], IndexType())
        else:
            return [loaded], loaded.results[0]
        return [loaded, back], back.results[0]


def _captures(loop: scf.ParallelOp) -> tuple[list[SSAValue], list[arith.ConstantOp]]:
    """The values the nest uses from outside (the first dimension's bounds
    aside), in the order they are first used, and the constants among them
    (cloned, not captured)."""
    nested = list(loop.walk())
    inside = set(nested)
    used: dict[SSAValue, None] = {}
    first_bounds = {0, len(loop.lowerBound)}
    for op in nested:
        for index, value in enumerate(op.operands):
            if op is loop and index in first_bounds:
                continue
            owner = value.owner
            defined_inside = (owner in inside) if isinstance(owner, Operation) else owner.parent_op() in inside
            if not defined_inside:
                used[value] = None
    constants = [v.owner for v in used if isinstance(v.owner, arith.ConstantOp)]
    captured = [v for v in used if not isinstance(v.owner, arith.ConstantOp)]
    return captured, constants


def outline(module: ModuleOp, threshold: int) -> int:
    """Outline (in place) every loop nest `_splittable` at `threshold` work
    into a function its rows are run by, through irad_split_rows.
    Returns how many were."""
    nests = [
        op for op in module.walk()
        if isinstance(op, scf.ParallelOp) and not _inside_parallel(op) and _splittable(op, threshold)
    ]
    names = {op.sym_name.data for op in module.ops if isinstance(op, (func.FuncOp, llvm.FuncOp))}
    count = 0
    for loop in nests:
        captured, constants = _captures(loop)
        fields = [_Capture.of(v) for v in captured]
        if any(f is None for f in fields):
            continue  # a value of a type the task cannot hold
        name = _fresh(names, FUNCTION_PREFIX)
        _outline_one(module, loop, name, fields, constants)
        count += 1
    if count:
        ptr = llvm.LLVMPointerType()
        module.body.block.add_op(llvm.FuncOp(
            ROWS, llvm.LLVMFunctionType([ptr, ptr, i64]), linkage=llvm.LinkageAttr("external")
        ))
    return count


def _inside_parallel(op: Operation) -> bool:
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, scf.ParallelOp):
            return True
        parent = parent.parent_op()
    return False


def _fresh(names: set[str], prefix: str) -> str:
    number = 0
    while f"{prefix}{number}" in names:
        number += 1
    names.add(f"{prefix}{number}")
    return f"{prefix}{number}"


def _outline_one(module: ModuleOp, loop: scf.ParallelOp, name: str, fields: list[_Capture],
                 constants: list[arith.ConstantOp]) -> None:
    ptr = llvm.LLVMPointerType()
    task_type = llvm.LLVMStructType.from_type_list([f.field for f in fields] or [i64])
    rows = _constant_index(loop.upperBound[0])

    # the function: the captures loaded from the task, the nest over rows lo..hi
    body = Block(arg_types=[ptr, i64, i64])
    task, lo, hi = body.args
    mapping: dict[SSAValue, SSAValue] = {}
    for constant in constants:
        copy = constant.clone()
        body.add_op(copy)
        mapping[constant.results[0]] = copy.results[0]
    for index, field in enumerate(fields):
        at = llvm.GEPOp(task, [0, index], task_type)
        ops, value = field.load(at.results[0])
        body.add_ops([at, *ops])
        mapping[field.value] = value
    lower, upper = arith.IndexCastOp(lo, IndexType()), arith.IndexCastOp(hi, IndexType())
    body.add_ops([lower, upper])
    nest = loop.clone(value_mapper=mapping)
    nest.operands[0] = lower.results[0]
    nest.operands[len(loop.lowerBound)] = upper.results[0]
    body.add_ops([nest, func.ReturnOp()])
    signature = FunctionType.from_lists([ptr, i64, i64], [])
    module.body.block.add_op(func.FuncOp(name, signature, Region(body), "private"))

    # in place of the nest: the task filled, irad_split_rows called
    function = loop.parent_op()
    while not isinstance(function, func.FuncOp):
        function = function.parent_op()
    entry = function.body.block
    one = arith.ConstantOp(IntegerAttr(1, i64))
    alloca = llvm.AllocaOp(one, task_type, alignment=8)
    Rewriter.insert_op([one, alloca], InsertPoint.at_start(entry))
    here = InsertPoint.before(loop)
    for index, field in enumerate(fields):
        at = llvm.GEPOp(alloca.results[0], [0, index], task_type)
        Rewriter.insert_op([at, *field.store(at.results[0])], here)
    address = FunctionAddressOp(name, signature)
    pointer = UnrealizedConversionCastOp.get([address.results[0]], [ptr])
    count = arith.ConstantOp(IntegerAttr(rows, i64))
    call = llvm.CallOp(ROWS, pointer.results[0], alloca.results[0], count.results[0])
    Rewriter.insert_op([address, pointer, count, call], here)
    Rewriter.erase_op(loop)


@dataclass(frozen=True)
class SplitLoopsPass(ModulePass):
    """irad-opt's `irad-split-loops` (filecheck/split-loops/)."""

    name = PASS_NAME
    min_work: int = MIN_WORK

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        outline(op, self.min_work)


__all__ = ["SplitLoopsPass", "outline"]
