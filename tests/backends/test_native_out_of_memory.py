"""An allocation that fails raises MemoryError, natively as on the Python backend,
and the process carries on (irad/backends/native/runtime.ll: irad_obtain_or_fail).

Natively a buffer comes from irad's runtime; when malloc returned NULL the
compiled code wrote through it and the process died (SIGSEGV). Now the
allocation fails a check (native_checks.OUT_OF_MEMORY): the call's buffers are
freed and Python raises OutOfMemoryError, both a RuntimeCheckError and a
MemoryError, naming the bytes asked for and the function.

No test here allocates much: the 8 TB arrays fail under the memory cap every
test process has (tests/conftest.py: RLIMIT_DATA, half the machine) before a
page is touched, and the 2 GB ones run in a child process whose address space
is capped 512 MB above what it has mapped.
"""

from __future__ import annotations

import inspect
import json
import resource
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import irad
from irad.backends.native import tiers
from irad.base.errors import OutOfMemoryError, RuntimeCheckError
from tests.backends.test_backend_iree import needs_iree
from tests.backends.test_backend_native import needs_native
from tests.backends.test_native_memory import MALLINFO2, _bytes_in_use
from tests.frontend.test_joins import BACKENDS

N = 10**6  # an outer product of two N-vectors is 8 TB, beyond the cap of every test process


def capped() -> bool:
    return resource.getrlimit(resource.RLIMIT_DATA)[0] != resource.RLIM_INFINITY


pytestmark = [pytest.mark.native, pytest.mark.skipif(not capped(), reason="needs the memory cap of tests/conftest.py")]


def outer_matmul(x, y):
    t = np.sin(x) * np.cos(x)  # temporaries allocated before the one that fails
    return np.sum(np.outer(t, y) @ y)


def outer_matmul_gradient(x, y):
    """d/dx of outer_matmul: (y·y) (cos² x - sin² x)."""
    return np.dot(y, y) * np.cos(2 * x)


def outer_line() -> int:
    lines, first = inspect.getsourcelines(outer_matmul)
    return first


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_failed_allocation_raises_memory_error_and_the_next_call_runs(backend):
    g = irad.grad(outer_matmul, backend=backend)
    x, y = np.linspace(0.1, 0.9, N), np.ones(N)
    with pytest.raises(MemoryError) as caught:
        g(x, y)
    if backend == "native":
        assert isinstance(caught.value, OutOfMemoryError) and isinstance(caught.value, RuntimeCheckError)
        message = str(caught.value)
        assert f"{8 * N * N:,} bytes" in message
        assert f"outer_matmul ({__file__}:{outer_line()}:" in message
    small = np.array([0.3, -1.2, 2.0])
    np.testing.assert_allclose(g(small, small), outer_matmul_gradient(small, small), rtol=1e-13)


@needs_native
def test_a_float_result_that_fails_to_allocate_raises():
    # one float result: the entry returns NaN and keeps the check's id (checks.entry_convention "nan")
    def f(s, x):
        return np.sum(np.outer(x * s, x) @ x)

    g = irad.grad(f, backend="native")
    with pytest.raises(OutOfMemoryError, match=f"{8 * N * N:,} bytes"):
        g(1.5, np.ones(N))
    x = np.array([1.0, 2.0, -0.5])
    assert g(0.7, x) == pytest.approx(np.sum(x) * np.dot(x, x), rel=1e-14)


@needs_native
@pytest.mark.skipif(MALLINFO2 is None, reason="needs glibc's mallinfo2")
def test_failed_allocations_leak_nothing():
    g = irad.grad(outer_matmul, backend="native")
    x, y = np.linspace(0.1, 0.9, N), np.ones(N)

    def fail():
        try:
            g(x, y)
        except OutOfMemoryError:
            return
        raise AssertionError("no OutOfMemoryError")

    for _ in range(3):  # compiled, caches warm
        fail()
    # loading -O2 code allocates: none may land inside the measured calls (tiers.py)
    tiers.wait_all(timeout=600)
    before = _bytes_in_use()
    for _ in range(50):
        fail()
    grown = _bytes_in_use() - before
    assert grown < 64 * 1024, f"{grown} bytes still in use after 50 failed calls"  # 16 MB of temporaries each


@needs_native
def test_an_array_too_big_for_its_size_to_be_counted_is_refused():
    # 2^62 float64s are 2^65 bytes: MLIR's size computation wrapped around to 0,
    # and the code wrote 8 exabytes into an empty buffer (SIGSEGV). numpy raises ValueError.
    def f(x, n):
        return (np.zeros((n, n)) + x)[n - 1, n - 1] * 2.0

    with pytest.raises(ValueError, match=r"array is too big.*\(2147483648, 2147483648\)"):
        irad.grad(f, backend="native", static_argnums=(1,))(2.0, 2**31)
    assert irad.grad(f, backend="native", static_argnums=(1,))(2.0, 3) == 2.0


def sines(x, n):
    s = x
    for i in range(n):
        s = np.sin(s) * x
    return np.sum(s)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", [10**12, 2**61, 2**63 - 1])
def test_a_loop_too_long_for_its_tape_raises_memory_error(backend, n):
    # the tape reserved for n iterations of 3 doubles each: 2^61 trips made
    # 3·2^64 bytes, which wrapped to a tape of 0 bytes natively, and the loop
    # wrote beyond it; the reservation is capped (passes/ad/reverse_loops.py)
    g = irad.grad(sines, backend=backend)
    with pytest.raises(MemoryError):
        g(np.ones(3), n)
    x = np.array([0.5, 1.0, 2.0])
    np.testing.assert_allclose(g(x, 1), np.sin(x) + x * np.cos(x), rtol=1e-14)


# ---- a realistic limit, in a process of its own -------------------------------------
CHILD = textwrap.dedent("""
    import json, resource, sys
    import numpy as np
    import irad

    def f(x, y):
        return np.sum(np.outer(x, y) @ y)

    g = irad.grad(f, backend=sys.argv[1])
    small = np.array([0.5, 1.0, 2.0])
    g(small, small)  # compiled before the cap
    mapped = int(next(l for l in open("/proc/self/status") if l.startswith("VmSize:")).split()[1]) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (mapped + (512 << 20), resource.RLIM_INFINITY))
    n = 16000  # the outer product is 2 GB
    try:
        g(np.ones(n), np.ones(n))
        error = None
    except MemoryError as e:
        error = [type(e).__name__, str(e)]
    print(json.dumps({"error": error, "after": g(small, small).tolist()}))
""")


IREE = pytest.param("iree", marks=[pytest.mark.iree, needs_iree])


@pytest.mark.parametrize("backend", [*BACKENDS, IREE])
def test_an_address_space_limit_gives_memory_error_in_a_child(backend, tmp_path):
    child = tmp_path / "child.py"  # irad lowers functions from their source file
    child.write_text(CHILD)
    run = subprocess.run([sys.executable, str(child), backend], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["error"] is not None
    if backend != "python":  # IREE: its RESOURCE_EXHAUSTED (irad/backends/iree/compile.py)
        assert result["error"][0] == "OutOfMemoryError"
    if backend == "native":
        assert f"{8 * 16000 * 16000:,} bytes" in result["error"][1]
    np.testing.assert_allclose(result["after"], [5.25] * 3, rtol=1e-14)  # d/dx sum(x) (y·y)
