"""What the fuzzer checks of one program (tests/fuzz/generator.py):

* irad's value equals the program run as plain Python/numpy;
* the gradient equals central differences in float64, component by
  component, where the one-sided differences agree (the program is smooth there);
* jvp agrees with vjp: <J v, 1> = <v, grad> for a random tangent v;
* natively (when asked), value and gradient equal the Python backend's.

Any exception from irad is a failure: the generator writes only the documented
subset, so an "unsupported" error is a bug in irad or in the generator.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

import irad
from irad import generated_programs

REGRESSIONS = Path(__file__).parent / "regressions"


def load(source: str, directory: Path):
    """Import `source` as a module from a file (irad reads functions' source)."""
    return generated_programs.load(source, "fuzz_" + hashlib.sha1(source.encode()).hexdigest()[:12], directory)


def _as_float64(args):
    x, w, k = args
    return float(x), np.asarray(w, dtype=np.float64), k


def _value(f, args) -> float:
    with np.errstate(all="ignore"):
        return float(f(*args))


def _difference(f, args, h_of):
    """(central, left, right) differences of f in float64, per float input."""
    x, w, k = _as_float64(args)
    out = []
    for i in range(1 + w.size):
        def at(delta):
            if i == 0:
                return _value(f, (x + delta, w, k))
            moved = w.copy()
            moved[i - 1] += delta
            return _value(f, (x, moved, k))

        base = x if i == 0 else w[i - 1]
        h = h_of(base)
        f0, up, down = at(0.0), at(h), at(-h)
        out.append(((up - down) / (2 * h), (f0 - down) / h, (up - f0) / h))
    return out


def check_program(source: str, args, directory: Path, native: bool = False) -> None:
    module = load(source, directory)
    f = module.f
    x, w, k = args
    single = w.dtype == np.float32
    rtol = 2e-3 if single else 1e-7
    expected = _value(f, args)
    if not np.isfinite(expected) or abs(expected) > 1e6:
        return  # outside what the generator means to test
    value, (gx, gw) = irad.value_and_grad(f, argnums=(0, 1))(*args)
    _close("value", value, expected, rtol, source, args)
    # the gradient, where the program is smooth
    grads = [gx, *np.asarray(gw, dtype=np.float64).ravel()]
    scale = max(1.0, abs(expected))
    for i, (g, (central, left, right)) in enumerate(zip(grads, _difference(f, args, lambda b: 1e-6 * max(1.0, abs(b))))):
        if not abs(left - right) <= 1e-4 * max(1.0, abs(central)):
            continue  # a kink or a branch boundary within the stencil
        tol = (1e-2 if single else 1e-4) * max(scale, abs(central), 1.0)
        if not abs(g - central) <= tol:
            raise AssertionError(
                f"gradient component {i}: irad {g!r}, central differences {central!r}\n"
                f"args={args!r}\n{source}"
            )
    # forward mode agrees with reverse mode
    rng = np.random.default_rng(0)
    vx, vw = float(rng.normal()), rng.normal(size=w.shape).astype(w.dtype)
    _, tangent = irad.jvp(f, (x, w, k), (vx, vw, None))
    _close("jvp", float(tangent), gx * vx + float(np.dot(np.asarray(gw, np.float64), vw)), rtol * 10, source, args)
    if native:
        nvalue, (ngx, ngw) = irad.value_and_grad(f, argnums=(0, 1), backend="native")(*args)
        _close("native value", nvalue, value, rtol, source, args)
        _close("native d/dx", ngx, gx, rtol * 10, source, args)
        np.testing.assert_allclose(
            np.asarray(ngw, np.float64), np.asarray(gw, np.float64), rtol=rtol * 10, atol=rtol * 10,
            err_msg=f"native d/dw differs from the Python backend\nargs={args!r}\n{source}",
        )


def _close(what, got, expected, rtol, source, args) -> None:
    if not abs(float(got) - float(expected)) <= rtol * max(1.0, abs(float(expected))):
        raise AssertionError(f"{what}: irad {got!r}, expected {expected!r}\nargs={args!r}\n{source}")


def save_regression(source: str, args, error: BaseException) -> Path:
    """Keep a failing program as a regression test (tests/fuzz/test_regressions.py runs them)."""
    REGRESSIONS.mkdir(exist_ok=True)
    x, w, k = args
    name = "case_" + hashlib.sha1(source.encode()).hexdigest()[:12] + ".py"
    path = REGRESSIONS / name
    header = (
        f"# A program the fuzzer found failing: {type(error).__name__}: "
        f"{str(error).splitlines()[0] if str(error) else ''}\n"
        f"# ARGS = ({x!r}, np.array({w.tolist()!r}, dtype=np.{w.dtype}), {k!r})\n"
    )
    path.write_text(header + source)
    return path
