"""numpy's contractions: einsum, tensordot, inner, dot above rank 2, vdot,
vecdot, kron, cross and trace, and their np.linalg forms (matmul, tensordot,
outer, vecdot, cross, trace, matrix_transpose, multi_dot).

Each lowers to ops whose derivatives the op registry has: a sum of products
is one contraction (irad/ir/contraction.py: a linalg.generic that
passes/ad/derivatives/contraction.py differentiates, and the Python backend runs
as np.einsum); kron is a broadcast product, cross a difference of products of
slices, trace a product with an identity mask and a sum. Like every numpy
entry, each is a rule-table target (`numpy.einsum`, ...).
"""

from __future__ import annotations

import ast
import math

import numpy as np
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from irad.frontend import numpy_shapes
from irad.frontend.arrays import ArrayLowering, numpy_function
from irad.frontend.values import Static, is_array
from irad.ir import contraction as C
from irad.ir import tensor as T


def _operands(al: ArrayLowering, node, values) -> list[SSAValue]:
    """The given operands as tensors of one float dtype (numbers are 0-d)."""
    given = [al.array(v, node) for v in values if not (isinstance(v, Static) and v.obj is None)]
    elem = al.float_element(node, given)
    return [_tensor(al, al.to_element(v, elem)) for v in given]


def _tensor(al: ArrayLowering, v: SSAValue) -> SSAValue:
    return v if is_array(v) else T.splat(al.em, v, ())


def _result(al: ArrayLowering, v: SSAValue) -> SSAValue:
    """A contraction's result: a number for a 0-d tensor, else a new array."""
    return T.extract_scalar(al.em, v) if not T.shape(v) else al.new(v)


def _contract(al, operands, subscripts, out) -> SSAValue:
    return _result(al, C.contract(al.em, operands, subscripts, out))


# ---- einsum -------------------------------------------------------------------------
@numpy_function(np.einsum, params=("subscripts", "?op0", "?op1", "?op2", "?op3", "?optimize"))
def _einsum(al, node, spec, *operands):
    spec = al.static(spec, node, "the einsum subscripts")
    if not isinstance(spec, str):
        raise al.error(node, "np.einsum takes its subscripts as a string ('ij,jk->ik')",
                       "the interleaved form einsum(a, [0, 1], b, [1, 2]) is not supported")
    values = _operands(al, node, operands[:-1])  # the last parameter is optimize=, ignored
    inputs, out = _parse_einsum(al, node, spec.replace(" ", ""), values)
    values = [_diagonal(al, node, v, s) for v, s in zip(values, inputs)]
    inputs = ["".join(dict.fromkeys(s)) for s in inputs]
    values = _broadcast_letters(al, node, values, inputs)
    return _contract(al, values, inputs, out)


def _parse_einsum(al, node, spec: str, values) -> tuple[list[str], str]:
    """Per operand its letters (an ellipsis spelt out in letters the spec does
    not use, right-aligned as numpy broadcasts), and the output's letters."""
    left, arrow, out = spec.partition("->")
    inputs = left.split(",")
    if len(inputs) != len(values):
        raise al.error(node, f"np.einsum: the subscripts name {len(inputs)} operands, "
                       f"but {len(values)} are given")
    ranks = [len(T.shape(v)) for v in values]
    spare = [c for c in C.LETTERS if c not in spec]
    ellipsis_rank = max((r - len(s.replace("...", "")) for s, r in zip(inputs, ranks) if "..." in s), default=0)
    stretched = "".join(spare[:ellipsis_rank])
    spelt = []
    for s, r in zip(inputs, ranks):
        named = s.replace("...", "")
        if not all(c in C.LETTERS for c in named) or s.count("...") > 1:
            raise al.error(node, f"np.einsum: cannot read the subscripts {spec!r}")
        if "..." in s:
            s = s.replace("...", stretched[len(stretched) - (r - len(named)):] if r > len(named) else "")
        if len(s) != r:
            raise al.error(node, f"np.einsum: the subscripts {s!r} do not fit an operand of rank {r}")
        spelt.append(s)
    if not arrow:  # implicit mode: the letters seen once, in alphabetical order
        counts = "".join(spelt)
        out = stretched + "".join(sorted(c for c in set(counts) if counts.count(c) == 1 and c not in stretched))
    else:
        out = out.replace("...", stretched)
        if not all(c in C.LETTERS for c in out) or len(set(out)) != len(out):
            raise al.error(node, f"np.einsum: cannot read the output subscripts {out!r}")
        missing = [c for c in out if not any(c in s for s in spelt)]
        if missing:
            raise al.error(node, f"np.einsum: the output letter {missing[0]!r} is not in any operand")
    return spelt, out


