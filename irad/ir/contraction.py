"""Tensor contractions (einsum): one `linalg.generic` that multiplies its inputs
elementwise over a shared index space and sums over the indices the output lacks.

    contract(b, [x, y], ["bik", "bkj"], "bij")      batched matmul
    contract(b, [x, y, z], ["i", "ij", "j"], "")    x^T Y z

Each letter names a loop dimension: the output's letters are parallel, the
others reductions. With reductions the body accumulates onto the output's
init (zero); without, it yields the product alone and never reads the init
(MLIR's elementwise fusion assumes a parallel op does not). Within one operand a letter appears at most once (the
frontend takes diagonals first), so every indexing map is a projected
permutation and the op is closed under differentiation: the cotangent of an
input is the contraction of the output's cotangent with the other inputs,
with that input's letters as the output. An output letter no input has is a
broadcast (the loop runs over the output). The op records `irad.kind =
"contraction"` (irad/ir/tensor.py), so derivatives and backends read its
subscripts from its indexing maps instead of guessing from its body.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import AffineMapAttr, StringAttr, TensorType
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import GenericOp, YieldOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap

from irad.ir import tensor as T

KIND = "contraction"
LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def contract(
    b, inputs: Sequence[SSAValue], subscripts: Sequence[str], out: str,
    sizes: dict[str, int] | None = None,
) -> SSAValue:
    """The sum over the letters not in `out` of the product of `inputs`,
    indexed by `subscripts`: numpy's einsum("<subscripts>-><out>"), a tensor
    (0-d for an empty `out`). `sizes` gives the size of output letters no
    input has."""
    assert len(inputs) == len(subscripts) >= 1
    dims: dict[str, int] = dict(sizes or {})
    for value, letters in zip(inputs, subscripts):
        assert len(set(letters)) == len(letters) == len(T.shape(value)), (letters, T.shape(value))
        for letter, n in zip(letters, T.shape(value)):
            assert dims.setdefault(letter, n) == n, f"{letter}: {dims[letter]} != {n}"
    assert len(set(out)) == len(out) and all(c in dims for c in out)
    loops = list(out) + [c for c in dict.fromkeys("".join(subscripts)) if c not in out]
    position = {c: i for i, c in enumerate(loops)}

    def indexing(letters: str) -> AffineMapAttr:
        return AffineMapAttr(AffineMap(len(loops), 0, tuple(AffineDimExpr(position[c]) for c in letters)))

    elem = T.element(inputs[0])
    out_type = TensorType(elem, [dims[c] for c in out])
    init = T.dense(b, 0.0, out_type)
    body = Block(arg_types=[elem] * (len(inputs) + 1))
    product = body.args[0]
    for arg in body.args[1:-1]:
        op = arith.MulfOp(product, arg)
        body.add_op(op)
        product = op.result
    if len(loops) > len(out):  # a sum: accumulate onto the init (zero)
        total = arith.AddfOp(body.args[-1], product)
        body.add_op(total)
        product = total.result
    body.add_op(YieldOp(product))
    iterators = [IteratorTypeAttr.parallel() if c in out else IteratorTypeAttr.reduction() for c in loops]
    op = GenericOp(
        list(inputs), [init], Region(body), [indexing(s) for s in (*subscripts, out)],
        iterators, [out_type],
    )
    op.attributes[T.KIND] = StringAttr(KIND)
    return b.op(op)


def subscripts(op: Operation) -> tuple[list[str], str]:
    """The (input subscripts, output subscript) of a contraction op, from its maps."""
    maps = [m.data for m in op.indexing_maps.data]

    def letters(m: AffineMap) -> str:
        return "".join(LETTERS[e.position] for e in m.results)

    return [letters(m) for m in maps[:-1]], letters(maps[-1])


def sums(op: Operation) -> bool:
    """Whether a contraction has reductions, and so adds its init."""
    ins, out = subscripts(op)
    return any(c not in out for c in "".join(ins))


def is_contraction(op: Operation) -> bool:
    kind = op.attributes.get(T.KIND)
    return isinstance(kind, StringAttr) and kind.data == KIND


def matmul_form(op: Operation) -> tuple[int, int, bool, bool] | None:
    """How a 2-input contraction is a stack of matrix products with the stack
    axes leading in every operand ('Zik,Zkj->Zij', 'Zki,Zjk->Zij', ...):
    (left, right, left transposed, right transposed), `left` and `right`
    operand positions (C = left @ right, the output's rows from `left`);
    None for any other contraction."""
    if len(op.inputs) != 2:
        return None
    ins, out = subscripts(op)
    stack = len(out) - 2
    if stack < 0 or any(len(s) != len(out) or s[:stack] != out[:stack] for s in ins):
        return None
    a, b, (r, c) = ins[0][stack:], ins[1][stack:], out[stack:]
    left, right = (0, 1) if r in a else (1, 0)
    first, second = (a, b) if left == 0 else (b, a)
    shared = set(first) & set(second)
    if len(shared) != 1 or r not in first or c not in second:
        return None
    (k,) = shared
    return left, right, first == k + r, second == c + k


def summed_size(op: Operation) -> int:
    """How many terms each output element of a contraction sums (1: none)."""
    ins, out = subscripts(op)
    sizes = {c: n for v, s in zip(op.inputs, ins) for c, n in zip(s, T.shape(v))}
    total = 1
    for c in set("".join(ins)) - set(out):
        total *= sizes[c]
    return total


def einsum_spec(op: Operation) -> str:
    ins, out = subscripts(op)
    return ",".join(ins) + "->" + out
