# A program the fuzzer found failing (campaign seed 101, shrunk by hand): UnsupportedError:
# in-place write to 'B', which may be a view of another array. The `else` of an `if`
# whose other arm ends in `continue` rebinds B to a fresh array; only that path reaches
# the writes after the `if`, but the join mixed in the argument B the other arm kept
# (control_flow.py _jumping_arms_first now lowers the else under the jump's flag).
# ARGS = (-1.45, np.array([[0.21, 1.48, 1.04], [0.54, -0.46, -0.5], [-0.04, 1.2, 1.32]]), np.array([-0.66, -1.47, 0.13, 1.38]), 1)
import numpy as np


def f(x, B, u, k):
    j = 0
    while j < k + 2:
        j += 1
        if x * j > 0.0:
            continue
        else:
            B = np.outer(np.copy(u[:-1]), u[1:])
        B[0:3, 0:2] = u @ u
        B += np.eye(3).mean(axis=1)
    return x + np.sum(B) + np.sum(u)
