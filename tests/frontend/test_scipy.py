"""scipy.special and scipy.stats.norm inside differentiated programs
(irad/frontend/scipy_special.py, scipy_stats.py, irad/special.py, scipy_rules.py).

Values are checked against scipy's; derivatives against float64 central
differences of scipy's own functions and, where known, their closed forms
(digamma, polygamma, pdf / cdf); forward mode against the same references; on
both backends (native: marked `native`). Then the edge points (large |x|,
x = 0 for xlogy, logsumexp's axis, b and keepdims), float32, rules on scipy
functions, the errors for what irad lacks, and the docs' list.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.special as sc
import scipy.stats as st
from hypothesis import given, settings
from hypothesis import strategies as hst

import irad
from irad.backends.native.compile import unavailable_reason

NATIVE_MISSING = unavailable_reason()
BACKENDS = ["python", pytest.param("native", marks=[
    pytest.mark.native, pytest.mark.skipif(NATIVE_MISSING is not None, reason=str(NATIVE_MISSING))])]
DOCS = Path(__file__).resolve().parents[2] / "docs" / "scipy.md"


def central(f, x, h=1e-6, scale=None):
    """Central differences of an elementwise f at each point of x, float64, with
    steps h * scale (default max(1, |x|)), divided by the distance the rounded
    points are apart."""
    step = h * (np.maximum(1.0, np.abs(x)) if scale is None else scale)
    above, below = x + step, x - step
    return (f(above) - f(below)) / (above - below)


def inside_unit(p):
    """The steps' scale for a function of (0, 1): the distance to its ends."""
    return np.minimum(p, 1.0 - p)


# ---- elementwise functions of one argument: values, grad, jvp, against scipy ---------------
def trigamma(x):
    return sc.polygamma(1, x)


BESSEL_POINTS = [-80.0, -12.5, -0.3, 0.0, 0.7, 5.0, 29.9, 30.5, 300.0]
UNARY = {
    # name: (scipy function, points, the derivative's closed form, difference steps' scale)
    "expit": (sc.expit, [-30.0, -2.5, -0.1, 0.0, 0.7, 3.0, 30.0], lambda x: sc.expit(x) * sc.expit(-x)),
    "log_expit": (sc.log_expit, [-700.0, -30.0, -2.5, -0.1, 0.0, 0.7, 3.0, 30.0], lambda x: sc.expit(-x)),  # at 0: 1/2
    "logit": (sc.logit, [1e-5, 0.1, 0.3, 0.5, 0.62, 0.9, 0.999], lambda p: 1.0 / (p * (1.0 - p)), inside_unit),
    "erf": (sc.erf, [-3.0, -0.5, 0.0, 0.2, 1.5, 4.0], lambda x: 2.0 / np.sqrt(np.pi) * np.exp(-x * x)),
    "erfc": (sc.erfc, [-3.0, -0.5, 0.0, 0.2, 1.5, 9.0], lambda x: -2.0 / np.sqrt(np.pi) * np.exp(-x * x)),
    "erfinv": (sc.erfinv, [-0.99, -0.6, -0.1, 0.0, 0.3, 0.55, 0.95],
               lambda y: np.sqrt(np.pi) / 2.0 * np.exp(sc.erfinv(y) ** 2)),
    "ndtr": (sc.ndtr, [-9.0, -2.0, -0.3, 0.0, 1.0, 5.0], lambda x: np.exp(-0.5 * x * x) / np.sqrt(2 * np.pi)),
    "log_ndtr": (sc.log_ndtr, [-30.0, -19.0, -5.0, -1.0, 0.0, 2.0, 7.0],
                 lambda x: np.exp(-0.5 * x * x - 0.5 * np.log(2 * np.pi) - sc.log_ndtr(x))),
    "ndtri": (sc.ndtri, [1e-12, 0.01, 0.2, 0.5, 0.74, 0.9, 0.999999],
              lambda p: np.sqrt(2 * np.pi) * np.exp(0.5 * sc.ndtri(p) ** 2), inside_unit),
    "gammaln": (sc.gammaln, [0.05, 0.5, 1.0, 2.5, 7.3, 40.0, -0.5, -2.3], sc.digamma),
    "digamma": (sc.digamma, [0.05, 0.5, 1.0, 2.5, 7.3, 40.0, -0.5, -2.3], trigamma),
    # the Bessel functions: both series, and each side of |x| = 30 where they meet
    "i0": (sc.i0, BESSEL_POINTS, sc.i1),
    "i0e": (sc.i0e, BESSEL_POINTS, lambda x: sc.i1e(x) - np.sign(x) * sc.i0e(x)),
    "i1": (sc.i1, BESSEL_POINTS, lambda x: sc.i0(x) - np.where(x == 0.0, 0.5, sc.i1(x) / np.where(x == 0.0, 1.0, x))),
    "i1e": (sc.i1e, BESSEL_POINTS, lambda x: sc.i0e(x) - np.sign(x) * sc.i1e(x)
            - np.where(x == 0.0, 0.5, sc.i1e(x) / np.where(x == 0.0, 1.0, x))),
}


