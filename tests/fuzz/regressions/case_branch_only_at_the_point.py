# Not an irad failure: the fuzzer's check was wrong (make fuzz, seed 3957266662, shrunk by hypothesis).
# At x = 0 alone, `not log(1 + x*x) > 0` holds and the loop runs (f = 192 x there); at x +- h it
# does not (f = 12 x). irad's 192 is the derivative of the path taken; both one-sided differences
# say 12, so the stencil did not see a kink. The check now compares the lines the program runs
# at the point and at the stencil's points (checks.differences), and skips such a column.
# ARGS = (0.0, np.array([0.0, 0.0, 0.0]), np.array([0.0, 0.0, 0.0, 0.0]), np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]), np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]), 0)
import functools
import math
from typing import NamedTuple

import numpy as np


class Mats(NamedTuple):
    A: np.ndarray
    B: np.ndarray


def f(x, w, u, A, B, k):
    x += (x + x)
    j1 = 0
    while j1 < 4 and (not math.log(1.0 + x * x) > 0.0):
        j1 += 1
        if (lambda t2: x)(x) > 0.0:
            s3 = x
            s4 = x
        x += x
        s5 = x
    s6 = x
    s7 = x
    s8 = x
    return x + s6 + s7 + s8 + np.sum(A) + np.sum(B) + np.sum(u) + np.sum(w)
