"""Values read from outside a function are those of the call (issue 33, items 4, 5, 8, 9, 12).

- Numbers, strings, None, containers' lengths and keys, and the functions a
  program calls, read from a module global, a closure cell, a dict, an
  attribute, a NamedTuple or dataclass field, are baked in and guarded: a
  changed one compiles again (irad/frontend/globals.py), an unchanged one
  compiles nothing (call costs: bench/call_overhead.py).
- A source file edited after import is refused, not differentiated.
- Several threads run deep recursive gradients and first-call one gradient
  without killing the process (in a subprocess, so a crash fails the test).
- A transformation of a transformation made anew in a loop compiles once;
  the code of a function nobody holds is freed.

Gradients are checked against central differences of the programs in float64.
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import importlib
import os
import subprocess
import sys
import textwrap
import threading
import typing
import weakref

import numpy as np
import pytest

import irad
from irad import compiled
from irad.base import recursion
from irad.base.errors import IradError, IradWarning, UnsupportedError
from tests.api.test_globals import lowerings
from tests.backends.test_backend_native import needs_native
from tests.reference import central_difference, relative_step

THIS = sys.modules[__name__]
NATIVE = pytest.param("native", marks=[pytest.mark.native, needs_native])
STEP = relative_step(1e-6)
X = np.array([0.3, -0.7, 1.1])


class Pair(typing.NamedTuple):
    scale: float
    times: int


@dataclasses.dataclass
class Settings:
    weight: float
    mode: str


REG = 0.5
CFG = {"reg": 0.1, "inner": {"ks": [1.5, 2]}}
PAIR = Pair(2.0, 2)
SETTINGS = Settings(1.0, "square")
TERMS: list = [1.0]


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    monkeypatch.setattr(THIS, "REG", 0.5)
    monkeypatch.setattr(THIS, "CFG", {"reg": 0.1, "inner": {"ks": [1.5, 2]}})
    monkeypatch.setattr(THIS, "PAIR", Pair(2.0, 2))
    monkeypatch.setattr(THIS, "SETTINGS", Settings(1.0, "square"))
    monkeypatch.setattr(THIS, "TERMS", [1.0])
    monkeypatch.setattr(THIS, "AXES", [0])


def agrees(g, f, x=X):
    """g(x) twice (the second through the call entry) is f's gradient at x."""
    expected = central_difference(f, (x,), 0, STEP)
    for _ in range(2):
        np.testing.assert_allclose(g(x), expected, rtol=1e-6, atol=1e-8)


def make_closure():
    weight = 3.0

    def f(w):
        return weight * np.sum(w ** 2)

    def set_weight(v):
        nonlocal weight
        weight = v

    return f, set_weight


def everything(w):
    v = REG * CFG["reg"] * CFG["inner"]["ks"][0] * PAIR.scale * SETTINGS.weight
    for _ in range(PAIR.times):  # an int: the loop is unrolled for it
        v = v * 1.5
    t = 0.0
    for term in TERMS:  # the list's length decides the loop
        t = t + term
    if SETTINGS.mode == "square":  # a string decides the branch
        return v * t * np.sum(w ** 2)
    return v * t * np.sum(np.sin(w))


def test_the_issue_example_sees_the_new_value():
    cfg = {"reg": 0.1}
    g = irad.grad(lambda w: cfg["reg"] * np.sum(w ** 2))
    np.testing.assert_allclose(g(np.ones(2)), [0.2, 0.2])
    cfg["reg"] = 1.0
    np.testing.assert_allclose(g(np.ones(2)), [2.0, 2.0])
    np.testing.assert_allclose(g(np.ones(2)), [2.0, 2.0])


CHANGES = {
    "module global": lambda: setattr(THIS, "REG", 2.0),
    "dict item": lambda: CFG.__setitem__("reg", 0.7),
    "nested containers": lambda: CFG["inner"]["ks"].__setitem__(0, -0.5),
    "NamedTuple field (rebound)": lambda: setattr(THIS, "PAIR", Pair(0.5, 2)),
    "an int deciding a loop": lambda: setattr(THIS, "PAIR", Pair(2.0, 3)),
    "dataclass field": lambda: setattr(SETTINGS, "weight", -2.0),
    "a string deciding a branch": lambda: setattr(SETTINGS, "mode", "sine"),
    "a list appended to": lambda: TERMS.append(2.5),
}


@pytest.mark.parametrize("change", CHANGES, ids=list(CHANGES))
def test_a_changed_value_is_seen(change, monkeypatch):
    lowerings(monkeypatch)  # a cache of its own: the other changes' compiles are not this test's
    g = irad.grad(everything)
    agrees(g, everything)
    CHANGES[change]()
    agrees(g, everything)


SHAPE = (2, 3)
AXES = [0]


