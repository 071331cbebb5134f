"""Small static-shape temporaries on the stack (irad/backends/native/stack.py).

Gradients are checked against central differences of the program run as
numpy in float64 (or a closed form, for arrays too large for differences), at
small static shapes (promoted), 0-d arrays, a loop whose tape has a dynamic
shape, and large arrays that still go through the buffer cache; promotion
must happen where these tests expect it (else they would not exercise it),
and must change no bit of any result.
"""

from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest

import irad
from irad import config
from irad.backends.native import compile as native
from irad.backends.native import buffers as native_buffers
from irad.backends.native import stack as native_stack
from irad.base.errors import BackendError
from tests.backends.test_backend_native import BENCH_ARRAYS, needs_native
from tests.reference import central_difference

pytestmark = [pytest.mark.native, needs_native]

STACK = config.switch("native_stack_kb")
RNG = np.random.default_rng(11)
GMM = BENCH_ARRAYS["make_gmm"](np)
TINY_GMM_ARGS = (RNG.normal(size=3), RNG.normal(size=(3, 2)), 0.1 * RNG.normal(size=(3, 2)), RNG.normal(size=(100, 2)))


def layer(w, b, x):
    return np.sum(np.tanh(x @ w + b) ** 2)


def zero_d(x, y):
    return np.sum(np.exp(x) * y + np.sin(x * y))


def power_loop(x, n):
    """A while loop whose trip count is an argument: its tape has a dynamic shape."""
    s = x
    i = 0
    while i < n:
        s = np.tanh(s) * x
        i += 1
    return np.sum(s * s)


def large(x, w):
    return np.sum(np.tanh(x * w) ** 2)


def large_gradient(x, w):
    t = np.tanh(x * w)
    g = 2.0 * t * (1.0 - t * t)
    return g * w, g * x


BIG = (RNG.normal(size=(300, 200)), RNG.normal(size=(300, 200)))  # 480 KB each: the buffer cache's
# (program, arguments, argnums, where its gradient's buffers are: on the stack, on the heap)
PROGRAMS = [
    (GMM, TINY_GMM_ARGS, (0, 1, 2), (True, False)),
    (layer, (RNG.normal(size=(6, 3)), RNG.normal(size=3), RNG.normal(size=(4, 6))), (0, 1, 2), (True, False)),
    (zero_d, (np.array(0.7), np.array(-1.3)), (0, 1), (False, False)),  # 0-d arrays are scalars
    (power_loop, (RNG.normal(size=5), 3), (0,), (True, True)),  # the loop's and its tape's on the heap
    (large, BIG, (0, 1), (False, True)),  # the seed times ones folds away (float_folds.MulfByOne): nothing small is left
]
IDS = ["tiny-gmm", "tanh-layer", "0-d", "dynamic-tape-loop", "large"]


def _native_gradient(f, args, argnums, kilobytes: int, monkeypatch):
    """The gradient compiled afresh with a stack budget."""
    monkeypatch.setenv(STACK.variable, str(kilobytes))
    module = irad.grad(f, argnums, backend="native").lower(*args)
    compiled = native.NativeModule(module)
    (name,) = compiled.functions
    return compiled.function(name)


def _buffers(f, args, argnums, monkeypatch, kilobytes: int = STACK.default) -> tuple[int, int]:
    """How many heap and stack buffers bufferization leaves in `f`'s gradient."""
    monkeypatch.setenv(STACK.variable, str(kilobytes))
    module = irad.grad(f, argnums, backend="native").lower(*args)
    ready, passes = native.for_mlir_opt(module, tracked=True, destinations=True)
    if "--convert-linalg-to-loops" not in passes:
        return 0, 0  # no tensors: 0-d arrays are scalars
    upto = passes.index("--convert-linalg-to-loops")
    out = subprocess.run([native.require_tool("mlir-opt"), *passes[:upto]], input=str(ready),
                         capture_output=True, text=True, check=True).stdout
    return len(re.findall(r"memref\.alloc\(", out)), len(re.findall(r"memref\.alloca\(", out))


def _expected(f, args, argnums):
    if f is large:
        return large_gradient(*args)
    return [central_difference(f, args, i) for i in argnums]


