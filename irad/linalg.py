"""The linear algebra np.linalg lowers to.

Matrices come as stacks: float arrays of shape (k, m, n), float64 or float32.
The frontend (irad/frontend/numpy_linalg.py) brings numpy's arguments to that
form (broadcasting batch axes, one axis for the batch, vectors as one-column
matrices) and back.

*Primitives* (`@primitive`) are not lowered from source: a call becomes a
`func.call` to a private declaration named after the function
(`@irad.linalg.solve`), carrying `irad.python = "irad.linalg:solve"`. The
Python backend runs the numpy body below; the native backend calls LAPACK
(irad/backends/native/linalg.py). Each primitive's derivatives are one entry
of the rule table (irad/frontend/linalg_rules.py): the IR stays standard MLIR
and the table stays the one place derivatives live. A primitive that can fail
(a singular matrix, one not positive definite, no convergence) returns a last
result `ok`, which the frontend checks where numpy raises LinAlgError.

The other functions here are written in irad's Python subset and lowered
from source like user code; each has its own rule too, where the derivative
through its body would be undefined at points where the function is not
(det at a singular matrix, a norm at zero) or where a closed form is better
(pinv).
"""

from __future__ import annotations

import numpy as np

FLOAT, BOOL = "float", "bool"


def primitive(results):
    """Mark a function as a primitive: `results(*argument shapes)` gives the
    (shape, FLOAT or BOOL) of each result; FLOAT is the arguments' dtype."""

    def mark(fn):
        fn.irad_results = results
        return fn

    return mark


def is_primitive(fn) -> bool:
    return callable(getattr(fn, "irad_results", None))


def _failed(*arrays):
    return tuple(np.full_like(a, np.nan) for a in arrays) + (False,)


# ---- primitives ------------------------------------------------------------------
@primitive(lambda a, b: [(b, FLOAT), ((), BOOL)])
def solve(a, b):
    """x with a @ x = b: a (k, n, n), b (k, n, m); ok: no matrix is singular."""
    try:
        return np.linalg.solve(a, b), True
    except np.linalg.LinAlgError:
        return _failed(b)


@primitive(lambda a: [(a[:1], FLOAT), (a[:1], FLOAT)])
def slogdet(a):
    """(sign, log|det|) of a (k, n, n), from its LU factorisation: (0, -inf) if singular."""
    sign, logdet = np.linalg.slogdet(a)
    return sign, logdet


@primitive(lambda a: [(a, FLOAT), ((), BOOL)])
def cholesky(a):
    """The lower Cholesky factor of a (k, n, n), from its lower triangle; ok:
    every matrix is positive definite."""
    try:
        return np.linalg.cholesky(a), True
    except np.linalg.LinAlgError:
        return _failed(a)


@primitive(lambda a: [(a[:2], FLOAT), (a, FLOAT), ((), BOOL)])
def eigh(a):
    """Eigenvalues (ascending, (k, n)) and eigenvectors (columns, (k, n, n)) of
    the symmetric matrices whose lower triangle a (k, n, n) holds."""
    try:
        w, v = np.linalg.eigh(a)
        return w, v, True
    except np.linalg.LinAlgError:
        return _failed(a[..., 0], a)


def _svd_shapes(a):
    k, m, n = a
    p = min(m, n)
    return [((k, m, p), FLOAT), ((k, p), FLOAT), ((k, p, n), FLOAT), ((), BOOL)]


@primitive(_svd_shapes)
def svd(a):
    """The reduced SVD of a (k, m, n): u (k, m, p), s (k, p) descending,
    vt (k, p, n), p = min(m, n)."""
    try:
        u, s, vt = np.linalg.svd(a, full_matrices=False)
        return u, s, vt, True
    except np.linalg.LinAlgError:
        p = min(a.shape[1:])
        return _failed(a[:, :, :p], a[:, 0, :p], a[:, :p, :])


@primitive(lambda a: [((a[0], a[1], min(a[1:])), FLOAT), ((a[0], min(a[1:]), a[2]), FLOAT)])
def qr(a):
    """The reduced QR factorisation of a (k, m, n): q (k, m, p), r (k, p, n)."""
    q, r = np.linalg.qr(a)
    return q, r


# ---- functions lowered from source (each with a rule) ------------------------------
def det(a):
    """The determinants of a (k, n, n): sign * exp(log|det|), as numpy computes them."""
    sign, logdet = slogdet(a)
    return sign * np.exp(logdet)


def pinv(a, rcond):
    """The pseudo-inverses of a (k, m, n), singular values at most rcond times
    the largest taken as zero (numpy's rule); ok as svd's."""
    u, s, vt, ok = svd(a)
    large = s > rcond * np.max(s, axis=1, keepdims=True)
    inverse = np.where(large, 1.0 / np.where(large, s, 1.0), 0.0)
    return np.transpose(vt, (0, 2, 1)) @ (inverse[:, :, None] * np.transpose(u, (0, 2, 1))), ok


def norm2(x):
    """The Euclidean norms of the rows of x (k, n)."""
    return np.sqrt(np.sum(x * x, axis=1))


def pnorm(x, p):
    """The p-norms (sum |x|^p)^(1/p) of the rows of x (k, n), p > 0."""
    return np.sum(np.abs(x) ** p, axis=1) ** (1.0 / p)
