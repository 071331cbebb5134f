# A program the fuzzer found failing (shrunk by hand): KeyError: '$base1' in frontend/views.py _join
# `for r in B` makes the rows of B views of one base; the inner loop rebinds B, which
# dissolves that base on its path only. The stale base key, still in the environment,
# was taken for a holder of the array at the join (views.py Views._holder).
# ARGS = (0.7, np.array([[1.0, 2.0], [3.0, 4.0]]))
import numpy as np


def f(x, B):
    s = 0.0
    for r in B:
        s = s + np.sum(r * x)
        j = 0
        while j < 2:
            j += 1
            B = np.sin(B * x)
    return s + np.sum(B)
