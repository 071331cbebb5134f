"""The rule table: the one place the differentiation pass asks "is there a rule?".

An entry is keyed by a target name (a library function such as "math.hypot",
or a user function's "module.qualname"), a signature and the mode it serves
(reverse, forward or both). It is one of

    rrule               reverse-mode IR for the call, in the split shape generated functions have
    frule               forward-mode IR: jvp(args..., tangents...) -> (results..., tangents...)
    opt-out             differentiate the callee, even if a more generic rule matches
    non-differentiable  zero derivative; no code is generated for the call

An rrule yields, per concrete argument types, IR of this shape (or None to
decline, and the pass then differentiates the callee):

    forward(args...)                      -> (results..., residuals...)
    pullback(residuals..., d_results...)  -> (d_args...)   see RuleIR.cotangent_args

The most specific matching entry wins; two matching entries neither of which is
more specific than the other are an error naming both. Decisions are made at
compile time; the table's `version` changes with every edit, and compiled
gradients are cached under it, so an edit is never missed.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.dialects import func
from xdsl.ir import Attribute

from irad.base.errors import DifferentiationError
from irad.rules.signature import Signature

RRULE = "rrule"
FRULE = "frule"
OPT_OUT = "opt-out"
NON_DIFFERENTIABLE = "non-differentiable"

# The mode an entry serves: reverse (rrule), forward (frule), or both.
REVERSE = "reverse"
FORWARD = "forward"
BOTH = "both"


@dataclass(frozen=True)
class RuleIR:
    """The IR of a rule for one signature.

    `cotangent_args` lists the argument indices the pullback returns a
    cotangent for, in order; any other argument's cotangent is zero and no
    code computes it. `helpers` are functions the rule's IR calls, which the
    pass copies into the module it differentiates; a call to one of
    `primal_symbols` is a call to the primal, i.e. to the call site's callee.
    """

    forward: func.FuncOp
    pullback: func.FuncOp
    num_results: int
    cotangent_args: tuple[int, ...]
    helpers: tuple[func.FuncOp, ...] = ()
    primal_symbols: frozenset[str] = frozenset()  # calls to these mean the primal itself

    @property
    def residual_types(self) -> tuple[Attribute, ...]:
        return tuple(self.forward.function_type.outputs.data[self.num_results :])


@dataclass(frozen=True)
class FruleIR:
    """The IR of a forward rule for one signature: `jvp` takes the arguments,
    then one tangent per float argument, and returns the results, then one
    tangent per float result."""

    jvp: func.FuncOp
    num_results: int
    helpers: tuple[func.FuncOp, ...] = ()
    primal_symbols: frozenset[str] = frozenset()


# A builder returns the rule's IR for concrete argument types, or None to decline.
RuleBuilder = Callable[[tuple[Attribute, ...]], "RuleIR | FruleIR | None"]

@dataclass(frozen=True)
class Rule:
    """One entry of the table."""

    target: str
    signature: Signature
    kind: str = RRULE
    build: RuleBuilder | None = field(compare=False, default=None)
    origin: str = field(compare=False, default="<unknown>")
    mode: str = BOTH
    max_order: int | None = None  # a rule declines beyond this derivative order

    def serves(self, mode: str) -> bool:
        return BOTH in (self.mode, mode) or self.mode == mode

    def describe(self) -> str:
        modes = f" ({self.mode} mode)" if self.kind == OPT_OUT and self.mode != BOTH else ""
        return (
            f"{self.kind}{modes} for {self.target} {self.signature.describe()} "
            f"defined at {self.origin}"
        )


@dataclass(frozen=True)
class Decision:
    """What the pass does at one call op."""

    kind: str  # "rule", "no-rule", "declined", "opted-out", "non-differentiable"
    rule: Rule | None = None
    ir: RuleIR | FruleIR | None = None


_DECISION_OF_KIND = {OPT_OUT: "opted-out", NON_DIFFERENTIABLE: "non-differentiable"}


class RuleTable:
    """Entries by target; every edit bumps `version`."""

    def __init__(self) -> None:
        self._rules: dict[str, list[Rule]] = {}
        self._built: dict[tuple[Rule, tuple[Attribute, ...]], RuleIR | None] = {}
        self.version = 0

    def register(self, rule: Rule) -> Rule:
        """Add `rule`, replacing the entries for the same target and signature
        in the modes it serves."""
        entries = self._rules.setdefault(rule.target, [])
        entries[:] = [
            r for r in entries if r.signature != rule.signature or not r.serves(rule.mode)
        ]
        entries.append(rule)
        self._changed()
        return rule

    def remove(
        self, target: str, signature: Signature | None = None, mode: str | None = None
    ) -> Rule:
        """Remove the one entry for `target` with `signature` and `mode` (None: any)."""
        entries = self._rules.get(target, [])
        matching = [
            r
            for r in entries
            if (signature is None or r.signature == signature) and (mode is None or r.mode == mode)
        ]
        if len(matching) != 1:
            known = "; ".join(r.describe() for r in entries) or "none"
            what = "no entry" if not matching else "several entries"
            raise KeyError(
                f"{what} for {target} with signature "
                f"{signature.describe() if signature else '(any)'} and mode {mode or '(any)'} "
                f"(entries: {known}); pass types= or mode= to pick one"
            )
        entries.remove(matching[0])
        if not entries:
            del self._rules[target]
        self._changed()
        return matching[0]

    def rules(self, target: str | None = None) -> list[Rule]:
        if target is not None:
            return list(self._rules.get(target, []))
        return [r for entries in self._rules.values() for r in entries]

    def has_entries(self, target: str) -> bool:
        return bool(self._rules.get(target))

    def entry(self, target: str, arg_types: Sequence[Attribute], mode: str = REVERSE) -> Rule | None:
        """The most specific entry matching a call in `mode`, or None."""
        candidates = [
            r
            for r in self._rules.get(target, [])
            if r.serves(mode) and r.signature.matches(arg_types)
        ]
        best = [
            r
            for r in candidates
            if not any(
                o is not r and o.signature.covered_by(r.signature) and not r.signature.covered_by(o.signature)
                for o in candidates
            )
        ]
        if len(best) > 1:
            shown = ", ".join(map(str, arg_types))
            raise DifferentiationError(
                f"ambiguous rules for a call to {target} with ({shown}): "
                f"{best[0].describe()}, and {best[1].describe()}; neither is more specific\n"
                "  hint: register an entry for exactly these types, or narrow one signature"
            )
        return best[0] if best else None

    def lookup(
        self, target: str, arg_types: Sequence[Attribute], mode: str = REVERSE, order: int = 1
    ) -> Decision:
        """The decision for a call to `target` with `arg_types` in `mode`, when
        differentiating to derivative `order` (2 inside first-order generated code)."""
        arg_types = tuple(arg_types)
        rule = self.entry(target, arg_types, mode)
        if rule is None:
            return Decision("no-rule")
        if rule.kind not in (RRULE, FRULE):
            return Decision(_DECISION_OF_KIND[rule.kind], rule)
        if rule.max_order is not None and order > rule.max_order:
            return Decision("declined", rule)
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


def check_rule_ir(
    rule: Rule, ir: RuleIR, arg_types: Sequence[Attribute], result_types: Sequence[Attribute]
) -> None:
    """Reject a rule whose IR does not fit the call (see the module docstring)."""
    fwd_in = tuple(ir.forward.function_type.inputs.data)
    if fwd_in != tuple(arg_types):
        raise DifferentiationError(
            f"{rule.describe()}: its forward takes ({', '.join(map(str, fwd_in))}), "
            f"but the call passes ({', '.join(map(str, arg_types))})"
        )
    fwd_out = tuple(ir.forward.function_type.outputs.data[: ir.num_results])
    if fwd_out != tuple(result_types):
        raise DifferentiationError(
            f"{rule.describe()}: it returns ({', '.join(map(str, fwd_out))}) as the "
            f"primal's value, but the primal returns ({', '.join(map(str, result_types))})"
        )
    pb_out = tuple(ir.pullback.function_type.outputs.data)
    expected = tuple(arg_types[i] for i in ir.cotangent_args)
    if pb_out != expected:
        raise DifferentiationError(
            f"{rule.describe()}: its pullback returns ({', '.join(map(str, pb_out))}), "
            f"expected cotangents ({', '.join(map(str, expected))}) for arguments "
            f"{list(ir.cotangent_args)}"
        )