def _program(fn):
    def program(x):
        return fn(x)

    return program


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_function_values_and_derivatives(name, backend):
    fn, points, slope, *scale = UNARY[name]
    x = np.array(points)
    f = _program(fn)
    value, pullback = irad.vjp(f, x, backend=backend)
    np.testing.assert_allclose(value, fn(x), rtol=1e-13, atol=2e-14, err_msg=name)
    (grad,) = pullback(np.ones_like(x))
    differences = central(fn, x, scale=scale[0](x) if scale else None)
    np.testing.assert_allclose(grad, differences, rtol=1e-6, atol=1e-9, err_msg=f"{name}: reverse vs differences")
    np.testing.assert_allclose(grad, slope(x), rtol=1e-12, err_msg=f"{name}: reverse vs closed form")
    _, tangent = irad.jvp(f, (x,), (np.ones_like(x),), backend=backend)
    np.testing.assert_allclose(tangent, grad, rtol=1e-13, err_msg=f"{name}: forward vs reverse")


@pytest.mark.parametrize("backend", BACKENDS)
def test_numbers_give_numbers(backend):
    def f(x):
        return sc.expit(x) + sc.erfinv(0.5 * x) + sc.gammaln(x + 2.0) + sc.xlogy(x, 3.0) + sc.softmax(x)

    value, grad = irad.value_and_grad(f, backend=backend)(0.4)
    assert isinstance(value, float) and isinstance(grad, float)
    assert value == pytest.approx(f(0.4), rel=1e-14)
    assert grad == pytest.approx(float(central(f, np.array([0.4]))[0]), rel=1e-7)


def test_int_arguments_become_float64():
    def f(x, n):
        return x * sc.gammaln(n) + sc.expit(n)

    value, grad = irad.value_and_grad(f)(2.0, 5)
    assert value == pytest.approx(2.0 * np.log(24.0) + sc.expit(5), rel=1e-14)
    assert grad == pytest.approx(np.log(24.0), rel=1e-14)


# ---- second and third derivatives: the rules are differentiable again ---------------------------
def test_higher_derivatives_follow_the_closed_forms():
    x = 2.5
    assert irad.hessian(lambda v: sc.gammaln(v))(x) == pytest.approx(sc.polygamma(1, x), rel=1e-13)
    assert irad.grad(irad.grad(irad.grad(lambda v: sc.gammaln(v))))(x) == pytest.approx(sc.polygamma(2, x), rel=1e-10)
    assert irad.hessian(lambda v: sc.digamma(v))(-1.5) == pytest.approx(sc.polygamma(2, -1.5), rel=1e-10)
    # I0'' = I1' = I0 - I1/x; I1'' = I1 (1 + 2/x^2) - I0 / x
    assert irad.hessian(lambda v: sc.i0(v))(x) == pytest.approx(sc.i0(x) - sc.i1(x) / x, rel=1e-13)
    assert irad.hessian(lambda v: sc.i1(v))(-x) == pytest.approx(-(sc.i1(x) * (1 + 2 / x ** 2) - sc.i0(x) / x),
                                                                rel=1e-12)
    y = 0.7
    c = np.sqrt(np.pi) / 2.0 * np.exp(sc.erfinv(y) ** 2)
    assert irad.hessian(lambda v: sc.erfinv(v))(y) == pytest.approx(2.0 * sc.erfinv(y) * c * c, rel=1e-12)
    p = 0.1
    d = np.sqrt(2 * np.pi) * np.exp(0.5 * sc.ndtri(p) ** 2)
    assert irad.hessian(lambda v: sc.ndtri(v))(p) == pytest.approx(sc.ndtri(p) * d * d, rel=1e-12)
    for z in (-30.0, -3.0, 1.0):  # (log ndtr)'' = -s (z + s), s = pdf / cdf
        s = np.exp(-0.5 * z * z - 0.5 * np.log(2 * np.pi) - sc.log_ndtr(z))
        assert irad.hessian(lambda v: sc.log_ndtr(v))(z) == pytest.approx(-s * (z + s), rel=1e-8), z


