"""Forward mode and Jacobians of numpy programs: jvp against directional
central differences for every array test program, Jacobians (forward equals
reverse), and Hessians against finite differences of the gradient."""

import numpy as np
import pytest

import irad
from tests import array_programs as p
from tests.frontend.test_arrays import CASES, normal

RNG = np.random.default_rng(7)


def _float_args(args):
    return [i for i, a in enumerate(args) if isinstance(a, float)
            or (isinstance(a, np.ndarray) and a.dtype.kind == "f")]


def _direction(a):
    return RNG.normal(size=np.shape(a)) if isinstance(a, np.ndarray) else float(RNG.normal())


def _moved(args, directions, t):
    moved = list(args)
    for i, d in directions.items():
        moved[i] = args[i] + t * d
    return moved


@pytest.mark.parametrize(
    "f, make_args", CASES, ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(CASES)]
)
def test_jvp_matches_directional_finite_differences(f, make_args):
    args = make_args()
    floats = _float_args(args)
    directions = {i: _direction(args[i]) for i in floats}
    tangents = [directions.get(i) for i in range(len(args))]
    value, tangent = irad.jvp(f, args, tangents)
    np.testing.assert_allclose(value, f(*args), rtol=1e-12, atol=1e-12)
    eps = 1e-6
    expected = (f(*_moved(args, directions, eps)) - f(*_moved(args, directions, -eps))) / (2 * eps)
    np.testing.assert_allclose(tangent, expected, rtol=1e-5, atol=1e-7)


def vector_valued(x, w):
    h = np.tanh(x @ w)
    return h * x[0, 0], np.sum(h ** 2, axis=0)


def test_jacfwd_equals_jacrev_and_finite_differences():
    x, w = normal(2, 3), normal(3, 4)
    forward = irad.jacfwd(vector_valued, (0, 1))(x, w)
    reverse = irad.jacrev(vector_valued, (0, 1))(x, w)
    for out in range(2):
        for arg, a in enumerate((x, w)):
            assert forward[out][arg].shape == vector_valued(x, w)[out].shape + a.shape
            np.testing.assert_allclose(forward[out][arg], reverse[out][arg], rtol=1e-12, atol=1e-14)
    # one column by central differences
    eps, d = 1e-6, np.zeros_like(w)
    d[1, 2] = 1.0
    column = (vector_valued(x, w + eps * d)[0] - vector_valued(x, w - eps * d)[0]) / (2 * eps)
    np.testing.assert_allclose(forward[0][1][..., 1, 2], column, rtol=1e-6, atol=1e-9)


HESSIAN_CASES = [
    (p.logsumexp, lambda: (normal(2, 3),)),
    (p.variance, lambda: (normal(4, 2),)),
    (p.r_max, lambda: (normal(3, 2),)),
    (p.la_matmul, lambda: (normal(2, 3), normal(3, 2))),
    (p.rnn_loop, lambda: (0.5 * normal(2, 2), normal(2, 2), normal(3, 2))),
    (p.w_in_loop, lambda: (normal(4),)),
]


@pytest.mark.parametrize(
    "f, make_args", HESSIAN_CASES, ids=[f.__name__ for f, _ in HESSIAN_CASES]
)
def test_hessian_against_finite_differences_of_the_gradient(f, make_args):
    """Forward over reverse through tensor adjoints (and the loop tape)."""
    args = make_args()
    a = _float_args(args)[0]
    h = irad.hessian(f, a)(*args)
    g = irad.grad(f, a)
    x = args[a]
    assert h.shape == x.shape + x.shape
    eps = 1e-6
    for index in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[index] = eps
        plus, minus = list(args), list(args)
        plus[a], minus[a] = x + d, x - d
        np.testing.assert_allclose(
            h[(...,) + index], (g(*plus) - g(*minus)) / (2 * eps), rtol=1e-5, atol=1e-6
        )
