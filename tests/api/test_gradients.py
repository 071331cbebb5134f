"""Gradients of many scalar programs, checked against finite differences of
the same Python functions (run as plain Python) and against closed forms.

Every program lives at module level in this file because irad lowers
functions from their source. Points are chosen away from kinks and branch
points so that the finite-difference stencil never crosses one.
"""

from __future__ import annotations

import importlib.util
import math
import sys

import pytest

import irad
from irad import numerics
from irad.numerics import hypot as irad_hypot
from irad.numerics import logaddexp, sigmoid, softplus
from tests.reference import five_point_difference

# ---------------------------------------------------------------------------
# Reference derivatives
# ---------------------------------------------------------------------------


def float_positions(args):
    return tuple(i for i, a in enumerate(args) if isinstance(a, float))


def assert_close(actual, expected, rel=1e-6, abs_=1e-9, what=""):
    assert isinstance(actual, float), f"{what}: {actual!r} is not a float"
    assert math.isfinite(actual), f"{what}: got {actual!r}, expected {expected!r}"
    assert math.isclose(actual, expected, rel_tol=rel, abs_tol=abs_), (
        f"{what}: irad gives {actual!r}, reference {expected!r}"
    )


def check_fd(f, *args, rel=1e-6, abs_=None):
    """irad's gradient w.r.t. every float argument matches finite differences,
    and the value returned by value_and_grad matches the Python function."""
    wrt = float_positions(args)
    value, grads = irad.value_and_grad(f, argnums=wrt)(*args)
    expected_value = f(*args)
    assert type(value) is float, type(value)
    assert math.isclose(value, expected_value, rel_tol=1e-12, abs_tol=1e-12), (
        f"value: irad {value!r}, Python {expected_value!r}"
    )
    assert type(grads) is tuple and len(grads) == len(wrt)
    scale = max(1.0, abs(expected_value))
    for i, g in zip(wrt, grads):
        assert type(g) is float, f"d/d arg {i}: {type(g)}"
        fd = five_point_difference(f, args, i)
        tol_abs = abs_ if abs_ is not None else 1e-8 * scale
        assert_close(g, fd, rel=rel, abs_=tol_abs, what=f"{f.__name__} d/d arg {i} at {args}")
    return grads


# ---------------------------------------------------------------------------
# Programs: the math functions and operators, each alone
# ---------------------------------------------------------------------------


def f_sin(x):
    return math.sin(x)


def f_cos(x):
    return math.cos(x)


def f_tan(x):
    return math.tan(x)


def f_exp(x):
    return math.exp(x)


def f_log(x):
    return math.log(x)


def f_log1p(x):
    return math.log1p(x)


def f_log2(x):
    return math.log2(x)


def f_log10(x):
    return math.log10(x)


def f_expm1(x):
    return math.expm1(x)


def f_sqrt(x):
    return math.sqrt(x)


def f_tanh(x):
    return math.tanh(x)


def f_sinh(x):
    return math.sinh(x)


def f_cosh(x):
    return math.cosh(x)


def f_asin(x):
    return math.asin(x)


def f_acos(x):
    return math.acos(x)


def f_atan(x):
    return math.atan(x)


def f_erf(x):
    return math.erf(x)


def f_fabs(x):
    return math.fabs(x)


def f_abs(x):
    return abs(x)


def f_atan2(y, x):
    return math.atan2(y, x)


def f_math_pow(x, y):
    return math.pow(x, y)


def f_builtin_pow(x, y):
    return pow(x, y)


def f_hypot(x, y):
    return math.hypot(x, y)


def f_min2(x, y):
    return min(x, y)


def f_max2(x, y):
    return max(x, y)


def f_min4(x, y, z):
    return min(x, y, z, 0.25)


def f_max4(x, y, z):
    return max(x, 0.25, y, z)


def f_add(x, y):
    return x + y


def f_sub(x, y):
    return x - y


def f_mul(x, y):
    return x * y


def f_div(x, y):
    return x / y


def f_neg(x):
    return -x


def f_pos(x):
    return +x


def f_floor(x, y):
    return x * math.floor(y) + math.floor(x)


def f_ceil(x, y):
    return x * math.ceil(y) + math.ceil(x)


def f_trunc(x, y):
    return x * math.trunc(y) + math.trunc(x)


def f_int_builtin(x, y):
    return x * int(y) + int(x)


def f_float_builtin(x, n):
    return float(x) * float(n) + float(n)


UNARY_CASES = [
    (f_sin, [-2.0, 0.3, 1.7, 10.0]),
    (f_cos, [-2.0, 0.3, 1.7, 10.0]),
    (f_tan, [-1.2, 0.3, 1.0]),
    (f_exp, [-3.0, 0.0, 0.5, 5.0]),
    (f_log, [0.1, 1.0, 3.5, 100.0]),
    (f_log1p, [-0.5, 0.0, 2.0]),
    (f_log2, [0.25, 3.0, 1000.0]),
    (f_log10, [0.25, 3.0, 1000.0]),
    (f_expm1, [-2.0, 1e-3, 1.5]),
    (f_sqrt, [0.01, 2.0, 81.0]),
    (f_tanh, [-2.0, 0.0, 0.7]),
    (f_sinh, [-2.0, 0.0, 0.7]),
    (f_cosh, [-2.0, 0.1, 0.7]),
    (f_asin, [-0.9, 0.0, 0.5]),
    (f_acos, [-0.9, 0.0, 0.5]),
    (f_atan, [-3.0, 0.0, 0.5, 20.0]),
    (f_erf, [-1.5, 0.0, 0.3, 2.0]),
    (f_fabs, [-1.5, 0.3]),
    (f_abs, [-1.5, 0.3]),
    (f_neg, [-1.5, 0.3]),
    (f_pos, [-1.5, 0.3]),
]


@pytest.mark.parametrize(
    "f,x",
    [(f, x) for f, xs in UNARY_CASES for x in xs],
    ids=[f"{f.__name__}-{x}" for f, xs in UNARY_CASES for x in xs],
)
def test_unary_against_finite_differences(f, x):
    check_fd(f, x)


