"""The rule table shared by the differentiation pass and users.

`default_table()` is the table the pass consults unless given another; it
starts with irad's built-in rules, one module per family of functions.
"""

from irad.rules.table import Decision, Rule, RuleIR, RuleTable

_DEFAULT: RuleTable | None = None


def default_table() -> RuleTable:
    global _DEFAULT
    if _DEFAULT is None:
        from irad.rules import numerics

        _DEFAULT = RuleTable()
        for rule in numerics.RULES:
            _DEFAULT.register(rule)
    return _DEFAULT


__all__ = ["Decision", "Rule", "RuleIR", "RuleTable", "default_table"]
