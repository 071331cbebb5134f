"""Run-time checks on int `//` and `%` by zero and on float -> int conversions.

Without them the Python backend raises a raw ZeroDivisionError / OverflowError
/ ValueError from generated code, and native code gets SIGFPE or poison. Both
backends raise the same RuntimeCheckError, naming the line; natively the
process carries on (tests/backends/test_native_checks.py).
"""

import math

import pytest

import irad
from irad.base.errors import RuntimeCheckError
from tests.frontend.test_joins import BACKENDS
INF, NAN = float("inf"), float("nan")


def floordiv(x, n, d):
    return x * (n // d)


def mod(x, n, d):
    return x * (n % d)


def by_zero(x, n):
    return x * (n // (n - n))


def floor(x, y):
    return y * math.floor(x)


def ceil(x, y):
    return y * math.ceil(x)


def trunc(x, y):
    return y * math.trunc(x)


def to_int(x, y):
    return y * int(x)


def line_of(fn, text):
    import inspect

    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


DIVISION = [(floordiv, lambda n, d: n // d), (mod, lambda n, d: n % d)]
CONVERSIONS = [(floor, math.floor), (ceil, math.ceil), (trunc, math.trunc), (to_int, int)]
INTS = [(7, 3), (-7, 3), (7, -3), (-7, -3), (0, -5), (6, 3), (2**62, -7)]
FLOATS = [2.5, -2.5, 0.0, -0.0, 1e18, -1e18, 2.0**63 - 1024, -(2.0**63), 9.2e18]


@pytest.mark.parametrize("fn, op", DIVISION)
@pytest.mark.parametrize("backend", BACKENDS)
def test_division_values(fn, op, backend):
    g = irad.grad(fn, backend=backend)
    for n, d in INTS:
        assert g(1.0, n, d) == float(op(n, d)), (n, d)


@pytest.mark.parametrize("fn, op", CONVERSIONS)
@pytest.mark.parametrize("backend", BACKENDS)
def test_conversion_values(fn, op, backend):
    g = irad.grad(fn, argnums=1, backend=backend)
    for x in FLOATS:
        assert g(x, 1.0) == float(op(x)), x


@pytest.mark.parametrize("fn", [floordiv, mod])
@pytest.mark.parametrize("backend", BACKENDS)
def test_division_by_zero_is_a_checked_error(fn, backend):
    text = "n // d" if fn is floordiv else "n % d"
    g = irad.grad(fn, backend=backend)
    with pytest.raises(RuntimeCheckError, match=rf"test_runtime_checks.py:{line_of(fn, text)}:\d+: "
                       "integer division or modulo by zero"):
        g(1.0, 3, 0)
    assert g(2.0, -7, 2) == float(dict(DIVISION)[fn](-7, 2))  # and the next call runs


@pytest.mark.parametrize("backend", BACKENDS)
def test_division_by_computed_zero(backend):
    with pytest.raises(RuntimeCheckError, match=rf":{line_of(by_zero, '//')}:\d+: integer division"):
        irad.grad(by_zero, backend=backend)(1.0, 3)


@pytest.mark.parametrize("fn, x", [(floor, INF), (floor, NAN), (floor, -INF), (ceil, NAN),
                                   (trunc, INF), (to_int, 1e300), (to_int, 2.0**63), (to_int, NAN)])
@pytest.mark.parametrize("backend", BACKENDS)
def test_conversion_is_a_checked_error(fn, x, backend):
    g = irad.grad(fn, argnums=1, backend=backend)
    with pytest.raises(RuntimeCheckError, match=rf"test_runtime_checks.py:{line_of(fn, 'y *')}:\d+: "
                       "cannot convert float infinity or NaN to integer"):
        g(x, 1.0)
    assert g(-2.5, 1.0) == float(dict(CONVERSIONS)[fn](-2.5))  # and the next call runs


def test_constant_nonzero_divisor_has_no_check():
    from irad.ir.types import F64, I64
    from irad.pipeline import lowered

    module, *_ = lowered(lambda_free_half, (F64, I64))
    assert "cf.assert" not in str(module)


def lambda_free_half(x, n):
    return x * (n // 2) + x * (n % -3)
