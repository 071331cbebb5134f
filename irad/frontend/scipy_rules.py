"""The rule-table entries of irad/special.py's functions: reverse and forward
rules side by side, written with the same rrule/frule users write.

Each derivative is a closed form in the function's own value or a sibling
function, so the rules are differentiable again: erfinv' = sqrt(pi)/2
exp(erfinv^2), ndtri' = sqrt(2 pi) exp(ndtri^2 / 2), gammaln' = digamma,
digamma' = trigamma (whose own derivative is its body's, an accurate series),
log_ndtr' = pdf / cdf (log_ndtr_slope). xlogy's derivative in x is log(y) at
x = 0 too, and its derivative in y is 0 there (xlogy(0, y) = 0 for every y).

A zero (co)tangent stays zero where the slope is infinite or NaN (at ±1 for
erfinv, at a pole of digamma, at y = 0 for xlogy), so such a point in a branch
np.where discards does not turn the derivative NaN.
"""

from __future__ import annotations

import numpy as np

from irad import special
from irad.frontend.registration import installer


def _times(d, slope):
    """d * slope, 0 where d is 0."""
    return np.where(d == 0.0, 0.0, d * slope)


# ---- inverses ----------------------------------------------------------------------
def erfinv_rule(x):
    y = special.erfinv(x)

    def pullback(dy):
        return _times(dy, special.SQRT_PI_2 * np.exp(y * y))

    return y, pullback


def erfinv_frule(x, dx):
    y = special.erfinv(x)
    return y, _times(dx, special.SQRT_PI_2 * np.exp(y * y))


def ndtri_rule(p):
    x = special.ndtri(p)

    def pullback(dx):
        return _times(dx, special.SQRT_2PI * np.exp(0.5 * x * x))

    return x, pullback


def ndtri_frule(p, dp):
    x = special.ndtri(p)
    return x, _times(dp, special.SQRT_2PI * np.exp(0.5 * x * x))


# ---- the gamma function and the normal tail ------------------------------------------------
def gammaln_rule(x):
    y = special.gammaln(x)

    def pullback(dy):
        return _times(dy, special.digamma(x))

    return y, pullback


def gammaln_frule(x, dx):
    return special.gammaln(x), _times(dx, special.digamma(x))


def digamma_rule(x):
    y = special.digamma(x)

    def pullback(dy):
        return _times(dy, special.trigamma(x))

    return y, pullback


def digamma_frule(x, dx):
    return special.digamma(x), _times(dx, special.trigamma(x))


def log_ndtr_rule(x):
    y = special.log_ndtr(x)

    def pullback(dy):
        return _times(dy, special.log_ndtr_slope(x))

    return y, pullback


def log_ndtr_frule(x, dx):
    return special.log_ndtr(x), _times(dx, special.log_ndtr_slope(x))


# ---- x log y ---------------------------------------------------------------------------------
def xlogy_rule(x, y):
    r = special.xlogy(x, y)

    def pullback(dr):
        return _times(dr, np.log(y)), _times(dr, special.over_unless_zero(x, y))

    return r, pullback


def xlogy_frule(x, y, dx, dy):
    return special.xlogy(x, y), _times(dx, np.log(y)) + _times(dy, special.over_unless_zero(x, y))


def xlog1py_rule(x, y):
    r = special.xlog1py(x, y)

    def pullback(dr):
        return _times(dr, np.log1p(y)), _times(dr, special.over_unless_zero(x, 1.0 + y))

    return r, pullback


def xlog1py_frule(x, y, dx, dy):
    return special.xlog1py(x, y), _times(dx, np.log1p(y)) + _times(dy, special.over_unless_zero(x, 1.0 + y))


RULES = (
    (special.erfinv, erfinv_rule, erfinv_frule),
    (special.ndtri, ndtri_rule, ndtri_frule),
    (special.gammaln, gammaln_rule, gammaln_frule),
    (special.digamma, digamma_rule, digamma_frule),
    (special.log_ndtr, log_ndtr_rule, log_ndtr_frule),
    (special.xlogy, xlogy_rule, xlogy_frule),
    (special.xlog1py, xlog1py_rule, xlog1py_frule),
)

install = installer(RULES)
