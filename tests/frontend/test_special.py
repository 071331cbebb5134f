"""math.lgamma, math.gamma (irad.numerics, with digamma rules) and
math.factorial: values against Python's math module (libm), gradients against
central differences and known digamma values, forward against reverse, on
both backends."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irad
from irad import numerics
from irad.backends.native.compile import unavailable_reason
from irad.base.errors import RuntimeCheckError

NATIVE_MISSING = unavailable_reason()
BACKENDS = ["python", pytest.param("native", marks=[
    pytest.mark.native, pytest.mark.skipif(NATIVE_MISSING is not None, reason=str(NATIVE_MISSING))])]

EULER_GAMMA = 0.5772156649015329


def log_gamma(x):
    return math.lgamma(x)


def gamma_half(x):
    return math.gamma(0.5 * x)


POINTS = [0.01, 0.3, 0.5, 1.0, 1.5, 2.0, 3.7, 10.0, 25.5, 150.0, -0.5, -1.3, -2.7, -7.25]


@pytest.mark.parametrize("backend", BACKENDS)
def test_values_agree_with_libm(backend):
    lgamma = irad.value_and_grad(log_gamma, backend=backend)
    gamma = irad.value_and_grad(gamma_half, backend=backend)
    for x in POINTS:
        assert lgamma(x)[0] == pytest.approx(math.lgamma(x), rel=1e-14, abs=1e-14), x
        assert gamma(x)[0] == pytest.approx(math.gamma(0.5 * x), rel=1e-13), x


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradients_agree_with_central_differences(backend):
    for f in (log_gamma, gamma_half):
        g = irad.grad(f, backend=backend)
        for x in POINTS[:-1]:
            h = 1e-6 * max(1.0, abs(x))
            reference = (math.lgamma(x + h) - math.lgamma(x - h)) / (2 * h) if f is log_gamma else \
                (math.gamma(0.5 * (x + h)) - math.gamma(0.5 * (x - h))) / (2 * h)
            assert g(x) == pytest.approx(reference, rel=1e-6, abs=1e-8), (f.__name__, x)
            _, tangent = irad.jvp(f, (x,), (1.0,), backend=backend)
            assert tangent == pytest.approx(g(x), rel=1e-13), (f.__name__, x)


def test_digamma_at_known_points():
    assert numerics.digamma(1.0) == pytest.approx(-EULER_GAMMA, abs=1e-15)
    assert numerics.digamma(0.5) == pytest.approx(-EULER_GAMMA - 2.0 * math.log(2.0), abs=1e-15)
    assert numerics.digamma(-0.5) == pytest.approx(2.0 - EULER_GAMMA - 2.0 * math.log(2.0), abs=1e-14)
    assert numerics.digamma(1e6) == pytest.approx(math.log(1e6) - 0.5e-6, rel=1e-15)


@settings(max_examples=60, deadline=None)
@given(st.floats(min_value=-20.0, max_value=60.0).filter(lambda x: abs(x - round(x)) > 1e-3 or x > 0.5))
def test_lgamma_matches_libm(x):
    assert numerics.lgamma(x) == pytest.approx(math.lgamma(x), rel=1e-13, abs=1e-13)
    if x < 170.0:
        assert numerics.gamma(x) == pytest.approx(math.gamma(x), rel=1e-12)


def test_poles_and_int_arguments():
    assert math.isinf(numerics.lgamma(0.0)) and math.isinf(numerics.lgamma(-3.0))
    assert math.isnan(numerics.gamma(-2.0))

    def scaled(x, n):
        return x * math.lgamma(n) + math.gamma(n)

    value, grad = irad.value_and_grad(scaled)(2.0, 5)
    assert value == pytest.approx(2.0 * math.lgamma(5) + 24.0, rel=1e-14) and grad == pytest.approx(math.lgamma(5))


def second_derivative(x):
    return irad.grad(log_gamma)(x)


def test_second_derivative_is_trigamma():
    # trigamma(1) = pi^2 / 6
    assert irad.grad(second_derivative)(1.0) == pytest.approx(math.pi ** 2 / 6, rel=1e-12)


def factorials(x, n):
    return x * math.factorial(n) + math.factorial(3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_factorial_values(backend):
    f = irad.value_and_grad(factorials, backend=backend)
    for n in (0, 1, 5, 20):
        value, grad = f(1.0, n)
        assert grad == math.factorial(n) and value == float(math.factorial(n) + 6)


def factorial_of_float(x):
    return math.factorial(x)


def test_factorial_errors():
    f = irad.grad(factorials)
    with pytest.raises(RuntimeCheckError, match=r"test_special.py:\d+:\d+: factorial\(\) not defined for negative values"):
        f(1.0, -1)
    with pytest.raises(RuntimeCheckError, match=r"math.factorial\(n\) for n above 20 does not fit"):
        f(1.0, 21)
    with pytest.raises(irad.UnsupportedError, match=r"test_special.py:\d+:\d+: math.factorial takes an int, got a float"):
        irad.grad(factorial_of_float)(2.0)


def hypot_times_zero(x):
    return 0.0 * math.hypot(x, x) + x


def hypot_of(x, y):
    return math.hypot(x, y)


@pytest.mark.parametrize("backend", BACKENDS)
def test_hypot_at_its_kink_is_not_nan(backend):
    """math.hypot at (0, 0): its rules give the subgradient 0, so a zero
    cotangent stays zero (the fuzzer found 0 * hypot(x, x) + x with gradient NaN;
    central differences give 1)."""
    h = 1e-6
    fd = (hypot_times_zero(h) - hypot_times_zero(-h)) / (2 * h)
    assert irad.grad(hypot_times_zero, backend=backend)(0.0) == pytest.approx(fd, abs=1e-9)
    assert irad.grad(hypot_of, argnums=(0, 1), backend=backend)(0.0, 0.0) == (0.0, 0.0)
    assert irad.jvp(hypot_of, (0.0, 0.0), (1.0, 1.0), backend=backend) == (0.0, 0.0)
    assert irad.grad(hypot_of, argnums=(0, 1), backend=backend)(3.0, 4.0) == pytest.approx((0.6, 0.8))


def array_hypot_times_zero(x):
    return np.sum(0.0 * np.hypot(x, x) + x)


def array_hypot_of(x, y):
    return np.sum(np.hypot(x, y))


@pytest.mark.parametrize("backend", BACKENDS)
def test_array_hypot_at_its_kink_agrees_with_math_hypot(backend):
    """np.hypot at (0, 0) gives math.hypot's subgradient 0, not NaN (the
    overflow-safe scaling once took sqrt's infinite derivative there)."""
    h = 1e-6
    x = np.array([0.0, 0.0, 3.0])
    fd = [(array_hypot_times_zero(x + h * e) - array_hypot_times_zero(x - h * e)) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(irad.grad(array_hypot_times_zero, backend=backend)(x), fd, atol=1e-8)
    gx, gy = irad.grad(array_hypot_of, argnums=(0, 1), backend=backend)(np.array([0.0, 3.0]), np.array([0.0, 4.0]))
    np.testing.assert_allclose(gx, [0.0, 0.6])
    np.testing.assert_allclose(gy, [0.0, 0.8])
    value, tangent = irad.jvp(array_hypot_of, (np.zeros(2), np.zeros(2)), (np.ones(2), np.ones(2)), backend=backend)
    assert (value, tangent) == (0.0, 0.0)
