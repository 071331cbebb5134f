"""
A reduction of a tensor made of one number, in closed form (ReductionOfSplat):
`linalg.reduce` of `splat(c)` over `k` elements into `init` is

    sum      init + c * k         (addf; the mean is this sum divided by k)
    integer  init + c * k         (addi, wrapping as the k additions wrap;
                                   where c and init are constants)
    max/min  max(init, c), ...    (maximumf minimumf maxnumf minnumf maxsi
                                   minsi maxui minui andi ori: idempotent)

with `init` itself folded when it is one number too (the zero of a sum).
`np.ones((20000, 20000)).sum()` was 4·10^8 additions over a 3.2 GB buffer
natively; it is now one multiplication. A gradient makes these too: the
cotangent of `np.full(n, x)` is the sum of the broadcast seed, n.

Not bit for bit: the other folds of irad-optimize keep every bit, this one
gives the sum's exact value correctly rounded, which adding k copies of c one
by one (or numpy's pairwise sum) need not. A float64 `c * k` is one rounding
(k < 2^53 is exact); a float32 (or float16) sum is computed in float64 and
rounded once to the element type (exact before that rounding for k < 2^29).
Of 10^6 copies of 0.1f (0.100000001490116...), numpy's
pairwise sum is 100000.01 and a sum in order 100958.34; the fold gives
100000.0, the float32 nearest the exact 100000.0015. The sum of an empty tensor (k = 0)
is `init`, also when c is inf or NaN. Products (mulf, muli) are left: c^k
would need a power whose rounding and negative-base rules differ between
backends, and integer powers that wrap. So is an integer sum of a number
known only at run time: its product would have to wrap, and the Python
backend's scalar ints do not (the frontend checks their arithmetic).
"""

import math

import numpy as np
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import (
    AnyFloat,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    TensorType,
    f64,
)
from xdsl.dialects.linalg.ops import GenericOp, IteratorType, ReduceOp, YieldOp
from xdsl.ir.affine import AffineMap
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from irad.ir.constants import SPLAT_SOURCES, splat_number

# Combiners whose reduction of k > 0 copies of c is one combination with c.
IDEMPOTENT = frozenset(
    f"arith.{name}" for name in "maximumf minimumf maxnumf minnumf maxsi minsi maxui minui andi ori".split()
)
SUMS = frozenset({"arith.addf", "arith.addi"})


def combiner(reduce: ReduceOp) -> Operation | None:
    """The one op of the reduction's body, if it combines the two block arguments and is yielded."""
    block = reduce.region.block
    ops = list(block.ops)
    if len(ops) != 2 or not isinstance(ops[1], YieldOp):
        return None
    op = ops[0]
    if len(op.results) != 1 or tuple(ops[1].operands) != (op.results[0],):
        return None
    if set(op.operands) != set(block.args) or len(op.operands) != 2:
        return None
    return op


class ReductionOfSplat(RewritePattern):
    """`reduce(splat(c), init)` -> `init op closed(c, k)`, `k` the number of
    elements reduced into each result element (see the module docstring)."""

    operand_from = SPLAT_SOURCES

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, ReduceOp) or len(op.results) != 1:
            return
        input_type, result_type = op.input.type, op.results[0].type
        if not isinstance(input_type, TensorType) or not input_type.has_static_shape():
            return
        combine = combiner(op)
        if combine is None or combine.name not in SUMS | IDEMPOTENT:
            return
        number = splat_number(op.input)
        if number is None:
            return
        shape = input_type.get_shape()
        k = math.prod(shape[d] for d in op.dimensions.get_values())
        if k == 0:  # nothing reduced: the result is init
            rewriter.replace(op, [], [op.init])
            return
        element = result_type.element_type
        if not isinstance(element, IntegerType | Float16Type | Float32Type | Float64Type):
            return
        made: list[Operation] = []

        def value(n) -> SSAValue:
            if isinstance(n, SSAValue):
                return n
            attr = IntegerAttr(int(n), element) if isinstance(element, IntegerType) else FloatAttr(n, element)
            made.append(constant := arith.ConstantOp(attr, element))
            return constant.result

        def scalar(cls: type[Operation], a: SSAValue, b: SSAValue) -> SSAValue:
            """`cls(a, b)`, with the combiner's fastmath flags (if it has them)."""
            properties = {k: v for k, v in combine.properties.items() if k == "fastmath"}
            made.append(new := cls.create(operands=[a, b], result_types=[a.type], properties=properties))
            return new.results[0]

        start = splat_number(op.init)
        if combine.name not in SUMS:
            total = value(number)
        elif isinstance(element, IntegerType):
            # k additions wrap as one product does; computed here, since the Python
            # backend's scalar ints never wrap (the frontend checks their overflow)
            if isinstance(number, SSAValue) or start is None or isinstance(start, SSAValue):
                return
            width = element.width.data
            result = value(_wrapped(int(start) + int(number) * k, width))
            made.append(splat := tensor.SplatOp(result, [], result_type))
            rewriter.replace(op, made, [splat.result])
            return
        elif not isinstance(number, SSAValue):
            total = value(_rounded(float(number) * k, element))  # Python floats are float64: one rounding
        elif isinstance(element, Float64Type):
            total = scalar(arith.MulfOp, number, value(float(k)))
        else:  # a narrower float: the product in float64, rounded once to the element type
            made.append(wide := arith.ExtFOp(number, f64))
            made.append(count := arith.ConstantOp(FloatAttr(float(k), f64), f64))
            made.append(product := arith.MulfOp(wide.result, count.result))
            made.append(narrow := arith.TruncFOp(product.result, element))
            total = narrow.result
        if start is not None:  # one number too: the whole result is one
            made.append(splat := tensor.SplatOp(scalar(type(combine), value(start), total), [], result_type))
            rewriter.replace(op, made, [splat.result])
            return
        made.append(splat := tensor.SplatOp(total, [], result_type))
        made.append(
            combined := type(combine).create(
                operands=[op.init, splat.result], result_types=[result_type], properties=dict(combine.properties)
            )
        )
        rewriter.replace(op, made, [combined.results[0]])


