"""np.linalg (irad/frontend/numpy_linalg.py, irad/linalg.py, irad/frontend/linalg_rules.py):
values against numpy, gradients against float64 central differences, forward
against reverse, float32, batched shapes, second derivatives, the points where
a naive derivative is undefined, and errors; on both backends (native: marked
`native`, LAPACK through irad/backends/native/linalg.py)."""

import numpy as np
import pytest

import irad
from irad import linalg
from irad.backends.native.compile import unavailable_reason
from irad.base.errors import RuntimeCheckError
from irad.frontend import linalg_rules
from irad.rules import list_rules
from tests.array_checks import check_program, with_backends

NATIVE_MISSING = unavailable_reason()
native = pytest.mark.skipif(NATIVE_MISSING is not None, reason=str(NATIVE_MISSING))
BACKENDS = ["python", pytest.param("native", marks=[pytest.mark.native, native])]


def normal(*shape, seed=0):
    return np.random.default_rng(seed + 7 * len(shape) + sum(shape)).normal(size=shape)


def well_conditioned(*shape):
    return normal(*shape) + 3.0 * np.eye(shape[-1])


def positive_definite(*shape):
    x = normal(*shape)
    return x @ np.swapaxes(x, -1, -2) + shape[-1] * np.eye(shape[-1])


# ---- programs -------------------------------------------------------------------------
def solve_vector(a, b):
    return np.sum(np.sin(np.linalg.solve(a, b)))


def inv_sum(a):
    return np.sum(np.sin(np.linalg.inv(a)))


def det_of(a):
    return np.sum(np.linalg.det(a) ** 2)


def logdet(a):
    return np.sum(np.linalg.slogdet(a)[1])


def cholesky_sum(a):
    return np.sum(np.sin(np.linalg.cholesky(a)))


def cholesky_upper(a):
    return np.sum(np.sin(np.linalg.cholesky(a, upper=True)))


def eigh_both(a):
    w, v = np.linalg.eigh(a)
    return np.sum(np.sin(w)) + np.sum(v ** 4)


def eigh_upper(a):
    w, v = np.linalg.eigh(a, "U")
    return np.sum(w * w) + np.sum(v ** 4)


def eigvalsh_squares(a):
    return np.sum(np.linalg.eigvalsh(a) ** 2)


