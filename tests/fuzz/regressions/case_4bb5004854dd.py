# A program the fuzzer found failing: UnsupportedError: /tmp/irad-fuzz-6np9qiwh/fuzz_4bb5004854dd.py:36:9: in-place write to 'B', which may be the argument array 'B' (it is on one path into the loop at /tmp/irad-fuzz-6np9qiwh/fuzz_4bb5004854dd.py:24:5)
# ARGS = (-0.16, np.array([0.8700000047683716, 1.4800000190734863, 1.3799999952316284], dtype=np.float32), np.array([-0.2800000011920929, -1.0099999904632568, 1.1399999856948853, 1.149999976158142], dtype=np.float32), np.array([[-0.32, -0.88, 0.87], [-0.72, 0.96, -0.71]], dtype=np.float64), np.array([[0.01, 0.87, 0.34], [0.34, -0.57, -0.63], [-0.92, -0.57, -1.05]], dtype=np.float64), 2)
import functools
import math
from typing import NamedTuple

import numpy as np


class Mats(NamedTuple):
    A: np.ndarray
    B: np.ndarray


def f(x, w, u, A, B, k):
    n1 = (1 * 2) % 3
    s2 = k
    for i3 in range(3):
        s2 = s2 + (x + x)
        x += 0.5
        a4 = np.zeros((2, 3))
        s5 = k
        if x > 0.0:
            s5 = s5 + (x + x)
    j6 = 0
    while j6 < 3:
        j6 += 1
        if (s2 if 1.5 > 0.0 and (x / (1.0 + s2 * s2)) < 0.5 else 1.5) < 0.5:
            return (B[-2, ::2] @ u[0:2])
        if u[-1 - (j6 + 2) % 4] > 0.0 or (lambda t7: x)(float(s2)) < 0.5:
            u_8 = u[1::2]
            if math.sinh(math.tanh(2.0)) > 0.0 and max(x, s2) < 0.5:
                break
            u_8_10 = u_8[0:2]
            return (lambda t12: 2.0)(float(s2))
        else:
            B = np.copy(B.T)
        B *= (lambda t13: t13)(2.0)
    x = (x * s2)
    return x + s2 + np.sum(A) + np.sum(B) + np.sum(u) + np.sum(w)
