"""The default table: the one the differentiation pass consults unless given another.

Its built-in entries are added by the layers that can build them: rules
written in Python are lowered by the frontend, which adds them here when it
is imported (irad/frontend/builtin_rules.py). The table itself imports no
layer above it.
"""

from __future__ import annotations

from collections.abc import Callable

from irad.rules.table import RuleTable

_DEFAULT: RuleTable | None = None
_BUILTINS: list[Callable[[RuleTable], None]] = []


def add_builtins(install: Callable[[RuleTable], None]) -> None:
    """Have `install(table)` add its entries to the default table (now, if it exists)."""
    _BUILTINS.append(install)
    if _DEFAULT is not None:
        install(_DEFAULT)


def default_table() -> RuleTable:
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = RuleTable()
        for install in _BUILTINS:
            install(_DEFAULT)
    return _DEFAULT
