# A program the fuzzer found failing (native campaign seed 5, shrunk by hand): UnsupportedError:
# 's' is a number on one path into this loop and an array on another. s is an array from
# the loop's first statement on; iterations after a `break` skip the body and carry it
# on, which number_joins.py took for the loop's entry (the number x). The flag a loop
# carries is false in its first iteration, so where it is set the number is gone.
# Before number_joins.py, the same join with a run-time trip count was silently wrong.
# ARGS = (0.7, np.array([0.3, -1.2, 0.7]), np.array([[0.5, -0.2, 0.1], [1.5, 0.1, -0.3]]), 1)
import numpy as np


def f(x, w, A, k):
    A = np.stack([np.zeros_like(w), np.clip(w, -0.5, 1.0)])
    s = x
    for i in reversed(range(2)):
        s = np.sqrt(1.0 + np.stack([r[:] for r in A]) * np.stack([r[:] for r in A])) - s
        if np.sum(w) * x < 0.0 and abs(x) < 5.0:
            A[0, 0] -= x
            break
    return np.sum(s) + s[1][0] * x + np.sum(A)
