"""numpy functions irad lowers from its own Python source (irad/numpy_python.py):
values against numpy's, gradients against central differences."""

import math

import numpy as np
import pytest

import irad
from tests.reference import central_difference

def _smooth_step(x, lo=-0.5):
    if x < lo:
        return 0.0
    elif x < 1.0:
        return (x - lo) ** 2
    return (1.0 - lo) ** 2


@np.vectorize
def _decorated(x, scale):
    return np.sin(x) * scale if x > 0 else x * x


_made_outside = np.vectorize(lambda u: 0 if u < 0 else u, otypes=[float])

RNG = np.random.default_rng(5)
X = RNG.normal(size=(3, 5))


CASES = {
    "cov": lambda x: np.sum(np.cov(x) ** 2),
    "cov_columns_ddof0": lambda x: np.sum(np.cov(x, rowvar=False, bias=True) * np.arange(25.0).reshape(5, 5)),
    "cov_two": lambda x: np.sum(np.cov(x[0], x[1])),
    "cov_vector": lambda x: np.cov(x[0]),
    "corrcoef": lambda x: np.sum(np.corrcoef(x) * np.arange(9.0).reshape(3, 3)),
    "corrcoef_two": lambda x: np.corrcoef(x[0], x[2])[0, 1],
    "convolve_full": lambda x: np.sum(np.convolve(x[0], x[1, :3]) ** 2),
    "convolve_same": lambda x: np.sum(np.convolve(x[0], np.array([1.0, -2.0, 1.0]), mode="same") ** 2),
    "convolve_valid_swapped": lambda x: np.sum(np.convolve(x[1, :2], x[2], "valid") * np.arange(4.0)),
    "quantile": lambda x: np.quantile(x, 0.3),
    "quantile_axis": lambda x: np.sum(np.quantile(x, (0.1, 0.5, 0.9), axis=1) * np.arange(9.0).reshape(3, 3)),
    "percentile_keepdims": lambda x: np.sum(np.percentile(x, 75, axis=0, keepdims=True) * np.arange(5.0)),
    "median_like": lambda x: np.percentile(x[0], 50.0),
    "apply_along_rows": lambda x: np.sum(np.apply_along_axis(lambda r: np.sum(r ** 2) * r[0], 1, x)),
    "apply_along_columns_vectors": lambda x: np.sum(np.apply_along_axis(np.cumsum, 0, x) ** 2 * np.arange(5.0)),
    "apply_along_3d_matrices": lambda x: np.sum(np.sin(np.apply_along_axis(
        lambda r, k: np.outer(r, r[:k]), -2, x.reshape(3, 5, 1) * x[0].reshape(1, 1, 5), 2)) * np.arange(5.0)),
    "vectorize_branches": lambda x: np.sum(np.vectorize(_smooth_step)(x) * x),
    "vectorize_broadcast": lambda x: np.sum(np.vectorize(lambda u, v: u * math.exp(v) if u > v else v)(x, x[0]) ** 2),
    "vectorize_excluded": lambda x: np.sum(np.vectorize(lambda u, p: u ** p, excluded=[1])(x, 3)),
    "vectorize_keyword": lambda x: np.sum(np.vectorize(lambda u, k=2.0: u * k)(x[0], k=x[1:, :, None]) ** 2),
    "vectorize_tuple": lambda x: np.sum(np.prod(np.vectorize(lambda u, v: (u + v, u * v))(x, 2.0), axis=0)),
    "vectorize_otypes": lambda x: np.sum(np.vectorize(lambda u: 0 if u < 0 else u, otypes=[float])(x) * x),
    "vectorize_decorated": lambda x: np.sum(_decorated(x, 0.5) * np.arange(5.0)),
    "vectorize_made_outside": lambda x: np.sum(_made_outside(x) * x),
    "vectorize_0d": lambda x: np.vectorize(_smooth_step)(x[0, 0]) * 1.0,
}


@pytest.mark.parametrize("name", CASES)
def test_values_and_gradients(name):
    f = CASES[name]
    value, g = irad.value_and_grad(f)(X)
    assert value == pytest.approx(f(X), rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(g, central_difference(f, (X,), 0), rtol=1e-6, atol=1e-8)


@pytest.mark.native
def test_natively():
    for name in ("cov", "convolve_same", "quantile_axis", "apply_along_3d_matrices", "vectorize_broadcast"):
        f = CASES[name]
        value, g = irad.value_and_grad(f, backend="native")(X)
        assert value == pytest.approx(f(X), rel=1e-12)
        np.testing.assert_allclose(g, central_difference(f, (X,), 0), rtol=1e-6, atol=1e-8)


def test_an_option_irad_lacks_is_named():
    with pytest.raises(irad.UnsupportedError, match="fweights"):
        irad.grad(lambda x: np.sum(np.cov(x, fweights=np.ones(5, dtype=int))))(X)


def squeezed(x):
    return np.squeeze(np.sum(x * x, keepdims=True))  # a 0-d array, as numpy's


def through_a_helper(x):
    return squeezed(x)


@pytest.mark.parametrize("backend", ["python", pytest.param("native", marks=pytest.mark.native)])
def test_a_helpers_0d_result_is_the_seeded_value(backend):
    """The entry returns a helper's 0-d array (np.cov of a vector, np.squeeze of a
    (1, 1) array): a shape-() result, differentiated as JAX's grad takes one (the
    tests verify the IR, which refused it before)."""
    x = np.array([1.0, 2.0, 3.0])
    value, g = irad.value_and_grad(through_a_helper, backend=backend)(x)
    assert float(value) == 14.0
    np.testing.assert_allclose(g, 2 * x)


def test_vectorize_of_an_int_first_result_is_refused_where_numpy_makes_ints():
    """numpy's result takes the dtype of pyfunc's first result: 0 makes it an int
    array (2.5 becomes 2), which irad's float does not follow, so irad refuses it
    (otypes=[float] is the rewrite, "vectorize_otypes" above)."""
    f = lambda x: np.sum(np.vectorize(lambda u: 0 if u < 0 else u)(x) * x)
    with pytest.raises(irad.UnsupportedError, match="returns an int in numpy, which irad computes as a float"):
        irad.value_and_grad(f)(X)


def test_vectorize_of_size_0_needs_otypes_as_numpy_does():
    with pytest.raises(ValueError, match="size 0 inputs"):
        np.vectorize(_smooth_step)(np.zeros(0))
    with pytest.raises(ValueError, match="size 0 inputs unless `otypes` is set"):  # at run time, as numpy's
        irad.grad(lambda x: np.sum(np.vectorize(_smooth_step)(x[:0])) + x[0])(X[0])
    f = lambda x: np.sum(np.vectorize(_smooth_step, otypes=[float])(x[:0])) + x[0]
    assert irad.value_and_grad(f)(X[0])[0] == f(X[0])


def test_vectorize_with_a_signature_is_refused_with_the_rewrite():
    with pytest.raises(irad.UnsupportedError, match="(?s)numpy.vectorize with signature='.n.->..' .*apply_along_axis"):
        irad.grad(lambda x: np.sum(np.vectorize(np.sum, signature="(n)->()")(x)))(X)
    made = np.vectorize(np.sum, signature="(n)->()")
    with pytest.raises(irad.UnsupportedError, match="numpy.vectorize with signature='.n.->..'"):
        irad.grad(lambda x: np.sum(made(x)))(X)
