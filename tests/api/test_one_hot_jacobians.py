"""jacrev of residuals with a row per observation: irad-vmap keeps the
cotangents, one-hot along the rows, compact (passes/batching/one_hot.py), and
the Jacobian is the same matrix as JAX's jacrev and central differences
(float64), through the ops that keep the compact form and those that fall
back to the dense one.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import StringAttr, TensorType

import irad
from tests.reference import central_jacobian

jax.config.update("jax_enable_x64", True)


def residual_functions(xp):
    """The residuals on the array module `xp` (numpy for irad, jax.numpy for JAX)."""

    def projection(P, idx, x):
        """(N, 2): each observation's point scaled and divided by its depth."""
        q = P[idx]
        return q[:, :2] * x / q[:, 2:3]

    def bundle(cams, points, cam_index, point_index, observed):
        """A bundle adjustment's reprojection errors, raveled (Rodrigues' rotation,
        translation, focal length), as bench/jacobians.py's."""
        c, p = cams[cam_index], points[point_index]
        w = c[:, :3]
        theta = xp.sqrt(xp.sum(w * w, axis=1, keepdims=True))
        k = w / theta
        cos, sin = xp.cos(theta), xp.sin(theta)
        rotated = p * cos + xp.cross(k, p) * sin + k * xp.sum(k * p, axis=1, keepdims=True) * (1.0 - cos)
        q = rotated + c[:, 3:6]
        return (c[:, 6:7] * (q[:, :2] / q[:, 2:3]) - observed).ravel()

    def shared_scale(P, w, idx, x):
        """w scales every row: its cotangent sums over the rows (the compact form ends there)."""
        return (P[idx] * w)[:, :2] * x

    def branches(P, idx, x):
        """np.where and np.maximum: their adjoints select, which falls back to the dense form."""
        q = P[idx]
        return xp.where(q[:, :2] > 0, q[:, :2] * x, xp.maximum(q[:, 1:], 0.1) - x) + xp.exp(q[:, 2:]) * x

    def later_rows(P, idx, x):
        """Rows 1.. of the gathered rows: their cotangent enters a larger array of zeros (dense again)."""
        return P[idx][1:, :2] * x[1:]

    def transposed(P, idx, x):
        """Rows of 2 (the coordinates) of N elements: the transpose's adjoint is dense."""
        return (P[idx][:, 1:] * x).T

    def divided(q, x):
        return q[:, 1:] * x / q[:, 2:]

    def through_helper(P, idx, x):
        """A helper's pullback takes the compact cotangent and returns compact ones."""
        return 2.0 * divided(P[idx], x) + x

    return {"projection": projection, "bundle": bundle, "shared_scale": shared_scale, "branches": branches,
            "later_rows": later_rows, "transposed": transposed, "through_helper": through_helper}


NP, JNP = residual_functions(np), residual_functions(jnp)


def data(name: str, n_obs: int, n_cams: int, seed: int):
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n_cams, n_obs)
    if name == "bundle":
        cams = np.concatenate([rng.normal(0, 0.3, (n_cams, 3)), rng.normal(0, 0.5, (n_cams, 2)),
                               rng.uniform(4, 6, (n_cams, 1)), rng.uniform(0.8, 1.2, (n_cams, 1))], axis=1)
        points = rng.normal(0, 1, (n_cams + 1, 3))
        return (cams, points, idx, rng.integers(0, n_cams + 1, n_obs), rng.normal(0, 0.3, (n_obs, 2))), (0, 1)
    P = rng.normal(size=(n_cams, 3)) + np.array([0.0, 0.0, 3.0])
    if name == "shared_scale":
        return (P, rng.normal(size=3), idx, rng.normal(size=(n_obs, 2))), (0, 1)
    return (P, idx, rng.normal(size=(n_obs, 2))), (0,)


def check(name: str, args, argnums, backend: str = "python") -> None:
    got = irad.jacrev(NP[name], argnums=argnums, backend=backend)(*args)
    want = jax.jacrev(JNP[name], argnums=argnums)(*args)
    for i, g, w in zip(argnums, got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-13, err_msg=f"{name} d/d argument {i}")
        np.testing.assert_allclose(g, central_jacobian(NP[name], args, i), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", sorted(NP))
def test_jacrev_matches_jax_and_differences(name):
    check(name, *data(name, 7, 3, 0))


@settings(max_examples=8, deadline=None)
@given(st.sampled_from(sorted(NP)), st.integers(2, 12), st.integers(1, 4), st.integers(0, 2**16))
def test_jacrev_over_rows_matches_jax(name, n_obs, n_cams, seed):
    args, argnums = data(name, n_obs, n_cams, seed)
    got = irad.jacrev(NP[name], argnums=argnums)(*args)
    want = jax.jacrev(JNP[name], argnums=argnums)(*args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("name", ["projection", "bundle", "shared_scale", "through_helper"])
def test_no_dense_cotangent_over_the_rows(name):
    """The batched sweep computes no array of the batch by the rows by more: B =
    N * m cotangents over N observations would make one N times larger than
    the compact form. (The entry still passes it the basis, unused.)"""
    args, argnums = data(name, 9, 3, 1)
    module = irad.jacrev(NP[name], argnums=argnums).lower(*args)
    sweeps = [f for f in module.ops if isinstance(f, func.FuncOp) and f.attributes.get("irad.role") == StringAttr("vmap")]
    assert sweeps
    dense = [op for f in sweeps for op in f.walk() for r in op.results
             if isinstance(r.type, TensorType) and tuple(r.type.get_shape())[:2] == (9 * 2, 9)
             and len(r.type.get_shape()) >= 3]
    assert not dense, dense[0]


def test_jacobians_of_jacrev_over_rows_match_jax():
    """The compact code differentiated again (forward over it)."""
    args, _ = data("projection", 5, 2, 3)
    got = irad.jacfwd(irad.jacrev(NP["projection"]))(*args)
    want = jax.jacfwd(jax.jacrev(JNP["projection"]))(*args)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)


def root(p, idx, x):
    return np.sqrt(p[idx]) * x


def test_an_infinite_partial_stays_in_its_rows():
    """d sqrt(p)/dp is inf at p = 0: the rows of the observations of that camera
    hold it; the others stay finite (the dense cotangents would spread 0 * inf =
    nan over them) and match central differences."""
    p = np.array([[0.0], [1.5], [2.0]])
    idx = np.array([1, 0, 2, 1, 2])
    x = np.arange(10.0).reshape(5, 2) + 1
    J = irad.jacrev(root)(p, idx, x)
    assert J.shape == (5, 2, 3, 1)
    finite = idx != 0
    assert np.all(np.isfinite(J[finite]))
    shifted = central_jacobian(root, (p + np.array([[1.0], [0.0], [0.0]]), idx, x), 0)  # camera 0 unused there
    np.testing.assert_allclose(J[finite][..., 1:, :], shifted[finite][..., 1:, :], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(J[finite][..., 0, :], 0.0)
    assert np.all(np.isinf(J[~finite][:, 1, 0, 0]))


@pytest.mark.native
def test_native_bundle_jacrev_matches_jax():
    check("bundle", *data("bundle", 6, 2, 2), backend="native")
