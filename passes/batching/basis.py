"""Batched values known to be an identity basis, or a diagonal scaling of
one, and the cheap products with them.

A Jacobian maps its jvp (vjp) over the identity basis of an argument
(output): a batched tangent whose k-th element is 1 at flat index k
(irad/frontend/transformations.py builds it from two ramps). Batched as it
is, a matmul with it is a dense product, n³ work for what is the other
operand (transposed). `diagonal(v, bases)` reads the IR that made `v` and
says whether `v`, read in row-major order, holds the n×n matrix diag(s) (the
identity for no scales): the basis (its construction, or a batched argument
the batcher knows to be one), and what keeps it diagonal: reshapes,
transposes that keep the order of its two halves or swap them, products
with a value broadcast along one half. `matmul` then multiplies by the
diagonal instead of with it: the same value, with a zero product dropped
from each sum. Anything else is not recognised, and the product stays dense.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import DenseArrayBase, DenseIntOrFPElementsAttr, i64
from xdsl.dialects.linalg.ops import BroadcastOp, GenericOp, TransposeOp
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineMap

from irad.ir import tensor as T
from irad.ir.constants import constant_array
from irad.ir.types import is_tensor


@dataclass(frozen=True)
class Diagonal:
    """diag(product of `scales`), n×n, in row-major order (no scales: the identity)."""

    size: int
    scales: tuple[SSAValue, ...] = ()


def diagonal(v: SSAValue, bases: Mapping[SSAValue, int]) -> Diagonal | None:
    """What `v` is, if a diagonal matrix (module doc); `bases` maps the
    batched arguments known to be an identity basis to their size. Walks
    down to the identity (a loop, not recursion: an unrolled Python loop
    makes long chains), then checks what it passed with the size found."""
    transposes, factors = [], []
    while True:
        if not is_tensor(v.type):
            return None
        if v in bases:
            size = bases[v]
            break
        op = v.owner
        if isinstance(op, tensor.ReshapeOp):  # row-major order is kept
            v = op.source
        elif isinstance(op, TransposeOp):
            v = op.operands[0]
            transposes.append((T.shape(v), op.permutation.get_values()))
        elif isinstance(op, arith.MulfOp):
            left, right = (isinstance(x.owner, BroadcastOp) for x in (op.lhs, op.rhs))
            if left == right:
                return None
            factor, v = (op.lhs, op.rhs) if left else (op.rhs, op.lhs)
            factors.append(factor)
        elif isinstance(op, GenericOp):
            size = _identity_construction(op)
            if size is None:
                return None
            break
        else:
            return None
    if not all(_keeps_diagonal(dims, perm, size) for dims, perm in transposes):
        return None
    scales = [_half_broadcast(y, size) for y in reversed(factors)]  # the innermost first, as the dense product
    return None if any(s is None for s in scales) else Diagonal(size, tuple(scales))


def is_basis(v: SSAValue, bases: Mapping[SSAValue, int]) -> bool:
    """Whether `v` is the identity basis batched along its leading axis (the
    k-th element 1 at flat index k: an argument of shape (n,) + S, S of n elements)."""
    found = diagonal(v, bases)
    return found is not None and not found.scales and T.shape(v)[:1] == (found.size,)


def _splits(dims, size: int) -> list[int]:
    """Where `dims` splits into two halves of `size` elements each."""
    return [k for k in range(len(dims) + 1) if int(np.prod(dims[:k])) == size and int(np.prod(dims[k:])) == size]


def _keeps_diagonal(dims, perm, size: int) -> bool:
    """A transpose keeps a diagonal matrix (in row-major order) when it keeps
    the order of the axes of more than one element, or swaps its two halves
    whole (the matrix is symmetric)."""
    before = [d for d in range(len(dims)) if dims[d] != 1]
    after = [p for p in perm if dims[p] != 1]
    if after == before:
        return True
    return any(after == before[k:] + before[:k] for k in range(len(before) + 1)
               if int(np.prod([dims[d] for d in before[:k]])) == size)


def _half_broadcast(y: SSAValue, size: int) -> SSAValue | None:
    """The vector of `size` elements `y` repeats along one half of its axes
    (y[i, j] = w[j], or w[i]): a diagonal times `y` is scaled by it."""
    op = y.owner
    if not isinstance(op, BroadcastOp):
        return None
    dims, added = T.shape(y), list(op.dimensions.get_values())
    for k in _splits(dims, size):
        if added in (list(range(k)), list(range(k, len(dims)))):
            return op.input
    return None


def _identity_construction(op: GenericOp) -> int | None:
    """n, when `op` is the identity as the Jacobians build it: the cast to
    floats of ramp == ramp across the two axes of an n×n square (a ramp of
    distinct constants, broadcast along one axis and along the other)."""
    cast = _single_body_op(op, arith.UIToFPOp, 1)
    if cast is None or not isinstance(op.inputs[0].owner, GenericOp):
        return None
    compare = _single_body_op(op.inputs[0].owner, arith.CmpfOp, 2)
    if compare is None or compare.predicate.value.data != 1:  # 1: oeq
        return None
    down, across = (v.owner for v in op.inputs[0].owner.inputs)
    if not isinstance(down, BroadcastOp) or not isinstance(across, BroadcastOp):
        return None
    if sorted([list(down.dimensions.get_values()), list(across.dimensions.get_values())]) != [[0], [1]]:
        return None
    ramp = _constant_values(down.input)
    if ramp is None or ramp.ndim != 1 or not np.all(np.isfinite(ramp)) or len(set(ramp.tolist())) != len(ramp):
        return None
    other = _constant_values(across.input)
    if other is None or not np.array_equal(ramp, other):
        return None
    n = len(ramp)
    return n if T.shape(op.results[0]) == (n, n) else None


def _single_body_op(op: GenericOp, kind: type, operands: int) -> Operation | None:
    """The one op of `op`'s body, of `kind`, on its block's first arguments in
    order and yielded, over identity maps (else None)."""
    if len(op.inputs) != operands or len(op.outputs) != 1:
        return None
    if any(m.data != AffineMap.identity(m.data.num_dims) for m in op.indexing_maps.data):
        return None
    body = list(op.body.block.ops)
    if len(body) != 2 or not isinstance(body[0], kind):
        return None
    if list(body[0].operands) != list(op.body.block.args[:operands]) or list(body[1].operands) != [body[0].results[0]]:
        return None
    return body[0]


def _constant_values(v: SSAValue) -> np.ndarray | None:
    op = v.owner
    if not isinstance(op, arith.ConstantOp) or not isinstance(op.value, DenseIntOrFPElementsAttr):
        return None
    return constant_array(op.value)


def matmul(b, x: SSAValue, y: SSAValue, bases: Mapping[SSAValue, int]) -> SSAValue | None:
    """x @ y without the dense product when x or y is a diagonal (module
    doc): the other's rows (columns) scaled; None when neither is."""
    for diag, other, axis in ((x, y, 0), (y, x, 1)):
        found = diagonal(diag, bases)
        if found is None or T.shape(diag) != (found.size, found.size):
            continue
        if not found.scales:
            return other
        scale = T.reshape(b, found.scales[0], [found.size])
        for w in found.scales[1:]:
            scale = b.op(arith.MulfOp(scale, T.reshape(b, w, [found.size])))
        init = b.op(tensor.EmptyOp([], other.type))
        spread = b.op(BroadcastOp(scale, init, DenseArrayBase.from_list(i64, [1 - axis])))
        return b.op(arith.MulfOp(spread, other) if axis == 0 else arith.MulfOp(other, spread))
    return None


__all__ = ["Diagonal", "diagonal", "is_basis", "matmul"]