class GenericOfSplats(RewritePattern):
    """An elementwise `linalg.generic` (every loop parallel, every map the
    identity, one result, its body scalar arith and math ops that do not read
    the output) whose inputs are each made of one number -> its body on those
    numbers, splat. Exact: every element was that body on those numbers. The
    gradient of a maximum compares the tensor with its maximum (the mask of
    ties); of a splat that mask is one boolean, and its count, a sum, folds."""

    operand_from = SPLAT_SOURCES

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, GenericOp) or len(op.res) != 1 or len(op.outputs) != 1 or not op.inputs:
            return
        result_type = op.res[0].type
        if not isinstance(result_type, TensorType) or not result_type.has_static_shape():
            return
        if any(t.data != IteratorType.PARALLEL for t in op.iterator_types.data):
            return
        rank = len(result_type.get_shape())
        if any(m.data != AffineMap.identity(rank) for m in op.indexing_maps.data):
            return
        block = op.body.block
        *body, last = list(block.ops)
        out_arg = block.args[len(op.inputs)]
        if not isinstance(last, YieldOp) or out_arg.uses or not body:
            return
        if any(o.dialect_name() not in ("arith", "math") or o.regions for o in body):
            return
        numbers = [splat_number(v) for v in op.inputs]
        if any(n is None for n in numbers):
            return
        made: list[Operation] = []
        mapping: dict[SSAValue, SSAValue] = {}
        for arg, n in zip(block.args, numbers):
            if not isinstance(n, SSAValue):
                made.append(c := _constant(n, arg.type))
                n = c.result
            mapping[arg] = n
        for o in body:
            made.append(o.clone(value_mapper=mapping))
        made.append(splat := tensor.SplatOp(mapping.get(last.operands[0], last.operands[0]), [], result_type))
        rewriter.replace(op, made, [splat.result])


def _constant(n, element) -> arith.ConstantOp:
    attr = IntegerAttr(int(n), element) if isinstance(element, IntegerType) else FloatAttr(n, element)
    return arith.ConstantOp(attr, element)


class ExtractOfSplat(RewritePattern):
    """`tensor.extract` of a tensor made of one number -> the number (the
    closed form of a full reduction to rank 0 is read back this way)."""

    operand_from = SPLAT_SOURCES

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, tensor.ExtractOp):
            return
        number = splat_number(op.tensor)
        if number is None:
            return
        if isinstance(number, SSAValue):
            rewriter.replace(op, [], [number])
            return
        element = op.result.type
        attr = IntegerAttr(int(number), element) if isinstance(element, IntegerType) else FloatAttr(number, element)
        rewriter.replace(op, [constant := arith.ConstantOp(attr, element)], [constant.result])


def _rounded(x: float, element: AnyFloat) -> float:
    if isinstance(element, Float32Type):
        return float(np.float32(x))
    if isinstance(element, Float16Type):
        return float(np.float16(x))
    return x


def _wrapped(n: int, width: int) -> int:
    """n modulo 2^width, as a signed int (how IntegerAttr holds it)."""
    if width == 1:
        return n & 1
    n %= 1 << width
    return n - (1 << width) if n >= 1 << (width - 1) else n
