"""Reads through a boolean mask computed at run time, reduced (irad/frontend/masked_reads.py):
`x[labels == k].mean(axis=0)`, `loss[valid].mean()`, `np.sum(x[x > 0] ** 2)`,
`x[m].max()`, each refused before ("indexing with a boolean mask computed at run
time"). Checked against the program run as numpy, central differences in
float64 and JAX's gradient of the compacted program, on both backends; what
would need the compacted array itself is refused, naming the line."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irad
from irad.base.errors import RuntimeCheckError
from tests.reference import BACKENDS, central_difference, check_against_numpy, check_refused

jax.config.update("jax_enable_x64", True)

rng = np.random.default_rng(11)
X = rng.standard_normal(9)
A = rng.standard_normal((8, 3))
LABELS = np.array([0, 1, 2, 0, 1, 0, 2, 2])
W = rng.standard_normal((3, 2))
VALID = np.array([True, True, False, True, False, True, True, False, True])


# ---- values and gradients ---------------------------------------------------------------------
def mean_of_positives(x):
    return x[x > 0].mean()


def sum_of_squares(x):
    return np.sum(x[x > 0] ** 2) + (x > 0).sum()


def log_of_positives(x):
    return np.log(x[x > 0]).sum() + np.sqrt(x[x > 0.2]).mean()


def extremes(x):
    return x[x > -0.5].max() - x[x < 0.5].min() + np.max(np.abs(x[x < 1.0]))


def spread(x):
    m = x > -1.0
    return x[m].var() + x[m].std(ddof=1) + np.var(x[m] * 2.0 - 1.0)


def product_and_logic(x):
    m = np.abs(x) < 1.5
    return x[m].prod() + 2.0 * x[m].any() + (x[m] < 1.0).all() + len(x[m]) + np.count_nonzero(x[m] > 0.5)


def masked_loss(x, valid):
    per_example = (x - 0.3) ** 2
    return per_example[valid].mean() + per_example[~valid].sum() * 0.5


def pairs_through_one_mask(x, z):
    m = (x > 0) & (z < 1.0)
    return np.sum((x[m] - z[m]) ** 2) / len(x[m]) + np.exp(-z[m]).sum()


def clipped_and_cast(x):
    return np.clip(x[x > 0], 0.1, 1.0).sum() + (x[x < 0] > -1).astype(float).sum() + abs(-x[x > 0]).sum()


PROGRAMS = [mean_of_positives, sum_of_squares, log_of_positives, extremes, spread, product_and_logic]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f", PROGRAMS + [clipped_and_cast], ids=lambda f: f.__name__)
def test_reductions_follow_numpy(f, backend):
    check_against_numpy(f, (X,), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_masks_given_as_arguments(backend):
    check_against_numpy(masked_loss, (X, VALID), backend=backend)
    check_against_numpy(pairs_through_one_mask, (X, rng.standard_normal(9)), backend=backend)


def per_class_means(a, labels):
    """Rows of each class, averaged: a mask of rows, reduced over axis 0."""
    total = 0.0
    for k in range(3):
        centre = a[labels == k].mean(axis=0)
        total = total + np.sum(centre ** 2) + a[labels == k].std(axis=0, keepdims=True).sum()
    return total


def kmeans_step(points, centroids):
    """One Lloyd step: assign each point to its nearest centroid, move each centroid to
    its points' mean (an empty cluster keeps its centroid), and the new inertia."""
    distances = np.sum((points[:, None, :] - centroids[None, :, :]) ** 2, axis=2)
    labels = np.argmin(distances, axis=1)
    moved = []
    for k in range(centroids.shape[0]):
        members = labels == k
        moved.append(points[members].mean(axis=0) if members.any() else centroids[k])
    new = np.stack(moved)
    return np.sum((points - new[labels]) ** 2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_per_class_means(backend):
    check_against_numpy(per_class_means, (A, LABELS), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_kmeans_step(backend):
    points = np.concatenate([rng.normal(c, 0.3, size=(6, 2)) for c in (-2.0, 0.0, 2.0)])
    centroids = np.array([[-1.5, 0.2], [0.3, -0.1], [5.0, 5.0]])  # the last gets no point
    check_against_numpy(kmeans_step, (points, centroids), backend=backend)


def test_held_in_a_list_until_reduced():
    def f(x):
        xs = [x[x > 0], np.exp(x[x < 0])]
        return xs[0].sum() + xs[1].mean()

    check_against_numpy(f, (X,))


def test_a_mask_over_two_axes_and_rows():
    def f(a):
        m = a > 0
        return (a[m].mean() + a[a[:, 0] > 0, :].sum(axis=0).sum() + a[m].shape[0] + a[a[:, 1] > 0].size
                + np.sum(a[m] * (2.0 * a)[m]) + np.sum(np.tanh(a[a[:, 2] < 0.5] @ W) ** 2))

    check_against_numpy(f, (A,))


# ---- gradients at unselected elements --------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_unselected_elements_do_not_poison_gradients(backend):
    """log, sqrt and 1/x are NaN or inf at the unselected elements (x <= 0): their
    gradient is 0 there, as JAX's of the compacted program, not NaN."""
    def f(x):
        return np.log(x[x > 0]).sum() + (1.0 / x[x > 0]).sum() + np.sqrt(x[x > 0]).max()

    x = X.copy()
    x[2] = 0.0
    g = irad.grad(f, backend=backend)(x)
    mask = x > 0
    expected = jax.grad(lambda v: jnp.log(v[mask]).sum() + (1.0 / v[mask]).sum() + jnp.sqrt(v[mask]).max())(x)
    assert np.all(np.isfinite(g))
    np.testing.assert_allclose(g, expected, rtol=1e-12)
    assert np.all(g[~mask] == 0.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_element_selected(backend):
    """numpy: the sum of nothing is 0, the mean NaN (with a RuntimeWarning), the max a ValueError."""
    x = -np.abs(X)

    def sums(x):
        return x[x > 0].sum(), x[x > 0].mean(), len(x[x > 0])

    value, _ = irad.vjp(sums, x, backend=backend)
    assert value[0] == 0.0 and np.isnan(value[1]) and value[2] == 0
    g = irad.grad(lambda x: x[x > 0].sum() + np.log(x[x > 0]).sum(), backend=backend)(x)
    np.testing.assert_array_equal(g, np.zeros_like(x))
    with pytest.raises(RuntimeCheckError, match="zero-size array to reduction operation maximum"):
        irad.vjp(lambda x: x[x > 0].max(), x, backend=backend)


# ---- dtypes ---------------------------------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_dtypes_follow_numpy(backend):
    ints = np.array([3, -1, 4, -1, 5, 9, -2, 6, 5])

    def f(x, ints):
        m = x > 0
        return ints[m].sum(), ints[m].max(), ints[m].mean(), m[m].sum(), (ints[m] > 3).sum(), len(ints[m])

    value, _ = irad.vjp(f, X, ints, backend=backend)
    expected = f(X, ints)
    assert value == pytest.approx(expected)
    assert [type(v) for v in value] == [int, int, float, int, int, int]

    x32 = X.astype(np.float32)
    value, _ = irad.vjp(lambda x: (x[x > 0].mean(), x[x > 0].sum(), x[x > 0].max(), x[x > 0].std()), x32,
                        backend=backend)
    expected = (x32[x32 > 0].mean(), x32[x32 > 0].sum(), x32[x32 > 0].max(), x32[x32 > 0].std())
    assert [type(v) for v in value] == [np.float32] * 4
    np.testing.assert_allclose(value, expected, rtol=1e-6)


# ---- random masks -----------------------------------------------------------------------------
_COMPILED = {}


def _statistics(x, m):
    return x[m].sum() + np.sum(x[m] ** 3) * 0.5 + len(x[m]) + x[m].prod()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.booleans(), min_size=7, max_size=7), st.integers(0, 2**31))
def test_random_masks(bits, seed):
    """Masks of any count, empty and full included: values and gradients as numpy's and central differences'."""
    x = np.random.default_rng(seed).standard_normal(7)
    m = np.array(bits)
    value, grad = irad.value_and_grad(_statistics)(x, m)
    np.testing.assert_allclose(value, _statistics(x, m), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grad, central_difference(_statistics, (x, m), 0), rtol=1e-6, atol=1e-7)
    assert np.all(grad[~m] == 0.0)
    if m.any():
        mean, _ = irad.vjp(lambda x, m: (x[m].mean(), x[m].max(), x[m].min()), x, m)
        np.testing.assert_allclose(mean, (x[m].mean(), x[m].max(), x[m].min()), rtol=1e-12)


# ---- under vmap -------------------------------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_under_vmap(backend):
    rows = rng.standard_normal((4, 5))
    rows[2] = -np.abs(rows[2])  # a row with no positive element: its sum is 0

    def f(x):
        return np.sum(x[x > 0] ** 2) + x[x < 0].mean()

    np.testing.assert_allclose(irad.vmap(f, backend=backend)(rows), [f(r) for r in rows], rtol=1e-12)


# ---- refused, naming the line ------------------------------------------------------------------
def returned(x):
    return x[x > 0]  # <- refused


def indexed(x):
    return x[x > 0][0]  # <- refused


def sorted_(x):
    return np.sort(x[x > 0]).sum()  # <- refused


def position(x):
    return x[x > 0].argmax()  # <- refused


def two_masks(x):
    return np.sum(x[x > 0] * x[x > 1])  # <- refused


def other_axis(a):
    return a[a[:, 0] > 0].sum(axis=1).sum()  # <- refused


def count_sized_array(x):
    return np.sum(x[x > 0] * x)  # <- refused


def to_a_helper(x):
    def total(v):
        return v.sum()
    return total(x[x > 0])  # <- refused


def updated_in_place(x):
    s = x[x > 0]
    s *= 2.0  # <- refused
    return s.sum()


def stacked(x):
    xs = [x[x > 0], x[x > 0]]  # a list may hold it until it is reduced
    return np.stack(xs).sum()  # <- refused


@pytest.mark.parametrize("f, x, message", [
    (returned, X, "returns x\\[m\\] for a boolean mask computed at run time"),
    (indexed, X, "indexing a selection: indexing with a boolean mask computed at run time"),
    (sorted_, X, "np.sort of a selection"),
    (position, X, "np.argmax of a selection \\(its position counts in the compacted array\\)"),
    (two_masks, X, "selections through two masks"),
    (other_axis, A, "a reduction over axes \\(1,\\) of x\\[m\\]"),
    (count_sized_array, X, "an array of shape \\(9,\\) with x\\[m\\]"),
    (to_a_helper, X, "x\\[m\\] for a boolean mask computed at run time .* cannot be passed to a function"),
    (stacked, X, "a selection used as a value here"),
    (updated_in_place, X, "an in-place update of x\\[m\\]"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_refused_naming_the_line(f, x, message):
    check_refused(f, (x,), message)


def narrow_extremes(x, k):
    return k[x > 0].max(keepdims=True), k[x <= 0].min(keepdims=True), k[x > 0].sum(), k[x > 0].mean()


def narrow_extremes_only(x, k):
    return k[x > 0].max(keepdims=True), k[x <= 0].min(keepdims=True)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint8])
def test_narrow_ints_keep_their_dtype(dtype):
    """max and min fill the unselected elements with the dtype's own extremes (uint8's least is 0)."""
    k = np.array([5, 100, 3, 120, 1, 7, 2, 9, 4]).astype(dtype)
    x = np.array([1.0, -2.0, 3.0, -0.5, 2.0, 0.1, -0.1, 0.2, -0.3])
    f = narrow_extremes_only if dtype == np.uint8 else narrow_extremes  # numpy sums uint8 in uint64 (refused)
    value, expected = irad.vjp(f, x, k)[0], f(x, k)
    for v, e in zip(value, expected):
        np.testing.assert_array_equal(v, e)
        assert np.asarray(v).dtype == np.asarray(e).dtype or isinstance(v, (int, float))
