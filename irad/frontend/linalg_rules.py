"""The rule-table entries of irad.linalg (irad/linalg.py): reverse and forward
rules side by side, written with the same rrule/frule users write.

Matrices are stacks (k, m, n); `_mT` transposes each. The rules call the
primitives themselves (solve's adjoint is another solve), so they are
differentiable again.

Where a derivative is not defined, the rules give NaN or inf, never a finite
number that would pass for one; where a function is defined but its naive
derivative is not, they give the right value:

- Repeated eigenvalues (eigh) and singular values (svd): the vectors are not
  unique there, and their derivative is defined only for losses that do not
  depend on the choice of basis. The reverse rules' terms that divide by the
  gap between two values are skipped when neither value's vectors have a
  cotangent (values-only gradients are exact at repeated values), and are
  otherwise inf/NaN at a zero gap, as JAX's (`_divide_coupled`); the forward
  rules skip a term whose numerator is exactly zero (a direction that does
  not rotate the vectors).
- eigh and cholesky read the lower triangle (numpy's UPLO='L'): the gradient
  is that of the function numpy computes, zero on the strict upper triangle
  (`_through_lower`). Its symmetric part is the gradient on symmetric
  matrices.
- det at a singular matrix: the cofactor matrix from the SVD, which does not
  divide by det (det * inv(a)^T would be 0 * inf there).
- norm2 and pnorm at zero: the subgradient 0.
"""

from __future__ import annotations

import numpy as np

from irad import linalg
from irad.frontend.registration import installer


# ---- helpers (lowered like the rules) ---------------------------------------------
def _mT(x):
    return np.transpose(x, (0, 2, 1))


# Masks are bool, and constants Python numbers, so float32 stays float32.
def _diagonal(x):
    """True on the diagonal of an (n, n) matrix, for x (k, n, ...)."""
    i = np.arange(x.shape[1])
    return i[:, None] == i[None, :]


def _below(x):
    """True below the diagonal of an (n, n) matrix, for x (k, n, ...)."""
    i = np.arange(x.shape[1])
    return i[:, None] > i[None, :]


def _identities(x):
    """A stack of identities shaped like x (k, n, n)."""
    return np.where(_diagonal(x), np.ones_like(x), np.zeros_like(x))


def _diagonal_matrices(v):
    """The stack of diagonal matrices with the rows of v (k, n) on their diagonals."""
    return np.where(_diagonal(v), v[:, :, None], 0.0)


def _diagonal_of(x):
    """The diagonals of a stack x (k, n, n), as rows (k, n)."""
    return np.sum(np.where(_diagonal(x), x, 0.0), axis=2)


def _divide_nonzero(num, den):
    """num / den where num is not 0, else 0, without a NaN in either branch
    (a where's unselected branch still gets a zero cotangent, and 0 / 0 would
    turn it into NaN)."""
    zero = num == 0.0
    return np.where(zero, 0.0, num / np.where(zero, 1.0, den))


def _divide_coupled(num, den, used):
    """num / den for the pairs (i, j), i != j, where vector i's or j's
    cotangent is nonzero (`used`, (k, n) bools), else 0: inf or NaN where such
    a pair's gap `den` is 0, never a finite number that would pass for a
    gradient (the unselected branch divides by 1, so a second derivative
    does not turn it into NaN)."""
    coupled = (used[:, :, None] | used[:, None, :]) & ~_diagonal(num)
    return np.where(coupled, num / np.where(coupled, den, 1.0), 0.0)


def _used(cotangent):
    """Which columns of a stack of matrices' cotangent are not all zero."""
    return np.max(np.abs(cotangent), axis=1) != 0.0


def _through_lower(g):
    """The cotangent of a when the function reads s = tril(a) + tril(a, -1)^T
    and g is the cotangent of s: both halves land on the lower triangle."""
    return np.where(_below(g), g + _mT(g), np.where(_diagonal(g), g, 0.0))


