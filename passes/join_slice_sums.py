"""
Sums of slices written into zeros, joined: `insert(a, 0, [0:n]) + insert(b, 0, [n:m])
-> concat(a, b)`, when the slices tile the sum's whole tensor along one axis (a
slice summed twice, as the cotangent of `x * x` for a slice x is, is summed first:
`a + a`).

A gradient makes these: the cotangent of a tensor read in slices (`gates[:, 0:n]`,
`gates[:, n:2n]`, ..., as an LSTM splits its gates) is the sum over the slices of
each slice's cotangent written into a tensor of zeros. Summed as written, that is
one zero-filled tensor per slice and an add over the whole tensor per slice but
one; joined, it is one concatenation (`np.concatenate` on the numpy backend; natively,
each piece copied into its place).

Values: every element of the sum is one slice's element plus zeros, which is that
element, except that -0.0 + 0.0 is +0.0: where a slice holds -0.0 the sum held +0.0
and the concatenation keeps -0.0. Equal as numbers; nothing else differs.
"""

from xdsl.context import Context
from xdsl.dialects import arith, builtin, tensor
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern

from irad.ir.constants import is_splat_of
from irad.ir.isa import isa


def _slice_into_zeros(value: SSAValue, result_type: TensorType, zeros: dict) -> tensor.InsertSliceOp | None:
    """The insert_slice that makes `value`, if it writes a static slice (strides 1,
    no rank reduction) into zeros of `result_type`. `zeros` remembers which
    destinations are zeros (the slices of one sum share theirs: a splat check
    reads a whole dense constant)."""
    op = value.owner
    if not isinstance(op, tensor.InsertSliceOp) or op.dest.type != result_type or op.offsets or op.sizes or op.strides:
        return None
    sizes = tuple(op.static_sizes.get_values())
    if (
        any(s != 1 for s in op.static_strides.get_values())
        or not isinstance(op.source.type, TensorType)
        or tuple(op.source.type.get_shape()) != sizes
        or not _zeros(op.dest, zeros)
    ):
        return None
    return op


def _zeros(value: SSAValue, zeros: dict) -> bool:
    found = zeros.get(value)
    if found is None:
        found = zeros[value] = is_splat_of(value, 0.0)
    return found


def _inner_add(value: SSAValue, result_type: TensorType) -> arith.AddfOp | None:
    """The add that makes `value`, if it is part of the same sum (an addf of the
    sum's type used by its parent alone)."""
    inner = value.owner
    if isinstance(inner, arith.AddfOp) and inner.result.type == result_type and value.has_one_use():
        return inner
    return None


def _leaves(op: Operation, result_type: TensorType, leaves: list[tensor.InsertSliceOp], zeros: dict) -> bool:
    """Collect the slices summed by the addf tree rooted at `op`, left to right;
    False if an operand is neither an inner add nor a slice. A loop, not
    recursion: an unrolled loop's gradient sums thousands of slices in a chain."""
    stack = list(reversed(op.operands))
    while stack:
        operand = stack.pop()
        inner = _inner_add(operand, result_type)
        if inner is not None:
            stack.extend(reversed(inner.operands))
            continue
        leaf = _slice_into_zeros(operand, result_type, zeros)
        if leaf is None:
            return False
        leaves.append(leaf)
    return True


def _sums_of_slices(root: arith.AddfOp, result_type: TensorType, zeros: dict) -> list[arith.AddfOp]:
    """The largest trees of adds inside the tree at `root` whose leaves are all
    slices written into zeros (the root's own, if all of its are), found in one
    pass over the tree: each add is looked at once, so a chain of n adds costs n."""
    order: list[arith.AddfOp] = []  # every add before the add using it
    stack = [root]
    while stack:
        op = stack.pop()
        order.append(op)
        stack.extend(inner for v in op.operands if (inner := _inner_add(v, result_type)) is not None)
    order.reverse()
    slices: dict[arith.AddfOp, bool] = {}
    for op in order:
        slices[op] = all(
            slices[inner] if (inner := _inner_add(v, result_type)) is not None
            else _slice_into_zeros(v, result_type, zeros) is not None
            for v in op.operands
        )
    if slices[root]:
        return [root]
    return [inner for op in order if not slices[op] for v in op.operands
            if (inner := _inner_add(v, result_type)) is not None and slices[inner]]


