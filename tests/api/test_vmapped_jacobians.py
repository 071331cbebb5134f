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
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects.linalg.ops import MatmulOp

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


# ---- basis-aware batching (passes/batching/basis.py) ------------------------------------
# A matmul with the identity basis, or a diagonal scaling of it, is the other
# operand (scaled): no dense n³ product. Checked against JAX and central
# differences, and by the matmuls left in the module.
def layer(x, A):
    return np.tanh(A @ x) * x


def layer_jax(x, A):
    return jnp.tanh(A @ x) * x


def row_vector(x, A):
    return np.sin(x @ A) * x


def row_vector_jax(x, A):
    return jnp.sin(x @ A) * x


def two_layers(x, A):
    return A.T @ np.tanh(A @ x)


def two_layers_jax(x, A):
    return A.T @ jnp.tanh(A @ x)


def matrix_argument(X, A):
    return np.sin(A @ X) @ A[:3, :]


def matrix_argument_jax(X, A):
    return jnp.sin(A @ X) @ A[:3, :]


def _matmul_shapes(module) -> list[tuple[int, ...]]:
    return sorted(tuple(op.results[0].type.get_shape()) for op in module.walk() if isinstance(op, MatmulOp))


# (function, its JAX twin, {kind: the matmuls the optimised module keeps})
BASIS_CASES = [
    (layer, layer_jax, {"jacfwd": [(7, 1)], "jacrev": [(7, 1)]}),  # the primal's A @ x only
    (row_vector, row_vector_jax, {"jacfwd": [(1, 7)], "jacrev": [(1, 7)]}),
    # the product with the basis goes, the second is a true product (jacrev: the
    # primal's two matmuls, kept for their residuals)
    (two_layers, two_layers_jax, {"jacfwd": [(7, 1), (7, 7)], "jacrev": [(7, 1), (7, 1), (7, 7)]}),
]


@pytest.mark.parametrize("kind", ["jacfwd", "jacrev"])
@pytest.mark.parametrize("f, f_jax, kept", BASIS_CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_no_dense_product_with_the_basis(f, f_jax, kept, kind):
    rng = np.random.default_rng(3)
    x, A = rng.normal(size=7), rng.normal(size=(7, 7)) / 3
    J = getattr(irad, kind)(f)
    got = J(x, A)
    np.testing.assert_allclose(got, getattr(jax, kind)(f_jax)(x, A), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(got, central_jacobian(f, (x, A), 0), rtol=1e-6, atol=1e-8)
    assert _matmul_shapes(J.lower(x, A)) == sorted(kept[kind])


@pytest.mark.parametrize("kind", ["jacfwd", "jacrev"])
@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
def test_bases_the_products_keep_dense_match_jax(kind, argnums):
    """A matrix argument's basis (12 sweeps of a 4×3 tangent) and A's: products
    not with the identity as a square, which stay dense."""
    rng = np.random.default_rng(4)
    X, A = rng.normal(size=(4, 3)), rng.normal(size=(5, 4)) / 2
    got = getattr(irad, kind)(matrix_argument, argnums)(X, A)
    want = getattr(jax, kind)(matrix_argument_jax, argnums)(X, A)
    for g, w in zip(got if isinstance(argnums, tuple) else [got], want if isinstance(argnums, tuple) else [want]):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-13)
    for i in (argnums if isinstance(argnums, tuple) else [argnums]):
        block = got[list(argnums).index(i)] if isinstance(argnums, tuple) else got
        np.testing.assert_allclose(block, central_jacobian(matrix_argument, (X, A), i), rtol=1e-6, atol=1e-8)


@pytest.mark.native
def test_native_jacobians_without_dense_products_match_jax():
    rng = np.random.default_rng(5)
    x, A = rng.normal(size=6), rng.normal(size=(6, 6)) / 3
    for kind in ("jacfwd", "jacrev"):
        got = getattr(irad, kind)(two_layers, backend="native")(x, A)
        np.testing.assert_allclose(got, getattr(jax, kind)(two_layers_jax)(x, A), rtol=1e-12, atol=1e-13)


def product_left(X, A):
    return np.sin(A @ X)


def product_right(X, A):
    return np.sin(X @ A)


def product_left_transposed(X, A):
    return np.sin(A @ X.T)


def product_right_transposed(X, A):
    return np.sin(X.T @ A)


def product_of_a_square(X, A):
    return np.cos(A @ (X * X))


# name: (the function, X's shape and A's from (m, k, p))
PRODUCTS = {
    "left": (product_left, lambda m, k, p: ((k, p), (m, k))),
    "right": (product_right, lambda m, k, p: ((p, k), (k, m))),
    "left_transposed": (product_left_transposed, lambda m, k, p: ((p, k), (m, k))),
    "right_transposed": (product_right_transposed, lambda m, k, p: ((k, p), (k, m))),
    "square": (product_of_a_square, lambda m, k, p: ((k, p), (m, k))),
}


# irad raises the recursion limit while it compiles (irad/base/recursion.py), and
# keeps it raised while a native background compile's thread is alive
@pytest.mark.filterwarnings("ignore:The recursion limit will not be reset")
@settings(max_examples=16, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(sorted(PRODUCTS)), st.sampled_from(["jacfwd", "jacrev"]), st.integers(1, 4),
       st.integers(1, 4), st.integers(1, 3), st.integers(0, 2**16))
def test_products_with_a_basis_match_jax(name, kind, m, k, p, seed):
    """The basis meets a matmul on the left or the right, transposed or
    scaled, as a square (recognised: no dense product) or not (dense)."""
    f, shapes = PRODUCTS[name]
    rng = np.random.default_rng(seed)
    X, A = (rng.normal(size=s) for s in shapes(m, k, p))
    got = getattr(irad, kind)(f)(X, A)
    np.testing.assert_allclose(got, central_jacobian(f, (X, A), 0), rtol=1e-6, atol=1e-8)


def linear_plus(x, A):
    return x @ A + x


@pytest.mark.parametrize("kind", ["jacfwd", "jacrev"])
def test_a_product_that_is_an_argument_leaves_it_alone(kind):
    """With the basis, x @ A's batched product is A itself: what follows
    (+ x) must not write into the caller's array, and the Jacobian is fresh."""
    rng = np.random.default_rng(6)
    x, A = rng.normal(size=5), rng.normal(size=(5, 5))
    saved = A.copy()
    J = getattr(irad, kind)(linear_plus)
    for _ in range(2):
        got = J(x, A)
        np.testing.assert_array_equal(A, saved)
        assert not np.shares_memory(got, A)
        np.testing.assert_allclose(got, A.T + np.eye(5), rtol=1e-15, atol=0)