def test_polygamma_orders_zero_and_one():
    def f(x):
        return sc.polygamma(0, x) + 2.0 * sc.polygamma(1, x)

    x = np.array([0.3, 1.7, 12.0, -2.5])
    value, pullback = irad.vjp(f, x)
    np.testing.assert_allclose(value, f(x), rtol=1e-13)
    np.testing.assert_allclose(pullback(np.ones_like(x))[0], sc.polygamma(1, x) + 2.0 * sc.polygamma(2, x), rtol=1e-10)


# ---- edge points --------------------------------------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_expit_and_log_ndtr_far_out(backend):
    x = np.array([-800.0, -40.0, 40.0, 800.0])
    value, pullback = irad.vjp(lambda v: sc.expit(v), x, backend=backend)
    np.testing.assert_allclose(value, sc.expit(x), rtol=1e-15)  # 4.2e-18 at -40, not 0
    np.testing.assert_allclose(pullback(np.ones(4))[0], [0.0, sc.expit(-40.0), sc.expit(-40.0), 0.0], rtol=1e-15)
    z = np.array([-1e5, -300.0, -40.0, -20.5, 10.0, 40.0])
    value, pullback = irad.vjp(lambda v: sc.log_ndtr(v), z, backend=backend)
    np.testing.assert_allclose(value, sc.log_ndtr(z), rtol=1e-14)
    # pdf / cdf from scipy's log_ndtr; at -1e5, where that exponent loses 1e-6 to
    # cancellation, -z + 1/(-z) - 2/(-z)^3 ... of the asymptotic series
    slope = np.exp(-0.5 * z * z - 0.5 * np.log(2 * np.pi) - sc.log_ndtr(z))
    slope[0] = 1e5 + 1e-5
    np.testing.assert_allclose(pullback(np.ones(6))[0], slope, rtol=1e-10)


@pytest.mark.parametrize("backend", BACKENDS)
def test_xlogy_and_xlog1py_at_x_zero(backend):
    x = np.array([0.0, 0.0, 0.0, 2.0, 0.5])
    y = np.array([0.0, 3.0, -1.0, 3.0, 0.25])
    for fn, log in ((sc.xlogy, np.log), (sc.xlog1py, np.log1p)):
        def f(a, b):
            return fn(a, b)

        value, pullback = irad.vjp(f, x, y, backend=backend)
        np.testing.assert_array_equal(value[:3], 0.0)  # 0 at x = 0, for y = 0 and y < 0 too
        np.testing.assert_allclose(value, fn(x, y), rtol=1e-15)
        dx, dy = pullback(np.ones(5))
        # d/dx is log(y) at x = 0 too (x log y is linear in x); d/dy is 0 there
        np.testing.assert_allclose(dx[1:], log(y[1:]), rtol=1e-15)
        np.testing.assert_array_equal(dy[:3], 0.0)
        np.testing.assert_allclose(dy[3:], x[3:] / (y[3:] if fn is sc.xlogy else 1.0 + y[3:]), rtol=1e-15)
    assert np.isnan(irad.value_and_grad(lambda a: sc.xlogy(a, np.nan))(0.0)[0])  # NaN y stays NaN, as scipy


def _lse_keepdims(a, b):
    return np.sum(sc.logsumexp(a, axis=1, b=b, keepdims=True) * np.array([[1.0], [2.0]]))


