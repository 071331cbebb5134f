"""`and`/`or` evaluate an operand only where the run-time operands before it
did not decide, as Python does: code there that may raise (an index's bounds,
a helper's assert, a `raise`) runs only then (`i < n and x[i] > 0`)."""

import numpy as np
import pytest

import irad
from irad.backends.native.compile import unavailable_reason
from irad.base.errors import RuntimeCheckError, UnsupportedError

NATIVE_MISSING = unavailable_reason()
BACKENDS = ["python", pytest.param("native", marks=[pytest.mark.native, pytest.mark.skipif(
    NATIVE_MISSING is not None, reason=str(NATIVE_MISSING))])]


def guarded_index(x, i):
    s = 0.0
    if i < x.shape[0] and x[i] > 0:
        s = x[i] ** 2
    return s + x[0]


def guarded_or(x, i):
    ok = i >= x.shape[0] or x[i] > 0
    return x[0] * ok


def leading_positives(x):
    i = 0
    while i < x.shape[0] and x[i] > 0:
        i += 1
    return x[0] * i


def positive(v):
    assert v > 0, "v must be positive"
    return np.log(v)


def checked_helper(x, k):
    return x[0] * (k > 0 and positive(x[k]) > 0.1)


def number_or_fallback(x, i):
    k = float(i < 2)
    return (k and x[i] * k) or x[0] * 3.0   # x[i] is read only where i < 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_index_guarded_by_and_or(backend):
    x = np.array([1.0, -2.0, 3.0])
    for i in range(5):
        g = irad.grad(guarded_index, backend=backend)(x, i)
        expected = np.zeros(3)
        expected[0] = 1.0
        if i < 3 and x[i] > 0:
            expected[i] += 2 * x[i]
        assert np.allclose(g, expected)
        assert irad.grad(guarded_or, backend=backend)(x, i)[0] == float(guarded_or(np.ones(3), i) != 0) * (
            1.0 if guarded_or(x, i) else 0.0)
    for y, n in ((np.array([1.0, 2.0, 3.0]), 3), (np.array([1.0, -2.0, 3.0]), 1), (np.array([-1.0, 2.0, 3.0]), 0)):
        assert np.allclose(irad.grad(leading_positives, backend=backend)(y), [n, 0, 0])


def test_a_helper_check_and_a_number_chosen():
    x = np.array([0.5, 2.0, -1.0])
    g = irad.grad(checked_helper)
    assert np.allclose(g(x, 0), 0.0)            # k > 0 is false: positive(x[0]) is not called
    assert np.allclose(g(x, 1), [1.0, 0, 0])    # log(2) > 0.1
    with pytest.raises(RuntimeCheckError, match="v must be positive"):
        g(x, 2)                                 # called, and its assert fails, as in Python
    for i in range(4):
        value, grad = irad.value_and_grad(number_or_fallback)(x, i)
        assert value == number_or_fallback(x, i)
        numeric = [(number_or_fallback(x + e, i) - number_or_fallback(x - e, i)) / 2e-6 for e in np.eye(3) * 1e-6]
        assert np.allclose(grad, numeric)


def raising_array_operand(x, i):
    v = (i < 3 and x[i:i + 1]) or x
    return np.sum(v)


def test_an_operand_that_may_raise_and_is_an_array_is_refused():
    with pytest.raises(UnsupportedError, match="may raise, and is not a number or a bool"):
        irad.grad(raising_array_operand)(np.ones(3), 1)
