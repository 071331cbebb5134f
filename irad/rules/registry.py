"""Editing the rule table from Python: rrule, frule, opt_out, non_differentiable.

Every entry goes into one table (`default_table()` unless a `table=` is
given), the built-in ones included. Targets are Python functions, library
functions the frontend knows (math.sin, math.hypot, abs, ...), or strings
naming an IR-level function symbol.
"""

from __future__ import annotations

import types as pytypes
from collections.abc import Callable, Sequence

from irad.rules.table import (
    BOTH,
    FORWARD,
    FRULE,
    NON_DIFFERENTIABLE,
    OPT_OUT,
    REVERSE,
    RRULE,
    Rule,
    RuleTable,
    Signature,
    caller_location,
)


def _table(table: RuleTable | None) -> RuleTable:
    from irad.rules import default_table

    return table if table is not None else default_table()


def _key(target) -> str:
    from irad.frontend.library import target_key

    if not (isinstance(target, str) or callable(target)):
        raise TypeError(f"a rule target must be a function or a symbol name, got {target!r}")
    return target_key(target)


def _origin(fn) -> str:
    code = getattr(fn, "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code else caller_location(3)


def rrule(
    target, types: Sequence | None = None, *, max_order: int | None = None,
    table: RuleTable | None = None,
):
    """Register the decorated function as the reverse rule of `target`.

    The rule takes the target's arguments and returns `(y, pullback)`, where
    `pullback(dy)` is a function defined inside it returning one cotangent per
    argument (None for zero); or it returns None to decline for the argument
    types at hand. It is written in irad's Python subset and lowered to IR.
    With `max_order`, the rule declines when differentiating beyond that
    order (inside generated code), and the target's body is differentiated.
    """
    from irad.frontend.rules import lower_rrule

    return _rule_decorator(target, types, table, RRULE, REVERSE, lower_rrule, max_order)


def frule(
    target, types: Sequence | None = None, *, max_order: int | None = None,
    table: RuleTable | None = None,
):
    """Register the decorated function as the forward rule of `target`.

    The rule takes the target's arguments, then one tangent per argument (None
    for an int or bool argument), and returns `(y, dy)`: the primal value and
    its tangent (None for zero); or None to decline.
    """
    from irad.frontend.rules import lower_frule

    return _rule_decorator(target, types, table, FRULE, FORWARD, lower_frule, max_order)


def _rule_decorator(target, types, table, kind: str, mode: str, lower, max_order):
    key = _key(target)
    signature = Signature.of(types)

    def register(rule_fn: Callable) -> Callable:
        from irad.frontend.source import parse_function

        if not isinstance(rule_fn, pytypes.FunctionType):
            raise TypeError(f"@irad.{kind} decorates a function, got {rule_fn!r}")
        parse_function(rule_fn)  # no source is an error now, not at the first gradient
        tbl = _table(table)

        def build(arg_types):
            return lower(rule_fn, target, arg_types, tbl)

        tbl.register(Rule(key, signature, kind, build, _origin(rule_fn), mode, max_order))
        return rule_fn

    return register


def opt_out(
    target, types: Sequence | None = None, *, mode: str = BOTH, table: RuleTable | None = None
) -> None:
    """For calls matching `types`, differentiate `target`'s body even when a
    more generic rule exists (in `mode`: "reverse", "forward" or "both")."""
    if mode not in (REVERSE, FORWARD, BOTH):
        raise ValueError(f"mode must be 'reverse', 'forward' or 'both', got {mode!r}")
    _table(table).register(
        Rule(_key(target), Signature.of(types), OPT_OUT, None, caller_location(), mode)
    )


def non_differentiable(target=None, types: Sequence | None = None, *, table: RuleTable | None = None):
    """Mark `target` as having zero derivative: calls to it get no cotangent
    code. Usable as a decorator, too."""

    def register(fn):
        origin = _origin(fn) if isinstance(fn, pytypes.FunctionType) else caller_location(3)
        _table(table).register(Rule(_key(fn), Signature.of(types), NON_DIFFERENTIABLE, None, origin))
        return fn

    return register if target is None else register(target)


def remove(
    target, types: Sequence | None = None, *, mode: str | None = None,
    table: RuleTable | None = None,
) -> Rule:
    """Remove the entry for `target` (with `types` and `mode`, if it has several)."""
    signature = Signature.of(types) if types is not None else None
    return _table(table).remove(_key(target), signature, mode)


def list_rules(target=None, *, table: RuleTable | None = None) -> list[Rule]:
    """The table's entries, all or `target`'s."""
    return _table(table).rules(None if target is None else _key(target))
