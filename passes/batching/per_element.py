"""A reverse-mode derivative request in batched code whose batched callee has
a masked loop (a trip count that varies along the batch, passes/batching/
masks.py), as an scf.for over the batch: each element's operands sliced out,
the request asked of the unbatched callee, its results put in their rows.

Reverse mode refuses a masked loop: its discarded iterations would pass a
cotangent of zero times derivatives that may be infinite there. Asked of one
element at a time, the loop runs its own trip count and irad-differentiate
records its own tape, so `vmap(grad(f))` through such a loop is each
element's gradient, computed as a loop over the batch inside compiled code.
"""

from __future__ import annotations

from xdsl.dialects import scf, tensor
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, TensorType
from xdsl.ir import Block, Operation, Region, SSAValue

from irad.ir import tensor as T
from irad.ir.constants import zero_constant
from irad.passes.batching.masks import row


def request_per_element(b, op: Operation) -> list[SSAValue]:
    """`op` asked once per element of the batch; its results, each batched (`b`: the BatchBuilder)."""
    types = [b.batched_type(r.type) for r in op.results]
    inits = [b.op(zero_constant(t)) for t in types]
    block = Block(arg_types=[IndexType(), *types])
    with b.at_end(block):
        at = block.args[0]
        operands = [row(b, b.get(v), at) if b.is_batched(v) else b.get(v) for v in op.operands]
        one = b.insert(op.__class__.create(
            operands=operands, result_types=[r.type for r in op.results],
            properties=dict(op.properties), attributes=dict(op.attributes),
        ))
        block.add_op(scf.YieldOp(*(_put(b, v, rows, at) for v, rows in zip(one.results, block.args[1:]))))
    loop = scf.ForOp(b.index(0), b.index(b.size), b.index(1), inits, Region(block))
    loop.location = op.location
    b.insert(loop)
    return list(loop.results)


def _put(b, v: SSAValue, rows: SSAValue, at: SSAValue) -> SSAValue:
    """`rows` with `v` as its row `at`."""
    dims = T.shape(rows)[1:]
    if not dims:  # a number (or a 0-d tensor's)
        number = T.extract_scalar(b, v) if isinstance(v.type, TensorType) else v
        return b.op(tensor.InsertOp(number, rows, [at]))
    return b.op(tensor.InsertSliceOp.get(
        T.reshape(b, v, [1, *dims]), rows, [1, *dims], [DYNAMIC_INDEX, *[0] * len(dims)], [1] * (len(dims) + 1),
        [at], [], [], rows.type,
    ))


__all__ = ["request_per_element"]