@pytest.mark.parametrize("f, args, argnums, where", PROGRAMS, ids=IDS)
def test_gradients_with_stack_buffers_match_central_differences(f, args, argnums, where, monkeypatch):
    heap, stack = _buffers(f, args, argnums, monkeypatch)
    assert (stack > 0, heap > 0) == where, f"{stack} stack buffers, {heap} heap buffers"
    hits = native_buffers.stats().hits
    grad = _native_gradient(f, args, argnums, STACK.default, monkeypatch)
    for _ in range(2):
        grads = grad(*args)
    for i, g, e in zip(argnums, grads, _expected(f, args, argnums)):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-7, err_msg=f"d/d arg {i}")
    if f is large and native_buffers.stats().capacity:
        assert native_buffers.stats().hits > hits, "the large temporaries did not come from the buffer cache"


@pytest.mark.parametrize("f, args, argnums, where", PROGRAMS, ids=IDS)
def test_stack_buffers_change_no_bit(f, args, argnums, where, monkeypatch):
    on = _native_gradient(f, args, argnums, STACK.default, monkeypatch)(*args)
    off = _native_gradient(f, args, argnums, 0, monkeypatch)(*args)
    for a, b in zip(on, off):
        np.testing.assert_array_equal(a, b)


def test_the_tiny_gmm_gradient_allocates_nothing_on_the_heap(monkeypatch):
    heap_before, stack_before = _buffers(GMM, TINY_GMM_ARGS, (0, 1, 2), monkeypatch, kilobytes=0)
    heap, stack = _buffers(GMM, TINY_GMM_ARGS, (0, 1, 2), monkeypatch)
    assert (heap_before, stack_before) == (26, 0)
    assert (heap, stack) == (0, 26)
    # with a smaller budget, the (100, 3, 2) temporaries (4800 bytes each) stay on the heap
    # (eight of them since each write has its own tensor.empty: native/fresh_destinations.py)
    heap, stack = _buffers(GMM, TINY_GMM_ARGS, (0, 1, 2), monkeypatch, kilobytes=64)
    assert heap == 8 and stack == 18


def test_the_limit_keeps_the_promoted_bytes_within_the_budget():
    module = irad.grad(GMM, (0, 1, 2), backend="native").lower(*TINY_GMM_ARGS)
    sizes = [s for op in module.walk() if (s := native_stack._static_bytes(op))]
    for budget in (1 << 10, 10_000, 1 << 16, 1 << 20):
        limit = native_stack.buffer_limit(module, budget)
        assert sum(s for s in sizes if s <= limit) <= budget
        larger = [c for c in native_stack.LIMITS if c > limit]
        if larger:  # and it is the largest limit that does
            assert sum(s for s in sizes if s <= min(larger)) > budget
    assert native_stack.buffer_limit(module, 0) == 0


def test_recursive_modules_get_no_stack_buffers():
    def down(x, n):
        if n <= 0:
            return np.sum(x * x)
        return down(np.sin(x), n - 1)

    module = irad.grad(down, 0, backend="native").lower(np.ones(3), 4)
    assert native_stack.buffer_limit(module, 1 << 30) == 0


def test_modules_calling_lapack_get_no_stack_buffers():
    """LAPACK's glue returns operands it overwrote, for the caller to free: an
    operand on the stack would be freed as heap memory."""

    def inverse(a):
        return np.sum(np.linalg.inv(a) * a)

    module = irad.grad(inverse, 0, backend="native").lower(np.eye(3))
    assert native_stack.buffer_limit(module, 1 << 30) == 0
    a = np.random.default_rng(3).normal(size=(3, 3)) + 3.0 * np.eye(3)
    g = irad.grad(inverse, backend="native")
    for _ in range(3):
        np.testing.assert_allclose(g(a), central_difference(inverse, (a,), 0), rtol=1e-6, atol=1e-7)


def test_a_bad_budget_is_a_clear_error(monkeypatch):
    monkeypatch.setenv(STACK.variable, "lots")
    with pytest.raises(BackendError, match=f"{STACK.variable} must be a whole number"):
        native_stack.budget()
