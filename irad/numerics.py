"""Numerically stable helpers that irad ships, written in irad's Python subset.

They run as plain Python too. Inside a lowered program each one becomes its own
`func.func`, and the rule table holds a rule for each (irad/frontend/builtin_rules.py),
because the rule beats differentiating the body: AD through `max`/`abs` picks a
one-sided derivative at the kink (softplus'(0) would come out 1, not 0.5) and
the naive formulas overflow where the rules do not.
"""

import math

import numpy as np


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


def divmod_(a, b):
    """Python's divmod: the floor quotient and the remainder with b's sign; the lowering of divmod."""
    return a // b, a % b


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


# ---- np.interp (irad/frontend/numpy_interp.py) ------------------------------------
def interp_parts(x, xp):
    """The interval of each x among the knots xp (increasing, n >= 2), as a
    one-hot (..., n - 1) array, and x's position t in it (0 at its left knot,
    1 at its right; below 0 left of xp[0], above 1 right of xp[-1]). As numpy
    and JAX, x in [xp[i], xp[i+1]) is in interval i, and x = xp[-1] in the last."""
    inner = xp[1:-1]
    lower = np.concatenate((np.array([-np.inf]), inner))
    upper = np.concatenate((inner, np.array([np.inf])))
    at = np.expand_dims(x, -1)
    onehot = np.where((at >= lower) & (at < upper), 1.0, 0.0)
    width = xp[1:] - xp[:-1]
    t = (at - xp[:-1]) / np.where(width == 0.0, 1.0, width)
    return onehot, t


def interp(x, xp, fp):
    """np.interp(x, xp, fp): fp[0] left of xp[0], fp[-1] right of xp[-1], NaN at a NaN x."""
    onehot, t = interp_parts(x, xp)
    s = np.clip(t, 0.0, 1.0)
    # a select, not a product with the one-hot: an inf or NaN in another interval stays out
    y = np.sum(np.where(onehot > 0.0, fp[:-1] + s * (fp[1:] - fp[:-1]), 0.0), axis=-1)
    return np.where(np.isnan(x), x, y)


def interp_slopes(x, xp, fp):
    """Per x, the one-hot of its interval masked to xp[0] <= x <= xp[-1] (outside,
    np.interp is constant), its position t there, and the interval's slope."""
    onehot, t = interp_parts(x, xp)
    at = np.expand_dims(x, -1)
    inside = onehot * np.where((at >= xp[0]) & (at <= xp[-1]), 1.0, 0.0)
    width = xp[1:] - xp[:-1]
    slope = np.where(width == 0.0, 0.0, (fp[1:] - fp[:-1]) / np.where(width == 0.0, 1.0, width))
    return onehot, inside, np.clip(t, 0.0, 1.0), slope


def _knots(w_left, w_right):
    """Per-interval weights of the left and right knots, summed over x, as one
    weight per knot: (n,)."""
    k = w_left.shape[-1]
    left = np.sum(np.reshape(w_left, (-1, k)), axis=0)
    right = np.sum(np.reshape(w_right, (-1, k)), axis=0)
    return np.concatenate((left, np.zeros(1))) + np.concatenate((np.zeros(1), right))


def interp_cotangents(x, xp, fp, dy):
    """The cotangents of x, xp and fp of np.interp for the cotangent dy of its result."""
    onehot, inside, s, slope = interp_slopes(x, xp, fp)
    d = np.expand_dims(dy, -1)
    dx = np.sum(inside * slope, axis=-1) * dy
    dfp = _knots(onehot * (1.0 - s) * d, onehot * s * d)
    dxp = _knots(inside * slope * (s - 1.0) * d, -(inside * slope * s) * d)
    return dx, dxp, dfp


def interp_tangent(x, xp, fp, dx, dxp, dfp):
    """The tangent of np.interp's result for the tangents dx, dxp and dfp."""
    onehot, inside, s, slope = interp_slopes(x, xp, fp)
    at = np.expand_dims(dx, -1)
    from_fp = onehot * ((1.0 - s) * dfp[:-1] + s * dfp[1:])
    from_xp = inside * slope * ((s - 1.0) * dxp[:-1] - s * dxp[1:])
    return np.sum(inside * slope * at + from_fp + from_xp, axis=-1)


def interp_beyond(x, xp, y, left, right):
    """np.interp's value y with left and right given: left where x < xp[0], right where x > xp[-1]."""
    return np.where(x < xp[0], left, np.where(x > xp[-1], right, y))
