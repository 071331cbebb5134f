"""jacfwd of residuals that gather their parameters per observation
(`cams[cam_index]`): irad-vmap keeps the gathered tangents compact, m of the
B = R * m basis tangents per observation, with the index as data
(passes/batching/one_hot.py's forward form), and the Jacobian is the same
matrix as JAX's jacfwd and central differences (float64), for repeated and
unused indices, through the ops that keep the compact form and those that fall
back to the dense one (a loop, a reverse sweep differentiated forward).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import StringAttr, TensorType

import irad
from irad.passes.vmap import VmapPass
from irad.pipeline import as_signature, lowered
from tests.api.test_one_hot_jacobians import data, residual_functions
from tests.reference import central_jacobian

jax.config.update("jax_enable_x64", True)

NP, JNP = residual_functions(np), residual_functions(jnp)


def check(name: str, args, argnums, backend: str = "python") -> None:
    got = irad.jacfwd(NP[name], argnums=argnums, backend=backend)(*args)
    want = jax.jacfwd(JNP[name], argnums=argnums)(*args)
    for i, g, w in zip(argnums, got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-13, err_msg=f"{name} d/d argument {i}")
        np.testing.assert_allclose(g, central_jacobian(NP[name], args, i), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", sorted(NP))
def test_jacfwd_matches_jax_and_differences(name):
    check(name, *data(name, 7, 3, 0))


@pytest.mark.parametrize("indices", [[0, 0, 0, 0], [2, 2, 0, 2], [3, 1, 3, 3], [1, 2, 3, 0], [-1, 0, -4, 2]],
                         ids=["one-camera", "repeated", "unused-cameras", "each-once", "negative"])
def test_index_patterns(indices):
    """Repeated indices, cameras no observation uses (their columns are zero),
    negative indices (wrapped before the gather)."""
    args, argnums = data("bundle", 4, 4, 5)
    cams, points, _, point_index, observed = args
    check("bundle", (cams, points, np.array(indices), point_index, observed), argnums)


@settings(max_examples=8, deadline=None)
@given(st.sampled_from(sorted(NP)), st.integers(2, 12), st.integers(1, 4), st.integers(0, 2**16))
def test_jacfwd_over_rows_matches_jax(name, n_obs, n_cams, seed):
    args, argnums = data(name, n_obs, n_cams, seed)
    got = irad.jacfwd(NP[name], argnums=argnums)(*args)
    want = jax.jacfwd(JNP[name], argnums=argnums)(*args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-11, atol=1e-12)


def test_the_index_array_is_read_at_each_call():
    """One compiled Jacobian, called with other indices: the compact form's
    blocks come from the index array of that call."""
    jac = irad.jacfwd(NP["bundle"], argnums=(0, 1))
    (cams, points, idx, pidx, observed), _ = data("bundle", 6, 3, 7)
    for indices in (idx, idx[::-1].copy(), np.zeros_like(idx)):
        args = (cams, points, indices, pidx, observed)
        for g, w in zip(jac(*args), jax.jacfwd(JNP["bundle"], argnums=(0, 1))(*args)):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("name", ["bundle", "sliced"])
def test_no_dense_tangent_over_the_rows(name):
    """The batched jvp computes no arithmetic on arrays of the batch by the
    rows (B = R * m tangents over N observations): only the result, rebuilt
    from the compact form at the return, has that shape."""
    args, argnums = data("bundle", 9, 3, 1)  # 3 cameras of 7, 4 points of 3
    module = irad.jacfwd(NP["bundle"] if name == "bundle" else SLICED_NP, argnums=argnums).lower(*args)
    ops = [op for f in module.ops if isinstance(f, func.FuncOp) for op in f.walk()]
    dense = [op for op in ops if op.dialect_name() in ("arith", "math") for r in op.results
             if isinstance(r.type, TensorType) and tuple(r.type.get_shape())[:2] in ((3 * 7, 9), (4 * 3, 9))]
    assert not dense, dense[0]
    compact = [op for op in ops if isinstance(op, arith.MulfOp) and isinstance(op.results[0].type, TensorType)]
    assert {tuple(op.results[0].type.get_shape())[:2] for op in compact} >= {(7, 9), (3, 9)}


def looped(P, idx, x, n):
    """The gathered rows read inside a loop with a trip count known at run time."""
    q = P[idx]
    acc = x * 0.0
    for i in range(n):
        acc = acc * q[:, 2:] + q[:, :2] * x
    return acc


def test_compact_tangents_read_in_a_loop():
    args, _ = data("projection", 5, 3, 2)
    P, idx, x = args
    got = irad.jacfwd(looped)(P, idx, x, 3)
    want = jax.jacfwd(lambda P: looped_jax(P, idx, x, 3))(P)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(got, central_jacobian(looped, (P, idx, x, 3), 0), rtol=1e-6, atol=1e-7)


def looped_jax(P, idx, x, n):
    q = P[idx]
    acc = x * 0.0
    for _ in range(n):
        acc = acc * q[:, 2:] + q[:, :2] * x
    return acc


def test_hessian_over_gathered_parameters():
    """Forward over the reverse sweep: the compact tangents meet the
    scatter-add of the gradient (dense from there)."""
    args, _ = data("bundle", 5, 2, 4)

    def loss(cams, points, cam_index, point_index, observed):
        r = NP["bundle"](cams, points, cam_index, point_index, observed)
        return np.sum(r * r)

    def loss_jax(cams, points, cam_index, point_index, observed):
        r = JNP["bundle"](cams, points, cam_index, point_index, observed)
        return jnp.sum(r * r)

    got = irad.hessian(loss)(*args)
    np.testing.assert_allclose(got, jax.hessian(loss_jax)(*args), rtol=1e-10, atol=1e-10)


def root(p, idx, x):
    return np.sqrt(p[idx]) * x


def test_an_infinite_partial_stays_in_its_entries():
    """d sqrt(p)/dp is inf at p = 0: the observations of that camera hold it in
    its column; their other columns are 0 (JAX's jacfwd spreads 0 * inf = nan
    there), and every other entry matches central differences."""
    p = np.array([[0.0], [1.5], [2.0]])
    idx = np.array([1, 0, 2, 1, 2])
    x = np.arange(10.0).reshape(5, 2) + 1
    J = irad.jacfwd(root)(p, idx, x)
    assert J.shape == (5, 2, 3, 1)
    zero_rows = idx == 0
    assert np.all(np.isinf(J[zero_rows][:, :, 0, 0]))
    np.testing.assert_array_equal(J[zero_rows][:, :, 1:, 0], 0.0)
    shifted = central_jacobian(root, (p + np.array([[1.0], [0.0], [0.0]]), idx, x), 0)  # camera 0 unused there
    np.testing.assert_allclose(J[~zero_rows], shifted[~zero_rows], rtol=1e-6, atol=1e-7)


@pytest.mark.native
def test_native_bundle_jacfwd_matches_jax():
    check("bundle", *data("bundle", 6, 2, 2), backend="native")


def two_gathers(P, i, j, x):
    """Two gathers of one parameter by different indices: their sum falls back to the dense form."""
    return (P[i] - P[j])[:, :2] * x + P[i][:, 1:] * P[j][:, :2]


def grid(P, idx, x):
    """A 2-D index array (rows of pairs)."""
    return (P[idx] * x[:, :, None]).sum(axis=1)


def scalars(w, idx, x):
    """A vector of parameters, one per row (m = 1)."""
    return np.tanh(w[idx]) * x


@pytest.mark.parametrize("f", [two_gathers, grid, scalars], ids=lambda f: f.__name__)
def test_other_gathers(f):
    rng = np.random.default_rng(11)
    if f is two_gathers:
        args = (rng.normal(size=(4, 3)), np.array([0, 3, 3, 1, 0]), np.array([2, 2, 0, 1, 3]), rng.normal(size=(5, 2)))
    elif f is grid:
        args = (rng.normal(size=(4, 3)), np.array([[0, 3], [3, 3], [1, 0]]), rng.normal(size=(3, 2)))
    else:
        args = (rng.normal(size=4), np.array([0, 3, 3, 1, 0, 2]), rng.normal(size=6))
    got = irad.jacfwd(f)(*args)
    np.testing.assert_allclose(got, central_jacobian(f, args, 0), rtol=1e-6, atol=1e-7)
    want = jax.jacfwd(lambda p: JAX_FORMS[f.__name__](p, *args[1:]))(args[0])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)


JAX_FORMS = {
    "two_gathers": lambda P, i, j, x: (P[i] - P[j])[:, :2] * x + P[i][:, 1:] * P[j][:, :2],
    "grid": lambda P, idx, x: (P[idx] * x[:, :, None]).sum(axis=1),
    "scalars": lambda w, idx, x: jnp.tanh(w[idx]) * x,
}


def rotate(w, p):
    """Rodrigues' rotation of the rows of p by the rows of w (a helper: its jvp is a call)."""
    theta = np.sqrt(np.sum(w * w, axis=1, keepdims=True))
    k = w / theta
    cos, sin = np.cos(theta), np.sin(theta)
    return p * cos + np.cross(k, p) * sin + k * np.sum(k * p, axis=1, keepdims=True) * (1.0 - cos)


