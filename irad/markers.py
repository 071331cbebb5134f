"""Functions that only mean something to differentiation.

They are ordinary Python functions in irad's subset; what makes them special
is their entry in the rule table (irad/frontend/builtin_rules.py).
"""


def stop_gradient(x):
    """`x`, through which no derivative flows: its cotangent is zero."""
    return x
