"""What the fuzzer checks of one program (tests/fuzz/generator.py):

* irad's value equals the program run as plain Python/numpy;
* the gradient with respect to every float and float-array argument equals
  central differences in float64, component by component, where the one-sided
  differences agree (the program is smooth there);
* jvp agrees with vjp: <J v, 1> = <v, grad> for a random tangent v;
* natively (when asked), value, gradient and jvp equal the Python backend's.

Differences are taken on the program in float64 throughout: its float32
arguments are widened and `np.float32` in its source reads `np.float64`, so the
step is far above the rounding. Any exception from irad is a failure: the
generator writes only the documented subset, so an "unsupported" error is a bug
in irad or in the generator.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import numpy as np

import irad
from irad import generated_programs

REGRESSIONS = Path(__file__).parent / "regressions"


def load(source: str, directory: Path):
    """Import `source` as a module from a file (irad reads functions' source)."""
    return generated_programs.load(source, "fuzz_" + hashlib.sha1(source.encode()).hexdigest()[:12], directory)


def _active(args) -> list[int]:
    """The positions of the float and float-array arguments."""
    return [i for i, a in enumerate(args) if isinstance(a, float) or isinstance(a, np.ndarray)]


def _widened(args) -> tuple:
    return tuple(np.asarray(a, np.float64) if isinstance(a, np.ndarray) else a for a in args)


def _value(f, args) -> float:
    with np.errstate(all="ignore"):
        return float(f(*args))


def _differences(f, args):
    """(central, left, right) differences of f in float64, per component of each
    active argument, in the order of `_active`."""
    args = _widened(args)
    f0 = _value(f, args)
    out = []
    for i in _active(args):
        flat = np.atleast_1d(np.asarray(args[i], np.float64)).ravel()
        for j in range(flat.size):
            def at(delta):
                moved = list(args)
                if isinstance(args[i], float):
                    moved[i] = args[i] + delta
                else:
                    m = flat.copy()
                    m[j] += delta
                    moved[i] = m.reshape(args[i].shape)
                return _value(f, tuple(moved))

            h = 1e-6 * max(1.0, abs(flat[j]))
            up, down = at(h), at(-h)
            out.append(((up - down) / (2 * h), (f0 - down) / h, (up - f0) / h))
    return out


def _flat(values) -> np.ndarray:
    return np.concatenate([np.atleast_1d(np.asarray(v, np.float64)).ravel() for v in values])


def check_program(source: str, args, directory: Path, native: bool = False) -> None:
    f = load(source, directory).f
    wide = load(source.replace("np.float32", "np.float64"), directory).f
    args = tuple(args)
    active = _active(args)
    single = "np.float32" in source or any(isinstance(a, np.ndarray) and a.dtype == np.float32 for a in args)
    rtol = 2e-3 if single else 1e-7
    expected = _value(f, args)
    if not np.isfinite(expected) or abs(expected) > 1e6:
        return  # outside what the generator means to test
    value, grads = irad.value_and_grad(f, argnums=tuple(active))(*args)
    _close("value", value, expected, rtol, source, args)
    for g, a in zip(grads, (args[i] for i in active)):
        if isinstance(a, np.ndarray) and (np.shape(g) != a.shape or np.asarray(g).dtype != a.dtype):
            raise AssertionError(f"a cotangent of shape {np.shape(g)} and dtype {np.asarray(g).dtype} for an "
                                 f"argument of {a.shape} and {a.dtype}\nargs={args!r}\n{source}")
    flat = _flat(grads)
    # the gradient, where the program is smooth
    scale = max(1.0, abs(expected))
    for c, (g, (central, left, right)) in enumerate(zip(flat, _differences(wide, args))):
        if not abs(left - right) <= 1e-4 * max(1.0, abs(central)):
            continue  # a kink or a branch boundary within the stencil
        tol = (1e-2 if single else 1e-4) * max(scale, abs(central), 1.0)
        if not abs(g - central) <= tol:
            raise AssertionError(
                f"gradient component {c}: irad {g!r}, central differences {central!r}\n"
                f"args={args!r}\n{source}"
            )
    # forward mode agrees with reverse mode
    rng = np.random.default_rng(0)
    tangents = tuple(
        float(rng.normal()) if isinstance(a, float)
        else rng.normal(size=a.shape).astype(a.dtype) if isinstance(a, np.ndarray) else None
        for a in args
    )
    _, tangent = irad.jvp(f, args, tangents)
    expected_tangent = float(np.dot(flat, _flat([tangents[i] for i in active])))
    _close("jvp", float(tangent), expected_tangent, rtol * 10, source, args)
    if native:
        nvalue, ngrads = irad.value_and_grad(f, argnums=tuple(active), backend="native")(*args)
        _close("native value", nvalue, value, rtol, source, args)
        np.testing.assert_allclose(
            _flat(ngrads), flat, rtol=rtol * 10, atol=rtol * 10,
            err_msg=f"the native gradient differs from the Python backend's\nargs={args!r}\n{source}",
        )
        _, ntangent = irad.jvp(f, args, tangents, backend="native")
        _close("native jvp", float(ntangent), float(tangent), rtol * 10, source, args)


def _close(what, got, expected, rtol, source, args) -> None:
    if not abs(float(got) - float(expected)) <= rtol * max(1.0, abs(float(expected))):
        raise AssertionError(f"{what}: irad {got!r}, expected {expected!r}\nargs={args!r}\n{source}")


def arguments_source(args) -> str:
    """Python source that rebuilds `args` (for the `# ARGS =` line of a saved case)."""
    parts = [f"np.array({a.tolist()!r}, dtype=np.{a.dtype})" if isinstance(a, np.ndarray) else repr(a) for a in args]
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def failure_kind(error: BaseException) -> str:
    """What kind of failure `error` is, without the details that shrinking changes
    (file names, positions, numbers, variable names)."""
    first = str(error).splitlines()[0] if str(error) else ""
    first = re.sub(r"^\S+:\d+:\d+: ", "", first)
    first = re.sub(r"'[^']*'", "'_'", first)
    first = re.sub(r"-?\d[\d.e+-]*", "#", first)
    return f"{type(error).__name__}: {first[:80]}"


def save_regression(source: str, args, error: BaseException) -> Path:
    """Keep a failing program as a regression test (tests/fuzz/test_regressions.py runs them)."""
    REGRESSIONS.mkdir(exist_ok=True)
    name = "case_" + hashlib.sha1(source.encode()).hexdigest()[:12] + ".py"
    path = REGRESSIONS / name
    header = (
        f"# A program the fuzzer found failing: {type(error).__name__}: "
        f"{str(error).splitlines()[0] if str(error) else ''}\n"
        f"# ARGS = {arguments_source(args)}\n"
    )
    path.write_text(header + source)
    return path
