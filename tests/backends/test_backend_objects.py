"""Backends are objects behind one protocol (irad/backends/protocol.py):
`backend=` takes a name or an object, equal objects share compiled code, the
IREE options are checked without IREE installed, the old `iree_target=` and
`iree_device=` keywords warn, and the API and the cache reach a backend only
through the protocol. Gradients are checked against central differences."""

from __future__ import annotations

import math
import pickle
import warnings
from dataclasses import dataclass

import numpy as np
import pytest

import irad
from irad.backends import BACKENDS, Backend, CompiledModule, check_backend
from irad import config
from irad.backends.python.backend import Python
from irad.base.errors import BackendError, RuntimeCheckError
from tests.backends.test_backend_native import needs_native
from tests.reference import central_difference
from tests.test_layers import import_graph

OBJECTS = {"python": irad.Python, "native": irad.Native}
IREE_MISSING = irad.IREE().unavailable_reason()
BACKEND_NAMES = ["python", pytest.param("native", marks=[pytest.mark.native, needs_native])]


def stepped(w, x, n):
    h = x
    for _ in range(n):
        h = np.tanh(h * w) + 0.1 * h
    return np.sum(h * h)


def stepped_args():
    return np.linspace(0.3, 1.1, 4), np.linspace(-1.0, 1.0, 4), 5


@pytest.fixture
def compiles(monkeypatch):
    """The backends each compile went to, in order."""
    seen = []
    for cls in (irad.Python, irad.Native):
        real = cls.compile
        monkeypatch.setattr(cls, "compile", lambda self, module, real=real: seen.append(self) or real(self, module))
    return seen


# ---- a name and an object compile the same code ------------------------------------------
@pytest.mark.parametrize("name", BACKEND_NAMES)
def test_a_name_and_its_object_give_the_same_gradients(name):
    args = stepped_args()
    by_name = irad.grad(stepped, (0, 1), backend=name)(*args)
    by_object = irad.grad(stepped, (0, 1), backend=OBJECTS[name]())(*args)
    for i, (a, b) in enumerate(zip(by_name, by_object)):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(a, central_difference(stepped, args, i), rtol=1e-6, atol=1e-8)
    values = irad.jacrev(lambda w: np.tanh(w) * w, backend=OBJECTS[name]())(args[0])
    np.testing.assert_allclose(np.diag(values), np.tanh(args[0]) + args[0] / np.cosh(args[0]) ** 2, rtol=1e-12)


@pytest.mark.parametrize("name", BACKEND_NAMES)
def test_an_equal_object_finds_the_compiled_code(name, compiles, monkeypatch):
    monkeypatch.delenv("IRAD_NATIVE_KEEP_SHARED", raising=False)

    def f(x):  # a function of its own: the cache is per function
        return math.sin(x) * x

    expected = math.sin(0.4) + 0.4 * math.cos(0.4)
    assert irad.grad(f, backend=OBJECTS[name]())(0.4) == pytest.approx(expected, rel=1e-14)
    assert irad.grad(f, backend=name)(0.4) == pytest.approx(expected, rel=1e-14)
    same = irad.Native(keep_shared=config.default("native_keep_shared")) if name == "native" else irad.Python()
    irad.grad(f, backend=same)(0.4)
    assert compiles == [OBJECTS[name]()]  # one compile for the three
    if name == "native":  # other options are other code
        assert irad.grad(f, backend=irad.Native(keep_shared=0))(0.4) == pytest.approx(expected, rel=1e-14)
        assert compiles == [irad.Native(), irad.Native(keep_shared=0)]


@pytest.mark.native
@needs_native
def test_keep_shared_of_the_object_decides_what_stays_a_function():
    def sigmoid(z):
        return 1.0 / (1.0 + np.exp(-z))

    def step(h, w):
        a = np.tanh(h * w) * sigmoid(h) + np.sin(h) * np.cos(w) + np.exp(-h * h) * w
        return a * sigmoid(a) + 0.5 * np.tanh(a)

    def chain(h, w):
        return np.sum(step(step(step(h, w), w), w))

    h, w = np.linspace(0.1, 0.6, 3), np.linspace(-0.4, 0.4, 3)
    kept = irad.grad(chain, (0, 1), backend=irad.Native(keep_shared=1))
    inlined = irad.grad(chain, (0, 1), backend=irad.Native(keep_shared=0))
    assert "func.call" in str(kept.lower(h, w)) and "func.call" not in str(inlined.lower(h, w))
    for a, b, i in zip(kept(h, w), inlined(h, w), (0, 1)):
        np.testing.assert_allclose(a, b, rtol=1e-13)
        np.testing.assert_allclose(a, central_difference(chain, (h, w), i), rtol=1e-6, atol=1e-9)


