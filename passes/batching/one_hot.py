"""Batched values one-hot along their first axis, kept compact: a reverse
Jacobian's cotangents over an output of N rows (a residual per observation),
and a forward Jacobian's tangents of parameters gathered per row (below).

jacrev maps its vjp over the identity basis of the output. When the output
has shape (N, *rest) (m elements a row), the k-th cotangent is zero but in
row k // m, and so is everything the pullback computes from it by products
with unbatched values, sums and differences of such values, quotients by
unbatched values, negation, sums over the other axes, and slices,
concatenations, insertions into zeros and broadcasts along the other axes.
Batched as it is, each is a dense (B, N, *rest) tensor (B = N * m) of which
one row in N is not zero: on a bundle adjustment's 150 observations, some 80
elementwise ops over (300, 150, 3) arrays.

So irad-vmap keeps, beside such a batched value X, a compact twin C of shape
(B, *rest), C[k] = X[k, k // m] (`OneHot`); an unbatched operand enters as
its rows repeated m times. Where the row axis ends, the dense batched result
is computed from the twin instead: a sum over the row axis is the twin's sum
over the others, and a scatter-add along it (the adjoint of gathering each
observation's camera and point) adds each twin row at its observation's one
index. The dense values are still built beside the twins; nothing reads
them then, and the optimiser removes them. Across a call, a value that has
a twin is passed (returned) as the twin alone (the batcher's signature
letter `r`, `BatchedFunction.result_rows`), and the other side rebuilds the
dense value (`dense`) for the ops that need it: a helper's pullback stays
compact too.

The result is the same matrix; the compact form leaves out the products of
the basis's zeros, as the matmul with the basis does (basis.py): where a
partial derivative is inf or nan, the rows of the other observations stay
finite (the dense products spread the nan over them, as JAX's jacrev does),
and the last bits of a sum may differ (fewer zeros added).

The mirror image, for jacfwd: its vmap runs over the parameters, and a
gather of the identity basis seen as R rows of m elements along the
observations, `cams[cam_index]` of shape (N, *rest), is zero for the k-th
tangent but where k // m == cam_index[o]: each observation's row holds m of
the B = R * m tangents. Its twin has shape (m, N, *rest), C[j, o] =
X[owner[o] * m + j, o], with `owner` (cam_index, an unbatched array, known at
run time only) kept beside it: a batch of m in place of B, whose ops are the
batched ops with m for B and an unbatched operand broadcast as usual. The
rules above carry it (the row axis stays the first; a reshape that merges the
rows with the axes after them repeats each owner; twins combine when their
owners are one array, or alike ops on one: `_same`); they run before the op's
batching rule (`ahead`), and an op no rule follows reads the dense value
rebuilt from the twin (`_materialise`: the twin spread over its block, zeros
elsewhere), so that the dense tensors the batching rules built beside the
twins are left unread. Across a call the twin passes with its owner, one
argument per distinct owner after the others (signature letter `g`,
`gathered_operands`), and a result whose owner is one of them is returned as
its twin (`gathered_results`); any other result is returned dense. On a bundle
adjustment's camera tangents that is (7, 150, 3) in place of (56, 150, 3).
Again the same matrix, with an inf or nan partial in its own observation's
entries only (JAX's jacfwd spreads it as 0 * inf over the other parameters).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX, DenseArrayBase, DenseIntOrFPElementsAttr, FloatAttr, StringAttr, TensorType, i64,
)
from xdsl.dialects.linalg.ops import BroadcastOp, GenericOp, ReduceOp, YieldOp
from xdsl.ir import OpResult, Operation, SSAValue
from xdsl.rewriter import InsertPoint

from irad.ir import gather as G
from irad.ir import tensor as T
from irad.ir.types import is_tensor
from irad.passes.batching.basis import is_basis

# A longer row makes the twin of the basis (eye(m) repeated) too large a
# constant for what it saves: the dense form is kept.
MAX_ROW = 64


@dataclass(frozen=True)
class OneHot:
    """The compact twin of a batched value X of element shape (rows, *rest):
    `value`[k] = X[k, k // m], shape (B, *rest); or, with `owner` (an
    unbatched i64 array of `rows` blocks: the forward form, module doc),
    `value`[j, o] = X[owner[o] * m + j, o], shape (m, rows, *rest)."""

    value: SSAValue
    rows: int
    owner: SSAValue | None = None
    # a forward twin whose dense value has been rebuilt (`_materialise`)
    materialised: bool = False

    def lead(self, size: int) -> list[int]:
        """The twin's axes in place of the batch and the row axis."""
        return [size] if self.owner is None else [T.shape(self.value)[0], self.rows]

    def axis(self, d: int) -> int:
        """The twin's axis for axis `d` >= 1 of the primal value."""
        return d if self.owner is None else d + 1

    def alike(self, other: OneHot) -> bool:
        return self.rows == other.rows and _same(self.owner, other.owner)


