"""Numerically stable helpers that irad ships, written in irad's Python subset.

They run as plain Python too. Inside a lowered program each one becomes its own
`func.func`, and the rule table (irad/rules/numerics.py) holds a rule for each,
because the rule beats differentiating the body: AD through `max`/`abs` picks a
one-sided derivative at the kink (softplus'(0) would come out 1, not 0.5) and
the naive formulas overflow where the rules do not.
"""

import math


def sigmoid(x):
    """1 / (1 + exp(-x)), without overflow for large |x|."""
    return 0.5 * math.tanh(0.5 * x) + 0.5


def softplus(x):
    """log(1 + exp(x)), without overflow for large x."""
    return max(x, 0.0) + math.log1p(math.exp(-abs(x)))


def logaddexp(a, b):
    """log(exp(a) + exp(b)), without overflow."""
    m = max(a, b)
    return m + math.log1p(math.exp(-abs(a - b)))


def hypot(x, y):
    """sqrt(x*x + y*y) without overflow or underflow; the lowering of math.hypot."""
    m = max(abs(x), abs(y))
    return 0.0 if m == 0.0 else m * math.sqrt((x / m) ** 2 + (y / m) ** 2)
