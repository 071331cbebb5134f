"""What the differentiation passes decided at each call op, for reports and tests.

Both modes record one `CallDecision` per call they meet (and one for the
requested function itself): reverse mode (passes/differentiate.py) and
forward mode (passes/jvp.py). `irad explain` (irad/report.py) prints them,
and `irad-differentiate{remarks=true}` attaches them to generated functions.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.ir import Operation

from irad.ir.locations import source_location
from irad.passes.ad.rule_ir import rule_key


@dataclass(frozen=True)
class CallDecision:
    """What happened at one call op.

    `kind` is the table's answer ("rule", "declined", "opted-out", "no-rule",
    "non-differentiable"), or "inactive" when no derivative flows through the
    call, so nothing was asked. `mode` is "reverse" or "forward".
    """

    caller: str
    callee: str
    target: str
    kind: str
    location: str  # file:line:col, else @caller; "" for the requested function itself
    rule: str = ""  # the entry that decided, described
    mode: str = "reverse"

    def describe(self) -> str:
        """One line: where, which call, what happened, and the deciding entry."""
        if self.location:
            text = f"{self.location}: call to @{self.callee}"
        else:
            text = f"@{self.callee} itself"
        if self.target != self.callee:
            text += f" ({self.target})"
        text += f": {MEANING[self.mode][self.kind]}"
        return text + (f" [{self.rule}]" if self.rule else "")


_REVERSE = {
    "rule": "rule inlined",
    "declined": "rule declined; callee differentiated",
    "opted-out": "opted out; callee differentiated",
    "no-rule": "no rule; callee differentiated",
    "non-differentiable": "non-differentiable; zero cotangent, no code",
    "inactive": "no cotangent flows; plain call",
}

# What each decision kind means, per mode, as reports print it.
MEANING = {
    "reverse": _REVERSE,
    "forward": {
        **_REVERSE,
        "non-differentiable": "non-differentiable; zero tangent, no code",
        "inactive": "no tangent flows; plain call",
    },
}


def decision_at(
    caller: str, op: Operation | None, callee: func.FuncOp, kind: str, rule=None, mode: str = "reverse"
) -> CallDecision:
    """The record of what happened at call `op` in @caller (None: the request itself)."""
    where = ""  # a request for the function itself
    if op is not None:
        where = source_location(op) or f"@{caller}"
    return CallDecision(
        caller, callee.sym_name.data, rule_key(callee), kind, where,
        rule.describe() if rule is not None else "", mode,
    )


__all__ = ["CallDecision", "MEANING", "decision_at"]