# the dialects whose ops (on tensors) are pure: two alike ones on the same values give the same value
_PURE = ("arith", "tensor", "linalg")


def _same(a: SSAValue | None, b: SSAValue | None, depth: int = 4) -> bool:
    """Whether two owners are the same array: one value, or the results of
    like pure ops on the same values (an index wrapped per gather, as the
    frontend does for `cams[cam_index]` written twice)."""
    if a is b:
        return True
    if depth == 0 or not isinstance(a, OpResult) or not isinstance(b, OpResult) or a.index != b.index:
        return False
    x, y = a.owner, b.owner
    if x.dialect_name() not in _PURE or x.name != y.name or len(x.operands) != len(y.operands):
        return False
    if not all(_same(u, v, depth - 1) for u, v in zip(x.operands, y.operands)):
        return False
    return x.is_structurally_equivalent(y, {x.parent: y.parent, **dict(zip(x.operands, y.operands))})


def follow(b, op: Operation) -> None:
    """Record the twins of `op`'s results from its operands' (or, where the
    row axis ends, replace its batched result); `b` is the BatchBuilder,
    which has batched `op` already. Does nothing when no rule applies.
    (Forward twins were followed `ahead`.)"""
    rule = _RULES.get(op.name)
    twins = [b.one_hot.get(v) for v in op.operands]
    if any(t is not None and t.owner is not None for t in twins):
        return
    if rule is not None and (isinstance(op, tensor.ReshapeOp) or any(twins)):
        rule(b, op)


def ahead(b, op: Operation, read) -> None:
    """Before `op` is batched: start the forward twin of a gathered basis,
    or follow the forward twins among the values `op` reads (`read`) into
    its results; where no rule does, the op reads their dense values,
    rebuilt from the twins."""
    forward = [v for v in read if _forward(b, v) is not None]
    if not forward:
        if isinstance(op, GenericOp):
            _gathered_basis(b, op)
        return
    if op.name == "func.call":  # passes the twins (batcher.py)
        return
    rule = _RULES.get(op.name)
    if rule is not None and all(v in op.operands for v in forward):  # not read inside a region
        rule(b, op)
        if all(r in b.one_hot for r in op.results):
            return
    for v in forward:
        _materialise(b, v)


def _materialise(b, old: SSAValue) -> None:
    """`old`'s dense value, built right after its twin (so that it
    dominates every later use, a use inside a loop body included)."""
    twin = b.one_hot[old]
    if twin.materialised:
        return
    saved, b.insertion_point = b.insertion_point, InsertPoint.after(twin.value.owner)
    try:
        b.set(old, _dense_blocks(b, twin, T.shape(old)), True)
    finally:
        b.insertion_point = saved
    b.one_hot[old] = replace(twin, materialised=True)


def gathered_type(t: TensorType, m: int) -> TensorType:
    """The type of the forward twin, of batch `m`, of a value of type `t`."""
    return T.tensor_type(t.element_type, [m, *t.get_shape()])


def _forward(b, v: SSAValue) -> OneHot | None:
    twin = b.one_hot.get(v)
    return twin if twin is not None and twin.owner is not None else None


def _slot(owners, owner: SSAValue) -> int | None:
    return next((i for i, o in enumerate(owners) if _same(o, owner)), None)


def gathered_operands(b, values, bases) -> tuple[tuple[tuple[int, int] | None, ...], list[SSAValue]]:
    """A call's operands passed as their forward twins: per operand, its
    form (the slot of its owner, m) or None; and the distinct owners, in
    slot order (passed after the arguments)."""
    forms, owners = [], []
    for v, basis in zip(values, bases):
        twin = _forward(b, v)
        if twin is None or basis:
            forms.append(None)
            continue
        if _slot(owners, twin.owner) is None:
            owners.append(twin.owner)
        forms.append((_slot(owners, twin.owner), T.shape(twin.value)[0]))
    return tuple(forms), owners


