"""Numbers that a join holds as arrays: where numpy's result would differ.

A variable that is a number on one path and an array on another (`acc = x`
before a loop that makes it `acc * w`, an `if` that gives it an array on one
arm) has no static type in numpy: it is a number on the paths that keep the
number. irad's types are static, so the join (joins.py) holds the number as an
array of the array's shape, `tensor.splat`, marked `MARK`. That array stands
for the number exactly only where the shape cannot show: in an elementwise op
beside an array of the full shape (`acc * w`, numpy's broadcast gives the same
array). Anywhere else (a reduction, a product, an index, a call, a result) the
program would compute `np.sum(full(3, x))` where numpy computes `np.sum(x)`.

`check(block)` follows every marked splat forward through what keeps it "maybe
a number" (elementwise ops of such values and of numbers broadcast, control
flow carrying it, broadcasts) and refuses, naming the join, any other use of
it. A loop whose trip count is known while lowering to be at least one does
not pass its entry value on to its result.
"""

from __future__ import annotations

from xdsl.dialects import arith, scf, tensor
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, IntegerAttr, StringAttr, TensorType
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.dialects.linalg.ops import BroadcastOp, GenericOp
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineMap

from irad.base.errors import UnsupportedError
from irad.ir.types import describe
from irad.ir.walk import walk_block

MARK = "irad.number_join"  # on a join's splat: where, and which variable


def joined(location: str, what: str, join: str) -> str:
    """How a join is named in a message: `what` (a variable, "the returned
    value") is {one kind} on one path into `join` ("this loop", ...) and {another}
    on another (a template: the kinds are the message's)."""
    return f"{location}: {what} is {{}} on one path into {join} and {{}} on another"


def mark(splat: SSAValue, where: str) -> None:
    """Mark the splat a join made of a number: `where` is its message's start,
    `file:line:col: 'name' ...` (see `check`)."""
    splat.owner.attributes[MARK] = StringAttr(where)


def check(block: Block) -> None:
    """Refuse a use of a marked splat (a number a join holds as an array) that
    numpy's result would not match; then drop the marks."""
    marked = {op.results[0]: op.attributes.pop(MARK).data for op in walk_block(block) if MARK in op.attributes}
    if not marked:
        return
    flow = flow_from(block, marked, _number_step)
    for op in walk_block(block):
        for operand in op.operands:
            if flow.maybe_number(operand, op) and not _keeps(op):
                raise UnsupportedError(
                    f"{flow.maybe[operand].format('a number', 'an array')}: irad's types are static, so it holds the number as "
                    f"{describe(operand.type)}, which is exact only in elementwise arithmetic beside an array "
                    f"of that shape; here ({op.name}) numpy's result would differ on the path where it is a number"
                    "\n  hint: give it an array of that shape on every path (start it as "
                    "np.zeros(shape) or np.full(shape, value)), or a number on every path"
                )


def flow_from(block: Block, sources: dict[SSAValue, str], step) -> Flow:
    """The values that `sources` (value -> the message's start) reach through
    `step` (see Flow) and control flow."""
    flow = Flow(dict(sources), step)
    while flow.changed:  # loops carry values back to their start: until nothing new is found
        flow.changed = False
        for op in walk_block(block):
            flow.follow(op)
    return flow


def _keeps(op: Operation) -> bool:
    """Ops through which a maybe-number value may flow (see `Flow.follow`)."""
    return (_elementwise(op) or isinstance(op, (BroadcastOp, scf.YieldOp, scf.ForOp, scf.WhileOp,
                                                scf.ConditionOp)))


class Flow:
    """Which values may be a number held as an array (`maybe`: value -> the
    join's message). `first`: block arguments of `scf.for` loops that may be
    one only in the first iteration (through the loop's entry): where a
    `break`/`return` flag the loop carries is set, that iteration is past."""

    def __init__(self, maybe: dict[SSAValue, str], step):
        self.maybe = maybe
        self.step = step  # (flow, op) -> the (result, source) pairs a data op makes
        self.first: set[SSAValue] = set()
        self.changed = True

    def maybe_number(self, v: SSAValue, at: Operation) -> bool:
        if v not in self.maybe:
            return False
        return not (v in self.first and _past_first_iteration(at, v.owner.parent_op()))

    def _add(self, v: SSAValue, origin: str, first: bool = False) -> None:
        if v not in self.maybe:
            self.maybe[v] = origin
            self.changed = True
            if first:
                self.first.add(v)
        elif not first and v in self.first:
            self.first.discard(v)
            self.changed = True

    def follow(self, op: Operation) -> None:
        """Mark what `op` makes maybe a number."""
        weak = self.maybe_number
        for result, source in self.step(self, op):
            self._add(result, self.maybe[source])
        if isinstance(op, scf.ForOp):
            body = op.body.block
            runs = _at_least_once(op)
            for init, arg, out, result in zip(op.iter_args, body.args[1:], body.last_op.operands, op.results):
                if init in self.maybe:
                    self._add(arg, self.maybe[init], first=True)
                    if not runs:
                        self._add(result, self.maybe[init])
                if weak(out, body.last_op):
                    self._add(arg, self.maybe[out])
                    self._add(result, self.maybe[out])
        elif isinstance(op, scf.WhileOp):
            before, after = op.before_region.block, op.after_region.block
            for init, arg, out in zip(op.arguments, before.args, after.last_op.operands):
                for v, at in ((init, op), (out, after.last_op)):
                    if weak(v, at):
                        self._add(arg, self.maybe[v])
            condition = before.last_op
            for value, arg, result in zip(condition.args, after.args, op.results):
                if weak(value, condition):
                    self._add(arg, self.maybe[value])
                    self._add(result, self.maybe[value])
        elif isinstance(op, scf.IfOp):
            for region in (op.true_region, op.false_region):
                if region.blocks:
                    end = region.block.last_op
                    for out, result in zip(end.operands, op.results):
                        if weak(out, end):
                            self._add(result, self.maybe[out])