def _symmetric_from_lower(da):
    """tril(da) + tril(da, -1)^T: the symmetric matrix a function reading the lower triangle sees."""
    lower = np.where(_below(da), da, 0.0)
    return lower + _mT(lower) + np.where(_diagonal(da), da, 0.0)


# ---- solve -------------------------------------------------------------------------------
def solve_rule(a, b):
    x, ok = linalg.solve(a, b)

    def pullback(dx):
        db, _ = linalg.solve(_mT(a), dx)
        return -(db @ _mT(x)), db

    return (x, ok), pullback


def solve_frule(a, b, da, db):
    x, ok = linalg.solve(a, b)
    dx, _ = linalg.solve(a, db - da @ x)
    return (x, ok), (dx, None)


# ---- slogdet and det -----------------------------------------------------------------------
def slogdet_rule(a):
    sign, logdet = linalg.slogdet(a)

    def pullback(dsign, dlogdet):
        # d log|det a| = tr(a^-1 da); the sign is piecewise constant
        inverse_t, _ = linalg.solve(_mT(a), _identities(a))
        return dlogdet[:, None, None] * inverse_t

    return (sign, logdet), pullback


def slogdet_frule(a, da):
    sign, logdet = linalg.slogdet(a)
    inverse_t, _ = linalg.solve(_mT(a), _identities(a))
    return (sign, logdet), (None, np.sum(inverse_t * da, axis=(1, 2)))


def _cofactors(a):
    """adj(a)^T = det(u) det(v) u adj(s) v^T from the SVD a = u s v^T, where
    adj(s) holds the products of the other singular values: no division, so
    it holds at singular matrices too."""
    u, s, vt, ok = linalg.svd(a)
    sign_u, _ = linalg.slogdet(u)
    sign_v, _ = linalg.slogdet(vt)
    others = np.prod(np.where(_diagonal(s), 1.0, s[:, None, :]), axis=2)
    return (sign_u * sign_v)[:, None, None] * ((u * others[:, None, :]) @ vt)


def det_rule(a):
    d = linalg.det(a)

    def pullback(dd):
        return dd[:, None, None] * _cofactors(a)

    return d, pullback


def det_frule(a, da):
    return linalg.det(a), np.sum(_cofactors(a) * da, axis=(1, 2))


# ---- cholesky ---------------------------------------------------------------------------
def _phi(x):
    """The lower triangle of x with its diagonal halved."""
    return np.where(_below(x), x, np.where(_diagonal(x), 0.5 * x, 0.0))


def cholesky_rule(a):
    factor, ok = linalg.cholesky(a)

    def pullback(dl):
        # s̄ = l^-T phi(l^T l̄) l^-1 (Murray 2016), then through the lower triangle
        left, _ = linalg.solve(_mT(factor), _phi(_mT(factor) @ dl))
        both, _ = linalg.solve(_mT(factor), _mT(left))
        return _through_lower(0.5 * (both + _mT(both)))

    return (factor, ok), pullback


def cholesky_frule(a, da):
    factor, ok = linalg.cholesky(a)
    once, _ = linalg.solve(factor, _symmetric_from_lower(da))
    twice, _ = linalg.solve(factor, _mT(once))  # l^-1 ds l^-T
    return (factor, ok), (factor @ _phi(twice), None)


# ---- eigh -----------------------------------------------------------------------------------
def eigh_rule(a):
    w, v, ok = linalg.eigh(a)

    def pullback(dw, dv):
        inner = _mT(v) @ dv
        gap = w[:, None, :] - w[:, :, None]  # w_j - w_i
        coupling = _divide_coupled(0.5 * (inner - _mT(inner)), gap, _used(dv))
        middle = _diagonal_matrices(dw) + coupling
        return _through_lower(v @ middle @ _mT(v))

    return (w, v, ok), pullback


