"""`make demo` (`python -m irad.demo [--ir]`): what irad does, in one screen.

Shows a small program's source, its gradient beside central finite
differences, and the Python and native backends side by side: the time of
the first call (lowering, differentiating, compiling) and of a call after
it. The native backend is shown when it can run here; otherwise the demo
says what to install. `--ir` also prints the primal IR and the
differentiated, optimised IR.
"""

from __future__ import annotations

import argparse
import inspect
import math
import time

import irad
from irad.numerics import softplus


def acceleration(x, k):
    return -k * math.sin(x)


def pendulum(k, x0):
    """The energy-like score of a pendulum released at angle x0, after 400 leapfrog steps."""
    x, v = x0, 0.0
    for _ in range(400):
        v = v + 0.01 * acceleration(x, k)
        x = x + 0.01 * v
    return x * x + softplus(v)


ARGS = (2.0, 0.7)


def central_difference(f, args, i, h=1e-6):
    up = list(args)
    down = list(args)
    up[i] += h
    down[i] -= h
    return (f(*up) - f(*down)) / (2 * h)


def per_call(fn, args, budget: float = 0.2) -> float:
    """Seconds a call takes, the best of a few runs of many calls."""
    n, best = 1, math.inf
    while True:
        start = time.perf_counter()
        for _ in range(n):
            fn(*args)
        elapsed = time.perf_counter() - start
        if elapsed > budget / 5 or n > 1_000_000:
            break
        n *= 4
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(n):
            fn(*args)
        best = min(best, (time.perf_counter() - start) / n)
    return best


def show_time(seconds: float) -> str:
    if seconds >= 0.1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-4:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.2f} µs"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m irad.demo", description="irad in one screen")
    parser.add_argument("--ir", action="store_true", help="also print the primal and the differentiated IR")
    options = parser.parse_args(argv)

    print("== the program")
    print(inspect.getsource(acceleration) + "\n" + inspect.getsource(pendulum))
    print("(softplus is irad.numerics.softplus, which comes with a rule)")

    runs = {}  # backend name -> (gradient, first call, a call after), each compiled afresh
    for backend in (irad.Python(), irad.Native()):
        missing = backend.unavailable_reason()
        if missing is not None:
            runs[backend.name] = missing
            continue
        g = irad.grad(pendulum, argnums=(0, 1), backend=backend)
        start = time.perf_counter()
        value = g(*ARGS)
        first = time.perf_counter() - start
        g.wait_optimised(60)  # native code runs at -O0 until -O2 is compiled in the background
        runs[backend.name] = (value, first, per_call(g, ARGS))

    gradient = runs["python"][0]
    print(f"\n== irad.grad(pendulum, argnums=(0, 1)) at {ARGS}, next to central differences")
    print(f"{'arg':>4} {'irad':>22} {'finite difference':>22} {'rel. error':>11}")
    for i, g in enumerate(gradient):
        fd = central_difference(pendulum, ARGS, i)
        err = abs(g - fd) / max(abs(fd), 1e-12)
        print(f"{i:>4} {g:>22.15g} {fd:>22.15g} {err:>11.2e}")

    print("\n== the backends side by side (the first call lowers, differentiates and compiles)")
    print(f"{'backend':>8} {'first call':>12} {'a call after':>13}  gradient")
    for name, run in runs.items():
        if isinstance(run, str):
            print(f"{name:>8}  not available here: " + run.replace("\n  hint: ", "\n          to install it: "))
            continue
        value, first, call = run
        print(f"{name:>8} {show_time(first):>12} {show_time(call):>13}  " + ", ".join(f"{v:.15g}" for v in value))
    print("\nWhich backend to pick: docs/getting-started.md. The IR: python -m irad.demo --ir")

    if options.ir:
        print(f"\n== primal IR: irad.lower(pendulum, {ARGS[0]}, {ARGS[1]})")
        print(irad.lower(pendulum, *ARGS))
        print("\n== differentiated and optimised IR: irad.grad(pendulum, argnums=(0, 1)).lower(...)")
        print(irad.grad(pendulum, argnums=(0, 1)).lower(*ARGS))


if __name__ == "__main__":
    main()