# ---- objects: hashable, equal by options, picklable -------------------------------------------
def test_objects_are_equal_and_hashed_by_their_options(monkeypatch):
    monkeypatch.delenv("IRAD_NATIVE_KEEP_SHARED", raising=False)
    equal_pairs = [
        (irad.Python(), irad.Python()),
        (irad.Native(), irad.Native(keep_shared=config.default("native_keep_shared"))),
        (irad.IREE(), irad.IREE(target="llvm-cpu", device="local-sync")),
        (irad.IREE("cuda"), irad.IREE(target="cuda", device="cuda")),
        (check_backend("iree"), irad.IREE()),
    ]
    for a, b in equal_pairs:
        assert a == b and hash(a) == hash(b)
        assert pickle.loads(pickle.dumps(a)) == a
    different = [irad.Python(), irad.Native(), irad.Native(keep_shared=0), irad.IREE(),
                 irad.IREE(device="local-task"), irad.IREE("rocm")]
    assert len(set(different)) == len(different)
    assert repr(irad.IREE("rocm")) == "IREE(target='rocm', device='hip')"
    assert repr(irad.Native(keep_shared=0)) == "Native(keep_shared=0)"
    with pytest.raises(AttributeError):
        irad.IREE().target = "cuda"  # frozen: an object in a cache key never changes


def test_the_names_are_the_classes():
    assert BACKENDS == {"python": irad.Python, "native": irad.Native, "iree": irad.IREE}
    for name, cls in BACKENDS.items():
        assert check_backend(name) == cls() and cls.name == name
    assert (irad.Python().tape_form, irad.Native().tape_form, irad.IREE().tape_form) == ("objects", "memref", "tensor")
    assert irad.Python().keep_shared == irad.IREE().keep_shared == 0


def test_an_unknown_name_is_an_error_listing_the_names():
    for wrong in ("cuda", "Native", 3):  # (None: irad.config's default backend)
        with pytest.raises(BackendError, match=r"(?s)unknown backend .*hint: use one of 'python', 'native', 'iree'"):
            irad.grad(math.sin, backend=wrong)
    with pytest.raises(BackendError, match="unknown backend 'gpu'"):
        irad.jacfwd(math.sin, backend="gpu")


# ---- IREE's options, checked without IREE -----------------------------------------------------
def test_iree_options_are_checked_without_iree():
    assert (irad.IREE().target, irad.IREE().device) == ("llvm-cpu", "local-sync")
    assert irad.IREE(device="local-task").device == "local-task"
    assert [irad.IREE(t).device for t in ("cuda", "rocm", "vulkan-spirv")] == ["cuda", "hip", "vulkan"]
    with pytest.raises(BackendError, match=r"unknown IREE target 'tpu'\n  hint: use one of 'llvm-cpu', 'cuda'"):
        irad.IREE(target="tpu")
    with pytest.raises(BackendError, match="an IREE device is named by a string, not 0"):
        irad.IREE(device=0)
    with pytest.raises(BackendError, match="unknown IREE target"):
        irad.grad(math.sin, backend="iree", iree_target="tpu")  # checked before the warning


@pytest.mark.skipif(IREE_MISSING is None, reason="IREE is installed")
def test_iree_without_the_extra_is_an_error_naming_the_install():
    g = irad.grad(math.sin, backend=irad.IREE(target="cuda"))  # constructing needs no IREE
    assert g.backend == irad.IREE("cuda") and irad.IREE().unavailable_reason() is not None
    with pytest.raises(BackendError, match=r"(?s)needs IREE's Python packages.*: pip install -e '\.\[iree\]'.*hint: install them"):
        g(0.3)


def test_native_options_are_checked(monkeypatch):
    for wrong in (-1, 2.5, "many", True):
        with pytest.raises(BackendError, match="keep_shared=...\\) takes a count of ops"):
            irad.Native(keep_shared=wrong)
    monkeypatch.setenv("IRAD_NATIVE_KEEP_SHARED", "7")
    assert irad.Native().keep_shared == 7 and irad.Native(keep_shared=2).keep_shared == 2