def test_a_tuple_used_whole_as_a_shape_and_a_list_item_as_an_axis(monkeypatch):
    def f(x):
        return np.sum(np.reshape(x, SHAPE).sum(axis=AXES[0]) ** 2)

    x = np.arange(6.0)
    g = irad.grad(f)
    agrees(g, f, x)
    monkeypatch.setattr(THIS, "SHAPE", (3, 2))
    agrees(g, f, x)
    AXES[0] = 1
    agrees(g, f, x)


class Square:
    def __init__(self, w):
        self.w = w

    def forward(self, x):
        return self.w * np.sum(x ** 2)


class Cube(Square):
    def forward(self, x):
        return self.w * np.sum(x ** 3)


def scaled_square(s, x):
    return s * np.sum(x ** 2)


def scaled_cube(s, x):
    return s * np.sum(x ** 3)


def test_a_rebound_object_of_another_class_and_a_rebound_partial(monkeypatch):
    monkeypatch.setattr(THIS, "MODEL", Square(2.0), raising=False)
    monkeypatch.setattr(THIS, "PARTIAL", functools.partial(scaled_square, 2.0), raising=False)

    def through_model(x):
        return MODEL.forward(x)

    def through_partial(x):
        return PARTIAL(x)

    for f in (through_model, through_partial):
        g = irad.grad(f)
        agrees(g, f)
        monkeypatch.setattr(THIS, "MODEL", Cube(2.0))  # its method is another
        monkeypatch.setattr(THIS, "PARTIAL", functools.partial(scaled_cube, 2.0))
        agrees(g, f)
        MODEL.w = -1.5
        agrees(g, f)
        monkeypatch.setattr(THIS, "MODEL", Square(2.0))
        monkeypatch.setattr(THIS, "PARTIAL", functools.partial(scaled_square, 2.0))


def test_closure_cell_and_rebound_helper(monkeypatch):
    f, set_weight = make_closure()
    g = irad.grad(f)
    agrees(g, f)
    set_weight(-1.25)
    agrees(g, f)

    def call_helper(w):
        return helper(w) * 2.0

    monkeypatch.setattr(THIS, "helper", lambda w: np.sum(np.cos(w)), raising=False)
    g = irad.grad(call_helper)
    agrees(g, call_helper)
    monkeypatch.setattr(THIS, "helper", lambda w: np.sum(w ** 3))  # the name now calls another function
    agrees(g, call_helper)


def test_unchanged_values_compile_once_and_old_values_are_found_again(monkeypatch):
    seen = lowerings(monkeypatch)
    g = irad.grad(everything)
    for _ in range(5):
        agrees(g, everything)
    assert len(seen) == 1
    SETTINGS.weight = 4.0
    agrees(g, everything)
    SETTINGS.weight = 1.0  # back: the first compile again
    agrees(g, everything)
    assert len(seen) == 2


def test_a_value_changing_at_every_call_warns_and_keeps_few_compiles(monkeypatch):
    lowerings(monkeypatch)
    g = irad.grad(everything)
    with pytest.warns(IradWarning, match=r"compiled 8 times for new values of REG.*pass a value"):
        for k in range(compiled.MAX_VARIANTS + 2):
            THIS.REG = 1.0 + k
            agrees(g, everything)
    assert max(len(v) for keys in compiled._CACHE.values() for v in keys.values()) == compiled.MAX_VARIANTS


def test_other_transformations_see_changes():
    def f(w):
        return CFG["reg"] * np.sum(w ** 3)

    h, jac = irad.hessian(f), irad.jacrev(lambda w: CFG["reg"] * w ** 2)
    _, pullback = irad.vjp(f, X)
    np.testing.assert_allclose(h(X), np.diag(0.6 * X))
    np.testing.assert_allclose(pullback(1.0)[0], 0.3 * X ** 2)
    CFG["reg"] = 2.0
    np.testing.assert_allclose(h(X), np.diag(12.0 * X))
    np.testing.assert_allclose(jac(X), np.diag(4.0 * X))
    _, pullback = irad.vjp(f, X)
    np.testing.assert_allclose(pullback(1.0)[0], 6.0 * X ** 2)
    _, tangent = irad.jvp(f, (X,), (np.ones(3),))
    np.testing.assert_allclose(tangent, np.sum(6.0 * X ** 2))


@pytest.mark.parametrize("backend", ["python", NATIVE])
def test_changes_on_both_backends(backend):
    f, set_weight = make_closure()

    def loss(w):
        return f(w) + CFG["reg"] * np.sum(w) * len(TERMS)

    g = irad.grad(loss, backend=backend)
    agrees(g, loss)
    set_weight(0.25)
    CFG["reg"] = -3.0
    TERMS.append(1.0)
    agrees(g, loss)


