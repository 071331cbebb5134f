# A program the fuzzer found failing (shrunk by hand): the lowering never ended (120 s time limit)
# The second reshape folds to the zeros, which was then recorded as a view of its own
# view; with no name holding the zeros, walking views back to a holder looped forever
# (irad/frontend/views.py, derive).
# ARGS = (-0.15, np.array([0.66, 0.35, -1.45], dtype=np.float32))
import math

import numpy as np


def f(x, w):
    a6 = (np.reshape(np.zeros((3, 2)), (2, 3))).reshape(3, 2)
    a6[1, 1] = x * np.sum(w)
    return x + np.sum(a6 * a6) + np.sum(w)
