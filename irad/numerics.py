"""Numerically stable helpers that irad ships, written in irad's Python subset.

They run as plain Python too. Inside a lowered program each one becomes its own
`func.func`, and the rule table holds a rule for each (irad/frontend/builtin_rules.py),
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


# ---- the gamma function ------------------------------------------------------------
# Lanczos' approximation (g = 7, nine terms, Godfrey's coefficients) for x >= 1/2,
# Euler's reflection below; within about 1e-14 of libm's lgamma and 1e-13 of tgamma
# (tests/frontend/test_special.py), and free of overflow until the result overflows.


def lanczos_sum(z):
    """The Lanczos series at z = x - 1."""
    a = 0.99999999999980993
    a = a + 676.5203681218851 / (z + 1.0)
    a = a - 1259.1392167224028 / (z + 2.0)
    a = a + 771.32342877765313 / (z + 3.0)
    a = a - 176.61502916214059 / (z + 4.0)
    a = a + 12.507343278686905 / (z + 5.0)
    a = a - 0.13857109526572012 / (z + 6.0)
    a = a + 9.9843695780195716e-6 / (z + 7.0)
    return a + 1.5056327351493116e-7 / (z + 8.0)


def _lgamma_above_half(x):
    z = x - 1.0
    t = z + 7.5
    return 0.91893853320467274178 + (z + 0.5) * math.log(t) - t + math.log(lanczos_sum(z))


def _gamma_above_half(x):
    z = x - 1.0
    t = z + 7.5
    half = t ** (0.5 * (z + 0.5))  # t^(z + 1/2) in two halves: no overflow before the result's
    return 2.5066282746310002 * (half * math.exp(-t)) * half * lanczos_sum(z)


def _sin_pi(x):
    """sin(pi x), exact at integers: reduced to [-1/2, 1/2] first."""
    k = math.floor(x + 0.5)
    s = math.sin(math.pi * (x - k))
    return -s if k - 2.0 * math.floor(0.5 * k) != 0.0 else s


def lgamma(x):
    """log|Gamma(x)|; inf at the poles 0, -1, -2, ... (math.lgamma raises there)."""
    if x >= 0.5:
        return _lgamma_above_half(x)
    s = _sin_pi(x)
    if s == 0.0:
        return math.inf
    return math.log(math.pi / abs(s)) - _lgamma_above_half(1.0 - x)


def gamma(x):
    """Gamma(x); nan at the poles 0, -1, -2, ... (math.gamma raises there), inf
    where it overflows (math.gamma raises OverflowError)."""
    if x >= 0.5:
        return _gamma_above_half(x)
    s = _sin_pi(x)
    if s == 0.0:
        return math.nan
    return math.pi / (s * _gamma_above_half(1.0 - x))


def digamma(x):
    """d/dx log|Gamma(x)|: the recurrence up to x >= 10, then the asymptotic
    series; the reflection formula below 0."""
    result = 0.0
    if x <= 0.0:
        result = -math.pi / math.tan(math.pi * x)
        x = 1.0 - x
    while x < 10.0:
        result = result - 1.0 / x
        x = x + 1.0
    f = 1.0 / (x * x)
    tail = f * (1.0 / 12.0 - f * (1.0 / 120.0 - f * (1.0 / 252.0 - f * (1.0 / 240.0 - f * (
        1.0 / 132.0 - f * (691.0 / 32760.0 - f / 12.0))))))
    return result + math.log(x) - 0.5 / x - tail
