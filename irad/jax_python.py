"""JAX's functions that are not numpy's or scipy's, in irad's Python subset
(irad/frontend/jax_numpy.py maps them here; each is checked against JAX in
tests/frontend/test_jax_numpy.py):
- jax.nn's activations and normalisers, with JAX's defaults (softmax over the
  last axis, where scipy's is over all of them) and JAX's derivatives at the
  kinks (relu's is 0 at 0);
- jnp.linalg's cholesky, eigh and eigvalsh, which symmetrise their input first
  by default, where numpy's read one triangle: their values and gradients differ
  from numpy's for an input that is not symmetric;
- jax.tree_util.tree_map and tree_leaves over dicts, lists, tuples and
  NamedTuples, with None an empty subtree, as JAX's (a dict's leaves in the
  order of its sorted keys).
"""

import numpy as np
import scipy.special


def relu(x):
    return np.where(x > 0, x, 0.0)


def relu6(x):
    return np.where(x > 0, np.where(x < 6.0, x, 6.0), 0.0)


def sigmoid(x):
    return scipy.special.expit(x)


def log_sigmoid(x):
    return -np.logaddexp(-x, 0.0)


def softplus(x):
    return np.logaddexp(x, 0.0)


def silu(x):
    return x * scipy.special.expit(x)


def gelu(x, approximate=True):
    if approximate:
        return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))
    return x * scipy.special.ndtr(x)


def elu(x, alpha=1.0):
    return np.where(x > 0, x, alpha * np.expm1(np.where(x > 0, 0.0, x)))


def leaky_relu(x, negative_slope=0.01):
    return np.where(x >= 0, x, negative_slope * x)


def softmax(x, axis=-1):
    return scipy.special.softmax(x, axis=axis)


def log_softmax(x, axis=-1):
    return scipy.special.log_softmax(x, axis=axis)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    return scipy.special.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign)


def one_hot(x, num_classes, dtype=np.float64, axis=-1):
    hot = np.asarray(x)[..., None] == np.arange(num_classes)
    return np.moveaxis(hot, -1, axis).astype(dtype)


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5):
    if mean is None:
        mean = np.mean(x, axis=axis, keepdims=True)
    if variance is None:
        variance = np.mean(np.square(x), axis=axis, keepdims=True) - np.square(mean)
    return (x - mean) / np.sqrt(variance + epsilon)


def _symmetrised(a):
    return (a + np.swapaxes(a, -1, -2)) / 2.0


def cholesky(a, *, upper=False, symmetrize_input=True):
    if symmetrize_input:
        a = _symmetrised(a)
    lower = np.linalg.cholesky(a)
    if upper:
        return np.swapaxes(lower, -1, -2)
    return lower


def eigh(a, UPLO=None, symmetrize_input=True):
    if symmetrize_input:
        a = _symmetrised(a)
    if UPLO is None:
        return np.linalg.eigh(a)
    return np.linalg.eigh(a, UPLO)


def eigvalsh(a, UPLO="L", symmetrize_input=True):
    if symmetrize_input:
        a = _symmetrised(a)
    return np.linalg.eigvalsh(a, UPLO)


def tree_map(f, tree, *rest, is_leaf=None):
    if is_leaf is not None and is_leaf(tree):
        return f(tree, *rest)
    if isinstance(tree, dict):
        return {k: tree_map(f, tree[k], *[r[k] for r in rest], is_leaf=is_leaf) for k in tree}
    if isinstance(tree, tuple):
        items = [tree_map(f, t, *[r[i] for r in rest], is_leaf=is_leaf) for i, t in enumerate(tree)]
        return tuple(items) if type(tree) is tuple else type(tree)(*items)  # a NamedTuple stays one
    if isinstance(tree, list):
        return [tree_map(f, t, *[r[i] for r in rest], is_leaf=is_leaf) for i, t in enumerate(tree)]
    if tree is None:  # an empty subtree
        return None
    return f(tree, *rest)


def tree_leaves(tree, is_leaf=None):
    if is_leaf is not None and is_leaf(tree):
        return [tree]
    if isinstance(tree, dict):
        return [leaf for k in sorted(tree) for leaf in tree_leaves(tree[k], is_leaf)]
    if isinstance(tree, (list, tuple)):
        return [leaf for t in tree for leaf in tree_leaves(t, is_leaf)]
    if tree is None:  # an empty subtree
        return []
    return [tree]
