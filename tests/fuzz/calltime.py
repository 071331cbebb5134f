"""Programs that read values from outside their arguments, changed between calls
(issue 33: values are the call's, docs/python-subset.md#values-read-from-outside-guards).

`mutation_cases()` draws a module (globals of every kind of place: a float, an int
deciding a loop, a dict with a float and a string deciding a branch, an object's
attributes with a list whose length decides a loop, a tuple, a closure cell, a
helper a name calls) whose `f(x)` reads a random selection of them, and a list of
changes to make between calls. `check_mutations` calls irad's gradient before and
after each change and compares it with central differences of `f` as Python runs
it then, on the python backend (natively too when asked), and from several
threads at once (each thread with its own point, against references taken first).
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import numpy as np
from hypothesis import strategies as st

import irad
from tests import generated_programs
from tests.reference import central_difference, relative_step

PRELUDE = '''\
import types
import numpy as np

NUM = {num!r}
TIMES = {times!r}
CFG = {{"a": {a!r}, "mode": {mode!r}}}
OBJ = types.SimpleNamespace(w={w!r}, terms={terms!r})
PAIR = ({p0!r}, {p1!r})


def smooth(x):
    return np.sin(x) * 0.5


def other(x):
    return np.tanh(x) + 0.25 * x


def make():
    c = {c!r}

    def f(x):
        v = x * 0.5
{body}
        return np.sum(v * v)

    def set_c(value):
        nonlocal c
        c = value

    return f, set_c


f, set_c = make()
'''

# Statements of f's body (inside `def f`, 8 spaces), each reading some outside values.
STATEMENTS = (
    "v = v * NUM + np.sin(x) * CFG['a']",
    "for _ in range(TIMES):\n    v = v * 0.75 + x * OBJ.w",
    "for t in OBJ.terms:\n    v = v + t * x",
    "if CFG['mode'] == 'sin':\n    v = v + np.sin(x) * c\nelse:\n    v = v + x ** 3 * c",
    "v = v + PAIR[0] * x * PAIR[1]",
    "v = v * (len(OBJ.terms) * 0.5)",
    "v = v + smooth(x) * c",
)

_floats = st.floats(-2.0, 2.0, allow_nan=False).map(lambda v: round(v, 3))


def _change(draw) -> tuple[str, object]:
    """One change: what to do to the module (see `apply`)."""
    kind = draw(st.sampled_from(("NUM", "TIMES", "CFG.a", "CFG.mode", "OBJ.w", "OBJ.terms.append",
                                 "OBJ.terms.pop", "PAIR", "c", "smooth")))
    if kind == "TIMES":
        return kind, draw(st.integers(0, 3))
    if kind == "CFG.mode":
        return kind, draw(st.sampled_from(("sin", "cube")))
    if kind == "PAIR":
        return kind, (draw(_floats), draw(_floats))
    if kind in ("OBJ.terms.pop", "smooth"):
        return kind, None
    return kind, draw(_floats)


@st.composite
def mutation_cases(draw):
    """(source, changes): a module and the changes to make between calls."""
    chosen = draw(st.lists(st.sampled_from(STATEMENTS), min_size=1, max_size=5))
    body = "\n".join("        " + line for stmt in chosen for line in stmt.split("\n"))
    source = PRELUDE.format(
        num=draw(_floats), times=draw(st.integers(0, 3)), a=draw(_floats), mode=draw(st.sampled_from(("sin", "cube"))),
        w=draw(_floats), terms=draw(st.lists(_floats, min_size=1, max_size=3)), p0=draw(_floats), p1=draw(_floats),
        c=draw(_floats), body=body,
    )
    changes = [_change(draw) for _ in range(draw(st.integers(1, 4)))]
    return source, changes


def apply(module, change: tuple[str, object]) -> None:
    kind, value = change
    if kind in ("NUM", "TIMES", "PAIR"):
        setattr(module, kind, value)
    elif kind.startswith("CFG."):
        module.CFG[kind[4:]] = value
    elif kind == "OBJ.w":
        module.OBJ.w = value
    elif kind == "OBJ.terms.append":
        module.OBJ.terms.append(value)
    elif kind == "OBJ.terms.pop":
        if len(module.OBJ.terms) > 1:
            module.OBJ.terms.pop()
    elif kind == "c":
        module.set_c(value)
    else:  # the helper's name now calls another function
        module.smooth = module.other


STEP = relative_step(1e-6)
POINTS = [np.array([0.3, -0.6, 0.9]), np.array([-1.1, 0.4, 0.2]), np.array([0.7, 0.05, -0.35])]


def _expected(f, x) -> np.ndarray:
    return central_difference(f, (x,), 0, STEP)


def _agrees(got, expected, what: str) -> None:
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7, err_msg=what)


def check_mutations(source: str, changes: list, directory: Path, backends=("python",), threads: int = 0) -> None:
    """irad's gradient of f equals central differences of f as Python runs it,
    before and after each change; with `threads`, also when that many threads
    call it at once (their first calls compiling it, after the first change)."""
    name = "fuzz_calltime_" + hashlib.sha1(repr((source, changes)).encode()).hexdigest()[:12]
    module = generated_programs.load(source, name, directory)
    grads = [irad.grad(module.f, backend=b) for b in backends]
    x = POINTS[0]
    for step, change in enumerate([None, *changes]):
        if change is not None:
            apply(module, change)
        expected = _expected(module.f, x)
        for g, b in zip(grads, backends):
            for call in range(2):  # the second through the call entry
                _agrees(g(x), expected, f"{b}, call {call} after changes {changes[:step]}")
    for b in backends if threads else ():
        _from_threads(irad.grad(module.f, backend=b), module.f, threads, b)


def _from_threads(fresh, f, threads: int, backend: str) -> None:
    """`fresh`, a gradient not called yet, called at once from `threads` threads
    (their first calls compile it), each at its own point, three times."""
    expected = [_expected(f, POINTS[k % len(POINTS)]) for k in range(threads)]
    results: list = [None] * threads
    start = threading.Barrier(threads)

    def work(k: int) -> None:
        start.wait()
        try:
            results[k] = [fresh(POINTS[k % len(POINTS)]) for _ in range(3)]
        except BaseException as exc:  # noqa: BLE001 -- reported below, with the thread
            results[k] = exc

    pool = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    for k, found in enumerate(results):
        if isinstance(found, BaseException):
            raise AssertionError(f"{backend}, thread {k} raised {found!r}") from found
        for got in found:
            _agrees(got, expected[k], f"{backend}, thread {k}")
