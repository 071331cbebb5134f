"""Boolean masks computed from constants alone index arrays (constant_arrays.py):
`S[~np.eye(n, dtype=bool)]`, the off-diagonal of a similarity matrix as a
contrastive loss takes it, `np.triu(np.ones((n, n), dtype=bool), 1)`,
`np.arange(n) % 3 == 1`. Their values are computed while lowering, op by op as
the compiled code would; a mask of data stays refused with its rewrite. Values
against numpy, gradients against central differences in float64."""

import numpy as np
import pytest

import irad
from tests.reference import BACKENDS, check_against_numpy


def off_diagonal(x):
    S = np.outer(x, x) / 0.5
    n = S.shape[0]
    return np.sum(np.exp(S[~np.eye(n, dtype=bool)])) - np.sum(S[np.eye(n, dtype=bool)])


def upper_triangle(x):
    S = np.outer(x, np.sin(x))
    return np.sum(S[np.triu(np.ones((4, 4), dtype=bool), 1)] ** 2)


def negative_modulo(x):
    """numpy's % is the floor's: (-4) % 3 is 2, where C's remainder is -1."""
    return np.sum(x[(np.arange(4) - 4) % 3 == 2] ** 3)


def float_comparison(x):
    grid = np.linspace(-1.0, 1.0, 4) * 3.0
    return np.sum(x[(grid >= 0.5) | (grid < -2.9)] * 2.0) + np.sum(x[~(grid != grid)])


def band(x):
    S = np.outer(x, x)
    n = len(x)
    near = np.tril(np.ones((n, n), dtype=bool), 1) & np.triu(np.ones((n, n), dtype=bool), -1)
    return np.sum(S[near & ~np.eye(n, dtype=bool)])


X = np.array([0.3, -1.2, 0.8, 0.5])


@pytest.mark.parametrize("f", [off_diagonal, upper_triangle, negative_modulo, float_comparison, band])
def test_masks_of_constants(f):
    check_against_numpy(f, (X,))


@pytest.mark.parametrize("backend", BACKENDS)
def test_both_backends(backend):
    check_against_numpy(off_diagonal, (X,), backend=backend)


def test_a_mask_of_data_is_reduced_where_it_is_read():
    """A mask of data is no gather: x[m] is a selection a reduction takes (masked_reads.py)."""
    def f(x, labels):
        return np.sum(x[labels == 1])

    labels = np.array([0, 1, 1, 0])
    np.testing.assert_allclose(irad.grad(f)(X, labels), (labels == 1) * 1.0)

    def sorted_first(x, labels):
        return np.sort(x[labels == 1])[0]

    with pytest.raises(irad.UnsupportedError, match=r"boolean mask computed at run time(.|\n)*np\.where\(m, x, 0\.0\)"):
        irad.grad(sorted_first)(X, labels)
