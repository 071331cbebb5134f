"""numpy functions irad lowers from its own Python source (irad's subset),
composed of the numpy operations irad lowers directly; their derivatives come
from differentiating these bodies. rules/keys.py's IMPLEMENTED_IN_PYTHON maps
numpy's function to its implementation here; each takes numpy's parameters
(the ones it does not take are named by the call's error) and gives numpy's
values, checked against numpy in tests/frontend/test_numpy_python.py.
"""

import numpy as np


def cov(m, y=None, rowvar=True, bias=False, ddof=None):
    """np.cov without weights: the rows (or, rowvar=False, the columns) are variables."""
    X = np.atleast_2d(m) * 1.0
    if y is not None:
        Y = np.atleast_2d(y) * 1.0
        if not rowvar and Y.shape[0] != 1:
            Y = Y.T
        if not rowvar and X.shape[0] != 1:
            X = X.T
        X = np.concatenate((X, Y), axis=0)
    elif not rowvar and X.shape[0] != 1:
        X = X.T
    if ddof is None:
        ddof = 0 if bias else 1
    centred = X - np.mean(X, axis=1, keepdims=True)
    c = centred @ centred.T / (X.shape[1] - ddof)
    return np.squeeze(c)


def corrcoef(x, y=None, rowvar=True):
    """np.corrcoef: the covariance scaled by the standard deviations, clipped to [-1, 1]."""
    c = np.atleast_2d(cov(x, y, rowvar))
    d = np.sqrt(np.diag(c))
    r = c / d[:, None] / d[None, :]
    return np.squeeze(np.clip(r, -1.0, 1.0))


def convolve(a, v, mode="full"):
    """np.convolve of two 1-D arrays: each output is a window of `a` (zero-padded)
    times `v` reversed, gathered with indices known while lowering."""
    a = np.ravel(a) * 1.0
    v = np.ravel(v) * 1.0
    if v.shape[0] > a.shape[0]:
        a, v = v, a
    n = a.shape[0]
    m = v.shape[0]
    padded = np.concatenate((np.zeros(m - 1), a, np.zeros(m - 1)))
    windows = padded[np.arange(n + m - 1)[:, None] + np.arange(m)[None, :]]
    full = windows @ v[::-1]
    if mode == "full":
        return full
    if mode == "same":
        start = (m - 1) // 2
        return full[start:start + n]
    if mode == "valid":
        return full[m - 1:n]
    return np.convolve(a, v, mode)  # any other mode: numpy's error, named at the call


def quantile(a, q, axis=None, keepdims=False, method="linear"):
    """np.quantile with numpy's default (linear) interpolation between the two
    sorted values around q * (n - 1); q is a float, or a tuple or list of them,
    known while lowering (their positions pick the elements)."""
    if method != "linear":
        return np.quantile(a, q, axis, None, False, method)  # refused by name at the call
    x = np.asarray(a) * 1.0
    if axis is None:
        x = np.ravel(x)
        axis = 0
    ordered = np.moveaxis(np.sort(x, axis=axis), axis, -1)
    n = ordered.shape[-1]
    several = isinstance(q, (tuple, list))
    values = []
    for p in (q if several else (q,)):
        position = p * (n - 1)
        low = int(position)
        high = min(low + 1, n - 1)
        frac = position - low
        values.append(ordered[..., low] * (1.0 - frac) + ordered[..., high] * frac)
    result = np.stack(values) if several else values[0]
    if keepdims:
        result = np.expand_dims(result, axis + 1 if several else axis)
    return result


def percentile(a, q, axis=None, keepdims=False, method="linear"):
    """np.percentile: np.quantile at q / 100."""
    if isinstance(q, (tuple, list)):
        return quantile(a, [p / 100.0 for p in q], axis, keepdims, method)
    return quantile(a, q / 100.0, axis, keepdims, method)