def _number_step(flow: Flow, op: Operation):
    """Numbers held as arrays: through elementwise ops beside other such values
    or numbers broadcast (a choice between two values, beside anything), and
    broadcasts."""
    if _elementwise(op):
        tensors = [v for v in _inputs(op) if isinstance(v.type, TensorType)]
        carried = [v for v in tensors if flow.maybe_number(v, op)]
        if carried and (all(flow.maybe_number(v, op) or _number_like(v) for v in tensors)
                        or (isinstance(op, arith.SelectOp) and not isinstance(op.cond.type, TensorType))):
            for r in op.results:
                yield r, carried[0]
    elif isinstance(op, BroadcastOp) and flow.maybe_number(op.input, op):
        yield op.result, op.input


def _past_first_iteration(op: Operation, loop: Operation) -> bool:
    """Is `op` in the `then` of an `scf.if` on flags `loop` carries from false
    (break, return: irad/frontend/control_flow.py), so never in its first iteration?"""
    child = op
    parent = op.parent_op()
    while parent is not None and parent is not loop:
        if isinstance(parent, scf.IfOp) and child.parent_region() is parent.true_region \
                and _carried_from_false(parent.cond, loop):
            return True
        child, parent = parent, parent.parent_op()
    return False


def _carried_from_false(v: SSAValue, loop: Operation) -> bool:
    """`v` is true only after an iteration of `loop` set it: its carried flags, or-ed."""
    if isinstance(v.owner, arith.OrIOp):
        return _carried_from_false(v.owner.lhs, loop) and _carried_from_false(v.owner.rhs, loop)
    if not isinstance(v, BlockArgument) or not isinstance(loop, scf.ForOp) or v.owner is not loop.body.block \
            or v.index == 0:
        return False
    init = loop.iter_args[v.index - 1].owner
    return isinstance(init, arith.ConstantOp) and isinstance(init.value, IntegerAttr) and init.value.value.data == 0


def _elementwise(op: Operation) -> bool:
    """arith/math on tensors of one shape, or a linalg.generic with identity maps."""
    if isinstance(op, GenericOp):
        identity = AffineMap.identity(len(op.iterator_types.data))
        return (all(m.data == identity for m in op.indexing_maps.data)
                and all(t.data == IteratorType.PARALLEL for t in op.iterator_types.data))
    if not op.name.startswith(("arith.", "math.")) or not op.results:
        return False
    return all(isinstance(r.type, TensorType) for r in op.results)


def _inputs(op: Operation):
    return op.inputs if isinstance(op, GenericOp) else op.operands


def _number_like(v: SSAValue) -> bool:
    """A number broadcast to an array (a splat, a constant of one value): beside
    it, a maybe-number array is still maybe a number."""
    owner = v.owner
    if isinstance(owner, tensor.SplatOp):
        return True
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, DenseIntOrFPElementsAttr):
        return owner.value.is_splat()
    return False


def _at_least_once(op: scf.ForOp) -> bool:
    """Does the loop run its body at least once (bounds known while lowering)?"""
    lb, ub, step = (_constant(v) for v in (op.lb, op.ub, op.step))
    return None not in (lb, ub, step) and step > 0 and ub > lb


def _constant(v: SSAValue, depth: int = 8) -> int | None:
    """An int the IR computes from constants (bounds: casts, +, -, *, max, min)."""
    owner = v.owner
    if depth <= 0 or not isinstance(owner, Operation):
        return None
    if isinstance(owner, arith.ConstantOp):
        return owner.value.value.data if isinstance(owner.value, IntegerAttr) else None
    if isinstance(owner, arith.IndexCastOp):
        return _constant(owner.input, depth - 1)
    folds = {arith.AddiOp: int.__add__, arith.SubiOp: int.__sub__, arith.MuliOp: int.__mul__,
             arith.MaxSIOp: max, arith.MinSIOp: min}
    fold = folds.get(type(owner))
    if fold is None:
        return None
    a, b = _constant(owner.lhs, depth - 1), _constant(owner.rhs, depth - 1)
    return None if a is None or b is None else fold(a, b)
