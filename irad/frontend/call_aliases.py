"""Arrays a call was given that its result may be: `v = ident(w); w[0] = 5.0`,
or `g = make_loss(w); w += 1.0` where the returned closure holds `w`.

A function's result that is not an array of its own (views.own_results) may be
an array it was given, a view of one, or hold one in a closure it returns.
numpy would show a later in-place write to that array through the result too,
but irad's result is a value taken at the call. So while a variable holds
such a result (alone, in a container or in a closure, or as what a loop or a
branch carried out: `u = ident(w)` in a loop body), an in-place write to an
array the call was given is refused, naming the call, rather than giving the
result's old value.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import zip_longest

from xdsl.dialects import scf
from xdsl.ir import Operation, OpResult, SSAValue

from irad.frontend.callables import flatten, live
from irad.frontend.values import is_array


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

    def record(self, args, results, own: tuple, where: str, callee: str) -> None:
        """A call given the SSA values `args` returned `results` (`own[k]`: result k
        is a new array of the callee's own)."""
        shared = tuple(r for r, o in zip_longest(results, own, fillvalue=False) if r is not None and is_array(r) and not o)
        given = tuple(a for a in args if is_array(a))
        if shared and given:
            self.calls.append(GivenArrays(shared, given, where, callee))

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
            if self.views._reaches(value, set(call.given)) and any(may_be(h, call.shared) for h in held):
                return (f"in-place write to '{name}', whose array the call to {call.callee} at {call.where} was "
                        "given and may have returned (a variable here holds that result, which numpy would "
                        "change too)",
                        f"pass a copy, np.copy({name}), to the call, or write into a copy after it: "
                        f"{name} = np.copy({name})")
        return None


def may_be(value: SSAValue, results: tuple[SSAValue, ...]) -> bool:
    """Whether `value` may be one of a call's `results`: it is one, or a loop
    or branch made it, and carried one out (the call is inside it, or one is
    its initial value), as `u = ident(w)` in a loop body leaves `u`."""
    if value in results:
        return True
    if not isinstance(value, OpResult) or not isinstance(value.op, (scf.ForOp, scf.WhileOp, scf.IfOp)):
        return False
    op = value.op
    if any(r.type == value.type and _inside(r, op) for r in results):
        return True
    inits = op.iter_args if isinstance(op, scf.ForOp) else op.arguments if isinstance(op, scf.WhileOp) else ()
    return any(may_be(v, results) for v in inits if v.type == value.type)


def _inside(value: SSAValue, op: Operation) -> bool:
    """Whether `value` is defined in one of `op`'s regions."""
    parent = value.op if isinstance(value, OpResult) else value.block.parent_op()
    while parent is not None:
        if parent is op:
            return True
        parent = parent.parent_op()
    return False