def _diagonal(al, node, x: SSAValue, letters: str) -> SSAValue:
    """Take the diagonal of the axes a letter repeats on ('ii->i'), at the
    first of them: a strided slice, as np.diagonal (a product with an identity
    mask would turn an inf off the diagonal into NaN)."""
    seen: dict[str, int] = {}
    for axis, c in enumerate(letters):
        if c not in seen:
            seen[c] = axis
            continue
        first = seen[c]
        dims = T.shape(x)
        if dims[first] != dims[axis]:
            raise al.error(node, f"np.einsum: the repeated letter {c!r} spans axes of sizes "
                           f"{dims[first]} and {dims[axis]}")
        diagonal = numpy_shapes.diagonal_of(al, x, 0, Static(first), Static(axis), node)  # (others..., n)
        others = [d for d in range(len(dims)) if d not in (first, axis)]
        order = [len(others) if d == first else others.index(d) for d in range(len(dims)) if d != axis]
        x = T.transpose(al.em, diagonal, order)
        return _diagonal(al, node, x, letters[:axis] + letters[axis + 1:])
    return x


def _broadcast_letters(al, node, values, inputs) -> list[SSAValue]:
    """Axes of size 1 stretch to the size the letter has elsewhere (numpy broadcasts them)."""
    sizes: dict[str, int] = {}
    for v, s in zip(values, inputs):
        for c, n in zip(s, T.shape(v)):
            if sizes.get(c, 1) == 1:
                sizes[c] = n
            elif n not in (1, sizes[c]):
                raise al.error(node, f"np.einsum: the letter {c!r} spans axes of sizes {sizes[c]} and {n}")
    return [T.broadcast_to(al.em, v, [sizes[c] for c in s]) for v, s in zip(values, inputs)]


# ---- tensordot, inner, dot, vdot ------------------------------------------------------
@numpy_function(np.tensordot, params=("a", "b", "?axes"))
def _tensordot(al, node, a, b, axes):
    a, b = _operands(al, node, (a, b))
    ra, rb = len(T.shape(a)), len(T.shape(b))
    axes = al.static(axes, node, "the axes of np.tensordot")
    if axes is None:
        axes = 2
    if isinstance(axes, int):
        if not 0 <= axes <= min(ra, rb):
            raise al.error(node, f"np.tensordot: cannot sum over {axes} axes of arrays of ranks {ra} and {rb}")
        pairs = list(zip(range(ra - axes, ra), range(axes)))
    else:
        first, second = (x if isinstance(x, tuple) else (x,) for x in axes)
        if len(first) != len(second):
            raise al.error(node, "np.tensordot: the two lists of axes differ in length")
        pairs = list(zip(_axes(al, first, ra, node), _axes(al, second, rb, node)))
    letters_a = list(C.LETTERS[:ra])
    letters_b = list(C.LETTERS[ra:ra + rb])
    for i, j in pairs:
        if T.shape(a)[i] != T.shape(b)[j]:
            raise al.error(node, f"np.tensordot: axis {i} of size {T.shape(a)[i]} does not match "
                           f"axis {j} of size {T.shape(b)[j]}")
        letters_b[j] = letters_a[i]
    summed = {letters_a[i] for i, _ in pairs}
    out = [c for c in letters_a if c not in summed] + [c for c in letters_b if c not in summed]
    return _contract(al, [a, b], ["".join(letters_a), "".join(letters_b)], "".join(out))


@numpy_function(np.linalg.tensordot, params=("x1", "x2", "?axes"))
def _linalg_tensordot(al, node, a, b, axes):
    return _tensordot(al, node, a, b, axes)


def _axes(al, axes: tuple, rank: int, node) -> list[int]:
    """Axes in the order given, normalised (negative ones count from the end)."""
    out = [al.static_axes(a, rank, node)[0] for a in axes]
    if len(set(out)) != len(out):
        raise al.error(node, f"repeated axis in {axes}")
    return out


@numpy_function(np.inner, params=("a", "b"))
def _inner(al, node, a, b):
    a, b = _operands(al, node, (a, b))
    sa, sb = T.shape(a), T.shape(b)
    if not sa or not sb:
        return al.binary(ast.Mult(), _number(al, a), _number(al, b), node)
    if sa[-1] != sb[-1]:
        raise al.error(node, f"np.inner: the last axes of shapes {sa} and {sb} differ")
    la, lb = C.LETTERS[:len(sa) - 1], C.LETTERS[len(sa) - 1:len(sa) + len(sb) - 2]
    return _contract(al, [a, b], [la + "z", lb + "z"], la + lb)


