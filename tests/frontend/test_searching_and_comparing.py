"""np.searchsorted, np.digitize, np.bincount, np.isclose/np.allclose and
np.block (irad/numpy_python.py, irad/frontend/numpy_counting.py) against
numpy's values, gradients against central differences; the calls irad cannot
give numpy's result refused by name with the rewrite (np.fft, np.bincount of
run-time values, parameter values LIMITS lists)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import irad
from tests.reference import central_difference

jax.config.update("jax_enable_x64", True)
EDGES = np.array([-1.0, 0.0, 0.5, 0.5, 2.0])
X = np.array([0.3, -1.2, 2.0, 0.5, np.nan, -3.0, 0.0])
W = np.array([0.3, -1.2, 2.5, 0.7])

# int results times the float input: a value numpy gives, and a gradient that is the int result
INT_CASES = {
    "searchsorted_left": lambda x: np.searchsorted(EDGES, x),
    "searchsorted_right": lambda x: np.searchsorted(EDGES, x, side="right"),
    "searchsorted_sorter": lambda x: np.searchsorted(EDGES[::-1], x, sorter=np.arange(4, -1, -1)),
    "searchsorted_nan_edges": lambda x: np.searchsorted(np.array([0.0, 1.0, np.nan]), x, "left"),
    "digitize": lambda x: np.digitize(x, EDGES),
    "digitize_right": lambda x: np.digitize(x, EDGES, right=True),
    "digitize_decreasing": lambda x: np.digitize(x, EDGES[::-1]),
    "digitize_decreasing_right": lambda x: np.digitize(x, EDGES[::-1], True),
    "isclose": lambda x: np.isclose(x, 0.5),
    "isclose_nan": lambda x: np.isclose(x, np.where(np.isnan(x), np.nan, x + 1e-9), equal_nan=True),
    "isclose_inf": lambda x: np.isclose(np.array([np.inf, -np.inf, np.inf, 1.0, 0.0, 1e-9, 2.0]),
                                        np.array([np.inf, np.inf, 1e308, 1.0, 1e-9, 0.0, 2.0 + 1e-5]), atol=0.0),
}


@pytest.mark.parametrize("name", INT_CASES)
def test_int_and_bool_results_are_numpys(name):
    f = INT_CASES[name]
    x = np.nan_to_num(X, nan=0.25)  # finite for the gradient; the NaN cases below

    def weighted(x):
        return np.sum(x * f(x))
    value, g = irad.value_and_grad(weighted)(x)
    assert value == pytest.approx(weighted(x), rel=1e-12)
    np.testing.assert_array_equal(g, f(x))


def test_nan_sorts_last():
    def positions(x):
        return np.sum(np.searchsorted(np.array([0.0, 1.0, np.nan]), x) * np.arange(1.0, 8.0)) \
            + np.sum(np.digitize(x, EDGES) * 100.0)
    assert irad.value_and_grad(positions)(X)[0] == positions(X)


def test_a_number_gives_an_int():
    def f(w):
        return w[0] * np.searchsorted(EDGES, 0.7) + w[1] * np.digitize(0.7, EDGES)
    assert irad.value_and_grad(f)(W)[0] == pytest.approx(f(W))


def test_allclose_decides_an_if_and_isclose_a_where():
    def f(w):
        y = w * 2.0
        if np.allclose(y[:2], 2.0 * W[:2]):
            y = y + np.where(np.isclose(w, 2.5), w ** 2, 0.0)
        return np.sum(y)
    value, g = irad.value_and_grad(f)(W)
    assert value == pytest.approx(f(W))
    np.testing.assert_allclose(g, central_difference(f, (W,), 0), rtol=1e-6)


def test_allclose_of_no_elements_is_true_and_of_far_ones_false():
    def f(w):
        return w[0] * np.allclose(w[:0], w[:0]) + w[1] * np.allclose(w, w + 1.0) + w[2] * np.allclose(1.0, 1.0 + 1e-9)
    assert irad.value_and_grad(f)(W)[0] == pytest.approx(f(W))


TOLERANCE = 1e-3


def known_comparisons(w):
    mode = "sum" if np.isclose(0.5, 0.5 + 1e-12) else "none"  # known while lowering: a str may follow
    if np.allclose(TOLERANCE, 1e-3) and mode == "sum":
        return np.sum(w) * np.searchsorted((1.0, 2.0, 3.0), 2.5)
    return "not lowered"


def test_comparisons_of_known_numbers_are_known_while_lowering():
    value, g = irad.value_and_grad(known_comparisons)(W)
    assert value == pytest.approx(known_comparisons(W))
    np.testing.assert_array_equal(g, np.full(4, 2.0))


BINCOUNT = {
    "weights": lambda w: np.sum(np.bincount(np.array([0, 3, 3, 1]), weights=w) ** 2),
    "minlength": lambda w: np.sum(np.bincount([2, 0, 2, 1], w, minlength=6) * np.arange(6.0)),
    "counts": lambda w: np.sum(np.bincount([0, 1, 1, 4]) * w[:1]),
}


@pytest.mark.parametrize("name", BINCOUNT)
def test_bincount_of_known_values(name):
    f = BINCOUNT[name]
    value, g = irad.value_and_grad(f)(W)
    assert value == pytest.approx(f(W), rel=1e-12)
    np.testing.assert_allclose(g, central_difference(f, (W,), 0), rtol=1e-6, atol=1e-9)


LABELS = np.array([0, 2, 2, 1])


def bincount_by_minlength(w, labels):
    return np.sum(np.bincount(labels, weights=w, minlength=4) ** 2) + np.sum(np.bincount(labels, minlength=3))


def test_bincount_of_run_time_values_takes_its_length_from_minlength():
    value, g = irad.value_and_grad(bincount_by_minlength)(W, LABELS)
    assert value == pytest.approx(bincount_by_minlength(W, LABELS))
    np.testing.assert_allclose(g, central_difference(bincount_by_minlength, (W, LABELS), 0), rtol=1e-6)
    for labels in (np.array([0, 4, 1, 1]), np.array([0, -1, 1, 1])):  # numpy: longer, or ValueError
        with pytest.raises(irad.base.errors.RuntimeCheckError, match=r"np\.bincount: a value of x is negative or at least "
                           r"minlength=4") as info:
            irad.value_and_grad(bincount_by_minlength)(W, labels)
        assert "test_searching_and_comparing.py:" in str(info.value)


def bincount_of_a_global(w):
    return np.sum(np.bincount(LABELS, weights=w) ** 2)


def the_rewrite(w):
    hits = LABELS[:, None] == np.arange(3)
    return np.sum(np.sum(np.where(hits, w[:, None], 0.0), axis=0) ** 2)


def test_bincount_of_run_time_values_is_refused_with_the_rewrite():
    with pytest.raises(irad.UnsupportedError, match="np.bincount of an array whose values are known only at "
                       "run time") as info:
        irad.grad(bincount_of_a_global)(W)
    assert "test_searching_and_comparing.py:" in str(info.value) and "np.arange(n)" in str(info.value)
    value, g = irad.value_and_grad(the_rewrite)(W)
    assert value == pytest.approx(bincount_of_a_global(W))
    np.testing.assert_allclose(g, central_difference(bincount_of_a_global, (W,), 0), rtol=1e-6)


BLOCKS = {
    "matrix_of_blocks": lambda w: np.sum(np.block([[np.eye(2) * w[0], np.outer(w[:2], w[2:])],
                                                   [np.ones((1, 2)), w[None, 2:]]]) ** 2),
    "vectors_and_numbers": lambda w: np.sum(np.sin(np.block([w[:2], w[3], np.zeros(2)]))),
    "vector_rows": lambda w: np.sum(np.block([[w], [w ** 2]]) * np.arange(8.0).reshape(2, 4)),
    "three_deep": lambda w: np.sum(np.block([[[w[:2]]], [[w[2:]]]]) ** 3),
    "ints_stay_ints": lambda w: np.sum(w * np.block([1, 2, np.array([3, 4])])) + w[0] * (np.block([1, 3])[1] // 2),
}


@pytest.mark.parametrize("name", BLOCKS)
def test_block_is_numpys(name):
    f = BLOCKS[name]
    value, g = irad.value_and_grad(f)(W)
    assert value == pytest.approx(f(W), rel=1e-12)
    np.testing.assert_allclose(g, central_difference(f, (W,), 0), rtol=1e-6, atol=1e-9)
    jf = {"vector_rows": lambda w: jnp.sum(jnp.block([[w], [w ** 2]]) * jnp.arange(8.0).reshape(2, 4))}.get(name)
    if jf is not None:  # forward mode against JAX's jnp.block
        t = np.ones_like(W)
        assert irad.jvp(f, (W,), (t,))[1] == pytest.approx(float(jax.jvp(jf, (W,), (t,))[1]), rel=1e-12)


def fourier(x):
    return np.sum(np.abs(np.fft.rfft(x)))


def side_middle(x):
    return np.sum(np.searchsorted(EDGES, x, side="middle"))


def nearest_quantile(x):
    return np.quantile(x, 0.3, method="nearest")


@pytest.mark.parametrize("f, message, hint", [
    (fourier, r"numpy\.fft\.rfft: irad has no complex numbers", "np.cos(angle) @ x"),
    (side_middle, r"numpy\.searchsorted with side='middle' is not supported", "'left' and 'right'"),
    (nearest_quantile, r"numpy\.quantile with method='nearest' is not supported", "sort and index"),
])
def test_refused_by_name_with_the_rewrite(f, message, hint):
    with pytest.raises(irad.UnsupportedError, match=message) as info:
        irad.grad(f)(W)
    assert "test_searching_and_comparing.py:" in str(info.value) and hint in str(info.value)


@pytest.mark.native
def test_natively():
    def f(w):
        return np.sum(np.bincount([0, 2, 2, 1], weights=w) ** 2) + np.sum(w * np.digitize(w, EDGES)) \
            + np.sum(np.block([[w], [w]]) ** 2) + np.sum(np.bincount(LABELS, w, minlength=5) ** 3)
    value, g = irad.value_and_grad(f, backend="native")(W)
    assert value == pytest.approx(f(W), rel=1e-12)
    np.testing.assert_allclose(g, central_difference(f, (W,), 0), rtol=1e-6, atol=1e-9)
