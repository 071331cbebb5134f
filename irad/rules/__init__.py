"""The rule table shared by the differentiation pass and users.

`default_table()` is the table the pass consults unless given another; it
starts with irad's built-in entries (irad/rules/builtin.py).
"""

from irad.rules.registry import frule, list_rules, non_differentiable, opt_out, remove, rrule
from irad.rules.table import Decision, Rule, RuleIR, RuleTable, Signature

_DEFAULT: RuleTable | None = None


def default_table() -> RuleTable:
    global _DEFAULT
    if _DEFAULT is None:
        from irad.rules import builtin

        _DEFAULT = RuleTable()
        builtin.install(_DEFAULT)
    return _DEFAULT


__all__ = [
    "Decision",
    "Rule",
    "RuleIR",
    "RuleTable",
    "Signature",
    "default_table",
    "frule",
    "list_rules",
    "non_differentiable",
    "opt_out",
    "remove",
    "rrule",
]
