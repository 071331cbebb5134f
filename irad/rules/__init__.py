"""The rule table shared by the differentiation passes and users.

`default_table()` is the table the passes consult unless given another; the
frontend adds irad's built-in Python-written entries to it
(irad/frontend/builtin_rules.py). `irad.rrule` and `irad.frule`, which lower
Python-written rules, are the frontend's (irad/frontend/registration.py).
"""

from irad.rules.default import add_builtins, default_table
from irad.rules.registry import list_rules, non_differentiable, opt_out, remove
from irad.rules.signature import Signature
from irad.rules.table import Decision, Rule, RuleIR, RuleTable

__all__ = [
    "Decision",
    "Rule",
    "RuleIR",
    "RuleTable",
    "Signature",
    "add_builtins",
    "default_table",
    "list_rules",
    "non_differentiable",
    "opt_out",
    "remove",
]
