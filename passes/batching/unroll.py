"""An irad.vmap request as one call per element of the batch: the callee's
arguments sliced out of the batched operands, its results stacked along
their out_axes. irad-vmap takes this way where the batcher refuses a request
marked `irad.unrollable` (a Jacobian's sweeps: jacfwd, jacrev)."""

from __future__ import annotations

from xdsl.dialects import func, tensor
from xdsl.ir import SSAValue

from irad.ir import tensor as T
from irad.ir.builder import IRBuilder
from irad.ir.dialect import VmapOp, unbatched_type
from irad.ir.types import is_tensor
from irad.passes.batching.batcher import broadcast


def unroll(request: VmapOp) -> None:
    """Replace `request` by `axis_size` calls of its callee."""
    b = IRBuilder(before=request)
    size, callee = request.size, request.callee.root_reference.data
    types = [unbatched_type(v.type, a) for v, a in zip(request.res, request.out_axis_list)]
    calls = []
    for k in range(size):
        args = [v if axis is None else _element(b, v, axis, k) for v, axis in zip(request.args, request.in_axis_list)]
        calls.append(b.results(func.CallOp(callee, args, types)))
    for i, (old, axis) in enumerate(zip(request.res, request.out_axis_list)):
        if axis is None:  # the same for every element (the verifier's contract): the first
            old.replace_all_uses_with(calls[0][i])
            continue
        parts = [T.reshape(b, _as_tensor(b, c[i]), T.shape(old)[:axis] + (1,) + T.shape(old)[axis + 1:])
                 for c in calls]
        old.replace_all_uses_with(T.concat(b, parts, axis) if parts else T.dense(b, 0.0, old.type))
    request.detach()
    request.erase()


def _element(b: IRBuilder, v: SSAValue, axis: int, k: int) -> SSAValue:
    """Element `k` of `v` along `axis`, without that axis (a number from a vector)."""
    dims = T.shape(v)
    if len(dims) == 1:
        return b.op(tensor.ExtractOp(v, [b.index(k)], T.element(v)))
    return T.reshape(b, T.slice_along(b, v, axis, k, 1), dims[:axis] + dims[axis + 1:])


def _as_tensor(b: IRBuilder, v: SSAValue) -> SSAValue:
    return v if is_tensor(v.type) else broadcast(b, v, 1)


__all__ = ["unroll"]