def owner_types(inputs, forms) -> list[TensorType]:
    """The types of the owner arguments a batched function takes after its
    arguments, one per slot of `forms` (gathered_operands)."""
    types: dict[int, TensorType] = {}
    for t, form in zip(inputs, forms):
        if form:
            types.setdefault(form[0], T.tensor_type(T.I64, t.get_shape()[:1]))
    return [types[k] for k in sorted(types)]


def receive_gathered(b, old: SSAValue, twin: SSAValue, owner: SSAValue) -> None:
    """`old` arrives as its forward twin (an argument, a call's result), with
    its owner: recorded, with its dense value built at once (unread, the
    optimiser removes it)."""
    b.one_hot[old] = OneHot(twin, T.shape(old)[0], owner)
    b.set(old, _dense_blocks(b, b.one_hot[old], T.shape(old)), True)
    b.one_hot[old] = replace(b.one_hot[old], materialised=True)


def gathered_results(b, values, owners) -> tuple[tuple[int, int] | None, ...]:
    """Per returned value, its form when it is returned as its forward twin
    (its owner one of the function's `owners`) or None; the others' dense
    values are rebuilt."""
    forms = []
    for v in values:
        twin = _forward(b, v)
        slot = _slot(owners, twin.owner) if twin is not None else None
        if twin is not None and slot is None:
            _materialise(b, v)
        forms.append((slot, T.shape(twin.value)[0]) if slot is not None else None)
    return tuple(forms)


def reverse_rows(b, v: SSAValue) -> int:
    """The rows of `v`'s twin if it has one of the reverse form, which crosses calls (else 0)."""
    twin = b.one_hot.get(v)
    return twin.rows if twin is not None and twin.owner is None else 0


def _record(b, old: SSAValue, value: SSAValue, like: OneHot, rows: int | None = None, owner=None) -> None:
    b.one_hot[old] = OneHot(value, like.rows if rows is None else rows, like.owner if owner is None else owner)


def _enter(b, twin: OneHot, v: SSAValue) -> SSAValue:
    """The unbatched operand `v` (rows, *rest) in the form of `twin`."""
    if twin.owner is None:
        return _repeated_rows(b, v, twin.rows)
    return _spread(b, b.get(v), [*twin.lead(b.size)[:1], *T.shape(v)], [0])


def _repeated_rows(b, v: SSAValue, rows: int) -> SSAValue:
    """The unbatched `v` (rows, *rest) as a twin: row k // m at k, shape (B, *rest)."""
    new, rest = b.get(v), list(T.shape(v)[1:])
    m = b.size // rows
    if m == 1:
        return new
    init = b.op(tensor.EmptyOp([], T.tensor_type(T.element(new), [rows, m, *rest])))
    spread = b.op(BroadcastOp(new, init, DenseArrayBase.from_list(i64, [1])))
    return T.reshape(b, spread, [b.size, *rest])


def _same_op(op: Operation, operands, result_shape) -> Operation:
    """`op` again on `operands`, its result of `result_shape` (its flags kept)."""
    return op.__class__.create(
        operands=list(operands), result_types=[T.tensor_type(T.element(op.results[0]), result_shape)],
        properties=dict(op.properties), attributes=dict(op.attributes),
    )


def _is_zero(v: SSAValue) -> bool:
    """A constant zero array (arith.constant or tensor.splat of 0)."""
    owner = v.owner
    if isinstance(owner, tensor.SplatOp):
        owner = owner.input.owner
        return isinstance(owner, arith.ConstantOp) and isinstance(owner.value, FloatAttr) and owner.value.value.data == 0
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, DenseIntOrFPElementsAttr):
        return bool(np.all(np.asarray(owner.value.get_values()) == 0))
    return False


def start(b, old: SSAValue) -> None:
    """Give `old` a twin if its batched value is the identity basis seen as
    (N, *rest), N >= 2 rows of m elements: row k // m holds e_(k % m)."""
    shape = T.shape(old)
    if len(shape) < 2 or shape[0] < 2 or not b.is_batched(old) or not is_basis(b.get(old), b.bases):
        return
    rows, m = shape[0], b.size // shape[0]
    if m > MAX_ROW:
        return
    elem = T.element(old)
    eye = T.dense(b, np.eye(m), T.tensor_type(elem, [m, m]))
    init = b.op(tensor.EmptyOp([], T.tensor_type(elem, [rows, m, m])))
    tiled = b.op(BroadcastOp(eye, init, DenseArrayBase.from_list(i64, [0])))
    b.one_hot[old] = OneHot(T.reshape(b, tiled, [b.size, *shape[1:]]), rows)