def eigh_frule(a, da):
    w, v, ok = linalg.eigh(a)
    inner = _mT(v) @ _symmetric_from_lower(da) @ v
    gap = w[:, None, :] - w[:, :, None]
    dv = v @ _divide_nonzero(np.where(_diagonal(inner), 0.0, inner), gap)
    return (w, v, ok), (_diagonal_of(inner), dv, None)


# ---- svd --------------------------------------------------------------------------------------
def svd_rule(a):
    u, s, vt, ok = linalg.svd(a)

    def pullback(du, ds, dvt):
        v, dv = _mT(vt), _mT(dvt)
        x = _mT(u) @ du
        y = vt @ dv
        # (x - x^T) s + s (y - y^T), over s_j^2 - s_i^2 (Townsend 2016)
        numerator = (x - _mT(x)) * s[:, None, :] + s[:, :, None] * (y - _mT(y))
        squares = s * s
        middle = _divide_coupled(numerator, squares[:, None, :] - squares[:, :, None], _used(du) | _used(dv))
        middle = middle + _diagonal_matrices(ds)
        da = u @ middle @ vt
        if u.shape[1] > s.shape[1]:  # tall: the part of du outside the span of u
            outside = du - u @ (_mT(u) @ du)
            da = da + _divide_nonzero(outside, s[:, None, :]) @ vt
        if v.shape[1] > s.shape[1]:  # wide: the part of dv outside the span of v
            outside = dv - v @ (vt @ dv)
            da = da + u @ _mT(_divide_nonzero(outside, s[:, None, :]))
        return da

    return (u, s, vt, ok), pullback


def svd_frule(a, da):
    u, s, vt, ok = linalg.svd(a)
    v = _mT(vt)
    inner = _mT(u) @ da @ v
    on = _diagonal(inner)
    squares = s * s
    gap = squares[:, None, :] - squares[:, :, None]
    left = inner * s[:, None, :]  # inner diag(s)
    right = s[:, :, None] * inner  # diag(s) inner
    du = u @ _divide_nonzero(np.where(on, 0.0, left + _mT(left)), gap)
    dv = v @ _divide_nonzero(np.where(on, 0.0, right + _mT(right)), gap)
    if u.shape[1] > s.shape[1]:
        outside = da @ v - u @ inner
        du = du + _divide_nonzero(outside, s[:, None, :])
    if v.shape[1] > s.shape[1]:
        outside = _mT(da) @ u - v @ _mT(inner)
        dv = dv + _divide_nonzero(outside, s[:, None, :])
    return (u, s, vt, ok), (du, _diagonal_of(inner), _mT(dv), None)


# ---- qr -------------------------------------------------------------------------------------
def _from_upper(x):
    """The symmetric matrix with x's upper triangle: triu(x, 1) + triu(x, 1)^T + diag(x)."""
    upper = np.where(_below(x).T, x, 0.0)
    return upper + _mT(upper) + np.where(_diagonal(x), x, 0.0)


def _qr_square_adjoint(q, r, dq, dr):
    """The cotangent of a = q r, r square and invertible: from the tangent
    (below), [dq + q sym_upper(dr r^T - q^T dq)] r^-T."""
    b = dq + q @ _from_upper(dr @ _mT(r) - _mT(q) @ dq)
    da_t, _ = linalg.solve(r, _mT(b))  # b r^-T
    return _mT(da_t)


def _qr_square_tangent(q, r, da):
    """(dq, dr) of a = q r with r square and invertible (m >= n): with
    x = q^T da r^-1, q^T dq is the antisymmetric c = tril(x, -1) - tril(x, -1)^T
    and dr r^-1 = x - c is upper triangular."""
    da_rinv_t, _ = linalg.solve(_mT(r), _mT(da))
    da_rinv = _mT(da_rinv_t)  # da r^-1
    inner = _mT(q) @ da_rinv
    lower = np.where(_below(inner), inner, 0.0)
    rotation = lower - _mT(lower)
    return q @ (rotation - inner) + da_rinv, (inner - rotation) @ r


