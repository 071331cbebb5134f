"""scipy.linalg's common solvers, factorisations and expm, lowered from irad's own
Python source (irad's subset) as numpy_python.py's numpy functions are:
composed of np.linalg's functions, whose derivatives irad has, and of
triangles (np.tril/np.triu) of their arguments, so each reads exactly the
entries scipy reads and its gradient reaches only those.

frontend/__init__.py adds them to rules/keys.py's IMPLEMENTED_IN_PYTHON the
first time a program calls one of scipy.linalg's functions (importing irad
does not import scipy). Each takes scipy's parameters; `overwrite_*` changes
nothing (irad never writes into its arguments' memory). `check_finite=True`,
scipy's default, raises scipy's ValueError where an argument holds an inf or
a NaN. A triangular solve is a general solve of the triangle: the same
solution, in O(n^3) where LAPACK's is O(n^2). Checked against scipy in
tests/frontend/test_scipy_linalg.py.
"""

import numpy as np

_FINITE = "array must not contain infs or NaNs"


def _finite(check_finite, *arrays):
    if check_finite:
        for a in arrays:
            if not np.all(np.isfinite(a)):
                raise ValueError(_FINITE)


def _symmetric(a, lower):
    """The symmetric matrix scipy reads from one triangle of a."""
    if lower:
        return np.tril(a) + np.tril(a, -1).T
    return np.triu(a) + np.triu(a, 1).T


def _triangle(a, lower, unit_diagonal=False):
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        t = t - np.diag(np.diag(t)) + np.eye(t.shape[0])
    return t


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """The Cholesky factor of a (read from its upper triangle, or lower=True its
    lower): upper U with a = U^T U by default, as scipy (numpy's is lower)."""
    _finite(check_finite, a)
    return np.linalg.cholesky(a, upper=not lower)


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """(c, lower): the factor in c's lower or upper triangle, and a's own
    entries in the other, as scipy leaves them."""
    _finite(check_finite, a)
    if lower:
        return np.linalg.cholesky(a) + np.triu(a, 1), lower
    return np.linalg.cholesky(a, upper=True) + np.tril(a, -1), lower


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """x with a x = b, from cho_factor's (c, lower)."""
    c, lower = c_and_lower
    _finite(check_finite, c, b)
    factor = np.tril(c) if lower else np.triu(c).T  # a = factor @ factor.T
    return np.linalg.solve(factor.T, np.linalg.solve(factor, b))


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, check_finite=True):
    """x with t x = b (trans 0 or "N"), t^T x = b (1, 2, "T", "C"): t the
    upper (lower=True: lower) triangle of a, its diagonal ones if unit_diagonal."""
    _finite(check_finite, a, b)
    t = _triangle(a, lower, unit_diagonal)
    if trans in (1, 2, "T", "C"):
        t = t.T
    elif trans not in (0, "N"):
        raise ValueError("Invalid 'trans' value")
    return np.linalg.solve(t, b)


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True, assume_a=None,
          transposed=False):
    """x with a x = b (transposed: a^T x = b), reading what assume_a says scipy
    reads: the whole matrix (None, "gen", "general"), one triangle of a
    symmetric one ("sym", "symmetric", "her", "hermitian"; "pos", "positive
    definite" through its Cholesky factor, which fails where a is not), a
    triangle ("upper triangular", "lower triangular"), the diagonal or the
    three diagonals ("diagonal", "tridiagonal")."""
    _finite(check_finite, a, b)
    if transposed:
        a = a.T
    if assume_a in (None, "gen", "general"):
        return np.linalg.solve(a, b)
    if assume_a in ("sym", "symmetric", "her", "hermitian"):
        return np.linalg.solve(_symmetric(a, lower), b)
    if assume_a in ("pos", "positive definite"):
        return cho_solve((np.linalg.cholesky(a, upper=not lower), lower), b, check_finite=False)
    if assume_a in ("upper triangular", "lower triangular"):
        return np.linalg.solve(_triangle(a, assume_a == "lower triangular"), b)
    if assume_a == "diagonal":
        d = np.diag(a)
        return b / d if b.ndim == 1 else b / d[:, None]
    if assume_a == "tridiagonal":
        return np.linalg.solve(np.triu(np.tril(a, 1), -1), b)
    raise ValueError(f"irad: scipy.linalg.solve with assume_a={assume_a!r} is not supported; "
                     "use assume_a='gen' (or None), 'sym', 'pos', a triangular, 'diagonal' or 'tridiagonal'")


def inv(a, overwrite_a=False, check_finite=True, assume_a=None, lower=False):
    """a^-1, reading a as solve's assume_a says."""
    return solve(a, np.eye(a.shape[0]), lower, check_finite=check_finite, assume_a=assume_a)


def det(a, overwrite_a=False, check_finite=True):
    _finite(check_finite, a)
    return np.linalg.det(a)


def eigh(a, b=None, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False, type=1,
         check_finite=True, subset_by_index=None, subset_by_value=None, driver=None):
    """The eigenvalues (ascending) and eigenvectors of the symmetric matrix a,
    read from its lower (lower=False: upper) triangle; the standard problem only."""
    if b is not None or subset_by_index is not None or subset_by_value is not None:
        raise ValueError("irad: scipy.linalg.eigh of a generalized problem (b) or a subset is not supported; "
                         "solve the standard problem of a and select from its results")
    _finite(check_finite, a)
    if eigvals_only:
        return np.linalg.eigvalsh(a, UPLO="L" if lower else "U")
    return np.linalg.eigh(a, UPLO="L" if lower else "U")


def block_diag(*arrs):
    """The block-diagonal matrix of the arrays (numbers and vectors as rows)."""
    blocks = [np.atleast_2d(a) * 1.0 for a in arrs]
    if not blocks:
        return np.zeros((1, 0))
    width = sum(blk.shape[1] for blk in blocks)
    rows = []
    left = 0
    for blk in blocks:
        right = width - left - blk.shape[1]
        rows.append(np.concatenate((np.zeros((blk.shape[0], left)), blk, np.zeros((blk.shape[0], right))), axis=1))
        left += blk.shape[1]
    return np.concatenate(rows, axis=0)


# Pade(13) coefficients and the 1-norm bound below which it is exact to double
# precision (Higham, "The scaling and squaring method for the matrix exponential
# revisited", 2005), as scipy's expm uses them
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
           129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
           40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def expm(A):
    """The matrix exponential by scaling and squaring: A / 2**s has a 1-norm
    below theta13, its Pade(13) approximant is exact to rounding there, and s
    squarings undo the scaling (s is a run-time count, from the norm)."""
    b = _PADE13
    norm = np.max(np.sum(np.abs(A), axis=0))
    s = max(0, int(np.ceil(np.log2(np.maximum(norm, 1e-300) / _THETA13))))
    A = A / 2.0 ** s
    ident = np.eye(A.shape[0])
    A2 = A @ A
    A4 = A2 @ A2
    A6 = A4 @ A2
    U = A @ (A6 @ (b[13] * A6 + b[11] * A4 + b[9] * A2) + b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * ident)
    V = A6 @ (b[12] * A6 + b[10] * A4 + b[8] * A2) + b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * ident
    R = np.linalg.solve(V - U, V + U)
    for _ in range(s):
        R = R @ R
    return R
