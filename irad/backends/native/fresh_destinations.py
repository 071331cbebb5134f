"""Fresh arrays stored at most once, through one chain of writes, before
mlir-opt (native backend).

mlir-opt 22's `--eliminate-empty-tensors` replaces a `tensor.empty` with the
buffer a value is finally stored into: a public function's array result is
computed straight into the caller's array (native/call.py), a value
inserted into a larger one into its slice. From the store it follows the
chain of destination operands (and views: reshape, cast) back to the empty,
and it does not check that nothing else uses that chain. When something
does, bufferization trusts the replacement and two results share a buffer:
- two reductions start from one init (a fill or broadcast into one empty,
  shared, or merged by `--cse`), and both write the first result's buffer;
- a value is stored, and also written into by an op whose result is
  stored too;
and both come out as one of them: a silently wrong value
(tests/backends/test_native_shared_inits.py has these and a generator of
more).

`linear_fresh_chains` restores what the elimination assumes. Every
`tensor.empty` gets one use (a clone per use: it holds no data). Every array
mlir-opt may compute into an empty (any but a constant and a public
argument, which the elimination cannot reach) that has more than one use is
written, aliased or stored through at most one of them, and that one only
if it is its store as a function's result (nothing writes the caller's
array afterwards, so reads may stay beside it); every other such use reads
a copy of its own (`bufferization.alloc_tensor copy(...)`, which the
elimination never replaces), made where the array is defined, before
anything can write it in place. A view counts as a read when all that
follows it reads. No arithmetic changes, so no bit does. The pipeline runs
the elimination before the canonicalizer and `--cse`, which would fold or
merge chains into shared ones (compile.BUFFERIZATION).
"""

from __future__ import annotations

from xdsl.dialects import arith, bufferization, func, tensor
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.ir import OpResult, Operation, SSAValue, Use

from irad.ir.tensor import SAME_ELEMENTS


def destination_indices(op: Operation) -> range:
    """The operand positions `op` computes its results into (destination-passing style)."""
    if isinstance(op, LinalgStructuredOperation):
        return range(len(op.operands) - len(op.outputs), len(op.operands))
    if isinstance(op, (linalg.BroadcastOp, linalg.ReduceOp)):
        inits = op.init if isinstance(op.init, tuple) else (op.init,)
        return range(len(op.operands) - len(inits), len(op.operands))
    if isinstance(op, (tensor.InsertSliceOp, tensor.InsertOp)):
        return range(1, 2)
    return range(0)


def _identity_slice(op: Operation) -> bool:
    """An insert or extract of the whole array, which mlir-opt folds away."""
    return isinstance(op, (tensor.InsertSliceOp, tensor.ExtractSliceOp)) and op.operands[0].type == op.results[0].type


def is_result(use: Use) -> bool:
    """The store of a public function's result into the caller's array."""
    return use.index == 0 and isinstance(use.operation, bufferization.MaterializeInDestinationOp)


def is_elementwise(op: Operation) -> bool:
    """An arith/math op on tensors: mlir-opt computes it into a fresh empty
    (a constant is not computed: bufferization copies it before a write)."""
    return (op.dialect_name() in ("arith", "math") and not isinstance(op, arith.ConstantOp)
            and any(isinstance(t, TensorType) for t in op.result_types))


def only_reads(use: Use) -> bool:
    """A use that reads the array into something new, or takes a slice of it
    (which the elimination does not follow)."""
    op = use.operation
    if isinstance(op, LinalgStructuredOperation):
        return use.index < len(op.operands) - len(op.outputs)
    if isinstance(op, (linalg.BroadcastOp, linalg.ReduceOp)):
        return use.index not in destination_indices(op)
    if isinstance(op, tensor.ReshapeOp) and use.index == 1:
        return True  # the shape
    if isinstance(op, SAME_ELEMENTS) or (_identity_slice(op) and use.index == 0):  # a view that is only read
        return all(only_reads(u) for u in op.results[0].uses)
    # a tensor operand of alloc_tensor is what it copies
    return is_elementwise(op) or isinstance(
        op, (tensor.ExtractOp, tensor.ExtractSliceOp, tensor.DimOp, bufferization.AllocTensorOp)
    )


def shared_uses(value: SSAValue, order: dict[Operation, int]) -> list[Use]:
    """The uses of `value` that may write, alias or store it, in program
    order, when it has other uses too, but the one it may keep: its store
    as a function's result when that is its only such use (nothing writes
    the caller's array afterwards, so reads may stay)."""
    uses = list(value.uses)
    if len(uses) < 2:
        return []
    others = sorted((u for u in uses if not only_reads(u)), key=lambda u: (order[u.operation], u.index))
    if len(others) == 1 and is_result(others[0]):
        return []
    return others


def _copy_where_defined(value: SSAValue, uses: list[Use]) -> None:
    """Each of `uses` reads a copy of `value` of its own, made where `value`
    is defined: before anything can write it in place."""
    for use in uses:
        copy = bufferization.AllocTensorOp(value.type, copy=value)
        if isinstance(value, OpResult):
            value.op.parent_block().insert_op_after(copy, value.op)
        else:
            block = value.block
            block.insert_op_before(copy, block.first_op) if block.first_op else block.add_op(copy)
        use.operation.operands[use.index] = copy.tensor


def _one_use_per_empty(empty: tensor.EmptyOp, order: dict[Operation, int]) -> None:
    for use in sorted(empty.tensor.uses, key=lambda u: (order[u.operation], u.index))[1:]:
        clone = empty.clone()
        empty.parent_block().insert_op_after(clone, empty)
        use.operation.operands[use.index] = clone.tensor


def may_become_fresh(value: SSAValue) -> bool:
    """Whether mlir-opt may compute `value` into an empty of its own: any array
    but a constant and a public function's argument."""
    if not isinstance(value.type, TensorType):
        return False
    if isinstance(value, OpResult):
        return not isinstance(value.op, arith.ConstantOp)
    return not isinstance(value.block.parent_op(), func.FuncOp)


def linear_fresh_chains(module: ModuleOp) -> None:
    """Make, in place, each array's chain of writes linear (module docstring)."""
    order = {op: i for i, op in enumerate(module.walk())}  # uses are a set: program order, for stable text
    for op in list(module.walk()):
        if isinstance(op, tensor.EmptyOp):
            _one_use_per_empty(op, order)
    ops = list(module.walk())
    order = {op: i for i, op in enumerate(ops)}
    for op in ops:
        values = [*op.results, *(a for region in op.regions for block in region.blocks for a in block.args)]
        for value in values:
            if may_become_fresh(value):
                _copy_where_defined(value, shared_uses(value, order))
