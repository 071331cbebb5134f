"""scipy.linalg's functions irad lowers from its own Python source (irad's subset),
composed of numpy's linear algebra; their derivatives come from differentiating
these bodies. irad/frontend/__init__.py maps scipy's functions to these (in
rules/keys.py's IMPLEMENTED_IN_PYTHON) the first time a program calls one, so
`import irad` does not import scipy. Each takes scipy's parameters and gives
scipy's values, checked against scipy in tests/frontend/test_scipy_linalg.py;
`overwrite_*` and `check_finite` change nothing here (irad never writes into
an argument, and a non-finite input gives NaN, not scipy's ValueError).

Each reads the triangle scipy reads, so the derivative in the other one is 0,
as it is for scipy's values.
"""

import numpy as np


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """The Cholesky factor, upper by default (numpy's is lower), zeros in the other triangle."""
    return np.linalg.cholesky(a, upper=not lower)


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """(c, lower): the factor in one triangle of c and a's own entries in the
    other, as LAPACK's potrf leaves them (scipy documents them as arbitrary)."""
    if lower:
        return np.linalg.cholesky(a) + np.triu(a, 1), True
    return np.linalg.cholesky(a, upper=True) + np.tril(a, -1), False


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """x with a @ x = b, from cho_factor's (c, lower)."""
    c, lower = c_and_lower
    L = np.tril(c) if lower else np.triu(c).T
    return np.linalg.solve(L.T, np.linalg.solve(L, b))


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, check_finite=True):
    """x with op(a) @ x = b, op(a) = a, a.T (trans 1, 'T') or a.H (2, 'C'),
    reading one triangle of a (and not its diagonal where unit_diagonal)."""
    A = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        A = A - np.diag(np.diag(A)) + np.eye(A.shape[0])
    if trans in (1, 2, "T", "C"):
        A = A.T
    elif trans not in (0, "N"):
        raise ValueError(f"Incorrect trans argument {trans!r}: use 0, 1, 2, 'N', 'T' or 'C'")
    return np.linalg.solve(A, b)


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True, assume_a=None,
          transposed=False):
    """x with a @ x = b; assume_a 'sym', 'her' or 'pos' reads one triangle of a
    (the upper unless lower=True), as scipy does."""
    if assume_a in ("sym", "her", "pos", "symmetric", "hermitian", "positive definite"):
        a = np.tril(a) + np.tril(a, -1).T if lower else np.triu(a) + np.triu(a, 1).T
    elif assume_a not in (None, "gen", "general"):
        raise ValueError(f"assume_a {assume_a!r} is not one irad takes: None, 'gen', 'sym', 'her' or 'pos'")
    return np.linalg.solve(a.T if transposed else a, b)


def inv(a, overwrite_a=False, check_finite=True):
    return np.linalg.inv(a)


def det(a, overwrite_a=False, check_finite=True):
    return np.linalg.det(a)


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