# ---- a file edited after import --------------------------------------------------------
def test_a_source_file_edited_after_import_is_refused(tmp_path, monkeypatch):
    module = tmp_path / "edited_after_import.py"
    module.write_text("def f(x):\n    return x ** 2\n\nsquare = lambda x: x ** 2\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("edited_after_import")
    module.write_text("def f(x):\n    return x ** 3\n\nsquare = lambda x: x ** 3\n")
    for fn in (mod.f, mod.square):
        with pytest.raises(UnsupportedError, match=r"edited_after_import.py:\d+:1: the source of .* changed after"
                                                   r"[^\n]*\n  hint: reload the module"):
            irad.grad(fn)(2.0)
    module.write_text("\n\n# lines moved\ndef f(x):\n    return x ** 3\n")
    with pytest.raises(UnsupportedError, match="changed after the function was defined"):
        irad.grad(mod.f)(1.5)
    importlib.reload(mod)
    assert irad.grad(mod.f)(2.0) == 12.0
    sys.modules.pop("edited_after_import", None)


# ---- threads ---------------------------------------------------------------------------
THREADS = textwrap.dedent("""
    import sys, threading
    import numpy as np
    import irad
    from irad import pipeline

    def down(x, n):
        if n == 0:
            return x
        return down(x * 1.0001, n - 1)

    g = irad.grad(down)
    builds = []
    lower = pipeline.lower_function
    pipeline.lower_function = lambda *args: builds.append(1) or lower(*args)
    h = irad.grad(lambda x: np.sum(np.sin(x) * x))
    errors, start = [], threading.Barrier(4)

    def work(k):
        try:
            start.wait()
            x = np.array([0.5, 1.5])
            np.testing.assert_allclose(h(x), np.cos(x) * x + np.sin(x))
            for i in range(3):
                n = 2500 + 100 * k + i
                assert abs(g(1.5, n) - 1.0001 ** n) < 1e-9 * 1.0001 ** n
        except BaseException as exc:
            errors.append(repr(exc))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert sum(builds) == 2, builds  # one compile for h's four first calls, one for g's signature
    print("ok", sys.getrecursionlimit())
""")


def test_threads_running_deep_recursive_gradients_never_kill_the_process(tmp_path):
    script = tmp_path / "threads.py"  # irad lowers from source: a file
    script.write_text(THREADS)
    for _ in range(2):  # the crash this guards against came in 2 of 3 runs
        run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stderr[-3000:]
        assert run.stdout.startswith("ok")


def test_the_recursion_limit_comes_back_in_a_single_thread():
    before = recursion._saved or sys.getrecursionlimit()  # the limit before irad raised it

    def down(x, n):
        if n == 0:
            return x
        return down(x * 1.0001, n - 1)

    assert irad.grad(down)(1.5, 3000) == pytest.approx(1.0001 ** 3000)
    if threading.active_count() == 1:  # else it stays raised (a background -O2 compile's thread)
        assert sys.getrecursionlimit() == before


# ---- nested transformations: compiled once, freed with their function ------------------
def test_a_nested_transformation_made_in_a_loop_compiles_once(monkeypatch):
    seen = lowerings(monkeypatch)

    def f(x):
        return np.sum(np.sin(x) * x)

    def cube(x):
        return x ** 3

    for _ in range(50):
        h = irad.hessian(f)(X)
        second = irad.grad(irad.grad(cube))(0.7)
    np.testing.assert_allclose(h, np.diag(2 * np.cos(X) - X * np.sin(X)), rtol=1e-12)
    assert second == pytest.approx(6 * 0.7)
    assert len(seen) == 2
    assert irad.grad(f) == irad.grad(f) and hash(irad.hessian(f)) == hash(irad.hessian(f))
    assert irad.grad(f) != irad.grad(f, argnums=(0,)) and irad.grad(f) != irad.value_and_grad(f)


def test_code_compiled_for_a_discarded_function_is_freed():
    refs = []
    for k in range(3):
        g = irad.grad(lambda w: np.sum(w ** 2) * k)
        g(X)
        refs.append(weakref.ref(next(iter(g._by_signature.values()))[0]))
        del g
    gc.collect()
    assert all(r() is None for r in refs)


# ---- messages and leftovers ------------------------------------------------------------
def test_a_cotangent_of_another_structure_is_described_as_numpy_would():
    _, pullback = irad.vjp(lambda x: {"a": x * 2.0, "b": np.sum(x)}, X)
    with pytest.raises(IradError) as caught:
        pullback({"a": np.ones(3)})
    message = str(caught.value)
    assert "{'a': float64 array of shape (3,)" in message and "'b': float" in message
    assert "TensorType" not in message and "Attr(" not in message


@pytest.mark.native
@needs_native
def test_no_request_file_is_left_behind_without_the_object_cache(tmp_path):
    program = "import numpy as np, irad\nprint(irad.grad(lambda x: np.sum(np.tanh(x) * x), backend='native')(np.ones(3)))\n"
    script = tmp_path / "program.py"
    script.write_text(program)
    env = {**os.environ, "TMPDIR": str(tmp_path), "IRAD_NATIVE_CACHE": "0"}
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert not list(tmp_path.glob("irad-native-*")), list(tmp_path.iterdir())
