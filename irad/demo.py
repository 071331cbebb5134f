"""`make demo`: lower a small program, differentiate it, run it, check it.

Prints the primal IR, the differentiated and optimised IR, and the gradient
beside a central finite-difference estimate.
"""

import math

import irad
from irad.numerics import softplus


def scale(x, s):
    return s * math.tanh(x / s)


def energy(x, y):
    r = math.hypot(x, y)
    return scale(r, 2.0) + softplus(x - y) + math.exp(-x * y)


def central_difference(f, args, i, h=1e-6):
    up = list(args)
    down = list(args)
    up[i] += h
    down[i] -= h
    return (f(*up) - f(*down)) / (2 * h)


def main() -> None:
    args = (0.7, -1.3)
    print("== primal IR: irad.lower(energy, 0.7, -1.3)")
    print(irad.lower(energy, *args))
    grad = irad.grad(energy, argnums=(0, 1))
    print("\n== differentiated and optimised IR: irad.grad(energy, argnums=(0, 1)).lower(...)")
    print(grad.lower(*args))
    print("\n== gradient at", args)
    print(f"{'arg':>4} {'irad':>22} {'finite difference':>22} {'rel. error':>11}")
    for i, g in enumerate(grad(*args)):
        fd = central_difference(energy, args, i)
        err = abs(g - fd) / max(abs(fd), 1e-12)
        print(f"{i:>4} {g:>22.15g} {fd:>22.15g} {err:>11.2e}")


if __name__ == "__main__":
    main()
