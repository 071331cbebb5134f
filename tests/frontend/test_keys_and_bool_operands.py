"""min/max/sorted with key= (irad/frontend/iteration.py) and `and`/`or` on
numbers known only at run time (irad/frontend/expressions.py), as Python
evaluates them: values against Python's, gradients against central
differences; where the result's type would depend on the data, refused with
the rewrite."""

import numpy as np
import pytest

import irad
from tests.reference import central_difference

X = np.array([0.3, -1.2, 2.0, 0.0, -2.0])


def sorted_by_name(x):
    params = {"b": x[0], "a": x[1], "c": x[2]}
    s = 0.0
    for name, v in sorted(params.items(), key=lambda kv: kv[0], reverse=True):
        s = 2.0 * s + v
    return s


def sorted_by_known_field(x):
    layers = [("w2", 2, x[0]), ("w1", 1, x[1]), ("w3", 3, x[2]), ("w0", 1, x[3])]  # stable on the tie
    s = 0.0
    for name, order, v in sorted(layers, key=lambda t: t[1]):
        s = 3.0 * s + v
    return s


def sorted_by_a_def(x):
    def order(kv):
        return -len(kv[0])
    s = 0.0
    for k, v in sorted({"aaa": x[0], "a": x[1], "aa": x[2]}.items(), key=order):
        s = 2.0 * s + v
    return s


def widest_name(x):
    return max({"a": x[0], "bbb": x[1], "cc": x[2], "ddd": x[3]}.items(), key=lambda kv: len(kv[0]))[1]


def max_by_abs(x):
    return max([x[0], x[1], x[2]], key=abs) + min(x[1], x[3], x[4], key=abs)


def nearest_to_one(x):
    return min([x[0], x[1], x[2], x[4]], key=lambda v: (v - 1.0) ** 2)


def ties_keep_the_first(x):
    return max([x[2], x[4], x[0]], key=abs) * 10.0 + min([x[4], x[2]], key=abs)  # |2.0| == |-2.0|


def default_when_empty(x):
    return x[0] + max([], default=0.5) + min((v for v in ()), key=abs, default=1.5)


CASES = [sorted_by_name, sorted_by_known_field, sorted_by_a_def, widest_name, max_by_abs, nearest_to_one,
         default_when_empty]


@pytest.mark.parametrize("f", CASES, ids=[f.__name__ for f in CASES])
def test_key_functions_as_python(f):
    value, g = irad.value_and_grad(f)(X)
    assert value == pytest.approx(f(X), rel=1e-12)
    np.testing.assert_allclose(g, central_difference(f, (X,), 0), rtol=1e-6, atol=1e-9)


def test_ties_keep_the_first_item_as_python():
    value, g = irad.value_and_grad(ties_keep_the_first)(X)
    assert value == ties_keep_the_first(X)
    np.testing.assert_array_equal(g, [0.0, 0.0, 10.0, 0.0, 1.0])  # the 2.0 of the max, the -2.0 of the min


def max_of_arrays_by_sum(x):
    return np.sum(max([x, 2.0 * x], key=lambda v: np.sum(v)))


def sorted_by_data(x):
    return sum(sorted([x[0], x[1]], key=abs))


@pytest.mark.parametrize("f, message, hint", [
    (max_of_arrays_by_sum, r"max\(\) with a key= known only at run time, of items that are not numbers",
     "np.argmax"),
    (sorted_by_data, r"sorted\(\) would compare values known only at run time", "np.argsort"),
])
def test_data_dependent_choices_are_refused(f, message, hint):
    with pytest.raises(irad.UnsupportedError, match=message) as info:
        irad.grad(f)(X)
    assert "test_keys_and_bool_operands.py:" in str(info.value) and hint in str(info.value)


# ---- and/or on run-time numbers --------------------------------------------------------------
def or_default(x):
    return (x[0] or 1.0) * 2.0 + (x[3] or 5.0) * 3.0  # x[3] == 0: the default


def and_chain(x):
    return (x[0] and x[2]) + (x[3] and x[2]) * 7.0 + (x[0] and x[1] and x[2]) * 11.0


def or_chain(x):
    return (x[3] or x[3] * 2.0 or x[1]) + (x[3] or 0.0)


def ints_or(x):
    n = int(np.argmax(x))  # 2, run-time
    m = int(np.argmin(np.abs(x)))  # 3
    return x[0] * ((m - 3) or n) + x[1] * (n and m)


def nan_is_truthy(x):
    v = x[0] / x[3] * 0.0  # 0/0 * 0: NaN
    return np.isnan(v or 1.0) * x[1]


def truth_values(x):
    v = x[0] / x[3] * 0.0  # NaN
    return (bool(x[0]) + bool(x[3]) + bool(v) + bool(x[0] > 0) + bool(3)) * x[1]  # Python's bools count


BOOL_CASES = [or_default, and_chain, or_chain, ints_or, nan_is_truthy, truth_values]


@pytest.mark.parametrize("f", BOOL_CASES, ids=[f.__name__ for f in BOOL_CASES])
def test_and_or_give_the_operand_that_decides(f):
    with np.errstate(divide="ignore", invalid="ignore"):
        assert irad.value_and_grad(f)(X)[0] == pytest.approx(f(X), rel=1e-12)
    smooth = X + np.array([0.0, 0.0, 0.0, 0.7, 0.0])  # no operand at 0, where the choice jumps
    if f not in (nan_is_truthy, truth_values):
        np.testing.assert_allclose(irad.grad(f)(smooth), central_difference(f, (smooth,), 0), rtol=1e-6, atol=1e-9)


def test_the_chosen_operand_gets_the_derivative():
    # at x[3] == 0, `x[3] or 5.0` is the constant and `x[3] and x[2]` is x[3]
    np.testing.assert_array_equal(irad.grad(or_default)(X), [2.0, 0.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(irad.grad(and_chain)(X), [0.0, 0.0, 12.0, 7.0, 0.0])


def float_or_int(x):
    return (x[0] or 1) * 2.0


def bool_and_float(x):
    return ((x[0] > 0) and x[2]) * 2.0


def bool_or_float_expression(x):
    return (False if x[0] > 0 else x[0]) * 2.0


@pytest.mark.parametrize("f, message, hint", [
    (float_or_int, r"`or` of float \(f64\) and int \(i64\) known only at run time", "x[0] if x[0] != 0 else 1"),
    (bool_and_float, r"`and` of bool \(i1\) and float \(f64\)", "x[2] if (x[0] > 0) else 0"),
    (bool_or_float_expression, r"the two values of this conditional expression are a bool and float", "else 0.0"),
])
def test_types_that_depend_on_the_data_are_refused(f, message, hint):
    with pytest.raises(irad.UnsupportedError, match=message) as info:
        irad.grad(f)(X)
    assert "test_keys_and_bool_operands.py:" in str(info.value) and hint in str(info.value)


@pytest.mark.native
def test_natively():
    def f(x):
        return or_default(x) + max_by_abs(x) + and_chain(x)
    value, g = irad.value_and_grad(f, backend="native")(X)
    assert value == pytest.approx(f(X), rel=1e-12)
    np.testing.assert_array_equal(g, [2.0, 0.0, 13.0, 8.0, 0.0])  # the chosen operands' (x[3] == 0 chosen)
    smooth = X + np.array([0.0, 0.0, 0.0, 0.7, 0.0])
    np.testing.assert_allclose(irad.grad(f, backend="native")(smooth), central_difference(f, (smooth,), 0),
                               rtol=1e-6, atol=1e-9)
