"""The rule table: the one place the differentiation pass asks "is there a rule?".

A rule is keyed by a target name (a library function such as
"irad.numerics.softplus", or a user function's "module.qualname") and an
optional argument signature. It yields IR in the split shape every generated
function also has:

    forward(args...)                      -> (results..., residuals...)
    pullback(residuals..., d_results...)  -> (d_args...)   one per float argument

The pass inlines both halves at the call site. Decisions are made at compile
time; the table's `version` changes with every edit, and compiled gradients are
cached under it, so an edit is never missed.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.dialects import func
from xdsl.ir import Attribute

from irad.errors import DifferentiationError


@dataclass(frozen=True)
class RuleIR:
    """The IR of a rule for one signature."""

    forward: func.FuncOp
    pullback: func.FuncOp
    num_results: int

    @property
    def residual_types(self) -> tuple[Attribute, ...]:
        return tuple(self.forward.function_type.outputs.data[self.num_results :])


# A builder returns the rule's IR for concrete argument types, or None to decline.
RuleBuilder = Callable[[tuple[Attribute, ...]], RuleIR | None]


@dataclass(frozen=True)
class Rule:
    target: str
    types: tuple[Attribute, ...] | None  # None: every signature
    build: RuleBuilder = field(compare=False)
    origin: str = field(compare=False, default="<unknown>")

    def matches(self, arg_types: Sequence[Attribute]) -> bool:
        return self.types is None or tuple(self.types) == tuple(arg_types)

    @property
    def specificity(self) -> int:
        return 0 if self.types is None else 1

    def describe(self) -> str:
        sig = "any signature" if self.types is None else ", ".join(map(str, self.types))
        return f"rule for {self.target} ({sig}) defined at {self.origin}"


@dataclass(frozen=True)
class Decision:
    """What the pass does at one call op."""

    kind: str  # "rule", "no-rule", "declined"
    rule: Rule | None = None
    ir: RuleIR | None = None


class RuleTable:
    """Rules by target; every edit bumps `version`."""

    def __init__(self) -> None:
        self._rules: dict[str, list[Rule]] = {}
        self._built: dict[tuple[Rule, tuple[Attribute, ...]], RuleIR | None] = {}
        self.version = 0

    def register(self, rule: Rule) -> Rule:
        """Add `rule`, replacing a rule with the same target and signature."""
        entries = self._rules.setdefault(rule.target, [])
        entries[:] = [r for r in entries if r.types != rule.types]
        entries.append(rule)
        self._changed()
        return rule

    def remove(self, target: str, types: tuple[Attribute, ...] | None = None) -> None:
        entries = self._rules.get(target, [])
        kept = [r for r in entries if r.types != types]
        if len(kept) == len(entries):
            raise KeyError(f"no rule for {target} with signature {types}")
        self._rules[target] = kept
        self._changed()

    def rules(self) -> list[Rule]:
        return [r for entries in self._rules.values() for r in entries]

    def lookup(self, target: str, arg_types: Sequence[Attribute]) -> Decision:
        """The decision for a call to `target` with `arg_types`."""
        arg_types = tuple(arg_types)
        candidates = [r for r in self._rules.get(target, []) if r.matches(arg_types)]
        if not candidates:
            return Decision("no-rule")
        rule = max(candidates, key=lambda r: r.specificity)
        key = (rule, arg_types)
        if key not in self._built:
            self._built[key] = rule.build(arg_types)
        ir = self._built[key]
        if ir is None:
            return Decision("declined", rule)
        return Decision("rule", rule, ir)

    def _changed(self) -> None:
        self.version += 1
        self._built.clear()


def caller_location(depth: int = 2) -> str:
    """file:line of the code that registered a rule."""
    frame = sys._getframe(depth)
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


def check_rule_ir(target: str, ir: RuleIR, arg_types: Sequence[Attribute], float_args: int) -> None:
    """Reject a rule whose pullback does not fit the convention above."""
    fwd_in = tuple(ir.forward.function_type.inputs.data)
    if fwd_in != tuple(arg_types):
        raise DifferentiationError(
            f"rule for {target}: forward takes {fwd_in}, call passes {tuple(arg_types)}"
        )
    pb_out = ir.pullback.function_type.outputs.data
    if len(pb_out) != float_args:
        raise DifferentiationError(
            f"rule for {target}: pullback returns {len(pb_out)} cotangents, "
            f"expected one per float argument ({float_args})"
        )