def svd_all(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return np.sum(s) + np.sum(u ** 4) + np.sum(vt ** 4)


def svd_values(a):
    return np.sum(np.linalg.svd(a, compute_uv=False) ** 3) + np.sum(np.linalg.svdvals(a))


def qr_both(a):
    q, r = np.linalg.qr(a)
    return np.sum(np.sin(q)) + np.sum(r * r * r)


def qr_r(a):
    return np.sum(np.linalg.qr(a, mode="r") ** 2)


def pinv_sum(a):
    return np.sum(np.sin(np.linalg.pinv(a)))


def pinv_rcond(a):
    return np.sum(np.linalg.pinv(a, rcond=1e-10) ** 2)


def matrix_powers(a):
    return (np.sum(np.linalg.matrix_power(a, 3)) + np.sum(np.linalg.matrix_power(a, -2))
            + np.sum(np.linalg.matrix_power(a, 0)) + np.sum(np.linalg.matrix_power(a, 1) ** 2))


def norm_default(x):
    return np.linalg.norm(x)


def norm_1(x):
    return np.linalg.norm(x, 1)


def norm_2(x):
    return np.linalg.norm(x, 2)


def norm_inf(x):
    return np.linalg.norm(x, np.inf)


def norm_minus_inf(x):
    return np.linalg.norm(x, -np.inf)


def norm_3(x):
    return np.linalg.norm(x, 3)


def norm_half(x):
    return np.linalg.norm(x, 0.5)


def norm_0(x):
    return np.linalg.norm(x, 0) + np.sum(x)


def norm_minus_1(x):
    return np.linalg.norm(x, -1)


def norm_minus_2(x):
    return np.linalg.norm(x, -2)


def norm_fro(x):
    return np.linalg.norm(x, "fro")


def norm_nuc(x):
    return np.linalg.norm(x, "nuc")


def norm_axis(x):
    return np.sum(np.linalg.norm(x, axis=1) ** 2) + np.sum(np.linalg.norm(x, 3, axis=-1))


def norm_matrix_axes(x):
    return np.sum(np.linalg.norm(x, "nuc", axis=(0, 2))) + np.sum(np.linalg.norm(x, np.inf, axis=(2, 1)))


def norm_keepdims(x):
    return np.sum(x / np.linalg.norm(x, axis=0, keepdims=True))


def vector_and_matrix_norms(x):
    return np.sum(np.linalg.vector_norm(x, axis=(1, 2), ord=1)) + np.sum(np.linalg.matrix_norm(x, ord=2))


VECTOR = normal(5)
MATRIX = normal(3, 4)
CASES = [
    (solve_vector, lambda: (well_conditioned(4, 4), normal(4))),
    (solve_vector, lambda: (well_conditioned(2, 1, 3, 3), normal(4, 3, 2))),  # batch axes broadcast
    (solve_vector, lambda: (well_conditioned(3, 3, 3), normal(3))),  # one vector, many matrices
    (inv_sum, lambda: (well_conditioned(4, 4),)),
    (inv_sum, lambda: (well_conditioned(2, 2, 3, 3),)),
    (det_of, lambda: (normal(4, 4),)),
    (det_of, lambda: (normal(3, 3, 3),)),
    (logdet, lambda: (normal(4, 4),)),
    (logdet, lambda: (-normal(4, 4),)),
    (logdet, lambda: (well_conditioned(3, 4, 4),)),
    (cholesky_sum, lambda: (positive_definite(4, 4),)),
    (cholesky_sum, lambda: (positive_definite(3, 3, 3),)),
    (cholesky_upper, lambda: (positive_definite(4, 4),)),
    (eigh_both, lambda: (positive_definite(4, 4),)),
    (eigh_both, lambda: (positive_definite(2, 3, 4, 4),)),
    (eigh_upper, lambda: (positive_definite(4, 4),)),
    (eigvalsh_squares, lambda: (normal(4, 4),)),
    (svd_all, lambda: (normal(4, 4),)),
    (svd_all, lambda: (normal(3, 5),)),
    (svd_all, lambda: (normal(5, 3),)),
    (svd_all, lambda: (normal(2, 3, 5),)),
    (svd_values, lambda: (normal(5, 3),)),
    (qr_both, lambda: (normal(5, 3),)),
    (qr_both, lambda: (normal(4, 4),)),
    (qr_both, lambda: (normal(3, 5),)),
    (qr_both, lambda: (normal(2, 4, 3),)),
    (qr_r, lambda: (normal(4, 3),)),
    (pinv_sum, lambda: (normal(3, 5),)),
    (pinv_sum, lambda: (normal(2, 5, 3),)),
    (pinv_rcond, lambda: (normal(4, 4),)),
    (matrix_powers, lambda: (well_conditioned(3, 3),)),
    (matrix_powers, lambda: (well_conditioned(2, 3, 3),)),
    *((f, lambda: (VECTOR,)) for f in (norm_default, norm_1, norm_2, norm_inf, norm_minus_inf, norm_3,
                                       norm_half, norm_0, norm_minus_1)),
    *((f, lambda: (MATRIX,)) for f in (norm_default, norm_fro, norm_nuc, norm_1, norm_minus_1, norm_2,
                                       norm_minus_2, norm_inf, norm_minus_inf)),
    (norm_axis, lambda: (normal(3, 4, 2),)),
    (norm_matrix_axes, lambda: (normal(3, 4, 2),)),
    (norm_keepdims, lambda: (normal(3, 4),)),
    (vector_and_matrix_norms, lambda: (normal(2, 3, 4),)),
]


@pytest.mark.parametrize(("f", "make", "backend"), with_backends(CASES))
def test_linalg_function(f, make, backend):
    # float32 (LAPACK's single-precision routines) on the Python backend, where compiling is cheap
    check_program(f, make(), backend=backend, float32=backend == "python", rtol=1e-5)


# ---- every entry of irad.linalg, called directly (as the op sweep does for ops) -----------
def p_solve(a, b):
    x, ok = linalg.solve(a, b)
    return np.sum(np.sin(x))


def p_slogdet(a):
    sign, value = linalg.slogdet(a)
    return np.sum(value)


def p_det(a):
    return np.sum(linalg.det(a))


def p_cholesky(a):
    factor, ok = linalg.cholesky(a)
    return np.sum(np.sin(factor))


def p_eigh(a):
    w, v, ok = linalg.eigh(a)
    return np.sum(w * w) + np.sum(v ** 4)


def p_svd(a):
    u, s, vt, ok = linalg.svd(a)
    return np.sum(s) + np.sum(u ** 4) + np.sum(vt ** 4)


def p_qr(a):
    q, r = linalg.qr(a)
    return np.sum(np.sin(q)) + np.sum(r ** 3)


def p_pinv(a):
    inverse, ok = linalg.pinv(a, 1e-15)
    return np.sum(np.sin(inverse))


def p_norm2(x):
    return np.sum(linalg.norm2(x))


def p_pnorm(x):
    return np.sum(linalg.pnorm(x, 3.0))


ENTRIES = {
    linalg.solve: (p_solve, lambda: (well_conditioned(2, 3, 3), normal(2, 3, 2))),
    linalg.slogdet: (p_slogdet, lambda: (normal(2, 3, 3),)),
    linalg.det: (p_det, lambda: (normal(2, 3, 3),)),
    linalg.cholesky: (p_cholesky, lambda: (positive_definite(2, 3, 3),)),
    linalg.eigh: (p_eigh, lambda: (positive_definite(2, 3, 3),)),
    linalg.svd: (p_svd, lambda: (normal(2, 3, 4),)),
    linalg.qr: (p_qr, lambda: (normal(2, 4, 3),)),
    linalg.pinv: (p_pinv, lambda: (normal(2, 4, 3),)),
    linalg.norm2: (p_norm2, lambda: (normal(3, 4),)),
    linalg.pnorm: (p_pnorm, lambda: (normal(3, 4),)),
}


@pytest.mark.parametrize("target", [t for t, _, _ in linalg_rules.RULES], ids=lambda t: t.__name__)
def test_every_linalg_entry(target):
    """Each rule-table entry of irad.linalg on stacks, on its own: a new entry
    joins this sweep by itself, and fails until ENTRIES says how to sample it."""
    assert target in ENTRIES, f"{target.__name__}: add a program and arguments to ENTRIES in {__file__}"
    f, make = ENTRIES[target]
    check_program(f, make(), float32=True, rtol=1e-5)


# ---- second derivatives ---------------------------------------------------------------
def d_inv(a):
    return np.sum(np.sin(irad.grad(inv_sum)(a)))


def d_logdet(a):
    return np.sum(np.sin(irad.grad(logdet)(a)))


def d_det(a):
    return np.sum(np.sin(irad.grad(det_of)(a)))


def d_cholesky(a):
    return np.sum(np.sin(irad.grad(cholesky_sum)(a)))


def d_eigh(a):
    return np.sum(np.sin(irad.grad(eigh_both)(a)))


def d_svd(a):
    return np.sum(np.sin(irad.grad(svd_all)(a)))


def d_qr(a):
    return np.sum(np.sin(irad.grad(qr_both)(a)))


def d_norm(a):
    return np.sum(np.sin(irad.grad(norm_nuc)(a)))


SECOND = [
    (d_inv, inv_sum, lambda: well_conditioned(3, 3)),
    (d_logdet, logdet, lambda: well_conditioned(2, 3, 3)),
    (d_det, det_of, lambda: normal(3, 3)),
    (d_cholesky, cholesky_sum, lambda: positive_definite(3, 3)),
    (d_eigh, eigh_both, lambda: positive_definite(3, 3)),
    (d_svd, svd_all, lambda: normal(2, 3)),
    (d_qr, qr_both, lambda: normal(3, 2)),
    (d_norm, norm_nuc, lambda: normal(3, 2)),
]


@pytest.mark.parametrize(("second", "first", "make"), SECOND, ids=[s.__name__ for s, _, _ in SECOND])
def test_second_derivative(second, first, make):
    """The gradient of a function of the gradient, against central differences
    of the first gradient (itself checked against central differences above)."""
    a = make()
    got = irad.grad(second)(a)

    def outer(x):
        return float(np.sum(np.sin(irad.grad(first)(x))))

    h = 1e-5
    expected = np.zeros_like(a)
    for index in np.ndindex(a.shape):
        step = np.zeros_like(a)
        step[index] = h
        expected[index] = (outer(a + step) - outer(a - step)) / (2 * h)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-6)