@numpy_function(np.dot, params=("a", "b"))
def _dot(al, node, a, b):
    """np.dot: matmul up to rank 2; above, the sum over a's last axis and b's
    second to last (its only one for a vector)."""
    a, b = _operands(al, node, (a, b))
    sa, sb = T.shape(a), T.shape(b)
    if not sa or not sb:
        return al.binary(ast.Mult(), _number(al, a), _number(al, b), node)
    if len(sa) <= 2 and len(sb) <= 2:
        return al.matmul(a, b, node)
    k = sb[-2] if len(sb) > 1 else sb[0]
    if sa[-1] != k:
        raise al.error(node, f"np.dot: shapes {sa} and {sb} are not aligned")
    la = C.LETTERS[:len(sa) - 1]
    lb = C.LETTERS[len(sa) - 1:len(sa) + len(sb) - 2]
    b_letters = lb[:-1] + "z" + lb[-1:] if len(sb) > 1 else "z"
    return _contract(al, [a, b], [la + "z", b_letters], la + lb)


@numpy_function(np.vdot, params=("a", "b"))
def _vdot(al, node, a, b):
    a, b = _operands(al, node, (a, b))
    if math.prod(T.shape(a)) != math.prod(T.shape(b)):
        raise al.error(node, f"np.vdot: arrays of shapes {T.shape(a)} and {T.shape(b)} differ in size")
    flat = [T.reshape(al.em, v, (math.prod(T.shape(v)),)) for v in (a, b)]
    return _contract(al, flat, ["z", "z"], "")


@numpy_function(np.vecdot, np.linalg.vecdot, params=("x1", "x2", "?axis"))
def _vecdot(al, node, a, b, axis):
    """The sum over one axis (the last by default) of the broadcast product."""
    product = al.binary(ast.Mult(), *(_operands(al, node, (a, b))), node)
    axis = al.static(axis, node, "axis")
    axis = al.static_axes(-1 if axis is None else axis, len(T.shape(product)), node)[0]
    return _result(al, T.reduce(al.em, product, [axis]))


@numpy_function(np.linalg.matmul, params=("x1", "x2"))
def _linalg_matmul(al, node, a, b):
    return al.matmul(al.array(a, node), al.array(b, node), node)


@numpy_function(np.linalg.outer, params=("x1", "x2"))
def _linalg_outer(al, node, a, b):
    a, b = _operands(al, node, (a, b))
    if len(T.shape(a)) != 1 or len(T.shape(b)) != 1:
        raise al.error(node, "np.linalg.outer takes two vectors", "use np.outer to flatten arrays first")
    return _contract(al, [a, b], ["i", "j"], "ij")


@numpy_function(np.linalg.matrix_transpose, params=("x",))
def _matrix_transpose(al, node, x):
    x = al.array(x, node)
    rank = len(T.shape(x)) if is_array(x) else 0
    if rank < 2:
        raise al.error(node, "np.linalg.matrix_transpose needs an array of rank 2 or more")
    return al.transpose_view(x, [*range(rank - 2), rank - 1, rank - 2])


@numpy_function(np.linalg.multi_dot, params=("arrays",))
def _multi_dot(al, node, arrays):
    """Products from the left (numpy picks the cheapest order; the value is the same)."""
    if not isinstance(arrays, tuple) or len(arrays) < 2:
        raise al.error(node, "np.linalg.multi_dot takes a list of at least two arrays")
    values = [al.array(v, node) for v in arrays]
    if any(not is_array(v) or len(T.shape(v)) > 2 for v in values) or any(
            len(T.shape(v)) != 2 for v in values[1:-1]):
        raise al.error(node, "np.linalg.multi_dot takes matrices (the first and last may be vectors)")
    product = values[0]
    for v in values[1:]:
        product = al.matmul(product, v, node)
    return product


def _number(al, v: SSAValue) -> SSAValue:
    return T.extract_scalar(al.em, v) if not T.shape(v) else v


# ---- kron, cross, trace -----------------------------------------------------------------
@numpy_function(np.kron, params=("a", "b"))
def _kron(al, node, a, b):
    """The product of a reshaped to (a0, 1, a1, 1, ...) and b to (1, b0, 1, b1, ...)."""
    a, b = _operands(al, node, (a, b))
    rank = max(len(T.shape(a)), len(T.shape(b)))
    sa = (1,) * (rank - len(T.shape(a))) + T.shape(a)
    sb = (1,) * (rank - len(T.shape(b))) + T.shape(b)
    x = T.reshape(al.em, a, [d for n in sa for d in (n, 1)])
    y = T.reshape(al.em, b, [d for n in sb for d in (1, n)])
    product = al.binary(ast.Mult(), x, y, node)
    return al.new(T.reshape(al.em, product, [m * n for m, n in zip(sa, sb)]))


