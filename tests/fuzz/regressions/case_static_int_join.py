# A program the fuzzer found failing (shrunk by hand): UnsupportedError: 'k' holds different kinds of values on the two paths of this branch
# len(A) is known while lowering; it met the run-time k at the join (irad/frontend/control_flow.py).
# ARGS = (0.3, np.array([0.5, -1.2, 0.9]), np.array([0.1, 0.2, 0.3, 0.4]), np.ones((2, 3)), np.eye(3), 3)
import math

import numpy as np


def f(x, w, u, A, B, k):
    if (x if np.sum(w) > 0.0 else -x) > 0.0:
        k = (len(A)) % 4
    n = B.shape[0]
    for i in range(k):
        n = n - 1
    return x * k + np.sum(w) * n