# ---- where the naive derivative is undefined ----------------------------------------------
def det_plain(a):
    return np.linalg.det(a)


@pytest.mark.parametrize("backend", BACKENDS)
def test_det_gradient_at_a_singular_matrix_is_the_cofactor_matrix(backend):
    a = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]])  # rank 2
    got = irad.grad(det_plain, backend=backend)(a)
    cofactors = np.array([[np.linalg.det(np.delete(np.delete(a, i, 0), j, 1)) * (-1) ** (i + j)
                           for j in range(3)] for i in range(3)])
    np.testing.assert_allclose(got, cofactors, atol=1e-10)
    assert np.abs(cofactors).max() > 1.0  # not the zero matrix


@pytest.mark.parametrize("backend", BACKENDS)
def test_values_are_exact_at_repeated_eigen_and_singular_values(backend):
    # sum(w^2) = |S|_F^2 and sum(s^2) = |A|_F^2 are smooth at repeated values
    for f, a in ((eigvalsh_squares, np.eye(3)), (eigvalsh_squares, np.diag([2.0, 2.0, 5.0])),
                 (svd_values, np.eye(3)[:, :2] * 2.0)):
        check_program(f, (a,), backend=backend)


def eigh_vector(a):
    return np.sum(np.linalg.eigh(a)[1][:, 0] * np.array([1.0, 2.0, 3.0]))


