"""Loops whose trip count varies along the batch, batched as JAX's vmap runs
them: to the largest trip count, with a mask.

- `scf.for` with a batched bound or step: one loop over k = 0 .. the largest
  trip count; element e runs while k < its own trip count, at
  iv = lb + k * step (unbatched when lb and step are); once stopped, at the
  index of the element with the largest trip count.
- `scf.while` with a batched condition: the loop runs while any element's
  condition holds; an element whose condition fails keeps its carried values,
  so its condition region, run again on them, passes on the same values.

Each element's carried values change only while its own loop runs (a select
on the mask after the body). The body also runs for the elements that have
stopped, but as a running element: on its carried values, its index and the
batched values it reads from outside the loop (`_as_reference`). A stopped
element's own values may be out of range for the body (`x[i]` once
`i == len(x)` ends `while i < len(x)`, `x[k + i]` in `range(k, len(x))`),
while a running element's are values its own program uses. What the body
computes for a stopped element is discarded, and its
checks hold only for the running elements (BatchBuilder.masked).

Forward mode follows a masked loop (the select takes each element's own
tangent). Reverse mode refuses it (MASKED, passes/ad/derivatives/regions.py):
the discarded body's cotangent is zero times its partial derivatives, NaN
where one is infinite at a stopped element's values; a reverse-mode request
in batched code whose batched callee has one is asked per element instead
(per_element.py).
"""

from __future__ import annotations

from contextlib import contextmanager

from xdsl.dialects import arith, scf, tensor
from xdsl.dialects.builtin import AnyFloat, DenseArrayBase, FloatAttr, IndexType, IntegerAttr, IntegerType, TensorType, UnitAttr, i1, i64
from xdsl.dialects.linalg.ops import BroadcastOp
from xdsl.ir import Block, Operation, Region, SSAValue

from irad.ir import tensor as T
from irad.ir.metadata import MASKED


def for_loop(b, op: scf.ForOp) -> None:
    """`op`, whose bounds or step vary along the batch, batched with a mask (`b`: the BatchBuilder)."""
    _check_carried(b, op, op.iter_args)
    lb, ub, step = (_as_i64(b, op, b.batched(v)) for v in (op.lb, op.ub, op.step))
    trips = T.elementwise(b, _trip_count, [lb, ub, step], i64)
    most = T.extract_scalar(b, T.reduce(b, trips, [0], arith.MaxSIOp))
    longest = _first(b, _compare(b, "eq", trips, T.splat(b, most, [b.size])))  # runs every iteration
    body = op.body.block
    block = Block(arg_types=[IndexType(), *(b.batched_type(v.type) for v in op.iter_args)])
    with b.at_end(block):
        k = b.op(arith.IndexCastOp(block.args[0], i64))
        running = _compare(b, "slt", T.splat(b, k, [b.size]), trips)
        if b.is_batched(op.lb) or b.is_batched(op.step):
            own = T.elementwise(b, lambda e, a: e.op(arith.IndexCastOp(e.op(arith.AddiOp(a[0], e.op(arith.MuliOp(
                a[2], a[1])))), op.lb.type)), [lb, step, T.splat(b, k, [b.size])], op.lb.type)
            # a stopped element's own index may be out of range (`range(k, len(x))`): it runs on the longest's
            iv = select_rows(b, running, own, _row_everywhere(b, own, longest))
        else:
            iv = b.op(arith.AddiOp(b.get(op.lb), b.op(arith.MuliOp(_cast(b, block.args[0], op.lb.type), b.get(op.step)))))
        b.set(body.args[0], iv, b.is_batched(op.lb) or b.is_batched(op.step))
        carried = list(block.args[1:])
        for old, new in zip(body.args[1:], carried):
            new.name_hint = old.name_hint
            b.set(old, select_rows(b, running, new, _row_everywhere(b, new, longest)), True)
        with b.masked(running), _as_reference(b, op, running, longest):
            end = b.run(body)
        block.add_op(scf.YieldOp(*(select_rows(b, running, b.batched(v), c) for v, c in zip(end.operands, carried))))
    inits = [b.batched(v) for v in op.iter_args]
    upper = b.op(arith.IndexCastOp(most, IndexType()))
    new = scf.ForOp(b.index(0), upper, b.index(1), inits, Region(block))
    new.attributes[MASKED] = UnitAttr()
    new.location = op.location
    b.insert(new)
    for old, v in zip(op.results, new.results):
        b.set(old, v, True)