# ---- the deprecated IREE keywords ------------------------------------------------------------
LAZY = {  # the transformations that compile at the first call
    "grad": lambda **kw: irad.grad(math.sin, **kw),
    "value_and_grad": lambda **kw: irad.value_and_grad(math.sin, **kw),
    "jacfwd": lambda **kw: irad.jacfwd(math.sin, **kw),
    "jacrev": lambda **kw: irad.jacrev(math.sin, **kw),
    "hessian": lambda **kw: irad.hessian(math.sin, **kw),
}


@pytest.mark.parametrize("name", LAZY)
def test_the_iree_keywords_warn_naming_the_object(name):
    with pytest.warns(DeprecationWarning) as record:
        made = LAZY[name](backend="iree", iree_target="cuda", iree_device="cuda")
    assert len(record) == 1
    assert "backend=irad.IREE(target='cuda', device='cuda')" in str(record[0].message)
    assert record[0].filename == __file__  # the caller's line
    assert made.backend == irad.IREE(target="cuda")


@pytest.mark.parametrize("transform", ["vjp", "jvp"])
def test_the_iree_keywords_warn_on_vjp_and_jvp(transform):
    call = {"vjp": lambda **kw: irad.vjp(math.sin, 0.3, **kw),
            "jvp": lambda **kw: irad.jvp(math.sin, (0.3,), (1.0,), **kw)}[transform]
    with pytest.warns(DeprecationWarning, match=r"backend=irad.IREE\(target=None, device='local-task'\)"):
        try:
            call(backend="iree", iree_device="local-task")
        except BackendError as exc:  # these compile at once: without the extra, an error naming it
            assert IREE_MISSING is not None and "needs IREE" in str(exc)


def test_the_iree_keywords_are_refused_with_another_backend():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an error, and no warning first
        with pytest.raises(BackendError, match="apply to backend='iree', not 'native'"):
            irad.grad(math.sin, backend="native", iree_target="cuda")
        with pytest.raises(BackendError, match=r"(?s)do not apply to backend=IREE\(.*hint: give a target"):
            irad.grad(math.sin, backend=irad.IREE(), iree_device="local-task")
        irad.grad(math.sin, backend="iree")  # no keywords: no warning


# ---- the protocol ----------------------------------------------------------------------------
class Forwarding(CompiledModule):
    """A compiled module with no call entries of its own."""

    def __init__(self, code: CompiledModule):
        self.code = code

    def function(self, name):
        return self.code.function(name)


@dataclass(frozen=True)
class Counting(Backend):
    """A backend added outside irad: the Python backend's code behind the protocol's defaults."""

    scale: int = 1
    name = "counting"

    def compile(self, module):
        return Forwarding(Python().compile(module))


def test_a_backend_outside_irad_gets_the_generic_entry():
    def f(x, y):
        return np.sum(np.sin(x) * y)

    g = irad.grad(f, backend=Counting())
    x = np.linspace(0.0, 1.0, 5)
    results = [g(x, 0.5) for _ in range(3)]  # the second call builds the generic entry, the third runs it
    assert type(g).__call__.__code__.co_filename.startswith("<irad entry")
    for dx in results:
        np.testing.assert_allclose(dx, central_difference(f, (x, 0.5), 0), rtol=1e-7)
    assert g.wait_optimised()  # the protocol's default: nothing to wait for
    with pytest.raises(RecursionError):  # no translation of its own: the error goes through as it is
        irad.grad(power, backend=Counting())(1.5, -1)
    with pytest.raises(RuntimeCheckError, match="maximum recursion depth exceeded in power"):
        irad.grad(power, backend="python")(1.5, -1)  # the Python backend's translation


def power(x, n):
    return 1.0 if n == 0 else x * power(x, n - 1)


def test_every_backend_compiles_to_the_protocol():
    module = irad.grad(math.sin).lower(0.3)
    code = Python().compile(module)
    assert isinstance(code, CompiledModule)
    assert type(code).entry is not CompiledModule.entry  # the Python backend inlines its body
    assert type(code).recursion_error is not CompiledModule.recursion_error


def test_the_api_and_the_cache_reach_backends_only_through_the_protocol():
    allowed = {"irad.backends", "irad.backends.protocol", "irad.backends.entry"}
    graph = import_graph()
    for module in ("irad.api", "irad.compiled", "irad.jacobians"):
        reached = {d for d in graph[module] if d.startswith("irad.backends")}
        assert reached <= allowed, f"{module} imports backend internals: {sorted(reached - allowed)}"
