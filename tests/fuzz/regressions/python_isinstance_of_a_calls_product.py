# A program the Python-constructs fuzzer found failing: AssertionError: CPython np.float64(2.125), irad 1.625
# ARGS = ([-0.5, -1.5, 0.25, 0.75], 0)
import math

import numpy as np


def fail(v):
    raise ValueError(f"failed at {v!r}")


def checked(x, i):
    if i >= len(x):
        raise IndexError(f"index {i!r} past the end")
    return x[i] * 2.0


def pick(c, a):
    if c > 0.5:
        return True
    if c > 0.0:
        return 3
    return a


def kind_factor(v):
    return 1.5 if isinstance(v, bool) else (2.5 if isinstance(v, int) else 3.5)  # may refuse


def f(x, k):
    p = float(x[0])
    n = int(np.argmax(x))
    b = x[1] > 0.5
    s = np.sum(x * x)
    if p < -1.0:
        raise ValueError(f"bad n={n!r}")
    s = s + p
    v = pick(x[0], True)
    v = v * 2
    s = s + (1.0 if isinstance(v, int) else 2.0) * p  # may refuse
    return s
