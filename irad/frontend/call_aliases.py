"""Arrays a call was given that its result may be: `v = ident(w); w[0] = 5.0`,
or `g = make_loss(w); w += 1.0` where the returned closure holds `w`.

A function's result that is not an array of its own (views.own_results) may be
an array it was given, a view of one, or hold one in a closure it returns.
numpy would show a later in-place write to that array through the result too,
but irad's result is a value taken at the call. So while a variable holds
such a result (alone, in a container or in a closure, or as what a loop or a
branch carried out: `u = ident(w)` in a loop body), an in-place write to an
array the call was given is refused, naming the call, rather than giving the
result's old value. Both sides are followed through what may be the same
array: views (a call given `w[2:]` was given part of `w`), loops and branches
(in a loop body, a carried block argument stands for the array the loop
starts with, before the loop op exists: `stands_for`), earlier writes, and
other calls (`ident(ident(w))`).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import zip_longest

from xdsl.dialects import scf, tensor
from xdsl.ir import BlockArgument, OpResult, SSAValue

from irad.frontend.callables import flatten, live
from irad.frontend.values import is_array
from irad.ir.tensor import SAME_ELEMENTS


@dataclass(frozen=True)
class GivenArrays:
    """A call's results that may be arrays it was given (`shared`), and those arrays."""

    shared: tuple[SSAValue, ...]
    given: tuple[SSAValue, ...]
    where: str
    callee: str


class CallAliases:
    """The calls of one function whose results may be the arrays they were given."""

    def __init__(self, views) -> None:
        self.views = views
        self.calls: list[GivenArrays] = []
        # a value control flow merges -> the values it stands for: a loop body's
        # block argument for the loop's start, before the loop op exists to say
        # so; a call's result that may be an array it was given -> those arrays
        self.stands_for: dict[SSAValue, tuple[SSAValue, ...]] = {}

    def carried(self, results, sources) -> None:
        """The arrays among `results` (a loop's block arguments, an scf op's
        results) stand for the values of `sources` at their positions."""
        for k, v in enumerate(results):
            if is_array(v):
                self.stands_for[v] = tuple(s[k] for s in sources if k < len(s))

    def record(self, args, results, own: tuple, where: str, callee: str) -> None:
        """A call given the SSA values `args` returned `results` (`own[k]`: result k
        is a new array of the callee's own)."""
        shared = tuple(r for r, o in zip_longest(results, own, fillvalue=False) if r is not None and is_array(r) and not o)
        given = tuple(a for a in args if is_array(a))
        if shared and given:
            self.calls.append(GivenArrays(shared, given, where, callee))
            for r in shared:  # what a later call is given may be an array this one was (`ident(ident(w))`)
                self.stands_for[r] = given

    def refusal(self, name: str, env: dict) -> tuple[str, str] | None:
        """(message, hint) when writing into `name`'s array would change a call's result held here."""
        value = env.get(name)
        if not self.calls or not isinstance(value, SSAValue):
            return None
        leaves: list[SSAValue] = []
        for item in env.values():  # the run-time values variables hold, in containers and functions too
            flatten(item, leaves, live)
        held = set(leaves)
        for call in self.calls:
            if self._may_write_into(value, set(call.given)) and any(self._may_be(h, call.shared) for h in held):
                return (f"in-place write to '{name}', whose array the call to {call.callee} at {call.where} was "
                        "given and may have returned (a variable here holds that result, which numpy would "
                        "change too)",
                        f"pass a copy, np.copy({name}), to the call, or write into a copy after it: "
                        f"{name} = np.copy({name})")
        return None


    def _may_write_into(self, value: SSAValue, given: set) -> bool:
        """Whether a write into `value` may write into one of the arrays `given`
        (or into the array one of them is a view of: `ident(w[1:])`)."""
        under = self._arrays_under(value)
        return any(not under.isdisjoint(self._arrays_under(g)) for g in given)

    def _arrays_under(self, value: SSAValue) -> set[SSAValue]:
        """The arrays `value` may be, as a write sees it: itself, what it is a view
        of (the path's views, a slice or reshape), what a loop or a branch
        carried it from (in a loop body, the block argument stands for the array
        the loop starts with: `w[0] = 5.0` in a loop after `v = ident(w)`), the
        array an earlier write went into. An array copied from one is new."""
        found: set[SSAValue] = set()
        todo = [value]
        while todo:
            v = todo.pop()
            if v in found:
                continue
            found.add(v)
            source = self.views.derived.get(v)
            if source is not None:
                todo.append(source[0])
            if isinstance(v, OpResult) and isinstance(v.op, (tensor.InsertSliceOp, tensor.InsertOp)):
                todo.append(v.op.operands[1])  # the array written into (a copy's is a new one)
            else:
                todo.extend(_carried_from(v))
            todo.extend(self.stands_for.get(v, ()))
        return found

    def _may_be(self, value: SSAValue, results: tuple[SSAValue, ...]) -> bool:
        """Whether `value` may be one of a call's `results`, or hold one: it is
        one; a loop or branch carried one out (`u = ident(w)` in a loop body, or
        one as the loop's start, in the loop body too); or one was inserted into
        it (a list grown in a loop keeps its items in a buffer). What is
        computed from one is new."""
        seen: set[SSAValue] = set()
        todo = [value]
        while todo:
            v = todo.pop()
            if v in results:
                return True
            if v in seen:
                continue
            seen.add(v)
            todo.extend(_carried_from(v))
            todo.extend(self.stands_for.get(v, ()))
        return False


VIEWS = (*SAME_ELEMENTS, tensor.ExtractSliceOp)  # the same array, or a part of it


def _carried_from(value: SSAValue) -> tuple[SSAValue, ...]:
    """The values `value` may be, or hold, as it is: a loop's or a branch's
    result or block argument (what starts it and what its body yields), an
    insert's result, a view."""
    if isinstance(value, BlockArgument):
        op, k = value.block.parent_op(), value.index
        if isinstance(op, scf.ForOp) and k > 0:
            return op.iter_args[k - 1], op.body.block.last_op.operands[k - 1]
        if isinstance(op, scf.WhileOp):
            if value.block is op.before_region.block:
                return op.arguments[k], op.after_region.block.last_op.operands[k]
            return (op.before_region.block.last_op.operands[1 + k],)
        return ()
    if not isinstance(value, OpResult):
        return ()
    op, k = value.op, value.index
    if isinstance(op, (tensor.InsertSliceOp, tensor.InsertOp)):
        return tuple(op.operands[:2])
    if isinstance(op, VIEWS):  # the same array seen another way (a list item, reshaped)
        return (op.operands[0],)
    if isinstance(op, scf.ForOp):
        return op.iter_args[k], op.body.block.last_op.operands[k]
    if isinstance(op, scf.IfOp):
        return tuple(region.block.last_op.operands[k] for region in op.regions if region.blocks)
    if isinstance(op, scf.WhileOp):
        return (op.before_region.block.last_op.operands[1 + k],)
    return ()