def _gathered_basis(b, op: GenericOp) -> None:
    """Start the forward twin of x[idx] (a gather along axis 0, unbatched
    indices the same along the other axes) of the identity basis seen as
    (R, *rest), R rows of m elements, or of a slice of it along the other
    axes (`cams[cam_index, 6:7]`): observation o's row is e_j at j < m, for
    the tangents owner[o] * m + j (then sliced)."""
    if op.attributes.get(T.KIND) != StringAttr("gather") or G.axis_of(op) != 0:
        return
    (idx, data), result = op.inputs, op.results[0]
    piece = None
    if isinstance(data.owner, tensor.ExtractSliceOp) and len(T.shape(data.owner.source)) == len(T.shape(data)):
        piece = _static_rest(data.owner, T.shape(data.owner.source)[0])
        data = data.owner.source if piece is not None else data
    shape = T.shape(data)
    if b.is_batched(idx) or not b.is_batched(data) or len(shape) < 1 or shape[0] < 2:
        return
    owner = _row_index(idx)
    if owner is None or not is_basis(b.get(data), b.bases):
        return
    m, rows, rest = b.size // shape[0], T.shape(result)[0], list(shape[1:])
    if m > MAX_ROW:
        return
    elem = T.element(data)
    eye = T.dense(b, np.eye(m).reshape([m, *rest]), T.tensor_type(elem, [m, *rest]))
    twin = _spread(b, eye, [m, rows, *rest], [1])
    if piece is not None:
        offsets, sizes, strides = piece
        twin = b.op(tensor.ExtractSliceOp(twin, [0, 0, *offsets], [m, rows, *sizes], [1, 1, *strides],
                                          T.tensor_type(elem, [m, rows, *sizes])))
    b.one_hot[result] = OneHot(twin, rows, b.get(owner))


def _row_index(idx: SSAValue) -> SSAValue | None:
    """The one index per row that the gather's index array `idx` (rows,
    *rest) repeats along its other axes (the frontend's broadcast)."""
    dims = T.shape(idx)
    if len(dims) == 1:
        return idx
    op = idx.owner
    if isinstance(op, BroadcastOp) and list(op.dimensions.get_values()) == list(range(1, len(dims))):
        return op.input
    if isinstance(op, tensor.ReshapeOp) and T.shape(op.source) == dims[:1] and all(d == 1 for d in dims[1:]):
        return op.source
    return None


def _dense_blocks(b, twin: OneHot, shape) -> SSAValue:
    """The batched value (B, *`shape`) whose forward twin is `twin`: seen as
    (R, m, rows, *rest), the twin where r == owner[o], zeros elsewhere."""
    m, rows, rest = T.shape(twin.value)[0], shape[0], list(shape[1:])
    blocks = b.size // m
    ramp = _spread(b, T.dense(b, np.arange(blocks), T.tensor_type(T.I64, [blocks])), [blocks, rows], [1])
    owners = _spread(b, twin.owner, [blocks, rows], [0])
    hit = T.elementwise(b, lambda e, a: e.op(arith.CmpiOp(a[0], a[1], "eq")), [ramp, owners], T.I1,
                        "piecewise-constant")
    full = [blocks, m, rows, *rest]
    mask = _spread(b, hit, full, [1, *range(3, len(full))])
    zero = b.op(arith.ConstantOp(FloatAttr(0.0, T.element(twin.value))))
    picked = T.select(b, mask, _spread(b, twin.value, full, [0]), T.splat(b, zero, full))
    return T.reshape(b, picked, [b.size, rows, *rest])


def twin_type(t: TensorType, size: int) -> TensorType:
    """The type of the twin of a value of type `t` (its rows the first axis), in a batch of `size`."""
    return T.tensor_type(t.element_type, [size, *t.get_shape()[1:]])


def receive(b, old: SSAValue, twin: SSAValue, rows: int) -> None:
    """`old` arrives as its twin (an argument of a batched function, a
    result of a call): recorded, with the dense value for the ops that need
    it (`dense`; unread, the optimiser removes it)."""
    b.one_hot[old] = OneHot(twin, rows)
    b.set(old, dense(b, twin, T.shape(old), rows, b.size), True)


