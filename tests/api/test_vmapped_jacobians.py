"""jacfwd, jacrev and hessian as one vmapped jvp (vjp) over the identity basis
per argument (output) leaf (irad/frontend/transformations.py): their code
does not grow with the Jacobian, and where irad-vmap cannot batch the sweep
(forward mode over a tape) it unrolls it (passes/batching/unroll.py).

Checked against JAX's jacfwd/jacrev/hessian and central differences, float64.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import irad
import irad.passes.vmap as vmap_pass
from tests.reference import central_jacobian

jax.config.update("jax_enable_x64", True)


def mixing(x, B):
    return np.tanh(B @ x) * np.sum(x)


def mixing_jax(x, B):
    return jnp.tanh(B @ x) * jnp.sum(x)


def data(n: int, m: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=n), rng.normal(size=(m, n)) / np.sqrt(n)


@pytest.mark.parametrize("n", [1, 3, 64])
@pytest.mark.parametrize("kind", ["jacfwd", "jacrev"])
def test_jacobian_of_a_map_from_rn_to_rm(kind, n):
    x, B = data(n, 5 if n > 1 else 2)
    got = getattr(irad, kind)(mixing)(x, B)
    assert got.shape == (B.shape[0], n)
    np.testing.assert_allclose(got, getattr(jax, kind)(mixing_jax)(x, B), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(got, central_jacobian(mixing, (x, B), 0), rtol=1e-6, atol=1e-8)


@pytest.mark.native
@pytest.mark.parametrize("kind", ["jacfwd", "jacrev", "hessian"])
def test_native_jacobians_match_jax(kind):
    x, B = data(8, 8)
    f, f_jax = (mixing, mixing_jax) if kind != "hessian" else (energy, energy_jax)
    J = getattr(irad, kind)(f, backend="native")
    got = J(x, B)
    assert J.wait_optimised()
    np.testing.assert_allclose(got, getattr(jax, kind)(f_jax)(x, B), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(J(x, B), got, rtol=0, atol=0)


def energy(x, B):
    return np.sum(np.sin(B @ x) * x)


def energy_jax(x, B):
    return jnp.sum(jnp.sin(B @ x) * x)


@pytest.mark.parametrize("n", [1, 3, 64])
def test_hessian_matches_jax_and_differences_of_the_gradient(n):
    x, B = data(n, n)
    got = irad.hessian(energy)(x, B)
    np.testing.assert_allclose(got, jax.hessian(energy_jax)(x, B), rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(got, central_jacobian(irad.grad(energy), (x, B), 0), rtol=1e-6, atol=1e-7)


def matrix_and_scalar(p, s):
    y = np.tanh(p["W"] @ p["v"]) * s
    return {"y": y, "total": np.sum(y * y), "scaled": p["W"] * s}


def matrix_and_scalar_jax(p, s):
    y = jnp.tanh(p["W"] @ p["v"]) * s
    return {"y": y, "total": jnp.sum(y * y), "scaled": p["W"] * s}


@pytest.mark.parametrize("kind", ["jacfwd", "jacrev"])
def test_pytrees_and_argnums_tuples_match_jax(kind):
    rng = np.random.default_rng(1)
    p = {"W": rng.normal(size=(3, 4)), "v": rng.normal(size=4)}
    s = 0.7
    got = getattr(irad, kind)(matrix_and_scalar, argnums=(0, 1))(p, s)
    want = getattr(jax, kind)(matrix_and_scalar_jax, argnums=(0, 1))(p, s)
    for out in want:
        for arg in (0, 1):
            leaves = want[out][arg] if arg == 0 else {"": want[out][arg]}
            mine = got[out][arg] if arg == 0 else {"": got[out][arg]}
            for leaf in leaves:
                assert np.shape(mine[leaf]) == np.shape(leaves[leaf]), (out, arg, leaf)
                np.testing.assert_allclose(mine[leaf], leaves[leaf], rtol=1e-12, atol=1e-13, err_msg=f"{out} {leaf}")


def with_aux(x, B):
    y = np.tanh(B @ x)
    return y * x[:2], {"norm": np.sum(y * y), "count": 3}


def with_aux_jax(x, B):
    y = jnp.tanh(B @ x)
    return y * x[:2], {"norm": jnp.sum(y * y), "count": 3}


@pytest.mark.parametrize("kind", ["jacfwd", "jacrev"])
def test_has_aux(kind):
    x, B = data(6, 2)
    got, aux = getattr(irad, kind)(with_aux, has_aux=True)(x, B)
    want, aux_want = getattr(jax, kind)(with_aux_jax, has_aux=True)(x, B)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)
    assert aux["count"] == 3 and aux["norm"] == pytest.approx(float(aux_want["norm"]), rel=1e-14)


def test_the_code_does_not_grow_with_the_jacobian():
    """One request per leaf: the module's op count at n = 64 is that at n = 8."""
    sizes = []
    for n in (8, 64):
        x, B = data(n, n)
        for kind in ("jacfwd", "jacrev", "hessian"):
            f = energy if kind == "hessian" else mixing
            sizes.append((kind, sum(1 for _ in getattr(irad, kind)(f).lower(x, B).walk())))
    assert sizes[:3] == sizes[3:]


