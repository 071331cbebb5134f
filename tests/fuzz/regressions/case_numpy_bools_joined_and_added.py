# A program the fuzzer found failing (shrunk by hand): irad added numpy's bool scalars as Python's
# (True + True == 2) where numpy's `+` of them is `or`: found by a campaign with numpy_scalars.kind
# forced to Python's (the behaviour before h-scalars), seed 711; an element of a mask through a
# conditional expression, added to a sum of two elements. (Its `# may refuse` marks are gone: a refusal fails.)
# ARGS = (0.1, np.array([0.02, 0.01, 0.0]), np.array([0.07, 0.02, 0.04, 0.0]), np.array([[0.12, 0.09, 0.0], [0.02, 0.04, 0.0]]), np.array([[0.05, 0.01, 0.0], [0.01, 0.0, 0.0], [0.0, 0.0, 0.01]]), 0)
import functools
import math
from typing import NamedTuple

import numpy as np


class Mats(NamedTuple):
    A: np.ndarray
    B: np.ndarray


def f(x, w, u, A, B, k):
    m7 = A[:, (k + k) % 3] > -0.5
    b8 = ((m7[1] if x > 0.0 else m7[-2]) + (m7[-1 - (k + 1) % 2] + m7[1]))
    s12 = x * b8
    return x + s12 + np.sum(A) + np.sum(w)