@numpy_function(np.cross, params=("a", "b", "?axisa", "?axisb", "?axisc", "?axis"))
def _cross(al, node, a, b, axisa, axisb, axisc, axis):
    em = al.em
    a, b = _operands(al, node, (a, b))
    if al.static(axis, node, "axis") is not None:
        axisa = axisb = axisc = axis
    axes = []
    for v, ax in ((a, axisa), (b, axisb)):
        ax = al.static(ax, node, "the axis")
        axes.append(al.static_axes(-1 if ax is None else ax, len(T.shape(v)), node)[0])
    a, b = (_to_last(em, v, ax) for v, ax in zip((a, b), axes))
    n, m = T.shape(a)[-1], T.shape(b)[-1]
    if n not in (2, 3) or m not in (2, 3):
        raise al.error(node, "np.cross: incompatible dimensions for cross product (dimension must be 2 or 3)")
    batch = T.broadcast_shapes(T.shape(a)[:-1], T.shape(b)[:-1])
    if batch is None:
        raise al.error(node, f"np.cross: shapes {T.shape(a)} and {T.shape(b)} cannot be broadcast together")
    a, b = T.broadcast_to(em, a, (*batch, n)), T.broadcast_to(em, b, (*batch, m))
    x = [_component(em, a, i) for i in range(n)]
    y = [_component(em, b, i) for i in range(m)]

    def det2(p, q, r, s):  # p * s - q * r
        return em.op(arith.SubfOp(em.op(arith.MulfOp(p, s)), em.op(arith.MulfOp(q, r))))

    z = det2(x[0], x[1], y[0], y[1])
    if n == 2 and m == 2:
        return _result(al, z)
    zero = T.dense(em, 0.0, x[0].type)
    x2 = x[2] if n == 3 else zero
    y2 = y[2] if m == 3 else zero
    parts = [det2(x[1], x2, y[1], y2), det2(x2, x[0], y2, y[0]), z]
    stacked = em.op(tensor.ConcatOp([T.reshape(em, p, (*batch, 1)) for p in parts], len(batch),
                                    TensorType(T.element(a), [*batch, 3])))
    out_axis = al.static(axisc, node, "axisc")
    out_axis = al.static_axes(-1 if out_axis is None else out_axis, len(batch) + 1, node)[0]
    perm = list(range(len(batch)))
    perm.insert(out_axis, len(batch))
    return al.new(T.transpose(em, stacked, perm))


@numpy_function(np.linalg.cross, params=("x1", "x2", "?axis"))
def _linalg_cross(al, node, a, b, axis):
    sizes = {T.shape(v)[-1] if is_array(v) and T.shape(v) else 0 for v in (al.array(a, node), al.array(b, node))}
    if al.static(axis, node, "axis") is None and sizes != {3}:
        raise al.error(node, "np.linalg.cross takes 3-element vectors", "np.cross takes 2-element ones too")
    return _cross(al, node, a, b, Static(None), Static(None), Static(None), Static(-1) if al.static(
        axis, node, "axis") is None else axis)


def _to_last(em, x: SSAValue, axis: int) -> SSAValue:
    rank = len(T.shape(x))
    return T.transpose(em, x, [i for i in range(rank) if i != axis] + [axis])


def _component(em, x: SSAValue, i: int) -> SSAValue:
    """x[..., i]."""
    dims = T.shape(x)
    sliced = em.op(tensor.ExtractSliceOp(x, [0] * (len(dims) - 1) + [i], [*dims[:-1], 1], [1] * len(dims),
                                         TensorType(T.element(x), [*dims[:-1], 1])))
    return T.reshape(em, sliced, dims[:-1])


@numpy_function(np.linalg.trace, params=("x", "?offset", "?dtype"))
def _linalg_trace(al, node, x, offset, dtype):
    """The trace over the last two axes (np.trace's default is the first two)."""
    if al.static(dtype, node, "dtype") is not None:
        raise al.error(node, "np.linalg.trace: dtype= is not supported")
    offset = offset if al.given(offset) else Static(0)
    return numpy_shapes.trace(al, node, x, offset, Static(-2), Static(-1), Static(None), Static(None))