def test_eigenvector_gradient_at_repeated_eigenvalues_is_not_a_number():
    """The first eigenvector of the identity is any unit vector: no finite
    gradient would be right, so none is given."""
    g = irad.grad(eigh_vector)(np.eye(3))
    assert not np.all(np.isfinite(g))
    assert np.all(np.isfinite(irad.grad(eigh_vector)(np.diag([1.0, 2.0, 3.0]))))


def eigh_first_vector_weighted(a):
    return np.sum(np.linalg.eigh(a)[1][:, 0] ** 2 * np.array([1.0, 2.0]))


def test_eigenvector_gradient_at_repeated_eigenvalues_is_not_a_number_where_the_rotation_term_is_zero():
    """At the identity the loss is stationary under a rotation of the basis
    (its coupling numerator is exactly 0), but the first eigenvector of
    I + t E jumps with E's: no gradient. JAX gives NaN; irad gave 0."""
    g = irad.grad(eigh_first_vector_weighted)(np.eye(2))
    assert np.isnan(g).any() and not np.isfinite(g).all()


def slogdet_log(a):
    return np.linalg.slogdet(a)[1]


@pytest.mark.parametrize("backend", BACKENDS)
def test_slogdet_gradient_at_a_singular_matrix_is_not_a_number(backend):
    """log|det| is -inf there and its gradient a^-T does not exist: NaN on
    every backend (natively, the failed LAPACK solve fills its result with
    NaN, as the Python backend's primitive does)."""
    value, g = irad.value_and_grad(slogdet_log, backend=backend)(np.array([[1.0, 2.0], [2.0, 4.0]]))
    assert value == -np.inf
    assert np.isnan(g).all()


@pytest.mark.parametrize("backend", BACKENDS)
def test_norm_gradient_at_zero_is_zero(backend):
    for f in (norm_default, norm_2, norm_3, norm_half, norm_fro):
        x = np.zeros((3, 2)) if f is norm_fro else np.zeros(4)
        g = irad.grad(f, backend=backend)(x)
        assert np.array_equal(g, np.zeros_like(x)), (f.__name__, g)


