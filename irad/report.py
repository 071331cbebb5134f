"""The decision report: what the pass did at each call op, and why.

For every call in the differentiated call tree it says whether a rule was
inlined (which one, where it is defined), the rule declined or was opted out
of, the callee was differentiated because no rule matched, the callee is
non-differentiable, or no cotangent flowed through the call at all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from irad.frontend import bind_arguments, signature_of
from irad.ir.types import is_differentiable
from irad.passes.differentiate import CallDecision, Differentiator
from irad.pipeline import lowered
from irad.rules import RuleTable, default_table

@dataclass(frozen=True)
class Report:
    function: str
    decisions: tuple[CallDecision, ...]

    def __str__(self) -> str:
        lines = [f"irad explain: {self.function}"]
        lines += [f"  {d.describe()}" for d in self.decisions]
        if not self.decisions:
            lines.append("  (no calls)")
        return "\n".join(lines)


def explain(
    f: Callable, *args, argnums: int | Sequence[int] | None = None, table: RuleTable | None = None
) -> Report:
    """The decision report for differentiating `f` at `args` (all float
    arguments unless `argnums` says otherwise)."""
    table = table if table is not None else default_table()
    args = bind_arguments(f, args, {})
    signature = signature_of(f, args)
    if argnums is None:
        wrt = {i for i, t in enumerate(signature) if is_differentiable(t)}
    else:
        wrt = {argnums % len(signature)} if isinstance(argnums, int) else {
            n % len(signature) for n in argnums
        }
    module, name, hidden = lowered(f, signature, table)
    differentiator = Differentiator(module, table)
    active = tuple(i in wrt and is_differentiable(t) for i, t in enumerate(signature))
    differentiator.reverse(name, active + (False,) * len(hidden.globals))  # global arrays: never
    return Report(getattr(f, "__qualname__", name), tuple(differentiator.decisions))
