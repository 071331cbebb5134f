# A program the fuzzer found failing: mlir-opt: redefinition of SSA value '%w_2'
# ARGS = (0.3, np.array([0.5, -1.2, 0.9], dtype=np.float64), 2)
import math

import numpy as np


def _h_rec(s, d):
    if d <= 0:
        return s
    return _h_rec(math.sin(s) + 0.5 * s, d - 1)


def f(x, w, k):
    w = w
    if (0.5 - 1.5) > -0.5:
        x *= _h_rec(1.5, k)
    else:
        w_2 = w
        w = (w + 1.5)
        if np.mean(w_2) > 0.0:
            x -= _h_rec(1.5, k)
            a3 = np.copy(w_2[0:3])
            a3[0] = x * 1.5
        else:
            x += np.min(w)
            w_2 = w_2[0:3]
            w_2_4 = w_2[:]
    if (-x) > 0.5:
        w = (w * -0.75) * 2.0
        x = math.exp(math.tanh(w[0]))
    else:
        j5 = 0
        while j5 < 3:
            j5 += 1
            x -= w[2]
        a6 = np.copy(np.tanh(w[0:3]))
        a6[0] = (x + x)
    a7 = np.copy(np.tanh(np.exp(np.tanh(w))))
    x = _h_rec(_h_rec(x, k), k)
    return x + np.sum(w) + np.sum(a7)