CLOSED_FORMS = [
    (f_sin, 0.7, math.cos(0.7)),
    (f_cos, 0.7, -math.sin(0.7)),
    (f_tan, 0.7, 1.0 / math.cos(0.7) ** 2),
    (f_exp, 0.7, math.exp(0.7)),
    (f_log, 0.7, 1.0 / 0.7),
    (f_log1p, 0.7, 1.0 / 1.7),
    (f_log2, 0.7, 1.0 / (0.7 * math.log(2.0))),
    (f_log10, 0.7, 1.0 / (0.7 * math.log(10.0))),
    (f_expm1, 0.7, math.exp(0.7)),
    (f_sqrt, 0.7, 0.5 / math.sqrt(0.7)),
    (f_tanh, 0.7, 1.0 - math.tanh(0.7) ** 2),
    (f_sinh, 0.7, math.cosh(0.7)),
    (f_cosh, 0.7, math.sinh(0.7)),
    (f_asin, 0.7, 1.0 / math.sqrt(1.0 - 0.49)),
    (f_acos, 0.7, -1.0 / math.sqrt(1.0 - 0.49)),
    (f_atan, 0.7, 1.0 / 1.49),
    (f_erf, 0.7, 2.0 / math.sqrt(math.pi) * math.exp(-0.49)),
    (f_fabs, -0.7, -1.0),
    (f_abs, -0.7, -1.0),
    (f_abs, 0.7, 1.0),
    (f_neg, 0.7, -1.0),
    (f_pos, 0.7, 1.0),
]


@pytest.mark.parametrize(
    "f,x,expected", CLOSED_FORMS, ids=[f"{c[0].__name__}-{c[1]}" for c in CLOSED_FORMS]
)
def test_unary_closed_forms(f, x, expected):
    g = irad.grad(f)(x)
    assert type(g) is float
    assert math.isclose(g, expected, rel_tol=1e-13, abs_tol=1e-15), (g, expected)


BINARY_CASES = [
    (f_atan2, (0.5, 1.5)),
    (f_atan2, (-0.5, -1.5)),
    (f_atan2, (2.0, -0.1)),
    (f_math_pow, (1.5, 2.3)),
    (f_math_pow, (0.3, -1.7)),
    (f_builtin_pow, (1.5, 2.3)),
    (f_hypot, (3.0, 4.0)),
    (f_hypot, (-3.0, 0.5)),
    (f_hypot, (1e-3, -2.0)),
    (f_min2, (1.0, 2.0)),
    (f_min2, (2.0, 1.0)),
    (f_max2, (1.0, 2.0)),
    (f_max2, (2.0, 1.0)),
    (f_min4, (1.0, -2.0, 3.0)),
    (f_min4, (1.0, 2.0, 3.0)),
    (f_max4, (1.0, -2.0, 3.0)),
    (f_max4, (-1.0, -2.0, -3.0)),
    (f_add, (1.5, -2.5)),
    (f_sub, (1.5, -2.5)),
    (f_mul, (1.5, -2.5)),
    (f_div, (1.5, -2.5)),
    (f_div, (-3.0, 0.2)),
    (f_floor, (1.5, 2.5)),
    (f_floor, (-1.5, -2.5)),
    (f_ceil, (1.5, -2.5)),
    (f_trunc, (-1.5, 2.5)),
    (f_int_builtin, (-1.5, 2.5)),
    (f_int_builtin, (1.5, -2.5)),
]


@pytest.mark.parametrize(
    "f,args", BINARY_CASES, ids=[f"{f.__name__}-{a}" for f, a in BINARY_CASES]
)
def test_binary_against_finite_differences(f, args):
    check_fd(f, *args)


def test_binary_closed_forms():
    p, q = 0.5, 1.5
    gp, gq = irad.grad(f_atan2, argnums=(0, 1))(p, q)
    assert math.isclose(gp, q / (p * p + q * q), rel_tol=1e-13)
    assert math.isclose(gq, -p / (p * p + q * q), rel_tol=1e-13)
    gx, gy = irad.grad(f_math_pow, argnums=(0, 1))(1.5, 2.3)
    assert math.isclose(gx, 2.3 * 1.5**1.3, rel_tol=1e-13)
    assert math.isclose(gy, 1.5**2.3 * math.log(1.5), rel_tol=1e-13)
    gx, gy = irad.grad(f_hypot, argnums=(0, 1))(3.0, 4.0)
    assert math.isclose(gx, 0.6, rel_tol=1e-14) and math.isclose(gy, 0.8, rel_tol=1e-14)
    gx, gy = irad.grad(f_div, argnums=(0, 1))(1.5, -2.5)
    assert math.isclose(gx, 1 / -2.5, rel_tol=1e-14)
    assert math.isclose(gy, -1.5 / 2.5**2, rel_tol=1e-14)
    # min/max: the cotangent goes to the selected operand only
    assert irad.grad(f_min2, argnums=(0, 1))(1.0, 2.0) == (1.0, 0.0)
    assert irad.grad(f_max2, argnums=(0, 1))(1.0, 2.0) == (0.0, 1.0)
    assert irad.grad(f_max4, argnums=(0, 1, 2))(1.0, -2.0, 3.0) == (0.0, 0.0, 1.0)
    assert irad.grad(f_min4, argnums=(0, 1, 2))(1.0, 2.0, 3.0) == (0.0, 0.0, 0.0)


def test_rounding_functions_have_zero_gradient():
    # floor/ceil/trunc/int are piecewise constant: only the x * floor(y) term counts
    assert irad.grad(f_floor, argnums=(0, 1))(1.5, 2.5) == (2.0, 0.0)
    assert irad.grad(f_ceil, argnums=(0, 1))(1.5, -2.5) == (-2.0, 0.0)
    assert irad.grad(f_trunc, argnums=(0, 1))(-1.5, 2.5) == (2.0, 0.0)
    assert irad.grad(f_int_builtin, argnums=(0, 1))(1.5, -2.5) == (-2.0, 0.0)
    value, g = irad.value_and_grad(f_floor, argnums=(0, 1))(-1.5, -2.5)
    assert value == f_floor(-1.5, -2.5) and g == (-3.0, 0.0)


def test_float_of_int_argument():
    value, g = irad.value_and_grad(f_float_builtin)(1.5, 3)
    assert value == f_float_builtin(1.5, 3)
    assert g == 3.0 and type(g) is float


# ---------------------------------------------------------------------------
# Powers
# ---------------------------------------------------------------------------


def p_cube(x):
    return x**3


def p_inv_square(x):
    return x**-2


def p_half(x):
    return x**0.5


def p_general(x, y):
    return x**y


def p_two_to_x(x):
    return 2.0**x


def p_int_base_float_exp(x):
    return 3**x


def p_runtime_int(x, n):
    return x**n


def p_zero(x):
    return x**0 + x**1


def p_big_literal(x):
    return x**64 + x**65 + x**-65


