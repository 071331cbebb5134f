"""Blocked sums, natively and on IREE: a long `linalg.reduce` of additions
becomes a tree of short ones, so its rounding error grows with the logarithm
of its length, as numpy's pairwise summation does, not with the length.

mlir-opt (and IREE's code generator) lowers a reduction to one loop that adds every element to one
accumulator, in order: the error of a float32 sum of n elements grows as
n * eps (the mean of 4M float32 values was off by 0.3%, a sum of 1M by 1%,
where numpy is within 1e-8). Before mlir-opt, `block_sums` rewrites each
`linalg.reduce` whose body is one `arith.addf` over a static extent of more
than SEQUENTIAL elements:

- the reduced axes, when they are adjacent, are collapsed into one;
- that axis of extent s = q * k * LANES (the last axis) or s = q * k (another
  axis) is expanded into (q, k, LANES) or (q, k), and the k axis is reduced:
  each partial sum adds k elements, LANES or the axes after it apart, so the
  loop adds whole vectors (no in-order chain); the partial sums, s / k of
  them along the axis, are reduced the same way, until at most SEQUENTIAL are
  left, which one `linalg.reduce` adds in order onto the original init;
- an extent no k in BLOCKS divides leaves a tail of fewer than k * LANES
  elements, summed in order first and passed on as the init.

Each level adds at most max(BLOCKS) - 1 roundings to an element's path, so the
error of a sum of n elements is at most about
(SEQUENTIAL + 7 * log_k(n / SEQUENTIAL)) * eps relative to the sum of
magnitudes (numpy's: about (128 + log2(n / 128)) * eps). The first level
reads the input through `tensor.expand_shape`, through which mlir-opt's
`--linalg-fuse-elementwise-ops` still fuses an elementwise producer
(`np.sum(np.tanh(x))` computes no temporary); a tail's `extract_slice` stops
that fusion, and the producer is then written to a buffer first.

Reductions over axes that are not adjacent, dynamic shapes, and other
combiners (max and min are exact; products) are left as they are.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, Float32Type, Float64Type, IntegerAttr, ModuleOp, TensorType, i64
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Block, Region, SSAValue

from irad.ir import tensor as tensor_ir
from irad.ir.constants import zero_constant
from irad.ir.builder import IRBuilder

# Sums of at most this many elements stay one in-order chain (as numpy's
# blocks of 128 are summed in one pass).
SEQUENTIAL = 128
# How far apart the elements a partial sum of the last axis adds are, the
# largest that divides first: the loop over a block's rows adds rows of LANES
# elements, which LLVM vectorises (a row of 16 floats, one 64-byte line, was
# unrolled but left scalar: it could not keep the partial sums in registers).
LANES = (256, 128, 64, 32, 16)
# How many elements each partial sum adds, the largest that divides first.
BLOCKS = (16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2)


def _is_sum(op) -> bool:
    if not isinstance(op, linalg.ReduceOp) or not op.results:
        return False
    body = list(op.region.block.ops)
    if len(body) != 2 or not isinstance(body[0], arith.AddfOp):
        return False
    x = op.input.type
    return (isinstance(x, TensorType) and x.has_static_shape()
            and isinstance(x.element_type, Float32Type | Float64Type))


def _reduce(b: IRBuilder, x: SSAValue, init: SSAValue | None, axis: int) -> SSAValue:
    """The sum of `x` over `axis` onto `init` (zeros if None)."""
    dims = tensor_ir.shape(x)
    elem = tensor_ir.element(x)
    if init is None:
        init = _zeros(b, tensor_ir.tensor_type(elem, dims[:axis] + dims[axis + 1:]))
    body = Block(arg_types=[elem, elem])
    added = arith.AddfOp(body.args[0], body.args[1])
    body.add_ops([added, linalg.YieldOp(added.result)])
    return b.op(linalg.ReduceOp(x, init, DenseArrayBase.from_list(i64, [axis]), Region(body)))


def _zeros(b: IRBuilder, t: TensorType) -> SSAValue:
    """A tensor of zeros as a splat of one zero (mlir-opt folds it into the
    dense constant it stands for), not a dense constant, whose every element
    xDSL would hold: the partial sums of a sum are 1/16 to 1/2 of its
    elements, 15 GB for an input of 2 * 10^10 float32 elements, which
    tests/backends/test_blocked_sums.py lowers without allocating it."""
    return tensor_ir.splat(b, b.op(zero_constant(t.element_type)), t.get_shape())


def _groups(groups: Sequence[Sequence[int]]) -> ArrayAttr:
    return ArrayAttr([ArrayAttr([IntegerAttr(i, i64) for i in g]) for g in groups])


def _expand(b: IRBuilder, x: SSAValue, axis: int, parts: Sequence[int]) -> SSAValue:
    """`x` with `axis` split into `parts`."""
    dims = tensor_ir.shape(x)
    out = [*dims[:axis], *parts, *dims[axis + 1:]]
    groups = [[i] for i in range(axis)] + [list(range(axis, axis + len(parts)))]
    groups += [[axis + len(parts) + i] for i in range(len(dims) - axis - 1)]
    t = tensor_ir.tensor_type(tensor_ir.element(x), out)
    return b.op(tensor.ExpandShapeOp(x, [], _groups(groups), out, t))


def _collapse(b: IRBuilder, x: SSAValue, first: int, last: int) -> SSAValue:
    """`x` with axes first..last (inclusive) made one."""
    dims = tensor_ir.shape(x)
    groups = [[i] for i in range(first)] + [list(range(first, last + 1))]
    groups += [[i] for i in range(last + 1, len(dims))]
    out = [*dims[:first], _product(dims[first:last + 1]), *dims[last + 1:]]
    t = tensor_ir.tensor_type(tensor_ir.element(x), out)
    return b.op(tensor.CollapseShapeOp(operands=[x], properties={"reassociation": _groups(groups)},
                                       result_types=[t]))


def _slice(b: IRBuilder, x: SSAValue, axis: int, start: int, size: int) -> SSAValue:
    return tensor_ir.slice_along(b, x, axis, start, size)


def _product(dims: Sequence[int]) -> int:
    n = 1
    for d in dims:
        n *= d
    return n


def _split(s: int, last: bool) -> tuple[int, int, int]:
    """(k, lanes, main): blocks of k partial sums `lanes` apart over the first
    `main` elements of an axis of extent s (main < s leaves a tail)."""
    options = LANES if last else (1,)
    for lanes in options:
        for k in BLOCKS:
            if s % (k * lanes) == 0:
                return k, lanes, s
    k, lanes = next((k, lanes) for lanes in options for k in BLOCKS if k * lanes <= s)
    return k, lanes, s - s % (k * lanes)


def _blocked(b: IRBuilder, x: SSAValue, axis: int, init: SSAValue) -> SSAValue:
    """The sum of `x` over `axis` onto `init`, in a tree of short sums."""
    dims = tensor_ir.shape(x)
    s = dims[axis]
    if s <= SEQUENTIAL:
        return _reduce(b, x, init, axis)
    last = axis == len(dims) - 1
    k, lanes, main = _split(s, last)
    if main < s:  # the tail first, onto init
        init = _blocked(b, _slice(b, x, axis, main, s - main), axis, init)
        x = _slice(b, x, axis, 0, main)
    if last:
        parts = _reduce(b, _expand(b, x, axis, [main // (k * lanes), k, lanes]), None, axis + 1)
        parts = _collapse(b, parts, axis, axis + 1)
    else:
        parts = _reduce(b, _expand(b, x, axis, [main // k, k]), None, axis + 1)
    return _blocked(b, parts, axis, init)


def block_sums(module: ModuleOp) -> None:
    """Rewrite every long sum of `module` into a tree of short ones (above)."""
    for op in [op for op in module.walk() if _is_sum(op)]:
        axes = sorted(op.dimensions.get_values())
        x = op.input
        if axes != list(range(axes[0], axes[-1] + 1)) or _product(tensor_ir.shape(x)[a] for a in axes) <= SEQUENTIAL:
            continue
        b = IRBuilder(before=op)
        if len(axes) > 1:
            x = _collapse(b, x, axes[0], axes[-1])
        total = _blocked(b, x, axes[0], op.init)
        op.results[0].replace_all_uses_with(total)
        op.detach()
        op.erase()
