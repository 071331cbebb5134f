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
  (irad/backends/iree/forms.py); `blocked_linear_scan` the same for
  `irad.linear_scan`, on the pairs (products of a, partial sums h): its
  products are taken in another order than numpy's (equal within rounding;
  a zero's sign may differ, and, as with any reordering, a product of a
  stretch of elements may overflow where numpy's running product does not).
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


def blocked_scan(b, x: SSAValue, axis: int, combiner: type[Operation], neutral, reverse: bool = False) -> SSAValue:
    """Blocks of SCAN_BLOCK elements scanned each (Hillis-Steele, log2 of the
    block's passes over the array), the blocks' totals scanned the same way
    (recursively, on an array SCAN_BLOCK times shorter), and each block's
    exclusive prefix of totals combined in: about 6 passes over the array,
    where one Hillis-Steele scan of n elements makes log2(n) (20 at 10^6).
    The axis is padded with the neutral element (-0.0 keeps the sign of a
    zero sum) to whole blocks, where the scan ends. Reversed (each element
    combined with those after it), the same runs the other way, with no
    reversed copies (as `blocked_linear_scan`)."""
    dims = list(T.shape(x))
    n = dims[axis]
    if n <= SCAN_BLOCK:
        return _hillis_steele(b, x, axis, combiner, neutral, reverse)
    blocks = -(-n // SCAN_BLOCK)
    padding = blocks * SCAN_BLOCK - n
    if padding:
        pad = _fill(b, x, axis, padding, neutral)
        x = T.concat(b, [pad, x] if reverse else [x, pad], axis)
    split = dims[:axis] + [blocks, SCAN_BLOCK] + dims[axis + 1:]
    within = _hillis_steele(b, T.reshape(b, x, split), axis + 1, combiner, neutral, reverse)
    totals = T.slice_along(b, within, axis + 1, 0 if reverse else SCAN_BLOCK - 1, 1)  # (..., blocks, 1, ...)
    scanned = blocked_scan(b, totals, axis, combiner, neutral, reverse)
    none = _fill(b, scanned, axis, 1, neutral)  # before the first block (reversed: after the last)
    before = T.concat(b, [T.slice_along(b, scanned, axis, 1, blocks - 1), none] if reverse
                      else [none, T.slice_along(b, scanned, axis, 0, blocks - 1)], axis)
    combined = b.op(combiner(within, T.broadcast_to(b, before, split)))
    flat = T.reshape(b, combined, dims[:axis] + [blocks * SCAN_BLOCK] + dims[axis + 1:])
    return T.slice_along(b, flat, axis, padding if reverse else 0, n) if padding else flat


def _fill(b, like: SSAValue, axis: int, count: int, neutral) -> SSAValue:
    dims = T.shape(like)
    return T.dense(b, neutral, TensorType(T.element(like), [count if d == axis else m for d, m in enumerate(dims)]))


def _hillis_steele(b, x: SSAValue, axis: int, combiner: type[Operation], neutral, reverse: bool) -> SSAValue:
    """After the step with shift s, each element combines the 2s elements up
    to it (reversed: from it); the neutral element fills in before the
    start."""
    n, shift = T.shape(x)[axis], 1
    while shift < n:
        fill = _fill(b, x, axis, shift, neutral)
        shifted = T.concat(b, [T.slice_along(b, x, axis, shift, n - shift), fill] if reverse
                           else [fill, T.slice_along(b, x, axis, 0, n - shift)], axis)
        x = b.op(combiner(x, shifted))
        shift *= 2
    return x


def blocked_cumsum(b, op: CumsumOp) -> SSAValue:
    """`op` as tensor ops alone (blocked_scan)."""
    x = op.input
    neutral = 0 if isinstance(T.element(x), IntegerType) else -0.0
    return blocked_scan(b, x, op.axis_value, adder(T.element(x)), neutral, op.reverse is not None)


def multiplier(element) -> type[Operation]:
    return arith.MuliOp if isinstance(element, IntegerType) else arith.MulfOp


def blocked_linear_scan(b, op: LinearScanOp) -> SSAValue:
    """`op` as tensor ops alone: blocks of SCAN_BLOCK elements, each block's
    recurrence from 0 by Hillis-Steele on pairs (`_pair_steps`), the
    blocks' ends chained the same way (recursively), then each block's
    carry, times the products of its a, added in. Reversed, the same runs
    the other way, with no reversed copies: on reversed copies of a and b,
    IREE 3.13 failed to compile np.cumprod's gradient ("'vector.load' op
    memref strides must be non-negative")."""
    return _blocked_pairs(b, op.a, op.b, op.axis_value, op.reverse is not None)


def _blocked_pairs(b, a: SSAValue, h: SSAValue, axis: int, reverse: bool) -> SSAValue:
    dims = list(T.shape(h))
    n = dims[axis]
    if n <= SCAN_BLOCK:
        return _pair_steps(b, a, h, axis, reverse, True)[1]
    integer = isinstance(T.element(h), IntegerType)
    blocks = -(-n // SCAN_BLOCK)
    padding = blocks * SCAN_BLOCK - n
    if padding:  # where the recurrence ends (no element reads it), cut off after
        pads = (_fill(b, a, axis, padding, 1 if integer else 1.0), _fill(b, h, axis, padding, 0 if integer else 0.0))
        a, h = (T.concat(b, [pad, x] if reverse else [x, pad], axis) for pad, x in zip(pads, (a, h)))
    split = dims[:axis] + [blocks, SCAN_BLOCK] + dims[axis + 1:]
    a, h = T.reshape(b, a, split), T.reshape(b, h, split)
    products, within = _pair_steps(b, a, h, axis + 1, reverse, False)
    # the block the recurrence starts in starts from the true 0 (its partial sums are values)
    first = blocks - 1 if reverse else 0
    _, start = _pair_steps(b, T.slice_along(b, a, axis, first, 1), T.slice_along(b, h, axis, first, 1), axis + 1,
                           reverse, True)
    others = T.slice_along(b, within, axis, 0 if reverse else 1, blocks - 1)
    within = T.concat(b, [others, start] if reverse else [start, others], axis)
    last = 0 if reverse else SCAN_BLOCK - 1  # each block's last element in the recurrence's order
    ends = _blocked_pairs(b, T.slice_along(b, products, axis + 1, last, 1), T.slice_along(b, within, axis + 1, last, 1),
                          axis, reverse)  # (..., blocks, 1, ...)
    # block j's carry is the end of the block before it (reversed: after it)
    carried_blocks, carry_blocks = (0, 1) if reverse else (1, 0)
    later = split[:axis] + [blocks - 1] + split[axis + 1:]
    carry = T.broadcast_to(b, T.slice_along(b, ends, axis, carry_blocks, blocks - 1), later)
    element = T.element(h)
    scaled = b.op(multiplier(element)(T.slice_along(b, products, axis, carried_blocks, blocks - 1), carry))
    carried = b.op(adder(element)(scaled, T.slice_along(b, within, axis, carried_blocks, blocks - 1)))
    combined = T.concat(b, [carried, start] if reverse else [start, carried], axis)  # the first block has no carry
    flat = T.reshape(b, combined, dims[:axis] + [blocks * SCAN_BLOCK] + dims[axis + 1:])
    return T.slice_along(b, flat, axis, padding if reverse else 0, n) if padding else flat


def _pair_steps(b, a: SSAValue, h: SSAValue, axis: int, reverse: bool, from_start: bool
                ) -> tuple[SSAValue, SSAValue]:
    """Hillis-Steele on pairs: after the step with shift s, h[k] is the
    recurrence over the 2s elements up to k started from 0, a[k] their a's
    product: h[k] = a[k] h[k-s] + h[k] and a[k] = a[k] a[k-s] (reversed:
    k+s), in the recurrence's order of operands; the first s elements
    (reversed: the last) keep theirs, nothing precedes them.

    A partial sum h[k-s] of 0 that does not reach back to where the
    recurrence starts (`from_start`: index 0 along the axis, reversed the
    last, is that start) adds nothing, and is skipped (h[k] kept): its
    product with an infinite a[k] would be NaN, which the recurrence,
    multiplying a[k] by the sum so far, never forms (np.cumprod of
    [1, 2, inf, 3] is [1, 2, inf, inf]). A sum that does reach back is
    the recurrence's own value, and is multiplied as it would be
    (np.cumprod of [0, inf] is [0, nan])."""
    n, shift = T.shape(h)[axis], 1
    element = T.element(h)
    while shift < n:
        # the elements combined, and those they combine with
        at, source, kept = (0, shift, n - shift) if reverse else (shift, 0, 0)
        factors = T.slice_along(b, a, axis, at, n - shift)
        before = T.slice_along(b, h, axis, source, n - shift)
        current = T.slice_along(b, h, axis, at, n - shift)
        summed = b.op(adder(element)(b.op(multiplier(element)(factors, before)), current))
        if not isinstance(element, IntegerType):
            summed = _skipping_zeros(b, summed, before, current, axis, reverse, min(shift, n - shift) if from_start else 0)
        products = b.op(multiplier(element)(factors, T.slice_along(b, a, axis, source, n - shift)))
        pieces = [(summed, T.slice_along(b, h, axis, kept, shift)), (products, T.slice_along(b, a, axis, kept, shift))]
        h, a = (T.concat(b, [new, same] if reverse else [same, new], axis) for new, same in pieces)
        shift *= 2
    return a, h


def _skipping_zeros(b, summed: SSAValue, before: SSAValue, current: SSAValue, axis: int, reverse: bool,
                    values: int) -> SSAValue:
    """`summed`, but `current` where `before` is 0, except for the `values`
    elements (first, reversed last) whose `before` reaches back to the start."""
    n = T.shape(summed)[axis]
    lo, size = (0, n - values) if reverse else (values, n - values)
    if size == 0:
        return summed
    part = lambda x: T.slice_along(b, x, axis, lo, size) if size != n else x  # noqa: E731
    zero = T.dense(b, 0.0, part(before).type)
    guarded = T.select(b, T.compare(b, "oeq", part(before), zero), part(current), part(summed))
    if size == n:
        return guarded
    unguarded = T.slice_along(b, summed, axis, n - values if reverse else 0, values)
    return T.concat(b, [guarded, unguarded] if reverse else [unguarded, guarded], axis)


__all__ = ["SCAN_BLOCK", "blocked_cumsum", "blocked_linear_scan", "blocked_scan", "cumprod", "cumsum", "expand_scans", "linear_scan", "loops", "shifted"]
