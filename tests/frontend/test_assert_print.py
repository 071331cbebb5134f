"""`assert` is a run-time check naming its line; `print` prints on the Python
backend as Python would, and the native backend drops it with one warning
naming the line."""

import inspect
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import irad
from irad.backends.native.compile import unavailable_reason
from irad.base.errors import IradWarning, RuntimeCheckError
from tests.reference import check_against_numpy, lowered_text

NATIVE_MISSING = unavailable_reason()
native = pytest.mark.skipif(NATIVE_MISSING is not None, reason=str(NATIVE_MISSING))


def line_of(f, text: str) -> int:
    lines, first = inspect.getsourcelines(f)
    return first + next(i for i, line in enumerate(lines) if text in line)


# ---- assert ----------------------------------------------------------------------------------
def positive_log(x):
    assert x > 0.0, "x must be positive"
    return np.log(x) * x


def checked_rows(X, k):
    assert X[k, 0] < 10.0, f"row {k} of a {X.shape} matrix starts too high"
    return np.sum(X[k] ** 2)


def no_message(x, y):
    assert x * y >= 0.0
    return x * y


def unreachable_branch(x):
    if x > 0.0:
        return x * x
    else:
        assert False, "negative input"


def static_assert(x):
    assert x.ndim == 1, "a vector"
    return np.sum(x)


@pytest.mark.parametrize("backend", ["python", pytest.param("native", marks=[pytest.mark.native, native])])
def test_passing_asserts_change_nothing(backend):
    check_against_numpy(positive_log, (1.7,), backend)
    check_against_numpy(checked_rows, (np.arange(6.0).reshape(3, 2), 2), backend)
    check_against_numpy(no_message, (0.5, 2.0), backend)
    check_against_numpy(unreachable_branch, (0.5,), backend)


@pytest.mark.parametrize("backend", ["python", pytest.param("native", marks=[pytest.mark.native, native])])
@pytest.mark.parametrize("f, args, message", [
    (positive_log, (-1.0,), "assertion failed: x must be positive"),
    (checked_rows, (np.full((3, 2), 20.0), 1), r"assertion failed: row \{k\} of a \(3, 2\) matrix starts too high"),
    (no_message, (0.5, -2.0), r"assertion failed: x \* y >= 0.0"),
    (unreachable_branch, (-0.5,), "assertion failed: negative input"),
])
def test_failing_assert_raises_naming_the_line(f, args, message, backend):
    line = line_of(f, "assert")
    for run in (lambda: irad.grad(f, backend=backend)(*args), lambda: irad.value_and_grad(f, backend=backend)(*args)):
        with pytest.raises(RuntimeCheckError, match=rf"test_assert_print\.py:{line}:\d+: {message}") as info:
            run()
        # Python's class too, so `except AssertionError` around the call catches it (it was a plain
        # RuntimeCheckError: found by tests/fuzz/python_programs.py)
        assert isinstance(info.value, AssertionError)


def test_known_assert_leaves_no_check():
    assert "cf.assert" not in lowered_text(static_assert, np.ones(3))
    assert "cf.assert" in lowered_text(positive_log, 1.0)


PROGRAM = """
import irad

def f(x):
    assert x > 0.0, "x must be positive"
    return x * x

print(irad.grad(f)(-1.0))
print("no error")
"""


@pytest.mark.parametrize("flags, fails", [([], True), (["-O"], False)])  # python -O drops asserts
def test_assert_under_python_optimize(tmp_path, flags, fails):
    program = tmp_path / "prog.py"
    program.write_text(textwrap.dedent(PROGRAM))
    run = subprocess.run([sys.executable, *flags, str(program)], capture_output=True, text=True, timeout=300)
    output = run.stdout + run.stderr
    if fails:
        assert run.returncode != 0 and "no error" not in output, output
        assert "prog.py:5:5: assertion failed: x must be positive" in output, output
    else:  # and so does irad: the gradient of x * x at -1
        assert run.returncode == 0 and "-2.0\nno error" in output, output


# ---- print --------------------------------------------------------------------------------
def prints(x, v, n, flag):
    print("x =", x, "n =", n, flag)
    print(v, (x, n), sep=" | ", end="!\n")
    print(x.shape if False else v.shape, None)
    return x * np.sum(v)


def prints_in_a_loop(x):
    s = 0.0
    for i in range(3):
        s = s + x * i
        print(i, s)
    return s


def test_print_matches_python(capsys):
    args = (1.25, np.array([0.5, -1.0, 2.0]), 7, True)
    prints(*args)
    expected = capsys.readouterr().out
    value, grads = irad.value_and_grad(prints, argnums=(0, 1))(*args)
    assert capsys.readouterr().out == expected  # once per call, as Python would
    assert value == prints(*args)


def test_print_in_a_loop_prints_every_iteration(capsys):
    prints_in_a_loop(0.5)
    expected = capsys.readouterr().out
    irad.grad(prints_in_a_loop)(0.5)
    assert capsys.readouterr().out == expected
    assert expected.count("\n") == 3


@pytest.mark.native
@native
def test_native_backend_drops_print_with_one_warning(capsys):
    with pytest.warns(IradWarning) as record:
        value, grad = irad.value_and_grad(prints_in_a_loop, backend="native")(0.5)
    messages = [str(w.message) for w in record if issubclass(w.category, IradWarning)]
    line = line_of(prints_in_a_loop, "print(")
    assert len(messages) == 1, messages
    assert re.match(rf"\S*test_assert_print\.py:{line}:9: the native backend drops this print", messages[0])
    assert value == prints_in_a_loop(0.5) and grad == 3.0
    capsys.readouterr()


def prints_to_a_file(x):
    print(x, file=sys.stderr)
    return x


def test_print_to_a_file_is_refused():
    with pytest.raises(irad.UnsupportedError, match=rf"test_assert_print\.py:{line_of(prints_to_a_file, 'print(')}:5: "
                       r"print\(file=...\) is not supported"):
        irad.lower(prints_to_a_file, 1.0)