def _tiling_axis(leaves: list[tensor.InsertSliceOp], shape: tuple[int, ...]) -> int | None:
    """The axis along which the slices, in order, tile the whole tensor; None if
    they do not (a gap, an overlap, or cut along two axes)."""
    cut = {
        d
        for leaf in leaves
        for d, size in enumerate(leaf.static_sizes.get_values())
        if size != shape[d]
    }
    if len(cut) != 1:
        return None
    (axis,) = cut
    end = 0
    for leaf in leaves:
        offsets = leaf.static_offsets.get_values()
        if any(o != 0 for d, o in enumerate(offsets) if d != axis) or offsets[axis] != end:
            return None
        end += leaf.static_sizes.get_values()[axis]
    return axis if end == shape[axis] else None


class SumOfSlicesIntoZeros(RewritePattern):
    """`addf` trees of slices written into zeros that tile the result along one
    axis -> `tensor.concat` of the slices (see the module docstring)."""

    operand_from = (tensor.InsertSliceOp, arith.AddfOp)  # irad-optimize tries it only on adds of those

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isa(op, arith.AddfOp):
            return
        result_type = op.result.type
        # isa: tried on scalar adds too, where isinstance against TensorType (an ABC) is slow
        if not isa(result_type, TensorType) or not result_type.has_static_shape():
            return
        parent = op.result.get_user_of_unique_use()
        if isinstance(parent, arith.AddfOp) and parent.result.type == result_type:
            return  # part of a larger sum: its root joins what can be joined in it, once
        zeros: dict = {}
        for top in _sums_of_slices(op, result_type, zeros):
            leaves: list[tensor.InsertSliceOp] = []
            _leaves(top, result_type, leaves, zeros)
            self._join(top, leaves, result_type, rewriter)

    @staticmethod
    def _join(op: arith.AddfOp, leaves: list[tensor.InsertSliceOp], result_type: TensorType,
              rewriter: PatternRewriter) -> None:
        """The sum at `op` of `leaves` as their concatenation, where they tile it."""
        if len(leaves) < 2:
            return
        # a slice summed more than once (the cotangent of `x * x` for a slice x): its sum
        regions: dict[tuple, list[tensor.InsertSliceOp]] = {}
        for leaf in leaves:
            regions.setdefault(tuple(leaf.static_offsets.get_values()), []).append(leaf)
        if any(len({tuple(leaf.static_sizes.get_values()) for leaf in same}) != 1 for same in regions.values()):
            return
        ordered = [regions[offsets] for offsets in sorted(regions)]
        axis = _tiling_axis([same[0] for same in ordered], tuple(result_type.get_shape()))
        if axis is None:
            return
        new_ops: list[Operation] = []
        pieces = []
        for same in ordered:
            piece = same[0].source
            for leaf in same[1:]:
                new_ops.append(arith.AddfOp(piece, leaf.source))
                piece = new_ops[-1].result
            pieces.append(piece)
        new_ops.append(tensor.ConcatOp(pieces, axis, result_type))
        rewriter.replace(op, new_ops)


class JoinSliceSumsPass(ModulePass):
    """
    Joins sums of slices written into zeros into concatenations
    (SumOfSlicesIntoZeros), and nothing else; irad-optimize applies the same
    pattern among its canonicalizations.
    """

    name = "irad-join-slice-sums"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        PatternRewriteWalker(SumOfSlicesIntoZeros()).rewrite_module(op)