def _lse_axis0(a, b):
    return np.sum(sc.logsumexp(a, axis=0, b=b) * np.array([1.0, -1.0, 0.5]))


def _lse_all(a, b):
    return sc.logsumexp(a, b=b)


def _softmax_rows(a, b):
    return np.sum(sc.softmax(a, axis=1) * b)


def _log_softmax_all(a, b):
    return np.sum(sc.log_softmax(a) * b)


def _log_softmax_columns(a, b):
    return np.sum(sc.log_softmax(a, axis=0) * b)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f", [_lse_keepdims, _lse_axis0, _lse_all, _softmax_rows, _log_softmax_all,
                               _log_softmax_columns], ids=lambda f: f.__name__)
def test_reductions_along_axes(f, backend):
    rng = np.random.default_rng(3)
    a = rng.normal(size=(2, 3)) * 3.0 + 500.0  # exp(500) alone would be 1e217, exp(800) inf
    b = rng.uniform(0.5, 2.0, size=(2, 3))
    value, (da, db) = irad.value_and_grad(f, argnums=(0, 1), backend=backend)(a, b)
    assert value == pytest.approx(f(a, b), rel=1e-14)
    for g, i in ((da, 0), (db, 1)):
        v = rng.normal(size=(2, 3))
        moved = [a, b]

        def along(t):
            shifted = list(moved)
            shifted[i] = moved[i] + t * v
            return f(*shifted)

        h = 1e-5
        assert np.sum(g * v) == pytest.approx((along(h) - along(-h)) / (2 * h), rel=1e-6, abs=1e-6), i
    _, tangent = irad.jvp(f, (a, b), (np.ones_like(a), np.ones_like(b)), backend=backend)
    assert tangent == pytest.approx(np.sum(da) + np.sum(db), rel=1e-12, abs=1e-12)


def test_logsumexp_edges_as_scipy():
    def lse(a, b):
        return sc.logsumexp(a, b=b)

    cases = [
        (np.array([1.0, 2.0, np.inf]), np.array([1.0, 1.0, 0.0])),  # a weight 0 drops even inf
        (np.array([1.0, np.inf]), np.array([1.0, 1.0])),
        (np.array([-np.inf, -np.inf]), np.array([1.0, 1.0])),
        (np.array([1.0, 0.5]), np.array([-1.0, 10.0])),  # negative weights, positive sum
        (np.array([1.0, 0.5]), np.array([-1.0, 1.0])),  # negative sum: NaN
    ]
    for a, b in cases:
        np.testing.assert_allclose(irad.value_and_grad(lse)(a, b)[0], sc.logsumexp(a, b=b), rtol=1e-14)
    assert irad.value_and_grad(lambda v: sc.logsumexp(v))(2.5) == (2.5, 1.0)  # a number: itself
    assert irad.value_and_grad(lambda v: sc.log_softmax(v))(2.5) == (0.0, 0.0)


