"""The rule table: the one place the differentiation pass asks "is there a rule?".

An entry is keyed by a target name (a library function such as "math.hypot",
or a user function's "module.qualname") and a signature. It is one of

    rrule               IR for the call, in the split shape generated functions have
    opt-out             differentiate the callee, even if a more generic rrule matches
    non-differentiable  zero cotangents; no code is generated for the call

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

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import Float32Type, Float64Type, IntegerType
from xdsl.ir import Attribute

from irad.errors import DifferentiationError

RRULE = "rrule"
OPT_OUT = "opt-out"
NON_DIFFERENTIABLE = "non-differentiable"


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


# A builder returns the rule's IR for concrete argument types, or None to decline.
RuleBuilder = Callable[[tuple[Attribute, ...]], RuleIR | None]

# Python types name sets of IR types in signatures.
_PYTHON_TYPES: dict[type, frozenset[Attribute]] = {
    float: frozenset({Float64Type(), Float32Type()}),
    int: frozenset({IntegerType(64)}),
    bool: frozenset({IntegerType(1)}),
}


@dataclass(frozen=True)
class Signature:
    """Argument constraints: None accepts anything, else a set of IR types.

    `params is None` accepts every argument list.
    """

    params: tuple[frozenset[Attribute] | None, ...] | None = None

    @staticmethod
    def of(types: Sequence | None) -> Signature:
        """From `types=` as users write it: per argument None, a Python type
        (float, int, bool), an IR type, or a tuple of those."""
        if types is None:
            return Signature()
        if isinstance(types, (str, bytes)) or not isinstance(types, Sequence):
            raise TypeError(f"types must be a tuple with one entry per argument, got {types!r}")
        return Signature(tuple(_constraint(t) for t in types))

    def matches(self, arg_types: Sequence[Attribute]) -> bool:
        if self.params is None:
            return True
        return len(self.params) == len(arg_types) and all(
            c is None or t in c for c, t in zip(self.params, arg_types)
        )

    def covered_by(self, other: Signature) -> bool:
        """Every argument list this accepts, `other` accepts too."""
        if other.params is None:
            return True
        if self.params is None or len(self.params) != len(other.params):
            return False
        return all(o is None or (s is not None and s <= o) for s, o in zip(self.params, other.params))

    def describe(self) -> str:
        if self.params is None:
            return "any arguments"
        return "(" + ", ".join(_describe_constraint(c) for c in self.params) + ")"


def _constraint(t) -> frozenset[Attribute] | None:
    if t is None:
        return None
    if isinstance(t, tuple):
        parts = [_constraint(x) for x in t]
        return None if any(p is None for p in parts) else frozenset().union(*parts)
    if isinstance(t, type) and t in _PYTHON_TYPES:
        return _PYTHON_TYPES[t]
    if isinstance(t, Attribute):
        return frozenset({t})
    if isinstance(t, np.ndarray):
        # an example array names its dtype and shape; imported here because the
        # pass imports this table and must not import the frontend
        from irad.frontend.types import type_of_value

        if type_of_value(t) is not None:
            return frozenset({type_of_value(t)})
    raise TypeError(
        f"cannot use {t!r} in a rule signature: use float, int, bool, None (any), "
        "an example numpy array, or an IR type such as xdsl's f64"
    )


def _describe_constraint(c: frozenset[Attribute] | None) -> str:
    if c is None:
        return "any"
    for name, types in _PYTHON_TYPES.items():
        if c == types:
            return name.__name__
    return " | ".join(sorted(map(str, c)))


@dataclass(frozen=True)
class Rule:
    """One entry of the table."""

    target: str
    signature: Signature
    kind: str = RRULE
    build: RuleBuilder | None = field(compare=False, default=None)
    origin: str = field(compare=False, default="<unknown>")

    def describe(self) -> str:
        return f"{self.kind} for {self.target} {self.signature.describe()} defined at {self.origin}"


@dataclass(frozen=True)
class Decision:
    """What the pass does at one call op."""

    kind: str  # "rule", "no-rule", "declined", "opted-out", "non-differentiable"
    rule: Rule | None = None
    ir: RuleIR | None = None


_DECISION_OF_KIND = {OPT_OUT: "opted-out", NON_DIFFERENTIABLE: "non-differentiable"}


class RuleTable:
    """Entries by target; every edit bumps `version`."""

    def __init__(self) -> None:
        self._rules: dict[str, list[Rule]] = {}
        self._built: dict[tuple[Rule, tuple[Attribute, ...]], RuleIR | None] = {}
        self.version = 0

    def register(self, rule: Rule) -> Rule:
        """Add `rule`, replacing an entry with the same target and signature."""
        entries = self._rules.setdefault(rule.target, [])
        entries[:] = [r for r in entries if r.signature != rule.signature]
        entries.append(rule)
        self._changed()
        return rule

    def remove(self, target: str, signature: Signature | None = None) -> Rule:
        """Remove the entry for `target` with `signature` (the only one if None)."""
        entries = self._rules.get(target, [])
        if signature is None and len(entries) == 1:
            signature = entries[0].signature
        matching = [r for r in entries if r.signature == signature]
        if not matching:
            known = "; ".join(r.describe() for r in entries) or "none"
            raise KeyError(
                f"no entry for {target} with signature "
                f"{signature.describe() if signature else '(unspecified)'} (entries: {known})"
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

    def entry(self, target: str, arg_types: Sequence[Attribute]) -> Rule | None:
        """The most specific entry matching a call, or None."""
        candidates = [r for r in self._rules.get(target, []) if r.signature.matches(arg_types)]
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

    def lookup(self, target: str, arg_types: Sequence[Attribute]) -> Decision:
        """The decision for a call to `target` with `arg_types`."""
        arg_types = tuple(arg_types)
        rule = self.entry(target, arg_types)
        if rule is None:
            return Decision("no-rule")
        if rule.kind != RRULE:
            return Decision(_DECISION_OF_KIND[rule.kind], rule)
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