def cholesky_plain(a):
    return np.sum(np.linalg.cholesky(a) * np.arange(9.0).reshape(3, 3))


def test_cholesky_reads_the_lower_triangle_like_numpy():
    """numpy reads the lower triangle only: the gradient is zero on the strict
    upper triangle, and central differences of numpy agree everywhere."""
    a = positive_definite(3, 3) + np.triu(normal(3, 3), 1)  # not symmetric
    g = irad.grad(cholesky_plain)(a)
    assert np.array_equal(np.triu(g, 1), np.zeros((3, 3)))
    check_program(cholesky_plain, (a,))


# ---- errors ---------------------------------------------------------------------------------
def solve_singular(a):
    return np.sum(np.linalg.solve(a, np.ones(2)))


def cholesky_indefinite(a):
    return np.sum(np.linalg.cholesky(a))


def svd_full(a):
    return np.sum(np.linalg.svd(a)[0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_singular_matrix_is_a_located_runtime_error(backend):
    with pytest.raises(RuntimeCheckError, match=r"test_numpy_linalg.py:\d+:\d+: np.linalg.solve: Singular matrix"):
        irad.grad(solve_singular, backend=backend)(np.ones((2, 2)))
    with pytest.raises(RuntimeCheckError, match=r"np.linalg.cholesky: Matrix is not positive definite"):
        irad.grad(cholesky_indefinite, backend=backend)(-np.eye(2))
    # the process carries on, and the same compiled code runs on good input
    assert np.isfinite(irad.grad(solve_singular, backend=backend)(np.eye(2))).all()


def test_unsupported_forms_are_located_errors():
    with pytest.raises(irad.UnsupportedError, match=r"full_matrices=True.*\n  hint: pass full_matrices=False") as info:
        irad.grad(svd_full)(normal(3, 4))
    assert "test_numpy_linalg.py:" in str(info.value)
    irad.grad(svd_full)(normal(3, 3))  # square: full and reduced are the same


# ---- the rule table ------------------------------------------------------------------------
TARGETS = ["irad.linalg." + name for name in
           ("solve", "slogdet", "det", "cholesky", "eigh", "svd", "qr", "pinv", "norm2", "pnorm")]


def test_every_linalg_function_is_one_table_entry_per_mode():
    for target in TARGETS:
        kinds = sorted(rule.kind for rule in list_rules(target))
        assert kinds == ["frule", "rrule"], (target, kinds)


def test_opting_out_of_a_primitive_is_a_clear_error(rule_table):
    irad.opt_out(linalg.solve)
    with pytest.raises(irad.DifferentiationError, match=r"irad\.linalg\.solve"):
        irad.grad(inv_sum)(well_conditioned(3, 3))


def test_a_user_rule_for_a_numpy_linalg_function_wins(rule_table):
    @irad.rrule(np.linalg.det)
    def det_rule(a):
        def pullback(dd):
            return dd * np.ones_like(a)

        return np.linalg.det(a), pullback

    np.testing.assert_array_equal(irad.grad(det_plain)(normal(3, 3)), np.ones((3, 3)))


def logdet_plain(a):
    sign, value = np.linalg.slogdet(a)
    return value


def test_a_user_rule_for_a_function_with_two_results(rule_table):
    @irad.rrule(np.linalg.slogdet)
    def slogdet_rule(a):
        def pullback(dsign, dlogdet):
            return dlogdet * np.ones_like(a)

        return np.linalg.slogdet(a), pullback

    np.testing.assert_array_equal(irad.grad(logdet_plain)(2.0 * np.eye(2)), np.ones((2, 2)))


def test_primitives_run_as_numpy():
    a = well_conditioned(2, 3, 3)
    x, ok = linalg.solve(a, a[:, :, :1])
    assert ok and np.allclose(a @ x, a[:, :, :1])
    np.testing.assert_allclose(linalg.det(a), np.linalg.det(a))
