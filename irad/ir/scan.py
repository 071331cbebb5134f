"""Cumulative sums and products along one axis: the ops `irad.cumsum` and
`irad.linear_scan` (irad/ir/dialect.py) and the forms backends compute them in.

- `cumsum(b, x, axis, reverse)` emits `irad.cumsum`; `cumprod(b, x, axis)`
  emits `irad.linear_scan` (h[k] = x[k] h[k-1], from x's first element).
- `loops`: natively (`expand_scans`, from `expand_for_llvm`) each is ONE loop
  nest over the array in memory order: each element combined with its
  neighbour just before it along the axis (after it, reversed), so sums and
  products run element by element in numpy's order (numpy's np.cumsum is
  sequential, not pairwise: float32 drifts the same way in both) and the other
  axes are the inner, contiguous loops.
- `blocked_scan`: a scan made of tensor ops alone (Hillis-Steele within
  blocks, then the blocks' totals), the form IREE gets for `irad.cumsum`
  (irad/backends/iree/forms.py).
"""

from __future__ import annotations

from xdsl.dialects import arith, scf, tensor
from xdsl.dialects.builtin import IndexType, IntegerType, ModuleOp, TensorType
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern

from irad.ir import tensor as T
from irad.ir.builder import IRBuilder
from irad.ir.dialect import CumsumOp, LinearScanOp, ScanOp


def cumsum(b, x: SSAValue, axis: int, reverse: bool = False) -> SSAValue:
    """np.cumsum(x, axis) (reverse: each element summed with those after it)."""
    return b.op(CumsumOp(x, axis, reverse))


def adder(element) -> type[Operation]:
    return arith.AddiOp if isinstance(element, IntegerType) else arith.AddfOp


# ---- one loop nest (mlir-opt) ------------------------------------------------------------
def loops(b: IRBuilder, op: ScanOp) -> SSAValue:
    """`op` as nested scf.for loops over its result, the axis's loop at its
    place in memory order (the loops after it run along contiguous rows):
    y = x, then y[.., k, ..] += y[.., k - 1, ..] for k = 1 .. n-1 (reverse:
    y[.., k, ..] += y[.., k + 1, ..] for k = n-2 .. 0); a linear scan starts
    from b and adds a[.., k, ..] times its neighbour."""
    start = op.b if isinstance(op, LinearScanOp) else op.input
    dims, axis, reverse = T.shape(start), op.axis_value, op.reverse is not None
    element = T.element(start)
    integer = isinstance(element, IntegerType)
    constants: dict[int, SSAValue] = {}

    def index(n: int) -> SSAValue:  # made once, before the nest
        if n not in constants:
            constants[n] = b.index(n)
        return constants[n]

    one = index(1)

    def nest(d: int, y: SSAValue, where: list[SSAValue], e: IRBuilder) -> SSAValue:
        if d == len(dims):
            k = where[axis]
            neighbour = e.value(arith.AddiOp(k, one) if reverse else arith.SubiOp(k, one))
            before = e.value(tensor.ExtractOp(y, [neighbour if i == axis else v for i, v in enumerate(where)], element))
            if isinstance(op, LinearScanOp):
                factor = e.value(tensor.ExtractOp(op.a, where, element))
                before = e.value(arith.MuliOp(factor, before) if integer else arith.MulfOp(factor, before))
            total = e.value(adder(element)(before, e.value(tensor.ExtractOp(y, where, element))))
            return e.value(tensor.InsertOp(total, y, where))
        n = dims[d]
        lower, upper = (1, n) if d == axis and not reverse else (0, n - 1 if d == axis else n)
        bounds = index(lower), index(max(upper, lower))
        last = index(n - 2) if d == axis and reverse else None
        body = Block(arg_types=[IndexType(), y.type])
        inner = IRBuilder(body)
        i, carried = body.args
        if last is not None:  # i = 0 .. n-2 runs k = n-2 .. 0
            i = inner.value(arith.SubiOp(last, i))
        inner.insert(scf.YieldOp(nest(d + 1, carried, [*where, i], inner)))
        return e.value(scf.ForOp(*bounds, one, [y], Region(body)))

    return nest(0, start, [], b)


class _ScanAsLoops(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, ScanOp):
            rewriter.replace(op, [], [loops(IRBuilder(before=op), op)])


def expand_scans(module: ModuleOp) -> None:
    """Every irad.cumsum and irad.linear_scan of `module` as its loop nest, in
    place (for mlir-opt 22)."""
    PatternRewriteWalker(_ScanAsLoops(), apply_recursively=False).rewrite_module(module)


def linear_scan(b, a: SSAValue, x: SSAValue, axis: int, reverse: bool = False) -> SSAValue:
    """h[k] = a[k] h[k-1] + x[k] along the axis (reverse: h[k+1]), h[0] = x[0]."""
    return b.op(LinearScanOp(a, x, axis, reverse))


