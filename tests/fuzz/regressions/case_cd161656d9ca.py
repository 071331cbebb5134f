# A program the fuzzer found failing: AssertionError: 
# ARGS = (0.1, np.array([-0.25, 0.8500000238418579, -1.1699999570846558], dtype=np.float32), np.array([1.0199999809265137, -1.090000033378601, 0.6600000262260437, -1.4600000381469727], dtype=np.float32), np.array([[1.0099999904632568, 1.2799999713897705, -0.23000000417232513], [1.4900000095367432, 1.2599999904632568, -0.18000000715255737]], dtype=np.float32), np.array([[0.6299999952316284, 0.2199999988079071, -0.10000000149011612], [-0.3400000035762787, -0.12999999523162842, 1.1299999952316284], [-0.6299999952316284, -0.5, 1.2000000476837158]], dtype=np.float32), 3)
import functools
import math
from typing import NamedTuple

import numpy as np


class Mats(NamedTuple):
    A: np.ndarray
    B: np.ndarray


def f(x, w, u, A, B, k):
    for i1 in range(k + 1):
        s2 = k
        for i3 in range(3):
            s2 = s2 + math.sin(0.5)
            a4 = (A.T).reshape(2, 3)
            x *= sum([2.0 for i6, v7 in enumerate(u, 1)])
            s9 = sum((max(1.5, x) for v11 in A if v11[0] < 1.0), 0.0)
        s2, x = s2, x
    B_14, w_15 = B[-2:], w[1:3]
    B_18 = B[(k - 2) % 3, 0:2]
    s20 = k
    for i21 in range(k):
        s20 = s20 - np.dot(u, u[:])
        x += max(x, x)
        if min(x, x) >= 0.5:
            x -= B.T[k % 3, (0 - 1) % 3]
            x = (((x) ** 2) - x)
        elif (x * x) < 0.0:
            if -0.75 < 0.0:
                return np.dot(u, u[:])
            continue
        elif x <= 0.5:
            u_22 = u[:]
            continue
        if -0.5 < min(x, -0.75) < 0.5:
            if -0.5 < (0.5 * (i21)) < 0.5:
                continue
            w_15_24 = w_15[0:2]
            g26 = lambda t27: np.copy(t27)
        else:
            if not (x if (2 // 2) > 1 else x) > 0.0:
                return sum([v29 for i28, v29 in enumerate(w_15)])
    s31 = len(A)
    for i32 in range(k % 4):
        s31 = s31 + 0.5
        s33 = (2 // 2)
        if not s20 > 0.0:
            s33 = s33 + s20
        j34 = 0
        while j34 < 3:
            j34 += 1
            g35 = functools.partial(lambda c37, t36: w_15[:2] * c37, x)
            g38 = functools.partial(lambda c40, t39: (B_14[:] if not (s33 / (1.0 + s33 * s33)) > 0.0 else B[((0 - 2) % 2):((0 - 2) % 2) + 2]) * c40, x)
    return x + s20 + s31 + np.sum(A) + np.sum(B) + np.sum(B_14) + np.sum(B_18) + np.sum(u) + np.sum(w) + np.sum(w_15)
