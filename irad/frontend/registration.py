"""`rrule` and `frule`: rules written in Python, lowered to IR and registered in the table.

The table (irad/rules/) stores a builder per entry; lowering a rule for a
concrete signature happens here, in the frontend, the first time the
differentiation pass asks for it.
"""

from __future__ import annotations

import types as pytypes
from collections.abc import Callable, Sequence

from irad.frontend.rules import lower_frule, lower_rrule
from irad.frontend.source import parse_function
from irad.rules.registry import key_of, origin_of, table_or_default
from irad.rules.signature import Signature
from irad.rules.table import FORWARD, FRULE, REVERSE, RRULE, Rule, RuleTable


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
    return _rule_decorator(target, types, table, FRULE, FORWARD, lower_frule, max_order)


def installer(rules: Sequence[tuple]) -> Callable[[RuleTable], None]:
    """The `install(table)` of a module of built-in rules (irad.rules.add_builtins
    takes it): each `(target, reverse rule, forward rule)` of `rules` registered."""

    def install(table: RuleTable) -> None:
        for target, reverse, forward in rules:
            rrule(target, table=table)(reverse)
            frule(target, table=table)(forward)

    return install


def _rule_decorator(target, types, table, kind: str, mode: str, lower, max_order):
    key = key_of(target)
    signature = Signature.of(types)

    def register(rule_fn: Callable) -> Callable:
        if not isinstance(rule_fn, pytypes.FunctionType):
            raise TypeError(f"@irad.{kind} decorates a function, got {rule_fn!r}")
        parse_function(rule_fn)  # no source is an error now, not at the first gradient
        tbl = table_or_default(table)

        def build(arg_types):
            return lower(rule_fn, target, arg_types, tbl)

        tbl.register(Rule(key, signature, kind, build, origin_of(rule_fn), mode, max_order))
        return rule_fn

    return register
