"""Run-time checks on int `//` and `%` by zero and on float -> int conversions.

Without them the Python backend raises a raw ZeroDivisionError / OverflowError
/ ValueError from generated code, and native code gets SIGFPE or poison.
"""

import math
import subprocess
import sys
import textwrap

import pytest

import irad
from irad.backends.native import unavailable_reason
from irad.errors import RuntimeCheckError

NATIVE_MISSING = unavailable_reason()
native = pytest.mark.skipif(NATIVE_MISSING is not None, reason=str(NATIVE_MISSING))
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
@pytest.mark.parametrize("backend", ["python", pytest.param("native", marks=[pytest.mark.native, native])])
def test_division_values(fn, op, backend):
    g = irad.grad(fn, backend=backend)
    for n, d in INTS:
        assert g(1.0, n, d) == float(op(n, d)), (n, d)


@pytest.mark.parametrize("fn, op", CONVERSIONS)
@pytest.mark.parametrize("backend", ["python", pytest.param("native", marks=[pytest.mark.native, native])])
def test_conversion_values(fn, op, backend):
    g = irad.grad(fn, argnums=1, backend=backend)
    for x in FLOATS:
        assert g(x, 1.0) == float(op(x)), x


@pytest.mark.parametrize("fn", [floordiv, mod])
def test_division_by_zero_is_a_checked_error(fn):
    text = "n // d" if fn is floordiv else "n % d"
    with pytest.raises(RuntimeCheckError, match=rf"test_runtime_checks.py:{line_of(fn, text)}:\d+: "
                       "integer division or modulo by zero"):
        irad.grad(fn)(1.0, 3, 0)


def test_division_by_computed_zero():
    with pytest.raises(RuntimeCheckError, match=rf":{line_of(by_zero, '//')}:\d+: integer division"):
        irad.grad(by_zero)(1.0, 3)


@pytest.mark.parametrize("fn, x", [(floor, INF), (floor, NAN), (floor, -INF), (ceil, NAN),
                                   (trunc, INF), (to_int, 1e300), (to_int, 2.0**63), (to_int, NAN)])
def test_conversion_is_a_checked_error(fn, x):
    with pytest.raises(RuntimeCheckError, match=rf"test_runtime_checks.py:{line_of(fn, 'y *')}:\d+: "
                       "cannot convert float infinity or NaN to integer"):
        irad.grad(fn, argnums=1)(x, 1.0)


def test_constant_nonzero_divisor_has_no_check():
    from irad.ir.types import F64, I64
    from irad.pipeline import lowered

    module, *_ = lowered(lambda_free_half, (F64, I64))
    assert "cf.assert" not in str(module)


def lambda_free_half(x, n):
    return x * (n // 2) + x * (n % -3)


PROGRAM = """
import math, sys
import irad

def f(x, n):
    return x * (n // (n - n))

def g(x, y):
    return y * math.floor(x)

if sys.argv[1] == "div":
    irad.grad(f, backend="native")(1.0, 3)
else:
    irad.grad(g, argnums=1, backend="native")(float(sys.argv[1]), 1.0)
print("no error")
"""


@pytest.mark.native
@native
@pytest.mark.parametrize("case, line, message", [
    ("div", 6, "integer division or modulo by zero"),
    ("inf", 9, "cannot convert float infinity or NaN to integer"),
    ("nan", 9, "cannot convert float infinity or NaN to integer"),
    ("1e300", 9, "cannot convert float infinity or NaN to integer"),
])
def test_native_failed_check_aborts_with_the_message(tmp_path, case, line, message):
    # A failed cf.assert aborts the native process (after printing the message),
    # so the failing call runs in a subprocess.
    program = tmp_path / "prog.py"
    program.write_text(textwrap.dedent(PROGRAM))
    run = subprocess.run(
        [sys.executable, "-c", "import runpy, sys; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')",
         str(program), case],
        capture_output=True, text=True, timeout=300,
    )
    output = run.stdout + run.stderr
    assert run.returncode != 0, output
    assert "no error" not in output
    assert f"prog.py:{line}:" in output and message in output, output