def while_loop(b, op: scf.WhileOp) -> None:
    """`op`, whose condition varies along the batch, batched with a mask: the
    condition region passes on its values, each element's condition and the
    carried values, so that a stopped element keeps them."""
    _check_carried(b, op, op.arguments)
    before, after = op.before_region.block, op.after_region.block
    new_before = Block(arg_types=[b.batched_type(v.type) for v in before.args])
    with b.at_end(new_before):
        for old, new in zip(before.args, new_before.args):
            new.name_hint = old.name_hint
            b.set(old, new, True)
        end = b.run(before)
        running = b.batched(end.condition)
        first = _first(b, running)
        any_ = b.op(arith.CmpiOp(first, b.op(arith.ConstantOp(IntegerAttr(b.size, i64))), "slt"))
        passed = [b.batched(v) for v in end.args]
        new_before.add_op(scf.ConditionOp(any_, *passed, running, first, *new_before.args))
    n = len(passed)
    types = [v.type for v in (*passed, running, first, *new_before.args)]
    new_after = Block(arg_types=types)
    with b.at_end(new_after):
        running, first, current = new_after.args[n], new_after.args[n + 1], new_after.args[n + 2:]
        for old, new in zip(after.args, new_after.args[:n]):
            new.name_hint = old.name_hint
            b.set(old, select_rows(b, running, new, _row_everywhere(b, new, first)), True)
        with b.masked(running), _as_reference(b, op, running, first):
            end = b.run(after)
        new_after.add_op(scf.YieldOp(*(select_rows(b, running, b.batched(v), c) for v, c in zip(end.operands, current))))
    new = scf.WhileOp([b.batched(v) for v in op.arguments], types, Region(new_before), Region(new_after))
    new.attributes[MASKED] = UnitAttr()
    new.location = op.location
    b.insert(new)
    for old, v in zip(op.results, new.results[:n]):
        b.set(old, v, True)


@contextmanager
def _as_reference(b, op: Operation, running: SSAValue, reference: SSAValue, regions=None):
    """While the body of the masked loop `op` is batched: each batched value it
    reads from outside the loop is, for a stopped element, the `reference`
    element's (one that runs), as its carried values and index are. So a
    stopped element runs the body as the reference does, on a state its own
    program reaches, never on its own invariants mixed with another's carried
    values (an index `k + i` past the end when k varies, a loop inside that
    does not end). `regions` (default: all of op's): the regions batched."""
    saved = {}
    for v in _read_from_outside(op, op.regions if regions is None else regions):
        if v in saved or not b.is_batched(v) or v in b.one_hot:
            continue
        new = b.get(v)
        if not isinstance(new.type, TensorType):
            continue  # a tape: its records are per element already
        saved[v] = new
        b.set(v, select_rows(b, running, new, _row_everywhere(b, new, reference)), True)
    try:
        yield
    finally:
        for v, new in saved.items():
            b.set(v, new, True)


def _read_from_outside(op: Operation, regions) -> list[SSAValue]:
    """The values the ops inside `regions` of `op` read that are defined outside `op`."""
    inside = [inner for region in regions for block in region.blocks for inner in block.walk()]
    found = []
    for inner in inside:
        for v in inner.operands:
            owner = v.owner if isinstance(v.owner, Operation) else v.owner.parent_op()
            if owner is not None and owner is not op and not op.is_ancestor(owner):
                found.append(v)
    return found


def if_arms(b, op: scf.IfOp) -> list[list[SSAValue]]:
    """Both arms of `op`, whose condition varies along the batch, batched:
    each arm's results for the whole batch. An arm runs only where some
    element takes it (else its results are zeros, which the select after it
    discards), and for the elements that do not take it, as an element that
    does (`_as_reference`): on values its own program computes. Run on their
    own values, an arm they do not take could raise a run-time check (a
    division by zero, an index out of bounds behind `if k > 0`), and its
    derivative be infinite there (`np.sqrt(x)` behind `if x > 0`), so that
    the zero cotangent the select gives it made a NaN gradient."""
    cond = b.get(op.cond)
    takes = [cond, T.elementwise(b, lambda e, a: e.op(arith.XOrIOp(a[0], e.op(arith.ConstantOp(IntegerAttr(1, i1))))),
                                 [cond], i1, "piecewise-constant")]
    types = [b.batched_type(r.type) for r in op.results]
    if not all(isinstance(t, TensorType) for t in types):  # a tape: its records are per element already
        arms = []
        for region, mask in zip(op.regions, takes):
            with b.masked(mask):
                arms.append([b.batched(v) for v in b.run(region.blocks[0]).operands])
        return arms
    arms = []
    for region, mask in zip(op.regions, takes):
        if not region.blocks:  # the missing else of an `if` without results
            continue
        mask = b.within(mask)  # under a mask (an arm, a masked loop, a call under one): the elements it holds for
        first = _first(b, mask)
        some = b.op(arith.CmpiOp(first, b.op(arith.ConstantOp(IntegerAttr(b.size, i64))), "slt"))
        ran, skipped = Block(), Block()
        with b.at_end(ran):
            with b.masked(mask, within=True), _as_reference(b, op, mask, first, [region]):
                end = b.run(region.blocks[0])
                ran.add_op(scf.YieldOp(*(b.batched(v) for v in end.operands)))
        with b.at_end(skipped):
            skipped.add_op(scf.YieldOp(*(_zeros(b, t) for t in types)))
        arm = scf.IfOp(some, types, Region(ran), Region(skipped))
        arm.location = op.location
        b.insert(arm)
        arms.append(list(arm.results))
    return arms