def shifted(b, x: SSAValue, axis: int, later: bool) -> SSAValue:
    """x moved one place along the axis, a zero entering: later, y[k] = x[k-1]
    (y[0] = 0); else y[k] = x[k+1] (y[n-1] = 0)."""
    n = T.shape(x)[axis]
    zero = _fill(b, x, axis, 1, 0 if isinstance(T.element(x), IntegerType) else 0.0)
    if n <= 1:
        return zero if n == 1 else x
    if later:
        return T.concat(b, [zero, T.slice_along(b, x, axis, 0, n - 1)], axis)
    return T.concat(b, [T.slice_along(b, x, axis, 1, n - 1), zero], axis)


def cumprod(b, x: SSAValue, axis: int) -> SSAValue:
    """np.cumprod(x, axis): the linear scan with a = x, b = x's first element
    along the axis, zeros after it (-0.0: x[k] h[k-1] + -0.0 keeps the sign
    of a zero product, as numpy's)."""
    n = T.shape(x)[axis]
    if n <= 1:
        return x
    first = T.slice_along(b, x, axis, 0, 1)
    zeros = _fill(b, x, axis, n - 1, 0 if isinstance(T.element(x), IntegerType) else -0.0)
    return linear_scan(b, x, T.concat(b, [first, zeros], axis), axis)


# ---- tensor ops alone: blocked Hillis-Steele ------------------------------------------
# Along an axis longer than this, the scan runs in blocks of SCAN_BLOCK.
SCAN_BLOCK = 16


def blocked_scan(b, x: SSAValue, axis: int, combiner: type[Operation], neutral) -> SSAValue:
    """Blocks of SCAN_BLOCK elements scanned each (Hillis-Steele, log2 of the
    block's passes over the array), the blocks' totals scanned the same way
    (recursively, on an array SCAN_BLOCK times shorter), and each block's
    exclusive prefix of totals combined in: about 6 passes over the array,
    where one Hillis-Steele scan of n elements makes log2(n) (20 at 10^6).
    The axis is padded with the neutral element (-0.0 keeps the sign of a
    zero sum) to whole blocks."""
    dims = list(T.shape(x))
    n = dims[axis]
    if n <= SCAN_BLOCK:
        return _hillis_steele(b, x, axis, combiner, neutral)
    blocks = -(-n // SCAN_BLOCK)
    if blocks * SCAN_BLOCK != n:
        x = T.concat(b, [x, _fill(b, x, axis, blocks * SCAN_BLOCK - n, neutral)], axis)
    split = dims[:axis] + [blocks, SCAN_BLOCK] + dims[axis + 1:]
    within = _hillis_steele(b, T.reshape(b, x, split), axis + 1, combiner, neutral)
    totals = T.slice_along(b, within, axis + 1, SCAN_BLOCK - 1, 1)  # (..., blocks, 1, ...)
    before = blocked_scan(b, totals, axis, combiner, neutral)
    before = T.concat(b, [_fill(b, before, axis, 1, neutral), T.slice_along(b, before, axis, 0, blocks - 1)], axis)
    combined = b.op(combiner(within, T.broadcast_to(b, before, split)))
    flat = T.reshape(b, combined, dims[:axis] + [blocks * SCAN_BLOCK] + dims[axis + 1:])
    return flat if blocks * SCAN_BLOCK == n else T.slice_along(b, flat, axis, 0, n)


def _fill(b, like: SSAValue, axis: int, count: int, neutral) -> SSAValue:
    dims = T.shape(like)
    return T.dense(b, neutral, TensorType(T.element(like), [count if d == axis else m for d, m in enumerate(dims)]))


def _hillis_steele(b, x: SSAValue, axis: int, combiner: type[Operation], neutral) -> SSAValue:
    """After the step with shift s, each element combines the 2s elements up
    to it; the neutral element fills in before the start."""
    n, shift = T.shape(x)[axis], 1
    while shift < n:
        shifted = T.concat(b, [_fill(b, x, axis, shift, neutral), T.slice_along(b, x, axis, 0, n - shift)], axis)
        x = b.op(combiner(x, shifted))
        shift *= 2
    return x


def reversed_along(b, x: SSAValue, axis: int) -> SSAValue:
    """x with the axis in reverse order (a strided slice)."""
    n = T.shape(x)[axis]
    return T.slice_along(b, x, axis, n - 1, n, -1) if n > 1 else x


def blocked_cumsum(b, op: CumsumOp) -> SSAValue:
    """`op` as tensor ops alone (blocked_scan; reverse: on the reversed axis)."""
    x, axis = op.input, op.axis_value
    neutral = 0 if isinstance(T.element(x), IntegerType) else -0.0
    if op.reverse is None:
        return blocked_scan(b, x, axis, adder(T.element(x)), neutral)
    scanned = blocked_scan(b, reversed_along(b, x, axis), axis, adder(T.element(x)), neutral)
    return reversed_along(b, scanned, axis)


__all__ = ["SCAN_BLOCK", "blocked_cumsum", "blocked_scan", "cumprod", "cumsum", "expand_scans", "linear_scan", "loops", "shifted"]
