"""Shape arithmetic while lowering, and array methods and attributes
(docs/python-subset.md, docs/arrays.md). Each program runs as plain numpy too;
PROGRAMS pairs it with a maker of example arguments."""

import math

import numpy as np


# ---- int arithmetic on shapes, folded while lowering ---------------------------------------
def zeros_from_shape(x):
    n = x.shape[0]
    z = np.zeros(n + 1)
    z[1:] = x
    o = np.ones(2 * 3)
    return np.sum(z * z) + np.sum(o[: len(x)] * x)


def unpack_shape(X):
    n, m = X.shape
    return X[n - 1, m - 1] * X.ndim + X.size * np.sum(X) + np.sum(np.ones((m, n)) @ X)


def shapes_in_a_helper(X):
    rows = X.shape[0]
    return pad_sum(X, rows)


def pad_sum(X, extra):
    padded = np.concatenate([X, np.zeros((X.shape[0] // 2, X.shape[1]))])
    return np.sum(padded ** 2) * extra


def slice_length_from_shapes(x, j):
    n = len(x) // 2
    return np.sum(x[j:j + n] ** 2)


def block_slices(x, j):
    k = x.shape[0] // 3
    return np.sum(x[j * k:(j + 1) * k] * x[k:2 * k])


def starts_computed_twice(x, s):
    # the start written out twice, through float math and array reads: equal
    # pure ops of equal operands are one term, so the length 2 is known
    a = x[int(2.0 + 2.0 * math.tanh(s)) % 3:int(2.0 + 2.0 * math.tanh(s)) % 3 + 2]
    b = x[int(x[0] > 0.0) + math.floor(1.5 + math.sin(s)):int(x[0] > 0.0) + math.floor(1.5 + math.sin(s)) + 3]
    return np.sum(a * a) + s * np.sum(b)


def newaxis(x, y):
    return np.sum(x[:, np.newaxis] * y[np.newaxis, :]) + np.sum(x[None] @ x[:, None])


def ellipsis_index(X):
    return np.sum(X[..., 0] * X[0, ...][: X.shape[0]]) + np.sum(X[..., None, 1])


def reverse(x):
    return np.sum(x[::-1] * np.arange(1.0, 1.0 + len(x)))


def reverse_2d(X):
    return np.sum(X[::-1, ::-2] * X[:, ::2]) + np.sum(X[-1:0:-1, 1])


def reverse_write(x):
    y = np.zeros(len(x))
    y[::-1] = x * 2.0
    y[1::-1] += x[:2]
    return np.sum(y * np.arange(1.0, 1.0 + len(x)))


def reverse_view_write(x):
    y = x * 1.0
    r = y[::-1]  # a view: writing r writes y
    r[0] = 5.0 * x[1]
    r *= 2.0
    return np.sum(y * x)


def static_conditional(x):
    return (x[0, 0] if x.ndim == 2 else x[0]) * 2.0 + (x.size if x.ndim == 1 else 0.5)


def static_none_check(x, b=None):
    return np.sum(x if b is None else x + b)


def calls_with_and_without_b(x, b):
    return static_none_check(x) * static_none_check(x, b)


# ---- array methods and attributes --------------------------------------------------------------
def reductions(X):
    return (X.sum(axis=0, keepdims=True).mean() + X.max() + X.min(axis=1).sum()
            + X.prod(axis=-1).sum() + X.mean(axis=(0, 1)) + X.max(axis=0, keepdims=True).sum()
            + X.sum())


def reshapes(X):
    v = X.reshape(-1)
    return (v.dot(X.flatten()) + X.reshape(3, 2).sum(axis=1)[:2] @ X.reshape((2, 3))[0, :2]
            + X.ravel()[3] + X.T.dot(X).sum())


def conversions(X):
    Y = X.astype(np.float64).copy()
    first = X[0:1, 0:1].item()
    return np.sum(Y * Y) * first + X.item(4) + X.T.item(1)


def clips(X):
    return np.sum(X.clip(-0.5, 0.5) * X) + np.sum(X.clip(min=0.0)) + np.sum(X.clip(max=0.1) ** 2)


def attributes(X):
    return np.sum(X.T @ X) * X.shape[1] + X.size + X.ndim * X[0, 0]


def ravel_is_a_view(X):
    Y = X * 1.0
    r = Y.ravel()
    r[0] = 7.0 * X[1, 1]  # seen through Y
    f = Y.flatten()
    f[1] = 9.0  # a copy: Y is unchanged
    c = Y.copy()
    c *= 3.0  # a copy too
    v = Y.reshape(6)
    v[2] += X[0, 1]  # a view: seen through Y
    return np.sum(Y * X) + np.sum(f * X.ravel()) + np.sum(c)


def transposed_ravel_is_a_copy(X):
    Y = X * 1.0
    r = Y.T.ravel()  # numpy copies: the layout forbids a view
    r[0] = 5.0
    return np.sum(Y * X) + np.sum(r)


PROGRAMS = [
    (zeros_from_shape, lambda r: (r.normal(size=4),)),
    (unpack_shape, lambda r: (r.normal(size=(3, 2)),)),
    (shapes_in_a_helper, lambda r: (r.normal(size=(4, 2)),)),
    (slice_length_from_shapes, lambda r: (r.normal(size=6), 2)),
    (block_slices, lambda r: (r.normal(size=9), 2)),
    (starts_computed_twice, lambda r: (r.normal(size=5), 0.3)),
    (starts_computed_twice, lambda r: (r.normal(size=5), -1.2)),
    (newaxis, lambda r: (r.normal(size=3), r.normal(size=4))),
    (ellipsis_index, lambda r: (r.normal(size=(3, 4)),)),
    (reverse, lambda r: (r.normal(size=5),)),
    (reverse_2d, lambda r: (r.normal(size=(4, 5)),)),
    (reverse_write, lambda r: (r.normal(size=4),)),
    (reverse_view_write, lambda r: (r.normal(size=4),)),
    (static_conditional, lambda r: (r.normal(size=(2, 3)),)),
    (static_conditional, lambda r: (r.normal(size=3),)),
    (calls_with_and_without_b, lambda r: (r.normal(size=3), r.normal(size=3))),
    (reductions, lambda r: (r.uniform(0.5, 1.5, size=(3, 4)),)),
    (reshapes, lambda r: (r.normal(size=(2, 3)),)),
    (conversions, lambda r: (r.normal(size=(2, 3)),)),
    (clips, lambda r: (r.normal(size=(3, 3)),)),
    (attributes, lambda r: (r.normal(size=(3, 2)),)),
    (ravel_is_a_view, lambda r: (r.normal(size=(2, 3)),)),
    (transposed_ravel_is_a_copy, lambda r: (r.normal(size=(2, 3)),)),
]
