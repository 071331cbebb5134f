"""scipy.stats.multivariate_normal.logpdf and pdf (irad/numpy_python.py):
values against scipy's, gradients in x, mean and cov against central
differences, forward mode against JAX's; allow_singular=True refused."""

import jax
import jax.numpy as jnp
import jax.scipy.stats
import numpy as np
import pytest
import scipy.stats

import irad
from tests.reference import central_difference

jax.config.update("jax_enable_x64", True)
RNG = np.random.default_rng(3)
M = RNG.normal(size=(3, 3))
COV = M @ M.T + 3 * np.eye(3)
MEAN = RNG.normal(size=3)
POINTS = RNG.normal(size=(4, 3))

CASES = {
    "points": lambda x, mean, cov: np.sum(scipy.stats.multivariate_normal.logpdf(x, mean, cov)),
    "one_point_keywords": lambda x, mean, cov: scipy.stats.multivariate_normal.logpdf(x[0], mean=mean, cov=cov),
    "pdf": lambda x, mean, cov: np.sum(scipy.stats.multivariate_normal.pdf(x, mean, cov) * np.arange(1.0, 5.0)),
    "diagonal_cov": lambda x, mean, cov: np.sum(scipy.stats.multivariate_normal.logpdf(x, mean, np.diag(cov))),
    "scalar_cov": lambda x, mean, cov: np.sum(scipy.stats.multivariate_normal.logpdf(x, mean, cov[0, 0])),
    "no_mean": lambda x, mean, cov: np.sum(scipy.stats.multivariate_normal.logpdf(x, cov=cov)),
    "one_variable": lambda x, mean, cov: np.sum(scipy.stats.multivariate_normal.logpdf(x[:, 0], mean[0], cov[0, 0])),
}


@pytest.mark.parametrize("name", CASES)
def test_values_and_gradients_match_scipy(name):
    f = CASES[name]
    args = (POINTS, MEAN, COV)
    value, grads = irad.value_and_grad(f, argnums=(0, 1, 2))(*args)
    assert value == pytest.approx(f(*args), rel=1e-11)
    for i, g in enumerate(grads):
        np.testing.assert_allclose(g, central_difference(f, args, i), rtol=1e-6, atol=1e-8)


def test_forward_mode_against_jax():
    f = CASES["points"]
    tangents = tuple(RNG.normal(size=a.shape) for a in (POINTS, MEAN))
    tangents += (tangents[1][:, None] * tangents[1][None, :],)  # a symmetric direction for cov
    value, tangent = irad.jvp(f, (POINTS, MEAN, COV), tangents)
    jf = lambda x, m, c: jnp.sum(jax.scipy.stats.multivariate_normal.logpdf(x, m, c))
    expected = jax.jvp(jf, (POINTS, MEAN, COV), tangents)
    assert value == pytest.approx(float(expected[0]), rel=1e-11)
    assert tangent == pytest.approx(float(expected[1]), rel=1e-8)


PRIOR = scipy.stats.multivariate_normal(MEAN, COV)
NOISE = scipy.stats.norm(0.5, scale=2.0)
SHAPED = scipy.stats.gamma(2.5, scale=0.7)


def frozen_globals(x):
    return PRIOR.logpdf(x[0]) + np.sum(NOISE.logpdf(x[1])) + np.sum(SHAPED.logpdf(np.abs(x[2]) + 0.1)) \
        + PRIOR.pdf(x[1])


def test_frozen_distributions_read_as_globals():
    value, g = irad.value_and_grad(frozen_globals)(POINTS)
    assert value == pytest.approx(frozen_globals(POINTS), rel=1e-11)
    assert isinstance(irad.value_and_grad(lambda x: PRIOR.logpdf(x))(POINTS[0])[0], float)  # one point: a float
    np.testing.assert_allclose(g, central_difference(frozen_globals, (POINTS,), 0), rtol=1e-6, atol=1e-9)


def frozen_inside(x, mean, cov):
    return scipy.stats.multivariate_normal(mean, cov).logpdf(x)


def test_freezing_inside_a_program_is_refused_with_the_rewrite():
    with pytest.raises(irad.UnsupportedError, match=r"freezing the distribution scipy\.stats\.multivariate_normal"
                       r"\(\.\.\.\) inside a program") as info:
        irad.grad(frozen_inside)(POINTS[0], MEAN, COV)
    assert "test_scipy_multivariate.py:" in str(info.value) and "multivariate_normal.logpdf(x, ...)" in str(info.value)


def singular(x, mean, cov):
    return scipy.stats.multivariate_normal.logpdf(x, mean, cov, allow_singular=True)


def test_allow_singular_is_refused_by_name():
    with pytest.raises(irad.UnsupportedError, match=r"scipy\.stats\.multivariate_normal\.logpdf with "
                       r"allow_singular=True is not supported") as info:
        irad.grad(singular)(POINTS[0], MEAN, COV)
    assert "test_scipy_multivariate.py:" in str(info.value) and "positive definite" in str(info.value)


@pytest.mark.native
def test_natively():
    f = CASES["points"]
    value, g = irad.value_and_grad(f, argnums=2, backend="native")(POINTS, MEAN, COV)
    assert value == pytest.approx(f(POINTS, MEAN, COV), rel=1e-11)
    np.testing.assert_allclose(g, central_difference(f, (POINTS, MEAN, COV), 2), rtol=1e-6, atol=1e-8)
