"""
Elementwise ops on broadcasts computed before broadcasting:
`f(broadcast(a), broadcast(b)) -> broadcast(f(a, b))`, when every operand of the
elementwise op `f` is a `linalg.broadcast` adding the same dimensions to
operands of one type; and on tensors made of one number each (a splat, the
broadcast of a number), on the numbers: `f(splat(a), splat(b)) -> splat(f(a, b))`
(ElementwiseOfSplats), so `np.ones((n, n)) * 0.0 + 1.0` is one number however
large n is.

Exact: every element of the result is `f` of the same operand elements as
before, so the values are bit for bit those of the unrewritten IR; `f` is
evaluated once per element of the smaller tensor instead of once per element
of the broadcast one, and one broadcast is left instead of two. A gradient
makes these: the adjoint of a reduction broadcasts the cotangent back over the
reduced axes, and the adjoint of a maximum divides one such broadcast by
another (the cotangent by the count of ties). On the numpy backend the
remaining broadcast is left to numpy's broadcasting in its users
(irad/backends/python/arrays.py), so nothing is expanded at all.
"""

from xdsl.context import Context
from xdsl.dialects import builtin, tensor
from xdsl.dialects.builtin import DenseArrayBase, TensorType, i64
from xdsl.dialects.linalg.ops import BroadcastOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern

from irad.ir.constants import SPLAT_SOURCES, float_constant, splat_number

# Elementwise float ops whose result has their operands' type.
ELEMENTWISE = frozenset(
    {f"arith.{name}" for name in "addf subf mulf divf remf maximumf minimumf maxnumf minnumf negf".split()}
    | {
        f"math.{name}"
        for name in (
            "sin cos tan exp exp2 expm1 log log1p log2 log10 sqrt rsqrt tanh sinh cosh atan asin acos "
            "asinh acosh atanh absf cbrt erf erfc floor ceil trunc round roundeven powf atan2 copysign"
        ).split()
    }
)


class ElementwiseOfBroadcasts(RewritePattern):
    """`f(broadcast(a, dims), broadcast(b, dims)) -> broadcast(f(a, b), dims)`
    (one operand or several), `a` and `b` of one type."""

    operand_from = (BroadcastOp,)  # irad-optimize tries it only on ops with a broadcast operand

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if op.name not in ELEMENTWISE or len(op.results) != 1 or op.regions:
            return
        result_type = op.results[0].type
        owners = [v.owner for v in op.operands]
        if not isinstance(result_type, TensorType) or not all(isinstance(o, BroadcastOp) for o in owners):
            return
        dims = owners[0].dimensions.get_values()
        source_type = owners[0].input.type
        if source_type.element_type != result_type.element_type or any(
            o.dimensions.get_values() != dims or o.input.type != source_type for o in owners[1:]
        ):
            return
        inner = type(op).create(
            operands=[o.input for o in owners],
            result_types=[source_type],
            properties=dict(op.properties),
            attributes=dict(op.attributes),
        )
        init = tensor.EmptyOp([], result_type)
        broadcast = BroadcastOp(inner.results[0], init.tensor, DenseArrayBase.from_list(i64, list(dims)))
        rewriter.replace(op, [inner, init, broadcast], [broadcast.results[0]])


class ElementwiseOfSplats(RewritePattern):
    """`f(splat(a), splat(b)) -> splat(f(a, b))`, every operand a tensor made of
    one number (irad/ir/constants.py's splat_number: a splat constant, a
    tensor.splat, their broadcasts and reshapes); a number that is a constant
    becomes a scalar constant, which the float folds then fold."""

    operand_from = SPLAT_SOURCES

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if op.name not in ELEMENTWISE or len(op.results) != 1 or op.regions:
            return
        result_type = op.results[0].type
        if not isinstance(result_type, TensorType) or not result_type.has_static_shape():
            return
        numbers = [splat_number(v) for v in op.operands]
        if any(n is None for n in numbers):
            return
        element = result_type.element_type
        made = [float_constant(n, element) for n in numbers if not isinstance(n, SSAValue)]
        constants = iter(made)
        scalars = [n if isinstance(n, SSAValue) else next(constants).result for n in numbers]
        inner = type(op).create(
            operands=scalars, result_types=[element], properties=dict(op.properties), attributes=dict(op.attributes),
        )
        splat = tensor.SplatOp(inner.results[0], [], result_type)
        rewriter.replace(op, [*made, inner, splat], [splat.result])


class SinkBroadcastsPass(ModulePass):
    """
    Computes elementwise ops before the broadcasts of their operands
    (ElementwiseOfBroadcasts), and nothing else; irad-optimize applies the same
    pattern among its canonicalizations.
    """

    name = "irad-sink-broadcasts"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        PatternRewriteWalker(ElementwiseOfBroadcasts()).rewrite_module(op)
