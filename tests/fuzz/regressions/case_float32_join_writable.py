# A program the fuzzer found failing (shrunk by hand): UnsupportedError: in-place write to 'a1', which may be a view of another array
# A float32 array widened to float64 where an `if` joins lost its writability (irad/frontend/control_flow.py).
# ARGS = (0.5, np.array([0.5, -1.2, 0.9]), np.array([-0.91, -1.31, -1.06, 0.0], dtype=np.float32), np.array([[0.44, 0.16, -0.55], [1.1, 0.88, -1.49]], dtype=np.float32), np.eye(3), 2)
import math

import numpy as np


def f(x, w, u, A, B, k):
    a1 = np.copy(A)
    if math.sin(x) > 0.0:
        a1 = a1.astype(np.float64)
    a1[0] = u[:-1] * x
    return x + np.sum(a1 * a1) + np.sum(w)