def project(c, q):
    """Two forward twins of one owner (slots shared), and a result whose rows merge (dense at its return)."""
    return (c[:, 6:7] * (q[:, :2] / q[:, 2:3])).ravel()


def through_helpers(cams, points, cam_index, point_index, observed):
    c, p = cams[cam_index], points[point_index]
    return project(c, rotate(c[:, :3], p) + c[:, 3:6]) - observed.ravel()


def test_compact_tangents_cross_calls():
    """A helper's batched jvp takes the forward twins and their index array
    (signature letter g) and returns its results' twins: values as JAX's and
    central differences."""
    args, argnums = data("bundle", 6, 3, 9)
    got = irad.jacfwd(through_helpers, argnums=argnums)(*args)
    want = jax.jacfwd(JNP["bundle"], argnums=argnums)(*args)
    for i, g, w in zip(argnums, got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(g, central_jacobian(through_helpers, args, i), rtol=1e-6, atol=1e-7)
    jac = irad.jacfwd(through_helpers, argnums=argnums)
    module, *_ = lowered(jac, as_signature(jac._arguments(args, {})[1]))
    VmapPass().apply(Context(), module)
    signatures = {f.sym_name.data.rsplit(".", 1)[-1] for f in module.ops
                  if isinstance(f, func.FuncOp) and f.sym_name.data.startswith(("rotate.jvp", "project.jvp"))
                  and ".vmap." in f.sym_name.data}
    assert {"uug", "uugg"} <= signatures, signatures  # (primal, tangent): rotate(w, p; dw), project(c, q; dc, dq)


def sliced_gathers(xp):
    """The bundle's residuals with each camera part gathered apart: columns of
    the cameras gathered (`cams[cam_index, 6:7]`), and `cams[cam_index]` written
    twice (two gathers by one index array, each wrapped apart)."""

    def residuals(cams, points, cam_index, point_index, observed):
        w, t, f = cams[cam_index][:, :3], cams[cam_index][:, 3:6], cams[cam_index, 6:7]
        p = points[point_index]
        theta = xp.sqrt(xp.sum(w * w, axis=1, keepdims=True))
        k = w / theta
        cos, sin = xp.cos(theta), xp.sin(theta)
        q = p * cos + xp.cross(k, p) * sin + k * xp.sum(k * p, axis=1, keepdims=True) * (1.0 - cos) + t
        return (f * (q[:, :2] / q[:, 2:3]) - observed).ravel()

    return residuals


SLICED_NP, SLICED_JNP = sliced_gathers(np), sliced_gathers(jnp)


def test_sliced_and_repeated_gathers():
    args, argnums = data("bundle", 7, 3, 6)
    got = irad.jacfwd(SLICED_NP, argnums=argnums)(*args)
    want = jax.jacfwd(SLICED_JNP, argnums=argnums)(*args)
    for i, g, w in zip(argnums, got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(g, central_jacobian(SLICED_NP, args, i), rtol=1e-6, atol=1e-7)


def test_compositions_match_jax():
    """The compact code batched again (vmap over the index array and the
    observations) and differentiated again (jacfwd, jacrev over jacfwd)."""
    rng = np.random.default_rng(0)
    P = rng.normal(size=(3, 3)) + np.array([0.0, 0.0, 3.0])
    idx, x = rng.integers(0, 3, (4, 5)), rng.normal(size=(4, 5, 2))
    f, g = NP["projection"], JNP["projection"]
    for axes, i in (((None, 0, 0), idx), ((None, None, 0), idx[0])):
        np.testing.assert_allclose(irad.vmap(irad.jacfwd(f), in_axes=axes)(P, i, x),
                                   jax.vmap(jax.jacfwd(g), in_axes=axes)(P, i, x), rtol=1e-12, atol=1e-13)
    for outer, jax_outer in ((irad.jacfwd, jax.jacfwd), (irad.jacrev, jax.jacrev)):
        np.testing.assert_allclose(outer(irad.jacfwd(f))(P, idx[0], x[0]), jax_outer(jax.jacfwd(g))(P, idx[0], x[0]),
                                   rtol=1e-12, atol=1e-13)
