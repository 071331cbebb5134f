# A program the fuzzer found failing (make fuzz FUZZ_EXAMPLES=600, seed 3003906332, on main 7f6305d;
# shrunk by hand): TypeError: 'NoneType' object is not iterable (an internal error)
# `n` is first assigned inside the while loop, so after the loop of the first unrolled item it has no
# value (values.NoValue). The second item's while loop saw it change from no value to a number and
# took it for a variable that shares an array with one the body writes, to be carried; it has nothing
# to carry. A name without a value before a loop is one the body creates (control_flow.py, "$changed").
# ARGS = (0.3, np.array([0.5, -1.2, 0.9]), np.array([0.1, 0.2, 0.3, 0.4]), np.array([[0.02, 0.06, 0.1], [0.01, 0.02, 0.0]]), np.eye(3), 0)
import numpy as np


def f(x, w, u, A, B, k):
    a = np.ones((2,))
    for i in (-1.0, x):
        j = 0
        while k + 3 > 1 and j < 3:
            j += 1
            a /= 1.0 + np.array([x * i for v in A])
            n = k % 5
    return np.sum(a) + np.sum(w)
