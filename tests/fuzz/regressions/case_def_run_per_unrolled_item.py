# A program the fuzzer found failing (make fuzz, seed 3957266662; shrunk by hand): UnsupportedError:
# 'g' holds different kinds of values on the two paths of this branch (the function f.g and the function f.g)
# Each unrolled item of a tuple loop runs the nested def again; the return's join met the two runs as
# two functions, where they are one: the same code reading the same variables (irad/frontend/callables.py,
# same_function). Run-time defaults that differ per run are joined as values.
# ARGS = (0.3, np.array([0.5, -1.2, 0.9]), np.array([0.1, 0.2, 0.3, 0.4]), np.ones((2, 3)), np.eye(3), 3)
import math

import numpy as np

B0 = np.array([1.0, 2.0])


def f(x, w, u, A, B, k):
    for i in (x, 2.0 * x):
        def g(t, a=i * i):
            return B0[0] * t + a

        if i > 5.0:
            return x
    return x * g(x) + np.sum(w)
