"""Editing the rule table from Python: opt_out, non_differentiable, remove, list_rules.

Every entry goes into one table (`default_table()` unless a `table=` is
given), the built-in ones included. Targets are Python functions, library
functions the frontend knows (math.sin, math.hypot, abs, ...), or strings
naming an IR-level function symbol. Rules written in Python (rrule, frule)
are lowered by the frontend: irad/frontend/registration.py.
"""

from __future__ import annotations

import types as pytypes
from collections.abc import Sequence

from irad.rules.default import default_table
from irad.rules.keys import target_key
from irad.rules.table import (
    BOTH,
    FORWARD,
    NON_DIFFERENTIABLE,
    OPT_OUT,
    REVERSE,
    Rule,
    RuleTable,
    caller_location,
)
from irad.rules.signature import Signature


def table_or_default(table: RuleTable | None) -> RuleTable:
    return table if table is not None else default_table()


def key_of(target) -> str:
    if not (isinstance(target, str) or callable(target)):
        raise TypeError(f"a rule target must be a function or a symbol name, got {target!r}")
    return target_key(target)


def origin_of(fn) -> str:
    code = getattr(fn, "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code else caller_location(3)


def opt_out(
    target, types: Sequence | None = None, *, mode: str = BOTH, table: RuleTable | None = None
) -> None:
    """For calls matching `types`, differentiate `target`'s body even when a
    more generic rule exists (in `mode`: "reverse", "forward" or "both")."""
    if mode not in (REVERSE, FORWARD, BOTH):
        raise ValueError(f"mode must be 'reverse', 'forward' or 'both', got {mode!r}")
    table_or_default(table).register(
        Rule(key_of(target), Signature.of(types), OPT_OUT, None, caller_location(), mode)
    )


def non_differentiable(target=None, types: Sequence | None = None, *, table: RuleTable | None = None):
    """Mark `target` as having zero derivative: calls to it get no cotangent
    code. Usable as a decorator, too."""

    def register(fn):
        origin = origin_of(fn) if isinstance(fn, pytypes.FunctionType) else caller_location(3)
        table_or_default(table).register(Rule(key_of(fn), Signature.of(types), NON_DIFFERENTIABLE, None, origin))
        return fn

    return register if target is None else register(target)


def remove(
    target, types: Sequence | None = None, *, mode: str | None = None,
    table: RuleTable | None = None,
) -> Rule:
    """Remove the entry for `target` (with `types` and `mode`, if it has several)."""
    signature = Signature.of(types) if types is not None else None
    return table_or_default(table).remove(key_of(target), signature, mode)


def list_rules(target=None, *, table: RuleTable | None = None) -> list[Rule]:
    """The table's entries, all or `target`'s."""
    return table_or_default(table).rules(None if target is None else key_of(target))