# ---- scipy.stats.norm ----------------------------------------------------------------------------------------
NORM = ["pdf", "logpdf", "cdf", "logcdf", "sf", "logsf"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("method", NORM)
def test_norm_with_loc_and_scale(method, backend):
    fn = getattr(st.norm, method)
    x = np.array([-45.0, -3.0, -0.4, 0.0, 1.3, 6.0, 45.0])
    loc, scale = 0.7, 1.9

    def positional(v, m, s):
        return fn(v, m, s)

    def keywords(v, m, s):
        return fn(v, scale=s, loc=m)

    for f in (positional, keywords):
        value, pullback = irad.vjp(f, x, loc, scale, backend=backend)
        np.testing.assert_allclose(value, fn(x, loc, scale), rtol=1e-13, err_msg=method)
        dx, dloc, dscale = pullback(np.ones_like(x))
        np.testing.assert_allclose(dx, central(lambda v: fn(v, loc, scale), x), rtol=1e-6, atol=1e-12)
        assert dloc == pytest.approx(np.sum(central(lambda m: fn(x, m, scale), np.full_like(x, loc))), rel=1e-6,
                                     abs=1e-12)
        assert dscale == pytest.approx(np.sum(central(lambda s: fn(x, loc, s), np.full_like(x, scale))), rel=1e-6,
                                       abs=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_norm_defaults_broadcasting_and_invalid_scale(backend):
    def f(x, scales):
        return st.norm.logcdf(x[:, None]) + st.norm.pdf(x[:, None], scale=scales) + st.norm.sf(x[:, None], 1.0)

    x = np.array([-2.0, 0.5])
    scales = np.array([0.5, 2.0, -1.0])
    value, pullback = irad.vjp(f, x, scales, backend=backend)
    np.testing.assert_allclose(value, f(x, scales), rtol=1e-14)  # NaN in the last column, as scipy
    dx, dscales = pullback(np.ones((2, 3)))
    assert np.all(np.isfinite(dx[:1])) and dscales[2] == 0.0
    value32 = irad.vjp(lambda v: st.norm.cdf(v), x.astype(np.float32))[0]
    assert value32.dtype == np.float64  # scipy.stats returns float64 for float32 arguments


def test_norm_as_an_entry_point():
    assert irad.grad(st.norm.logcdf)(-30.0) == pytest.approx(30.03325966743, rel=1e-10)
    assert irad.grad(sc.expit)(0.0) == 0.25


# ---- the quantiles, betaln and the other distributions ----------------------------------------------------------
# name: (scipy's function, points, parameters (each differentiated)); at the points the densities are smooth
DISTRIBUTIONS = {
    "norm.ppf": (st.norm.ppf, [1e-12, 0.02, 0.3, 0.5, 0.81, 0.999], (0.7, 1.9)),
    "norm.isf": (st.norm.isf, [1e-9, 0.02, 0.3, 0.5, 0.81, 0.999], (-0.4, 0.6)),
    "gamma.logpdf": (st.gamma.logpdf, [0.15, 0.4, 1.3, 6.0, 30.0], (2.5, 0.1, 1.7)),
    "t.logpdf": (st.t.logpdf, [-40.0, -2.0, 0.0, 0.3, 5.0], (3.5, 0.2, 0.8)),
    "beta.logpdf": (st.beta.logpdf, [0.01, 0.2, 0.5, 0.77, 0.99], (2.2, 0.7)),
    "expon.logpdf": (st.expon.logpdf, [0.1, 1.0, 7.0], (-0.3, 1.4)),
    "laplace.logpdf": (st.laplace.logpdf, [-3.0, -0.1, 0.4, 8.0], (0.2, 0.9)),
    "poisson.logpmf": (st.poisson.logpmf, [0.0, 1.0, 4.0, 17.0], (3.3,)),
    "poisson.pmf": (st.poisson.pmf, [0.0, 1.0, 4.0, 17.0], (3.3,)),
    "betaln": (sc.betaln, [0.01, 0.5, 3.0, 40.0, 900.0], (2.5,)),
    "cauchy.logpdf": (st.cauchy.logpdf, [-50.0, -1.0, 0.2, 3.0], (0.3, 1.7)),
    "logistic.logpdf": (st.logistic.logpdf, [-30.0, -2.0, 0.1, 4.0, 40.0], (0.4, 1.3)),
    "lognorm.logpdf": (st.lognorm.logpdf, [0.05, 0.9, 2.0, 30.0], (0.6, -0.02, 1.5)),
    "uniform.logpdf": (st.uniform.logpdf, [-0.4, 0.1, 2.0], (-0.5, 3.0)),
    "chi2.logpdf": (st.chi2.logpdf, [0.1, 1.0, 4.0, 25.0], (3.5, -0.05, 1.2)),
    "halfnorm.logpdf": (st.halfnorm.logpdf, [0.1, 1.0, 3.0], (-0.2, 0.8)),
    "binom.logpmf": (st.binom.logpmf, [0.0, 1.0, 4.0, 9.0], (9.0, 0.35)),
    "binom.pmf": (st.binom.pmf, [0.0, 2.0, 5.0], (7.0, 0.6)),
    "bernoulli.logpmf": (st.bernoulli.logpmf, [0.0, 1.0, 1.0], (0.3,)),
    "bernoulli.pmf": (st.bernoulli.pmf, [0.0, 1.0], (0.8,)),
}
# a pmf's n is an int: its derivative is not compared
NOT_DIFFERENTIATED = {("binom.logpmf", 0), ("binom.pmf", 0)}


@pytest.mark.parametrize(("name", "backend"), [(name, "python") for name in DISTRIBUTIONS] + [
    pytest.param(name, *BACKENDS[1].values, marks=BACKENDS[1].marks) for name in ("norm.ppf", "t.logpdf")])
def test_distribution_values_and_derivatives(name, backend):
    """Values against scipy's; the gradient in the point (not for a pmf's
    integer k) and in each parameter against central differences of scipy's."""
    fn, points, params = DISTRIBUTIONS[name]
    x = np.array(points)
    value, pullback = irad.vjp(lambda v, *p: fn(v, *p), x, *params, backend=backend)
    np.testing.assert_allclose(value, fn(x, *params), rtol=1e-11, err_msg=name)
    grads = pullback(np.ones_like(x))
    if not name.startswith(("poisson", "binom", "bernoulli")):
        scale = inside_unit(x) if name.startswith("norm") else None
        np.testing.assert_allclose(grads[0], central(lambda v: fn(v, *params), x, scale=scale), rtol=1e-6,
                                   atol=1e-10, err_msg=name)
    for i, p in enumerate(params):
        if (name, i) in NOT_DIFFERENTIATED:
            continue

        def of_p(q, i=i):
            return np.sum(fn(x, *params[:i], q[0], *params[i + 1:]))
        assert grads[1 + i] == pytest.approx(central(of_p, np.array([p]))[0], rel=1e-6, abs=1e-10), (name, i)


def test_distributions_off_the_support_and_invalid_parameters():
    """-inf off the support, NaN for invalid parameters, as scipy."""
    def f(x, a):
        return (st.gamma.logpdf(x, a), st.beta.logpdf(x, a, 2.0), st.expon.logpdf(x),
                st.poisson.logpmf(x, a), st.t.logpdf(x, a, scale=-1.0), st.norm.ppf(x),
                st.lognorm.logpdf(x, a), st.uniform.logpdf(x, 0.0, a), st.chi2.logpdf(x, a),
                st.halfnorm.logpdf(x, scale=a), st.binom.logpmf(x, 2.0, a - 0.5), st.bernoulli.logpmf(x, a / 2.0),
                st.cauchy.logpdf(x, scale=a), st.logistic.logpdf(x, scale=a))

    x = np.array([-0.5, 0.0, 0.5, 1.0, 2.5, 3.0])
    for a in (0.5, 1.0, 2.0, -1.0):
        for g, w in zip(irad.vjp(f, x, a)[0], f(x, a)):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-13)  # the same infinities and NaNs


# ---- float32 ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["expit", "erf", "erfinv", "gammaln", "log_ndtr", "ndtri"])
def test_float32_in_float32_out(name):
    fn, points, *_ = UNARY[name]
    x = np.array(points, dtype=np.float32)
    value, pullback = irad.vjp(_program(fn), x)
    assert value.dtype == np.float32 and value.dtype == fn(x).dtype
    np.testing.assert_allclose(value, fn(x), rtol=2e-7, atol=1e-7)
    (grad,) = pullback(np.ones_like(x))
    assert grad.dtype == np.float32
    np.testing.assert_allclose(grad, UNARY[name][2](x.astype(np.float64)), rtol=1e-6)


# ---- rules and the numpy table's machinery ---------------------------------------------------------------------------
def test_a_rule_replaces_a_scipy_function(rule_table):
    def f(x):
        return np.sum(sc.expit(x))

    def doubled(x):
        y = sc.expit(x)

        def pullback(dy):
            return 2.0 * dy * y * (1.0 - y)

        return y, pullback

    x = np.array([0.0, 1.0])
    irad.rrule(sc.expit)(doubled)
    assert [r.target for r in irad.rules.list_rules(sc.expit)] == ["scipy.special.expit"]
    np.testing.assert_allclose(irad.grad(f)(x), 2.0 * sc.expit(x) * sc.expit(-x))


def test_the_special_functions_run_as_numpy_too():
    from irad import special

    x = np.linspace(-6.0, 6.0, 41)
    np.testing.assert_allclose(special.erfinv(sc.erf(x / 3.0)), x / 3.0, rtol=1e-14, atol=1e-16)
    lower = x[x <= 0.0]  # above, ndtr(x) rounds to 1 - (a few digits)
    np.testing.assert_allclose(special.ndtri(sc.ndtr(lower)), lower, rtol=1e-13)


@settings(max_examples=80, deadline=None)
@given(hst.floats(min_value=-60.0, max_value=60.0))
def test_special_functions_match_scipy(x):
    from irad import special

    assert special.log_ndtr(x) == pytest.approx(sc.log_ndtr(x), rel=1e-14, abs=1e-300)
    assert special.expit(x) == pytest.approx(sc.expit(x), rel=1e-15)
    if abs(x - round(x)) > 1e-3 or x > 0:  # away from the poles (scipy reflects through tan(pi x))
        assert special.gammaln(x) == pytest.approx(sc.gammaln(x), rel=1e-12, abs=1e-13)
        assert special.digamma(x) == pytest.approx(sc.digamma(x), rel=1e-12, abs=1e-14)
        assert special.trigamma(x) == pytest.approx(sc.polygamma(1, x), rel=1e-13)
    for name in ("i0e", "i1e") + (("i0", "i1") if abs(x) < 700 else ()):
        assert getattr(special, name)(x) == pytest.approx(getattr(sc, name)(x), rel=5e-15, abs=1e-300), name
    p = sc.ndtr(x)
    if 0.0 < p < 1.0:
        assert special.ndtri(p) == pytest.approx(sc.ndtri(p), rel=1e-13)


def test_importing_irad_does_not_import_scipy(tmp_path):
    script = tmp_path / "no_scipy.py"
    script.write_text(
        "import sys\nimport numpy as np\nimport irad\n\n"
        "def f(x):\n    return np.sum(np.exp(x) * np.tanh(x))\n\n"
        "irad.grad(f)(np.ones(3))\nprint('scipy' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ---- errors: scipy's functions irad lacks, named as scipy's ------------------------------------------------------
def bessel(x):
    return sc.jv(1.0, x)


def quantile(x):
    return st.gamma.ppf(x, 2.0)


def student(x):
    return st.t.cdf(x, 3.0)


def logsumexp_sign(x):
    return sc.logsumexp(x, return_sign=True)[0]


def third_polygamma(x):
    return sc.polygamma(2, x)


@pytest.mark.parametrize(("f", "message"), [
    (bessel, r"test_scipy.py:\d+:\d+: the scipy function scipy.special.jv is not supported by irad"),
    (quantile, r"the scipy function scipy.stats.gamma.ppf is not supported by irad"),
    (student, r"the scipy function scipy.stats.t.cdf is not supported by irad"),
    (logsumexp_sign, r"scipy.special.logsumexp\(..., return_sign=True\) is not supported"),
    (third_polygamma, r"scipy.special.polygamma\(n, x\) for n = 2 is not supported"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_what_irad_lacks_is_named_as_scipys(f, message):
    with pytest.raises(irad.UnsupportedError, match=message) as info:
        irad.grad(f)(np.array([0.3, 0.5]) if f is logsumexp_sign else 0.3)
    text = str(info.value)
    assert "numpy.jv" not in text and "source is not available" not in text and "docs/scipy.md" in text


# ---- the docs list what the table holds -----------------------------------------------------------------------
def test_the_docs_list_every_scipy_function_and_nothing_else():
    section = DOCS.read_text().split("## Supported functions", 1)[1].split("\n## ", 1)[0]
    documented = set()
    for row in re.findall(r"^\|(.+)\|\s*$", section, re.M):
        first_cell = re.split(r"(?<!\\)\|", row)[0]
        for span in re.findall(r"`([^`(]*)", first_cell):
            module, _, names = span.rpartition(".")
            if module.startswith("scipy."):
                documented.update(f"{module}.{n}" for n in names.split())
    table = set(irad.numpy_functions("scipy"))
    documented = {"scipy.special.psi" if n == "scipy.special.digamma" else n for n in documented}
    assert table == documented, (sorted(table - documented), sorted(documented - table))