def dense(b, twin: SSAValue, shape, rows: int, size: int) -> SSAValue:
    """The batched value (`size`, *`shape`) whose twin is `twin`: a mask of
    each element's row (k // m == j) times the twin spread over the rows."""
    elem = T.element(twin)
    m = size // rows
    owners = T.dense(b, np.arange(size) // m, T.tensor_type(elem, [size]))
    ramp = T.dense(b, np.arange(rows), T.tensor_type(elem, [rows]))
    down, across = (_spread(b, v, [size, rows], [axis]) for v, axis in ((owners, 1), (ramp, 0)))
    mask = T.to_float(b, T.compare(b, "oeq", down, across), elem)
    full = [size, *shape]
    if len(full) > 2:
        mask = _spread(b, mask, full, list(range(2, len(full))))
    return b.op(arith.MulfOp(mask, _spread(b, twin, full, [1])))


def _spread(b, v: SSAValue, dims, added) -> SSAValue:
    init = b.op(tensor.EmptyOp([], T.tensor_type(T.element(v), dims)))
    return b.op(BroadcastOp(v, init, DenseArrayBase.from_list(i64, added)))


def reshape(b, op: tensor.ReshapeOp) -> None:
    """A reshape of the rest of each row keeps the twin; the basis reshaped
    to rows starts one. A forward twin's rows may merge with the axes after
    them: each owner repeated."""
    before, after = T.shape(op.source), T.shape(op.result)
    twin = b.one_hot.get(op.source)
    if twin is None:
        start(b, op.result)
    elif len(after) >= 1 and after[:1] == before[:1]:
        _record(b, op.result, T.reshape(b, twin.value, [*twin.lead(b.size), *after[1:]]), twin)
    elif twin.owner is not None and len(after) >= 1 and before and after[0] % before[0] == 0 \
            and any(int(np.prod(before[:k])) == after[0] for k in range(2, len(before) + 1)):
        q = after[0] // before[0]
        owner = T.reshape(b, _spread(b, twin.owner, [before[0], q], [1]), [after[0]])
        value = T.reshape(b, twin.value, [T.shape(twin.value)[0], *after])
        _record(b, op.result, value, twin, after[0], owner)


def elementwise(b, op: Operation) -> None:
    """x * y, x + y, x - y with both twins; x * u, u * x, x / u with u
    unbatched; -x. (x + u, u / x and the rest are not zero off the row.)"""
    result = op.results[0]
    if not is_tensor(result.type) or not T.shape(result):
        return
    twins = [b.one_hot.get(v) for v in op.operands]
    first = next(t for t in twins if t is not None)
    if not all(t is None or t.alike(first) for t in twins):
        return
    shape = [*first.lead(b.size), *T.shape(result)[1:]]
    if isinstance(op, arith.NegfOp):
        operands = [twins[0].value]
    elif all(twins):
        if isinstance(op, arith.DivfOp):
            return
        operands = [t.value for t in twins]
    elif isinstance(op, (arith.AddfOp, arith.SubfOp)) or b.is_batched(op.operands[twins.index(None)]):
        return
    elif isinstance(op, arith.DivfOp) and twins[0] is None:
        return
    else:
        operands = [t.value if t is not None else _enter(b, first, v) for t, v in zip(twins, op.operands)]
    _record(b, result, b.op(_same_op(op, operands, shape)), first)


def broadcast(b, op: BroadcastOp) -> None:
    """Along the other axes: the twin broadcast the same way."""
    twin, added = b.one_hot[op.input], list(op.dimensions.get_values())
    if 0 in added:
        return
    shape = [*twin.lead(b.size), *T.shape(op.results[0])[1:]]
    _record(b, op.results[0], _spread(b, twin.value, shape, [twin.axis(d) for d in added]), twin)


def reduce(b, op: ReduceOp) -> None:
    """A sum from zero: over the other axes, the twin's sum; over the row
    axis too, the batched result itself (the one row that is not zero; not
    for a forward twin, whose rows share the tangents)."""
    twin = b.one_hot.get(op.input)
    body = list(op.regions[0].block.ops)
    if twin is None or b.is_batched(op.init) or not _is_zero(b.get(op.init)):
        return
    if len(body) != 2 or not isinstance(body[0], arith.AddfOp) or not isinstance(body[1], YieldOp):
        return
    axes = list(op.dimensions.get_values())
    if 0 in axes and twin.owner is not None:
        return
    summed = T.reduce(b, twin.value, [twin.axis(d) for d in axes if d != 0])
    if 0 in axes:
        b.set(op.results[0], summed, True)
    else:
        _record(b, op.results[0], summed, twin)


def concat(b, op: tensor.ConcatOp) -> None:
    twins = [b.one_hot.get(v) for v in op.operands]
    axis = op.dim.value.data
    if axis == 0 or not all(twins) or not all(t.alike(twins[0]) for t in twins):
        return
    _record(b, op.results[0], T.concat(b, [t.value for t in twins], twins[0].axis(axis)), twins[0])


def _static_rest(op: Operation, rows: int) -> tuple[list, list, list] | None:
    """A slice's offsets, sizes and strides along the other axes, when
    static and whole along the row axis."""
    if op.offsets or op.sizes or op.strides:
        return None
    offsets, sizes, strides = (list(a.get_values()) for a in (op.static_offsets, op.static_sizes, op.static_strides))
    if (offsets[0], sizes[0], strides[0]) != (0, rows, 1) or DYNAMIC_INDEX in offsets + sizes + strides:
        return None
    return offsets[1:], sizes[1:], strides[1:]


def _on_twin(twin: OneHot, size: int, offsets, sizes, strides) -> tuple[list, list, list]:
    """A slice of the other axes as a slice of the twin."""
    lead = twin.lead(size)
    return [0] * len(lead) + offsets, lead + sizes, [1] * len(lead) + strides


def extract_slice(b, op: tensor.ExtractSliceOp) -> None:
    twin = b.one_hot[op.source]
    found = _static_rest(op, twin.rows)
    if found is None or len(T.shape(op.result)) != len(T.shape(op.source)):
        return
    offsets, sizes, strides = _on_twin(twin, b.size, *found)
    piece = tensor.ExtractSliceOp(twin.value, offsets, sizes, strides, T.tensor_type(T.element(twin.value), sizes))
    _record(b, op.result, b.op(piece), twin)


def insert_slice(b, op: tensor.InsertSliceOp) -> None:
    """A twin inserted into a twin, or into unbatched zeros."""
    twin, into = b.one_hot.get(op.source), b.one_hot.get(op.dest)
    if twin is None or len(T.shape(op.source)) != len(T.shape(op.dest)) or T.shape(op.dest)[0] != twin.rows:
        return
    found = _static_rest(op, twin.rows)
    if found is None or (into is not None and not into.alike(twin)):
        return
    if into is None:
        if b.is_batched(op.dest) or not _is_zero(b.get(op.dest)):
            return
        zero = b.op(arith.ConstantOp(FloatAttr(0.0, T.element(op.dest))))
        into = OneHot(T.splat(b, zero, [*twin.lead(b.size), *T.shape(op.dest)[1:]]), twin.rows, twin.owner)
    offsets, sizes, strides = _on_twin(twin, b.size, *found)
    new = tensor.InsertSliceOp.get(twin.value, into.value, sizes, offsets, strides, result_type=into.value.type)
    _record(b, op.result, b.op(new), twin)


def generic(b, op: GenericOp) -> None:
    """A scatter-add along the row axis of a twin (unbatched indices): each
    twin row added at its one index, a scatter-add of B rows of one element."""
    if op.attributes.get(T.KIND) != StringAttr("scatter-add") or G.axis_of(op) != 0:
        return
    (idx, values), (dest,) = op.inputs, op.outputs
    twin = b.one_hot.get(values)
    if twin is None or twin.owner is not None or b.is_batched(idx) or idx in b.one_hot:
        return
    rest = list(T.shape(values)[1:])
    one = [b.size, 1, *rest]
    positions = T.reshape(b, _repeated_rows(b, idx, twin.rows), one)
    added = G.scatter_add(b, b.batched(dest), positions, T.reshape(b, twin.value, one), 1)
    b.set(op.results[0], added, True)


_RULES = {
    "tensor.reshape": reshape,
    **dict.fromkeys(("arith.mulf", "arith.addf", "arith.subf", "arith.divf", "arith.negf"), elementwise),
    "linalg.broadcast": broadcast,
    "linalg.reduce": reduce,
    "tensor.concat": concat,
    "tensor.extract_slice": extract_slice,
    "tensor.insert_slice": insert_slice,
    "linalg.generic": generic,
}

__all__ = ["MAX_ROW", "OneHot", "ahead", "dense", "follow", "gathered_operands", "gathered_results", "gathered_type",
           "owner_types", "receive", "receive_gathered", "reverse_rows", "start", "twin_type"]