def _zeros(b, type_: TensorType) -> SSAValue:
    elem = type_.get_element_type()
    zero = b.op(arith.ConstantOp(FloatAttr(0.0, elem) if isinstance(elem, AnyFloat) else IntegerAttr(0, elem)))
    return T.splat(b, zero, type_.get_shape())


def _check_carried(b, op: Operation, values) -> None:
    """Each element keeps its own carried values: numbers and tensors, not memory (a tape)."""
    for v in values:
        if not isinstance(v.type, (TensorType, IndexType, IntegerType, AnyFloat)):
            b.refuse(op, f"a loop whose trip count varies along the batch carries a {v.type}, which a mask "
                     "cannot keep per element", "batch the function before it is differentiated")


def select_rows(b, mask: SSAValue, then: SSAValue, other: SSAValue) -> SSAValue:
    """Each element's row of `then` where `mask` (one i1 per element) holds, else of `other`."""
    dims = T.shape(then)
    picked = mask if len(dims) == 1 else b.op(BroadcastOp(
        mask, b.op(tensor.EmptyOp([], TensorType(T.element(mask), dims))),
        DenseArrayBase.from_list(i64, list(range(1, len(dims)))),
    ))
    return T.select(b, picked, then, other)


def _trip_count(e, a) -> SSAValue:
    """max(ub - lb, 0) ceildiv step (scf.for's step is positive)."""
    lb, ub, step = a
    span = e.op(arith.MaxSIOp(e.op(arith.SubiOp(ub, lb)), e.op(arith.ConstantOp(IntegerAttr(0, i64)))))
    return e.op(arith.CeilDivSIOp(span, step))


def _as_i64(b, op: Operation, v: SSAValue) -> SSAValue:
    elem = T.element(v)
    if elem == i64:
        return v
    if not isinstance(elem, IndexType):
        b.refuse(op, f"a loop bound of type {elem} that varies along the batch", "use index or i64 bounds")
    return T.elementwise(b, lambda e, a: e.op(arith.IndexCastOp(a[0], i64)), [v], i64)


def _cast(b, v: SSAValue, type_) -> SSAValue:
    return v if v.type == type_ else b.op(arith.IndexCastOp(v, type_))


def _compare(b, predicate: str, x: SSAValue, y: SSAValue) -> SSAValue:
    return T.elementwise(b, lambda e, a: e.op(arith.CmpiOp(a[0], a[1], predicate)), [x, y], i1, "piecewise-constant")


def _first(b, mask: SSAValue) -> SSAValue:
    """The position of the first element where `mask` holds (the batch size where none does), as i64."""
    positions = T.positions(b, [b.size], 0, i64)
    beyond = T.splat(b, b.op(arith.ConstantOp(IntegerAttr(b.size, i64))), [b.size])
    return T.extract_scalar(b, T.reduce(b, T.select(b, mask, positions, beyond), [0], arith.MinSIOp))


def _row_everywhere(b, v: SSAValue, element: SSAValue) -> SSAValue:
    """Element `element`'s (an i64) value of the batched `v`, repeated for every element."""
    one = row(b, v, b.op(arith.IndexCastOp(element, IndexType())))
    return b.broadcast(one) if T.shape(v)[1:] else T.splat(b, one, [b.size])


def row(b, v: SSAValue, at: SSAValue) -> SSAValue:
    """Row `at` (an index) of the batched `v`, without the batch axis (a number from a vector)."""
    dims = T.shape(v)[1:]
    if not dims:
        return b.op(tensor.ExtractOp(v, [at], T.element(v)))
    piece = b.op(tensor.ExtractSliceOp(v, [at, *[0] * len(dims)], [1, *dims], [1] * (len(dims) + 1),
                                       TensorType(T.element(v), [1, *dims])))
    return T.reshape(b, piece, dims)


__all__ = ["for_loop", "if_arms", "row", "select_rows", "while_loop"]