def p_int_square(x, n):
    return x * n**2 + (n + 1) ** 3


def p_neg_float_exp(x):
    return x**-1.5


@pytest.mark.parametrize("x", [-2.5, -0.5, 0.5, 1.3])
def test_cube_and_inverse_square(x):
    g = check_fd(p_cube, x)[0]
    assert math.isclose(g, 3 * x * x, rel_tol=1e-14)
    g = check_fd(p_inv_square, x)[0]
    assert math.isclose(g, -2 * x**-3, rel_tol=1e-14)


@pytest.mark.parametrize("x", [0.04, 1.0, 9.0])
def test_square_root_power(x):
    g = check_fd(p_half, x)[0]
    assert math.isclose(g, 0.5 / math.sqrt(x), rel_tol=1e-14)
    g = check_fd(p_neg_float_exp, x)[0]
    assert math.isclose(g, -1.5 * x**-2.5, rel_tol=1e-13)


@pytest.mark.parametrize("args", [(1.5, 2.3), (0.7, -0.4), (2.0, 3.0), (3.0, 0.0)])
def test_general_power(args):
    x, y = args
    gx, gy = check_fd(p_general, x, y)
    assert math.isclose(gx, y * x ** (y - 1), rel_tol=1e-13)
    assert math.isclose(gy, x**y * math.log(x), rel_tol=1e-13, abs_tol=1e-15)


@pytest.mark.parametrize("x", [-1.5, 0.0, 2.5])
def test_exponential_powers(x):
    g = check_fd(p_two_to_x, x)[0]
    assert math.isclose(g, 2.0**x * math.log(2.0), rel_tol=1e-13)
    g = check_fd(p_int_base_float_exp, x)[0]
    assert math.isclose(g, 3.0**x * math.log(3.0), rel_tol=1e-13)


@pytest.mark.parametrize("x", [-2.0, -0.7, 0.6, 1.9])
@pytest.mark.parametrize("n", [-3, -2, -1, 1, 2, 3, 7])
def test_runtime_int_power(x, n):
    value, g = irad.value_and_grad(p_runtime_int)(x, n)
    assert math.isclose(value, x**n, rel_tol=1e-14)
    assert math.isclose(g, n * x ** (n - 1), rel_tol=1e-13), (g, n * x ** (n - 1))
    assert_close(g, five_point_difference(p_runtime_int, (x, n), 0), what="fd")


@pytest.mark.parametrize("x", [-2.0, 0.6])
def test_runtime_int_power_zero_exponent(x):
    assert irad.value_and_grad(p_runtime_int)(x, 0) == (1.0, 0.0)


def test_runtime_int_power_zero_exponent_at_zero():
    # d/dx x**0 == 0 everywhere (jax and pytorch give 0 at x == 0 too)
    value, g = irad.value_and_grad(p_runtime_int)(0.0, 0)
    assert value == 1.0
    assert g == 0.0, f"d/dx x**0 at x=0 is {g!r}"


def test_runtime_int_power_at_zero_base():
    assert irad.grad(p_runtime_int)(0.0, 2) == 0.0
    assert irad.grad(p_runtime_int)(0.0, 1) == 1.0


@pytest.mark.parametrize("x", [-1.01, 0.99, 1.02])
def test_literal_power_edges(x):
    value, g = irad.value_and_grad(p_zero)(x)
    assert value == 1.0 + x and g == 1.0
    check_fd(p_big_literal, x, rel=1e-6)


def test_int_base_powers_with_int_arg():
    value, g = irad.value_and_grad(p_int_square)(1.5, -3)
    assert value == p_int_square(1.5, -3)
    assert g == 9.0


# ---------------------------------------------------------------------------
# Integer arithmetic (// and % with negative operands), int promotion
# ---------------------------------------------------------------------------