def looped(x, n):
    v = x
    for _ in range(n):
        v = np.tanh(v * 0.5 + np.sum(v) * 0.1)
    return np.sum(v * v)


def test_a_hessian_through_a_loop_unrolls_its_sweeps(monkeypatch):
    """Forward mode over a tape cannot be batched: the sweeps are requests of
    their own, per element (irad-vmap's fallback is not needed)."""
    unrolled = []
    unroll = vmap_pass.unroll
    monkeypatch.setattr(vmap_pass, "unroll", lambda request: (unrolled.append(request.size), unroll(request)))
    x = np.array([0.3, -0.2, 0.5, 0.1])
    got = irad.hessian(looped)(x, 3)
    assert unrolled == []
    np.testing.assert_allclose(got, central_jacobian(irad.grad(looped), (x, 3), 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(got, got.T, rtol=1e-12, atol=1e-14)


def test_a_vmap_of_a_hessian_through_a_loop():
    xs = np.array([[0.3, -0.2], [0.1, 0.4]])
    got = irad.vmap(irad.hessian(looped), in_axes=(0, None))(xs, 3)
    for x, h in zip(xs, got):
        np.testing.assert_allclose(h, central_jacobian(irad.grad(looped), (x, 3), 0), rtol=1e-6, atol=1e-8)


@pytest.mark.native
def test_batched_reductions_natively_keep_their_own_values():
    """Two batched sums: their inits (a broadcast of one constant) once shared
    one destination natively, and both results were the first."""

    def two(x):
        return np.sum(x * 2.0), np.sum(np.cos(x))

    xs = np.arange(6.0).reshape(2, 3)
    got = irad.vmap(two, backend="native")(xs)
    np.testing.assert_allclose(got[0], [6.0, 24.0], rtol=1e-15)
    np.testing.assert_allclose(got[1], np.sum(np.cos(xs), axis=1), rtol=1e-14)


@pytest.mark.parametrize("kind", ["jacfwd", "jacrev"])
def test_float32_and_empty_leaves(kind):
    x, B = data(5, 5)
    got = getattr(irad, kind)(mixing)(x.astype(np.float32), B.astype(np.float32))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, getattr(jax, kind)(mixing_jax)(x, B), rtol=1e-5, atol=1e-6)

    def split(u, v):
        return np.sin(u) * 2.0, v * 3.0

    blocks = getattr(irad, kind)(split, argnums=(0, 1))(np.zeros(0), np.ones(3))
    assert [[np.shape(b) for b in row] for row in blocks] == [[(0, 0), (0, 3)], [(3, 0), (3, 3)]]
    np.testing.assert_array_equal(blocks[1][1], 3.0 * np.eye(3))


@pytest.mark.parametrize("kind", ["jacfwd", "jacrev"])
def test_vmap_of_a_jacobian_and_a_jacobian_of_a_vmap(kind):
    xs, B = np.random.default_rng(2).normal(size=(4, 5)), data(5, 5)[1]
    got = irad.vmap(getattr(irad, kind)(mixing), in_axes=(0, None))(xs, B)
    np.testing.assert_allclose(got, jax.vmap(getattr(jax, kind)(mixing_jax), in_axes=(0, None))(xs, B),
                               rtol=1e-12, atol=1e-13)
    rows = getattr(irad, kind)(irad.vmap(mixing, in_axes=(0, None)))(xs, B)
    np.testing.assert_allclose(rows, jax.jacfwd(jax.vmap(mixing_jax, in_axes=(0, None)))(xs, B),
                               rtol=1e-12, atol=1e-13)
