# A program the fuzzer found failing (python -m tests.fuzz.campaign --seed 4200, h-join before its fix;
# shrunk by hand): AttributeError: 'Table' object has no attribute 'type'
# The views table ($views) was set on the arm that did not return only (a nested `if` had given it the
# empty table); the join of an arm that returned kept that arm's value through a placeholder, which a
# table has none of (irad/frontend/control_flow.py: a value with nothing computed at run time is kept as it is).
# ARGS = (-2.0, np.array([0.5, -1.2, 0.9]), np.array([0.1, 0.2, 0.3, 0.4]), np.ones((2, 3)), np.eye(3), 1)
import math

import numpy as np


def f(x, w, u, A, B, k):
    if x > 0.0:
        return x
    else:
        if x < -1.0:
            v = w[1:]
            return np.sum(v) * x
    return x * np.sum(w)