def int_floordiv_mod(x, n, m):
    return x * (n // m) + (n % m) * x * x + n // m


def int_promotion(x, n):
    return x * n + n / 2 + x / n + n * 2 + (n + 1) * x - n


def int_unary(x, n):
    return -n * x + (+n) + abs(n) * x + abs(-3) * x


def bool_arg(x, flag):
    return (x * x if flag else -x) + (2.0 * x if not flag else 0.5 * x)


def int_comparisons(x, n):
    return x * (1.5 if n > 2 else -2.5) + (x if n == 3 else 0.0)


def int_only_path(x, n):
    k = n * 3 - 7
    k = k // 2
    k += n % 4
    return x * k


@pytest.mark.parametrize(
    "n,m", [(7, 2), (-7, 2), (7, -2), (-7, -2), (6, 3), (-6, 3), (1, -5), (-1, 5), (0, -3)]
)
def test_int_floordiv_mod_values_and_gradient(n, m):
    x = 1.25
    value, g = irad.value_and_grad(int_floordiv_mod)(x, n, m)
    assert value == int_floordiv_mod(x, n, m)
    assert g == (n // m) + 2 * (n % m) * x


@pytest.mark.parametrize("n,m", [(7, 2), (-7, 2), (7, -2), (-7, -2)])
def test_int_floordiv_mod_python_semantics(n, m):
    def reference(x):
        return int_floordiv_mod(x, n, m)

    value = irad.value_and_grad(int_floordiv_mod)(0.0, n, m)[0]
    assert value == n // m == reference(0.0)


@pytest.mark.parametrize("n", [-3, -1, 1, 2, 5])
def test_int_promotion(n):
    check_fd(int_promotion, 0.75, n)
    g = irad.grad(int_promotion)(0.75, n)
    assert math.isclose(g, n + 1 / n + (n + 1), rel_tol=1e-14)


@pytest.mark.parametrize("n", [-3, 4])
def test_int_unary(n):
    value, g = irad.value_and_grad(int_unary)(0.5, n)
    assert value == int_unary(0.5, n)
    assert g == -n + abs(n) + 3


@pytest.mark.parametrize("flag", [True, False])
@pytest.mark.parametrize("x", [-1.5, 2.0])
def test_bool_argument(flag, x):
    value, g = irad.value_and_grad(bool_arg)(x, flag)
    assert value == bool_arg(x, flag)
    assert g == ((2 * x if flag else -1.0) + (2.0 if not flag else 0.5))


@pytest.mark.parametrize("n", [1, 3, 5])
def test_int_comparisons(n):
    value, g = irad.value_and_grad(int_comparisons)(2.0, n)
    assert value == int_comparisons(2.0, n)
    assert g == (1.5 if n > 2 else -2.5) + (1.0 if n == 3 else 0.0)


@pytest.mark.parametrize("n", [-5, 0, 3, 10])
def test_int_only_path(n):
    value, g = irad.value_and_grad(int_only_path)(1.5, n)
    assert value == int_only_path(1.5, n)
    k = (n * 3 - 7) // 2 + n % 4
    assert g == float(k)


# ---------------------------------------------------------------------------
# Compositions
# ---------------------------------------------------------------------------


def comp_trig(x, y):
    return math.sin(x * y) * math.cos(x - y) + math.tan(x / 4.0)


def comp_exp_log(x, y):
    return math.log(1.0 + math.exp(x)) * math.exp(-y * y) + math.log1p(x * x) - math.expm1(-y)


def comp_roots(x, y):
    return math.sqrt(x * x + y * y + 1.0) / (1.0 + math.hypot(x, y)) + math.sqrt(math.sqrt(2.0 + x))


def comp_hyperbolic(x, y):
    return math.tanh(math.sinh(x) * 0.3) + math.cosh(y) * math.tanh(x + y)


def comp_inverse_trig(x, y):
    return math.asin(math.tanh(x) * 0.9) + math.acos(y / (1.0 + abs(y))) + math.atan(x * y) + math.atan2(x, y)


def comp_logs(x, y):
    return math.log2(1.0 + x * x) * math.log10(2.0 + y * y) + math.log(math.exp(x) + math.exp(y))


def comp_erf_pow(x, y):
    return math.erf(x * y) * (1.0 + x * x) ** 1.5 + math.pow(2.0 + y * y, x) - math.fabs(x - 3.0)


def comp_everything(x, y, z):
    a = math.sin(x) + math.cos(y) * z
    b = math.exp(-a * a) + math.log1p(z * z)
    c = max(a, b) - min(x, y) + abs(z)
    d = math.sqrt(1.0 + c * c) ** 0.7 / (2.0 + math.tanh(b))
    return d * x - c / (1.0 + y * y) + math.atan2(a, 1.0 + z * z) + math.erf(b - a)


def comp_repeated(x):
    return x * x * x + x - x / (x + 2.0) + math.sin(x) * x + x**2 * x


def comp_reassign(x, y):
    s = x
    s = s * y
    s = s + x
    t = s
    s = s * s
    s = s - t * y
    return s / (1.0 + t * t)


def comp_augassign(x, y):
    s = x
    s += y
    s *= x
    s -= 1.5
    s /= 1.0 + y * y
    s **= 2
    s -= math.floor(s)
    s += x - 0.75 * math.floor(x / 0.75)
    return s + x * y


def comp_constants(x):
    return math.pi * x + math.e * x * x + math.tau + 1e-3 * x


COMPOSED = [
    (comp_trig, (0.7, -1.3)),
    (comp_trig, (2.1, 0.4)),
    (comp_exp_log, (0.7, -1.3)),
    (comp_exp_log, (-3.1, 0.4)),
    (comp_roots, (0.7, -1.3)),
    (comp_roots, (-1.4, 2.2)),
    (comp_hyperbolic, (0.7, -1.3)),
    (comp_inverse_trig, (0.7, -1.3)),
    (comp_inverse_trig, (-0.2, 0.6)),
    (comp_logs, (0.7, -1.3)),
    (comp_erf_pow, (0.7, -1.3)),
    (comp_erf_pow, (-0.4, 0.9)),
    (comp_everything, (0.7, -1.3, 0.4)),
    (comp_everything, (-1.1, 0.3, -2.2)),
    (comp_everything, (2.5, 2.1, 0.1)),
    (comp_repeated, (0.7,)),
    (comp_repeated, (-1.3,)),
    (comp_reassign, (0.7, -1.3)),
    (comp_augassign, (0.7, 1.3)),
    (comp_augassign, (1.9, -0.6)),
    (comp_constants, (0.7,)),
]


@pytest.mark.parametrize(
    "f,args", COMPOSED, ids=[f"{f.__name__}-{a}" for f, a in COMPOSED]
)
def test_compositions(f, args):
    check_fd(f, *args)


def test_repeated_variable_closed_form():
    x = 0.7
    expected = 3 * x * x + 1 - 2.0 / (x + 2.0) ** 2 + math.cos(x) * x + math.sin(x) + 3 * x * x
    assert math.isclose(irad.grad(comp_repeated)(x), expected, rel_tol=1e-13)


# ---------------------------------------------------------------------------
# Helper calls: chains, reuse, specialisations, tuples, keywords, defaults
# ---------------------------------------------------------------------------


def chain6(x):
    return math.sin(x) * 1.5 + x


def chain5(x):
    return chain6(x) * chain6(0.5 * x) - x


def chain4(x):
    return math.exp(0.3 * chain5(x))


def chain3(x, y):
    return chain4(x) * y + chain4(y)


def chain2(x, y):
    return chain3(x * y, y - x) / (1.0 + x * x)


def chain1(x, y):
    return chain2(x, y) + math.log(1.0 + chain2(y, x) ** 2)


def square(v):
    return v * v


def used_twice(x, y):
    return square(x) + square(math.sin(y)) * square(x + y)


def typed_helper(a, b):
    return a * b + a - b


def two_specialisations(x, n):
    return typed_helper(x, n) + typed_helper(x, x) + typed_helper(n, n) * x + typed_helper(2, x)


def polar(r, t):
    return r * math.cos(t), r * math.sin(t)


def unpacks_tuple(r, t):
    px, py = polar(r, t)
    qx, qy = polar(py, px)
    return px * qy - py * qx + polar(r, 0.5)[1] + polar(t, r)[0]


def three_out(a, b):
    return a + b, a * b, a - b


def tuple_tricks(x, y):
    t = three_out(x, y)
    u = t[1:]
    s = t[::-1]
    a, b = u
    return t[0] * t[-1] + a * b + s[0] + (x, y)[1]


def kw_helper(a, b=2.0, c=3, d=-0.5):
    return a * b + c * a * a + d * b


def keywords(x, y):
    return (
        kw_helper(x)
        + kw_helper(x, y)
        + kw_helper(x, c=2)
        + kw_helper(b=x, a=y)
        + kw_helper(y, d=x, b=1.5)
        + kw_helper(x, y, 4, y)
    )


def no_arg_helper():
    return 2.5


def calls_no_arg(x):
    return no_arg_helper() * x + no_arg_helper()


HELPERS = [
    (chain1, (0.3, 0.6)),
    (chain1, (-0.4, 0.2)),
    (used_twice, (0.7, -1.3)),
    (two_specialisations, (0.7, 3)),
    (two_specialisations, (-1.7, -2)),
    (unpacks_tuple, (1.3, 0.4)),
    (tuple_tricks, (1.3, -0.4)),
    (keywords, (1.3, -0.4)),
    (calls_no_arg, (1.3,)),
]


@pytest.mark.parametrize("f,args", HELPERS, ids=[f"{f.__name__}-{a}" for f, a in HELPERS])
def test_helper_calls(f, args):
    check_fd(f, *args)


def test_six_deep_chain_lowers_every_function():
    module = irad.lower(chain1, 0.3, 0.6)
    names = {op.sym_name.data for op in module.ops}
    assert {"chain1", "chain2", "chain3", "chain4", "chain5", "chain6"} <= names


def test_callee_used_twice_closed_form():
    x, y = 0.7, -1.3
    gx, gy = irad.grad(used_twice, argnums=(0, 1))(x, y)
    s = math.sin(y) ** 2
    assert math.isclose(gx, 2 * x + s * 2 * (x + y), rel_tol=1e-13)
    assert math.isclose(
        gy, 2 * math.sin(y) * math.cos(y) * (x + y) ** 2 + s * 2 * (x + y), rel_tol=1e-13
    )


def test_two_specialisations_are_two_functions():
    module = irad.lower(two_specialisations, 0.7, 3)
    helpers = [op for op in module.ops if op.sym_name.data.startswith("typed_helper")]
    signatures = {str(op.function_type) for op in helpers}
    assert len(helpers) == 4 and len(signatures) == 4, signatures
    x, n = 0.7, 3
    g = irad.grad(two_specialisations)(x, n)
    assert math.isclose(g, (n + 1) + (2 * x + 1 - 1) + (n * n) + (2 - 1), rel_tol=1e-14)


def test_keywords_closed_form():
    x, y = 1.3, -0.4
    gx, gy = irad.grad(keywords, argnums=(0, 1))(x, y)
    # the six calls, term by term
    ex = (2.0 + 6 * x) + (y + 6 * x) + (2.0 + 4 * x) + (y - 0.5) + 1.5 + (y + 8 * x)
    ey = 0.0 + (x - 0.5) + 0.0 + (x + 6 * y) + (1.5 + 6 * y) + (x + 2 * y)
    assert math.isclose(gx, ex, rel_tol=1e-13)
    assert math.isclose(gy, ey, rel_tol=1e-13)


# ---------------------------------------------------------------------------
# Closures and global constants
# ---------------------------------------------------------------------------

SCALE = 2.5
OFFSET = -3
USE_SIN = True


def make_scaled(k):
    def scaled(x):
        return k * math.sin(x) + SCALE * x

    return scaled


def make_composite(k, n):
    inner = make_scaled(k)

    def composite(x, y):
        return inner(x * y) * n + square(inner(y)) + OFFSET * x

    return composite


def uses_globals(x):
    return SCALE * x * x + OFFSET + (math.sin(x) if USE_SIN else x)


scaled_3 = make_scaled(3.0)
composite_2 = make_composite(-2.0, 4)


def test_closures():
    check_fd(scaled_3, 0.4)
    assert math.isclose(irad.grad(scaled_3)(0.4), 3.0 * math.cos(0.4) + SCALE, rel_tol=1e-14)
    check_fd(composite_2, 0.4, -1.1)
    check_fd(make_scaled(0.5), 1.2)


def test_globals_are_constants():
    check_fd(uses_globals, 0.9)
    assert math.isclose(irad.grad(uses_globals)(0.9), 2 * SCALE * 0.9 + math.cos(0.9), rel_tol=1e-14)


# ---------------------------------------------------------------------------
# Conditional expressions
# ---------------------------------------------------------------------------


def cond_abs(x):
    return x if x > 0 else -x


def cond_both(x, y):
    return x * y if x > y else x / y


def cond_nested(x, y):
    return (x * x if x > 1.0 else math.sin(x)) if y > 0.0 else (math.exp(x) if x < -1.0 else y * y * x)


def cond_chained(x, y):
    return x * y if -1.0 < x <= 1.0 < y else x + y


def cond_boolean(x, y):
    return x * x * y if (x > 0.0 and y > 0.0) or not (x > -1.0) else y - x


def cond_helpers(x, y):
    a = square(x) if x > y else chain6(y)
    b = polar(x, y)[0] if a > 1.0 else kw_helper(x, b=y)
    return a * b + (cond_abs(x - y) if x * y < 0.0 else cond_both(x, y))


def cond_in_helper(x, y):
    return cond_abs(x) * cond_abs(y) + cond_both(cond_abs(x), y)


def cond_int_branch(x, n):
    return x * (n if x > 0.0 else 2) + (x if n > 0 else 1)


def cond_product(x):
    # the conditional's result is needed again by the pullback of `*`
    return x * (x if x > 0.0 else -x)


def cond_constant_factor(x, n):
    return x * (1.5 if n > 2 else -2.5)


def cond_float_condition(x, y):
    return (x * 3.0 if y else x * 5.0) + (x if x - 1.0 else y)


CONDITIONALS = [
    (cond_abs, (1.5,)),
    (cond_abs, (-1.5,)),
    (cond_both, (2.0, 1.0)),
    (cond_both, (1.0, 2.0)),
    (cond_nested, (2.0, 1.0)),
    (cond_nested, (0.5, 1.0)),
    (cond_nested, (-2.0, -1.0)),
    (cond_nested, (0.5, -1.0)),
    (cond_chained, (0.5, 2.0)),
    (cond_chained, (0.5, 0.5)),
    (cond_chained, (-1.5, 2.0)),
    (cond_boolean, (0.5, 2.0)),
    (cond_boolean, (-2.0, 2.0)),
    (cond_boolean, (-0.5, 2.0)),
    (cond_boolean, (0.5, -2.0)),
    (cond_helpers, (2.0, 1.0)),
    (cond_helpers, (0.3, 1.0)),
    (cond_helpers, (1.5, -1.0)),
    (cond_helpers, (-1.5, 0.7)),
    (cond_helpers, (0.2, 0.1)),
    (cond_in_helper, (0.7, -1.3)),
    (cond_in_helper, (-0.7, 1.3)),
    (cond_int_branch, (0.7, 3)),
    (cond_int_branch, (-0.7, -3)),
    (cond_product, (1.5,)),
    (cond_product, (-1.5,)),
    (cond_constant_factor, (0.7, 3)),
    (cond_constant_factor, (0.7, 1)),
    (cond_float_condition, (0.7, 0.0)),
    (cond_float_condition, (1.5, 2.0)),
]


@pytest.mark.parametrize(
    "f,args", CONDITIONALS, ids=[f"{f.__name__}-{a}" for f, a in CONDITIONALS]
)
def test_conditionals(f, args):
    check_fd(f, *args)


def test_conditional_closed_forms():
    assert irad.grad(cond_abs)(1.5) == 1.0
    assert irad.grad(cond_abs)(-1.5) == -1.0
    assert irad.grad(cond_both, argnums=(0, 1))(2.0, 1.0) == (1.0, 2.0)
    assert irad.grad(cond_both, argnums=(0, 1))(1.0, 2.0) == (0.5, -0.25)
    # x == 0: the else branch (-x) is taken
    assert irad.grad(cond_abs)(0.0) == -1.0
    assert irad.value_and_grad(cond_product)(3.0) == (9.0, 6.0)
    assert irad.value_and_grad(cond_product)(-3.0) == (-9.0, 6.0)
    assert irad.value_and_grad(cond_constant_factor)(2.0, 1) == (-5.0, -2.5)


def test_conditional_is_lazy():
    # the untaken branch would divide by zero / take log(0) in plain Python
    assert irad.grad(lazy_branch)(0.0) == 1.0
    assert irad.grad(lazy_branch)(2.0) == 0.5


def lazy_branch(x):
    return math.log(x) if x > 0.0 else x


# ---------------------------------------------------------------------------
# irad.numerics helpers
# ---------------------------------------------------------------------------


def uses_sigmoid(x):
    return sigmoid(x)


def uses_softplus(x):
    return softplus(x)


def uses_logaddexp(a, b):
    return logaddexp(a, b)


def uses_numerics_module(x, y):
    return numerics.sigmoid(x * y) + irad.numerics.softplus(x - y) + numerics.logaddexp(x, y)


def uses_numerics_hypot(x, y):
    return irad_hypot(x, y) * 2.0


def logaddexp_int(x):
    return logaddexp(x, 0)


def softplus_of_int_expression(n):
    return softplus(n * 1.0)


@pytest.mark.parametrize("x", [-3.0, -0.5, 0.7, 4.0])
def test_numerics_smooth_points(x):
    s = 1.0 / (1.0 + math.exp(-x))
    assert math.isclose(check_fd(uses_sigmoid, x)[0], s * (1 - s), rel_tol=1e-12)
    assert math.isclose(check_fd(uses_softplus, x)[0], s, rel_tol=1e-12)
    ga, gb = check_fd(uses_logaddexp, x, 0.3)
    assert math.isclose(ga, 1 / (1 + math.exp(0.3 - x)), rel_tol=1e-12)
    assert math.isclose(gb, 1 / (1 + math.exp(x - 0.3)), rel_tol=1e-12)
    check_fd(uses_numerics_module, x, 0.3)
    check_fd(uses_numerics_hypot, x, 0.3)


def near(actual, expected, ulps=4):
    """Equal up to a few units in the last place (the rules round once or twice)."""
    return type(actual) is float and math.isclose(
        actual, expected, rel_tol=ulps * 2.0**-52, abs_tol=1e-300
    )


def test_numerics_at_kinks():
    assert irad.grad(uses_softplus)(0.0) == 0.5
    assert irad.grad(uses_sigmoid)(0.0) == 0.25
    for a in (1.5, 0.0, -1000.0, 1e-300):
        ga, gb = irad.grad(uses_logaddexp, argnums=(0, 1))(a, a)
        assert near(ga, 0.5) and near(gb, 0.5), (a, ga, gb)
    gx, gy = irad.grad(uses_numerics_hypot, argnums=(0, 1))(2.0, 2.0)
    assert math.isclose(gx, math.sqrt(2.0), rel_tol=1e-14)
    assert math.isclose(gy, math.sqrt(2.0), rel_tol=1e-14)


def test_numerics_kink_with_int_argument():
    # logaddexp(x, 0) is smooth; d/dx at x = 0 is 0.5 whatever the type of the 0
    assert irad.grad(logaddexp_int)(0.0) == 0.5
    assert math.isclose(irad.grad(logaddexp_int)(0.7), 1 / (1 + math.exp(-0.7)), rel_tol=1e-12)


def test_numerics_extreme_inputs():
    assert irad.grad(uses_softplus)(1000.0) == 1.0
    assert irad.grad(uses_softplus)(-1000.0) == 0.0
    assert irad.grad(uses_sigmoid)(-1000.0) == 0.0
    assert irad.grad(uses_sigmoid)(1000.0) == 0.0
    assert irad.value_and_grad(uses_softplus)(1000.0) == (1000.0, 1.0)
    assert irad.value_and_grad(uses_sigmoid)(-1000.0) == (0.0, 0.0)
    assert irad.grad(uses_logaddexp, argnums=(0, 1))(1000.0, 0.0) == (1.0, 0.0)
    assert irad.grad(uses_logaddexp, argnums=(0, 1))(0.0, 1000.0) == (0.0, 1.0)
    value, (ga, gb) = irad.value_and_grad(uses_logaddexp, argnums=(0, 1))(1000.0, 1000.0)
    assert math.isclose(value, 1000.0 + math.log(2.0), rel_tol=1e-15)
    assert near(ga, 0.5) and near(gb, 0.5), (ga, gb)
    value, (gx, gy) = irad.value_and_grad(uses_numerics_hypot, argnums=(0, 1))(3e200, 4e200)
    assert math.isclose(value, 1e201, rel_tol=1e-15)
    assert math.isclose(gx, 1.2, rel_tol=1e-14) and math.isclose(gy, 1.6, rel_tol=1e-14)
    value, (gx, gy) = irad.value_and_grad(f_hypot, argnums=(0, 1))(3e-200, 4e-200)
    assert math.isclose(value, 5e-200, rel_tol=1e-15)
    assert math.isclose(gx, 0.6, rel_tol=1e-14) and math.isclose(gy, 0.8, rel_tol=1e-14)


def softplus_of_folded(x):
    return softplus(x * 1.0)


def hypot_of_folded(x):
    return math.hypot(x, 0.5 + 2.0)


def logaddexp_of_folded(x):
    return logaddexp(-0.75, x)


@pytest.mark.parametrize(
    "f,expected",
    [
        (softplus_of_folded, 1 / (1 + math.exp(-0.7))),
        (hypot_of_folded, 0.7 / math.hypot(0.7, 2.5)),
        (logaddexp_of_folded, 1 / (1 + math.exp(-0.75 - 0.7))),
    ],
    ids=["softplus(x*1.0)", "hypot(x,0.5+2.0)", "logaddexp(-0.75,x)"],
)
def test_numerics_rule_with_foldable_arguments(f, expected):
    # an argument the optimiser folds (x * 1.0 -> x, 0.5 + 2.0 -> 2.5, -(0.75) -> -0.75)
    g = irad.grad(f)(0.7)
    assert math.isclose(g, expected, rel_tol=1e-13), (g, expected)


def test_numerics_of_int_argument_is_not_differentiated():
    irad.lower(softplus_of_int_expression, 2).verify()
    out, pullback = irad.vjp(softplus_of_int_expression, 2)
    assert math.isclose(out, softplus(2.0), rel_tol=1e-15)
    assert pullback(1.0) == (None,)


# ---------------------------------------------------------------------------
# IEEE edge cases: inf/nan instead of Python exceptions
# ---------------------------------------------------------------------------


def reciprocal(x):
    return 1.0 / x


def ieee_mix(x):
    return math.exp(x) + math.sqrt(x)


def test_log_at_zero():
    value, g = irad.value_and_grad(f_log)(0.0)
    assert value == -math.inf and g == math.inf
    assert type(g) is float and type(value) is float


def test_sqrt_at_zero():
    assert irad.grad(f_sqrt)(0.0) == math.inf


def test_reciprocal_at_zero():
    value, g = irad.value_and_grad(reciprocal)(0.0)
    assert value == math.inf and g == -math.inf


def test_exp_overflow():
    value, g = irad.value_and_grad(f_exp)(1000.0)
    assert value == math.inf and g == math.inf


def test_log_of_negative_is_nan():
    value, _ = irad.value_and_grad(f_log)(-1.0)
    assert math.isnan(value)


def test_sqrt_of_negative_is_nan():
    value, g = irad.value_and_grad(ieee_mix)(-1.0)
    assert math.isnan(value) and math.isnan(g)


def test_asin_outside_domain_is_nan():
    value, g = irad.value_and_grad(f_asin)(2.0)
    assert math.isnan(value) and math.isnan(g)


def test_inf_and_nan_arguments():
    value, g = irad.value_and_grad(f_sin)(math.inf)
    assert math.isnan(value) and math.isnan(g)
    value, g = irad.value_and_grad(p_cube)(math.nan)
    assert math.isnan(value) and math.isnan(g)


def test_ieee_fallback_keeps_working_after_exception():
    # the same compiled function, called normally after an IEEE fallback
    assert irad.grad(f_log)(0.0) == math.inf
    assert irad.grad(f_log)(2.0) == 0.5


# ---------------------------------------------------------------------------
# Inactive and unused arguments
# ---------------------------------------------------------------------------


def no_influence(x, y):
    z = y * 2.0 + math.sin(y)
    w = z * 0.0 + 1.0 if y > 100.0 else 2.0
    return x * 3.0 + w + float(int(y)) + math.floor(y) + (x if y > 0.0 else 2.0 * x)


def unused_argument(x, y, z):
    return x * x


def only_constant(x):
    return 4.5


def only_int_output_of_float(x):
    return float(math.floor(x))


def test_no_influence_is_exactly_zero():
    gx, gy = irad.grad(no_influence, argnums=(0, 1))(0.7, 1.3)
    assert gx == 4.0
    assert gy == 0.0 and type(gy) is float
    gx, gy = irad.grad(no_influence, argnums=(0, 1))(0.7, -1.3)
    assert gx == 5.0 and gy == 0.0


def test_unused_argument():
    assert irad.grad(unused_argument, argnums=(0, 1, 2))(1.5, 2.0, 3.0) == (3.0, 0.0, 0.0)
    g = irad.grad(unused_argument, argnums=2)(1.5, 2.0, 3.0)
    assert g == 0.0 and type(g) is float
    assert irad.value_and_grad(unused_argument, argnums=1)(1.5, 2.0, 3.0) == (2.25, 0.0)


def test_constant_function():
    g = irad.grad(only_constant)(1.5)
    assert g == 0.0 and type(g) is float
    assert irad.grad(only_int_output_of_float)(1.5) == 0.0


# ---------------------------------------------------------------------------
# API: argnums, value_and_grad, vjp, return types
# ---------------------------------------------------------------------------


def api_f(x, y, n, z):
    return x * y * n + math.sin(z) * x + z


def test_argnums_int_tuple_negative():
    args = (0.5, -1.5, 3, 2.0)
    gx = irad.grad(api_f)(*args)
    assert type(gx) is float and math.isclose(gx, -1.5 * 3 + math.sin(2.0), rel_tol=1e-14)
    assert irad.grad(api_f, argnums=0)(*args) == gx
    gz = irad.grad(api_f, argnums=-1)(*args)
    assert math.isclose(gz, math.cos(2.0) * 0.5 + 1.0, rel_tol=1e-14)
    gy = irad.grad(api_f, argnums=1)(*args)
    assert gy == 0.5 * 3
    both = irad.grad(api_f, argnums=(3, 0))(*args)
    assert type(both) is tuple and both == (gz, gx)
    assert irad.grad(api_f, argnums=(-1, -3))(*args) == (gz, gy)
    single = irad.grad(api_f, argnums=(1,))(*args)
    assert type(single) is tuple and single == (gy,)
    assert irad.grad(api_f, argnums=[0, 1])(*args) == (gx, gy)


def test_value_and_grad_types():
    args = (0.5, -1.5, 3, 2.0)
    value, g = irad.value_and_grad(api_f)(*args)
    assert type(value) is float and type(g) is float
    assert value == api_f(*args)
    value, gs = irad.value_and_grad(api_f, argnums=(0, 1, 3))(*args)
    assert type(gs) is tuple and all(type(g) is float for g in gs)
    assert gs == irad.grad(api_f, argnums=(0, 1, 3))(*args)


def test_numpy_float64_arguments():
    import numpy as np

    gx, gz = irad.grad(api_f, argnums=(0, 3))(np.float64(0.5), -1.5, 3, np.float64(2.0))
    assert type(gx) is float and type(gz) is float
    assert (gx, gz) == irad.grad(api_f, argnums=(0, 3))(0.5, -1.5, 3, 2.0)


def test_grad_reused_for_several_points_and_types():
    g = irad.grad(api_f, argnums=(0, 3))
    for x in (-1.0, 0.0, 2.5):
        for n in (1, -2):
            gx, gz = g(x, 0.25, n, 1.0)
            assert math.isclose(gx, 0.25 * n + math.sin(1.0), rel_tol=1e-14)
            assert math.isclose(gz, math.cos(1.0) * x + 1.0, rel_tol=1e-14, abs_tol=1e-15)
    # an int where a float was before gives a new specialisation
    assert irad.grad(api_f, argnums=0)(0.5, 2, 3, 2.0) == 6 + math.sin(2.0)


def vjp_three(x, y, n):
    return x * y, math.sin(x) * n, x + y * y


def vjp_single(x, y):
    return x * math.exp(y)


def vjp_with_int_output(x, n):
    return x * n, n * 2


def test_vjp_tuple_outputs():
    x, y, n = 0.7, -1.3, 3
    out, pullback = irad.vjp(vjp_three, x, y, n)
    assert type(out) is tuple and out == vjp_three(x, y, n)
    gx, gy, gn = pullback((1.0, 0.0, 0.0))
    assert (gx, gy, gn) == (y, x, None)
    gx, gy, gn = pullback((0.0, 1.0, 0.0))
    assert math.isclose(gx, math.cos(x) * n, rel_tol=1e-14) and gy == 0.0 and gn is None
    gx, gy, gn = pullback((0.0, 0.0, 1.0))
    assert gx == 1.0 and gy == 2 * y
    cts = (2.0, -0.5, 1.5)
    gx, gy, gn = pullback(cts)
    assert math.isclose(gx, 2.0 * y - 0.5 * math.cos(x) * n + 1.5, rel_tol=1e-14)
    assert math.isclose(gy, 2.0 * x + 1.5 * 2 * y, rel_tol=1e-14)
    assert type(gx) is float and type(gy) is float
    # the pullback can be called again with a list, and with int cotangents
    assert pullback([1, 0, 0]) == (y, x, None)


def test_vjp_single_output_matches_grad():
    out, pullback = irad.vjp(vjp_single, 0.7, -1.3)
    assert out == vjp_single(0.7, -1.3) and type(out) is float
    cts = pullback(1.0)
    assert type(cts) is tuple and len(cts) == 2
    assert cts == irad.grad(vjp_single, argnums=(0, 1))(0.7, -1.3)
    doubled = pullback(2.0)
    assert doubled == (2 * cts[0], 2 * cts[1])


def test_vjp_with_int_output():
    out, pullback = irad.vjp(vjp_with_int_output, 0.7, 3)
    assert out == (2.1, 6) or out == vjp_with_int_output(0.7, 3)
    assert pullback((1.0, 0)) == (3.0, None)
    assert pullback((1.0, None)) == (3.0, None)


def test_vjp_of_helper_with_tuple_output():
    out, pullback = irad.vjp(polar, 2.0, 0.5)
    assert out == polar(2.0, 0.5)
    gr, gt = pullback((0.0, 1.0))
    assert math.isclose(gr, math.sin(0.5), rel_tol=1e-15)
    assert math.isclose(gt, 2.0 * math.cos(0.5), rel_tol=1e-15)


def test_lower_returns_modules():
    primal = irad.lower(api_f, 0.5, -1.5, 3, 2.0)
    assert primal.ops.first is not None
    primal.verify()
    diff = irad.grad(api_f, argnums=(0, 3)).lower(0.5, -1.5, 3, 2.0)
    diff.verify()
    names = {op.sym_name.data for op in diff.ops}
    assert any(name.endswith(".grad") for name in names), names


# ---------------------------------------------------------------------------
# Long expressions
# ---------------------------------------------------------------------------


def _long_source() -> str:
    """A function of (x, y, z) with ~200 arithmetic/math operations."""
    lines = ["import math", "", "", "def long_expr(x, y, z):", "    s = x"]
    terms = [
        "s * 0.9 + math.sin(y) * 0.1",
        "s - z * 0.05 + math.cos(s) * 0.2",
        "s + math.tanh(x * s) * 0.3 - y * 0.01",
        "s * (1.0 + 0.01 * z) + math.exp(-s * s) * 0.1",
        "s + math.log(1.0 + s * s) * 0.05 + x * y * 0.02",
        "s / (1.0 + 0.1 * y * y) + math.atan(z - s) * 0.1",
    ]
    for i in range(30):
        lines.append(f"    s = {terms[i % len(terms)]}")
    big = " + ".join(f"{(i % 7) + 1}.0 * x * y - z / {i + 2}.0" for i in range(12))
    lines.append(f"    return s + ({big}) * 0.01")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def long_module(tmp_path_factory):
    path = tmp_path_factory.mktemp("generated") / "irad_generated_long.py"
    path.write_text(_long_source())
    spec = importlib.util.spec_from_file_location("irad_generated_long", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


def test_long_expression(long_module):
    f = long_module.long_expr
    module = irad.lower(f, 0.3, -0.7, 1.1)
    n_ops = sum(1 for _ in module.walk())
    assert n_ops > 200, n_ops
    check_fd(f, 0.3, -0.7, 1.1)
    check_fd(f, -1.2, 0.4, 0.2)


def long_inline(x, y):
    a = x * y + x - y * 0.5 + math.sin(x * 0.3) * math.cos(y * 0.2) - x / (2.0 + y * y)
    a = a * 0.5 + math.exp(-a * a) * x + y * a * 0.25 - math.tanh(a + x) + math.atan(a * y) * 0.1
    b = a * a * 0.1 + x * x * 0.2 - y * y * 0.3 + a * x * y * 0.01 + math.log1p(a * a) - math.sqrt(1.0 + x * x)
    c = (a + b) * (a - b) / (1.0 + a * a + b * b) + math.sin(a) * math.sin(b) * math.sin(x) * math.sin(y)
    d = c * c + c * a + c * b + c * x + c * y + a * b * x * y * 0.001 + (x - y) ** 3 * 0.01 + (a + 1.5) ** -2
    e = d / (2.0 + math.cos(d)) + math.hypot(a, b) + max(a, b) * 0.1 + min(c, d) * 0.1 + abs(a - 2.0 * b)
    return e * 0.5 + d * 0.25 + c * 0.125 + b * 0.0625 + a * 0.03125 + x * y * 0.015625 - e * d * 0.001


def test_long_inline_expression():
    check_fd(long_inline, 0.3, -0.7)
    check_fd(long_inline, 1.1, 0.45)