def qr_rule(a):
    q, r = linalg.qr(a)

    def pullback(dq, dr):
        m = a.shape[1]
        if m >= a.shape[2]:
            da = _qr_square_adjoint(q, r, dq, dr)
        else:  # wide: a = [x | y], r = [r1 | r2] with x = q r1 square, y = q r2
            y, r1, dr2 = a[:, :, m:], r[:, :, :m], dr[:, :, m:]
            dx = _qr_square_adjoint(q, r1, dq + y @ _mT(dr2), dr[:, :, :m])
            da = np.concatenate((dx, q @ dr2), axis=2)
        return da

    return (q, r), pullback


def qr_frule(a, da):
    q, r = linalg.qr(a)
    m = a.shape[1]
    if m >= a.shape[2]:
        dq, dr = _qr_square_tangent(q, r, da)
    else:
        dq, dr1 = _qr_square_tangent(q, r[:, :, :m], da[:, :, :m])
        dr2 = _mT(dq) @ a[:, :, m:] + _mT(q) @ da[:, :, m:]
        dr = np.concatenate((dr1, dr2), axis=2)
    return (q, r), (dq, dr)


# ---- pinv --------------------------------------------------------------------------------------
def pinv_rule(a, rcond):
    p, ok = linalg.pinv(a, rcond)

    def pullback(dp):
        # Golub & Pereyra 1973, where the rank is locally constant
        pt = _mT(p)
        left = _identities(a @ p) - a @ p
        right = _identities(p @ a) - p @ a
        return -(pt @ dp @ pt) + left @ _mT(dp) @ (p @ pt) + (pt @ p) @ _mT(dp) @ right, None

    return (p, ok), pullback


def pinv_frule(a, rcond, da, drcond):
    p, ok = linalg.pinv(a, rcond)
    left = _identities(a @ p) - a @ p
    right = _identities(p @ a) - p @ a
    pt = _mT(p)
    dp = -(p @ da @ p) + (p @ pt) @ _mT(da) @ left + right @ _mT(da) @ (pt @ p)
    return (p, ok), (dp, None)


# ---- norms ------------------------------------------------------------------------------------
def norm2_rule(x):
    y = linalg.norm2(x)

    def pullback(dy):
        return dy[:, None] * _divide_nonzero(x, y[:, None])  # x / |x|, 0 at 0

    return y, pullback


def norm2_frule(x, dx):
    y = linalg.norm2(x)
    return y, _divide_nonzero(np.sum(x * dx, axis=1), y)


def _pnorm_slope(x, y, p):
    """d y / d x = sign(x) (|x| / y)^(p - 1), 0 where x is 0 (the subgradient at y = 0)."""
    zero = x == 0.0
    ratio = np.where(zero, 1.0, np.abs(x) / np.where(y == 0.0, 1.0, y)[:, None])
    return np.where(zero, 0.0, np.sign(x) * ratio ** (p - 1.0))


def pnorm_rule(x, p):
    y = linalg.pnorm(x, p)

    def pullback(dy):
        return dy[:, None] * _pnorm_slope(x, y, p), None

    return y, pullback


def pnorm_frule(x, p, dx, dp):
    y = linalg.pnorm(x, p)
    return y, np.sum(_pnorm_slope(x, y, p) * dx, axis=1)


RULES = (
    (linalg.solve, solve_rule, solve_frule),
    (linalg.slogdet, slogdet_rule, slogdet_frule),
    (linalg.det, det_rule, det_frule),
    (linalg.cholesky, cholesky_rule, cholesky_frule),
    (linalg.eigh, eigh_rule, eigh_frule),
    (linalg.svd, svd_rule, svd_frule),
    (linalg.qr, qr_rule, qr_frule),
    (linalg.pinv, pinv_rule, pinv_frule),
    (linalg.norm2, norm2_rule, norm2_frule),
    (linalg.pnorm, pnorm_rule, pnorm_frule),
)

install = installer(RULES)
