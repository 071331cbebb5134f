"""Module-level programs for tests/api/test_pickle.py.

A transformation pickles its function by reference, so the receiving process
imports this module, and importing it registers the rule below there too.
"""

import numpy as np

import irad


def least_squares(w, X, y):
    """Sum of squared residuals; its gradient is 2 X^T (X w - y)."""
    r = X @ w - y
    return np.sum(r * r)


def least_squares_gradient(w, X, y):
    """The closed form of grad(least_squares)."""
    return 2.0 * X.T @ (X @ w - y)


def clip01(x):
    return min(max(x, 0.0), 1.0)


@irad.rrule(clip01)
def _(x):
    def pullback(dy):
        return dy  # straight through: the rule's gradient is 1 where AD's would be 0
    return clip01(x), pullback


def clipped_square(x):
    """Its gradient under the rule above is 2 clip01(x), nonzero for x > 1."""
    return clip01(x) ** 2


def square(x):
    """No rule here: tests/api/test_pickle.py registers one from a test."""
    return x * x


COEFFICIENTS = np.array([1.0, 2.0, 3.0])


def weighted(x):
    """Reads a global array (a hidden argument)."""
    return np.sum(COEFFICIENTS * x * x)
