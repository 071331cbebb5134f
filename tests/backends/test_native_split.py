"""Products split between the caller and irad's helper thread
(irad/backends/native/split.py).

The split ?gemm against numpy's product for every way it cuts C (rows,
columns, transposed operands, leading dimensions wider than the matrix,
extents around the chunks' alignment); gradients with every product split
against central differences and numpy; the same bits from call to call, from
thread to thread and in a forked process; within 1e-12 of the unsplit code.
"""

import ctypes
import multiprocessing
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import irad
from irad import compiled, config
from irad.backends.native import lapack
from irad.backends.native import compile as native
from irad.backends.native import blas as native_blas
from irad.backends.native import split as native_split
from irad.base.errors import BackendError
from tests.reference import NATIVE_MISSING, check_against_numpy, copies

SPLIT = config.switch("native_split_products").variable
MIN_FLOPS = config.switch("native_split_min_flops").variable
THREADS = config.switch("native_blas_threads").variable
pytestmark = [
    pytest.mark.native,
    pytest.mark.skipif(NATIVE_MISSING is not None, reason=str(NATIVE_MISSING)),
    pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="products are split only with two cores or more"),
]

ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112


@pytest.fixture(autouse=True)
def split_everything(monkeypatch):
    """Every product of 32 rows or columns or more is split."""
    monkeypatch.setenv(MIN_FLOPS, "0")
    monkeypatch.delenv(SPLIT, raising=False)


def _gemm(letter: str, split: bool, blocked: bool = False, narrow: bool = False):
    """irad_split_<letter>gemm (irad_split_narrow_<letter>gemm with `narrow`,
    irad_blocked_<letter>gemm with `blocked`, or the library's
    cblas_<letter>gemm) through ctypes: C[:m, :n] = op(A) op(B) for arrays
    at most as wide as their rows."""
    library = native_blas.blas_library()
    real = ctypes.c_double if letter == "d" else ctypes.c_float
    integer = ctypes.c_int64 if library.int_bits == 64 else ctypes.c_int32
    if split:
        address = native_split._module(library).address(native_split.symbol(letter, library, blocked, narrow))
    else:
        address = ctypes.cast(getattr(ctypes.CDLL(library.path), library.symbol(f"cblas_{letter}gemm")), ctypes.c_void_p).value
    pointer = ctypes.c_void_p
    function = ctypes.CFUNCTYPE(None, *[ctypes.c_int32] * 3, *[integer] * 3, real, pointer, integer, pointer, integer,
                                real, pointer, integer)(address)

    def product(a, ta, b, tb, c, m, n, k):
        function(ROW_MAJOR, TRANS if ta else NO_TRANS, TRANS if tb else NO_TRANS, m, n, k, 1.0, a.ctypes.data,
                 a.shape[1], b.ctypes.data, b.shape[1], 0.0, c.ctypes.data, c.shape[1])

    return product


SHAPES = [(64, 8, 5), (8, 64, 5), (31, 31, 7), (32, 33, 4), (33, 32, 4), (47, 3, 9), (3, 100, 2), (130, 129, 17),
          (1024, 10, 128), (128, 10, 1024), (64, 128, 1024)]


@pytest.mark.parametrize("letter", ["d", "s"])
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("m,n,k", SHAPES)
def test_a_split_product_is_the_product(m, n, k, ta, tb, letter):
    """Operands and C inside wider arrays (leading dimensions beyond the
    matrix): the split writes exactly C's block, equal to numpy's product and
    within rounding of the whole product's."""
    dtype = np.float64 if letter == "d" else np.float32
    rng = np.random.default_rng(m * n + k)
    a = rng.normal(size=(k, m + 3) if ta else (m, k + 3)).astype(dtype)
    b = rng.normal(size=(n, k + 2) if tb else (k, n + 2)).astype(dtype)
    op_a = a[:k, :m].T if ta else a[:m, :k]
    op_b = b[:n, :k].T if tb else b[:k, :n]
    c, whole = (np.full((m, n + 5), 7.0, dtype=dtype) for _ in range(2))
    _gemm(letter, True)(a, ta, b, tb, c, m, n, k)
    _gemm(letter, False)(a, ta, b, tb, whole, m, n, k)
    expected = op_a.astype(np.float64) @ op_b.astype(np.float64)
    tolerance = 1e-12 if letter == "d" else 1e-5
    np.testing.assert_allclose(c[:, :n], expected, rtol=tolerance, atol=tolerance * np.abs(expected).max())
    np.testing.assert_allclose(c[:, :n], whole[:, :n], rtol=tolerance, atol=tolerance * np.abs(expected).max())
    assert np.all(c[:, n:] == 7.0), "the split wrote outside C"


def dense(w1, w2, x):
    h = np.tanh(x @ w1)
    return np.sum(np.sin(h @ w2.T)) + np.sum(h.T @ x)


def _dense_args(rng, dtype, batch=40):
    return tuple((0.3 * rng.normal(size=s)).astype(dtype) for s in [(6, 35), (9, 35), (batch, 6)])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gradients_with_split_products_against_finite_differences_and_numpy(dtype):
    args = _dense_args(np.random.default_rng(2), dtype)
    module = native.compile_module(irad.grad(dense, (0, 1, 2)).lower(*args))
    assert module.llvm_ir.count(f"@{native_split.PREFIX}{'d' if dtype == np.float64 else 's'}gemm(") >= 4
    check_against_numpy(dense, args, backend="native")


def _gradient(args, split: bool):
    """The gradient, its products split or not (the switch is read when it
    compiles, at its first call)."""
    with config.overriding(native_split_products=split):
        gradient = irad.grad(dense, (0, 1, 2), backend="native")
        gradient(*copies(args))
    return gradient


def test_the_split_is_switched_off_by_its_variable_and_by_blas_threads(monkeypatch):
    args = _dense_args(np.random.default_rng(3), np.float64)
    module = irad.grad(dense, (0, 1, 2)).lower(*args)
    assert native_split.PREFIX in native.compile_module(module).llvm_ir
    monkeypatch.setenv(SPLIT, "0")
    assert native_split.PREFIX not in native.compile_module(module).llvm_ir
    monkeypatch.setenv(SPLIT, "1")
    monkeypatch.setenv(THREADS, "2")  # OpenBLAS's own threads: not split as well
    assert not native_split.enabled()
    monkeypatch.setenv(THREADS, "1")
    monkeypatch.setenv(MIN_FLOPS, str(10**9))
    assert native_split.PREFIX not in native.compile_module(module).llvm_ir


@pytest.mark.parametrize("value", ["yes", "2"])
def test_a_bad_switch_is_a_clear_error(value, monkeypatch):
    monkeypatch.setenv(SPLIT, value)
    with pytest.raises(BackendError, match=f"{SPLIT} must be 0 or 1"):
        native_split.enabled()


def test_split_gradients_are_the_same_bits_every_call_and_within_1e_12_of_whole_products():
    args = _dense_args(np.random.default_rng(4), np.float64, batch=700)
    split, whole = _gradient(args, True), _gradient(args, False)
    first = split(*copies(args))
    for _ in range(30):
        assert all(np.array_equal(a, b) for a, b in zip(first, split(*copies(args))))
    for a, b in zip(first, whole(*copies(args))):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * np.abs(b).max())


def test_threads_calling_split_products_at_once_get_the_bits_of_one_thread():
    """Threads compete for the one helper: whoever runs a chunk, a result is
    what the same call gave alone."""
    rng = np.random.default_rng(5)
    inputs = [_dense_args(rng, np.float64, batch=300 + 50 * i) for i in range(4)]
    gradient = _gradient(inputs[0], True)
    alone = [gradient(*copies(args)) for args in inputs]
    before = native_split.counts()
    failures = []

    def work(i: int) -> None:
        for _ in range(25):
            if not all(np.array_equal(a, b) for a, b in zip(alone[i], gradient(*copies(inputs[i])))):
                failures.append(i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a thread hangs"
    assert not failures
    after = native_split.counts()
    assert after.helper_chunks + after.caller_chunks > before.helper_chunks + before.caller_chunks


def _in_child(queue, args):
    compiled._CACHE.clear()  # compiled afresh in the child too: its own helper
    fresh = irad.grad(dense, (0, 1, 2), backend="native")
    queue.put([[g.tobytes() for g in fn(*copies(args))] for fn in (_inherited, fresh)])


_inherited = None


def _forked(target, args):
    """What target(queue, args) puts in the queue in a child forked through
    os.fork (multiprocessing's "fork"), which exits cleanly."""
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=target, args=(queue, args))
    child.start()
    got = queue.get(timeout=120)
    child.join(timeout=60)
    assert child.exitcode == 0
    return got


def test_a_forked_process_splits_products_with_its_own_helper():
    global _inherited
    args = _dense_args(np.random.default_rng(6), np.float64, batch=500)
    _inherited = _gradient(args, True)
    expected = [g.tobytes() for g in _inherited(*copies(args))]  # the parent's helper runs
    assert _forked(_in_child, args) == [expected, expected]
    assert [g.tobytes() for g in _inherited(*copies(args))] == expected  # and the parent's still does


# Run by the test below in a process of its own, so that no other Python thread
# exists when it forks: a raw fork copies CPython's GIL hand-off state, and a
# thread that was waiting for the GIL (pytest-xdist's I/O thread, a
# background compile) leaves the child waiting forever for a switch to it.
_RAW_FORK = """
import ctypes, os, select, signal, sys, threading
import numpy as np
import irad
from irad.backends.native import background, tiers
from irad.backends.native import split as native_split


def dense(w1, w2, x):
    h = np.tanh(x @ w1)
    return np.sum(np.sin(h @ w2.T)) + np.sum(h.T @ x)


rng = np.random.default_rng(7)
args = [(0.3 * rng.normal(size=s)).astype(np.float64) for s in [(6, 35), (9, 35), (500, 6)]]
gradient = irad.grad(dense, (0, 1, 2), backend="native")
expected = b"".join(g.tobytes() for g in gradient(*[a.copy() for a in args]))  # starts the helper
assert native_split.counts().helper_chunks + native_split.counts().caller_chunks > 0, "nothing was split"
tiers.wait_all()
for thread in threading.enumerate():  # but warm_tools' starter and background.py's threads, idle on their queues
    if thread is not threading.current_thread() and not thread.name.startswith(("irad-warm-tools", background.NAME)):
        thread.join()
read, write = os.pipe()
pid = ctypes.PyDLL(None).fork()  # PyDLL: the GIL stays held across the fork
if pid == 0:  # the child: report and leave at once
    try:
        got = b"".join(g.tobytes() for g in gradient(*[a.copy() for a in args]))
        os.write(write, b"same" if got == expected else b"different")
    finally:
        os._exit(0)
os.close(write)
ready, _, _ = select.select([read], [], [], 120)
print(os.read(read, 16).decode() if ready else "no answer in 120 s")
if not ready:
    os.kill(pid, signal.SIGKILL)
os.waitpid(pid, 0)
"""


def test_a_process_forked_behind_pythons_back_runs_products_on_the_caller(tmp_path):
    """libc's fork, without Python's at-fork handlers: the child sees the
    parent's helper state and runs every chunk itself (no hang)."""
    script = tmp_path / "raw_fork.py"
    script.write_text(_RAW_FORK)
    environment = {**os.environ, MIN_FLOPS: "0", SPLIT: "1"}
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=environment)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "same"


def _helper_cpus() -> set[int]:
    """The CPUs the helper thread may run on (found by its name)."""
    tasks = [t for t in os.listdir("/proc/self/task") if _thread_name(t) == native_split.HELPER_NAME]
    assert len(tasks) == 1, "one helper thread per process"
    return os.sched_getaffinity(int(tasks[0]))


def _thread_name(task: str) -> str:
    with open(f"/proc/self/task/{task}/comm") as comm:
        return comm.read().strip()


@pytest.fixture
def keep_off_restored():
    yield
    native_split.set_keep_off(True)


def test_the_helper_is_kept_off_the_callers_cpu_and_may_share_it_when_switched_off(keep_off_restored):
    args = _dense_args(np.random.default_rng(8), np.float64, batch=500)
    gradient = _gradient(args, True)
    mine = os.sched_getaffinity(0)
    native_split.set_keep_off(True)
    before = native_split.counts()
    gradient(*copies(args))
    helper = _helper_cpus()
    assert helper < mine and len(helper) == len(mine) - 1, "the helper may not run on the caller's CPU"
    assert native_split.counts().moves > before.moves
    native_split.set_keep_off(False)
    assert _helper_cpus() == mine
    gradient(*copies(args))
    assert _helper_cpus() == mine


def test_split_gradients_are_the_same_bits_with_the_helper_kept_off_or_not(keep_off_restored):
    args = _dense_args(np.random.default_rng(9), np.float64, batch=700)
    gradient = _gradient(args, True)
    first = gradient(*copies(args))
    for i in range(20):
        native_split.set_keep_off(i % 2 == 0)
        assert all(np.array_equal(a, b) for a, b in zip(first, gradient(*copies(args))))


def _keep_off_in_child(queue, args):
    native_split.set_keep_off(True)
    queue.put([g.tobytes() for g in _inherited(*copies(args))])


def test_a_forked_process_keeps_its_own_helper_off_its_cpu_and_never_moves_the_parents(keep_off_restored):
    """The child's state forgets the parent's helper (a thread of another
    process, which sched_setaffinity could still move)."""
    global _inherited
    args = _dense_args(np.random.default_rng(10), np.float64, batch=500)
    _inherited = _gradient(args, True)
    expected = [g.tobytes() for g in _inherited(*copies(args))]
    native_split.set_keep_off(False)  # the parent's helper may run anywhere
    assert _forked(_keep_off_in_child, args) == expected
    assert _helper_cpus() == os.sched_getaffinity(0)


# ---- narrow products in blocks (C with fewer than native_split.NARROW columns) ----

NARROW_SHAPES = [(4096, 10, 128), (1000, 15, 100), (2000, 3, 200), (1009, 10, 111)]  # over SMALL; rows not all 16s


@pytest.fixture
def blocks_restored():
    yield
    native_split.set_blocks(True)


@pytest.mark.parametrize("letter", ["d", "s"])
@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("m,n,k", NARROW_SHAPES)
def test_a_narrow_product_in_blocks_is_the_product_and_the_split_has_its_bits(m, n, k, ta, letter, blocks_restored):
    """Blocks of rows on the caller (irad_blocked_?gemm) and within the split's
    chunks: numpy's product, nothing written outside C; blocks off, one
    call per chunk, within rounding of it."""
    assert m * n * k > native_split.SMALL and n < native_split.NARROW
    dtype = np.float64 if letter == "d" else np.float32
    rng = np.random.default_rng(m + n + k)
    a = rng.normal(size=(k, m + 3) if ta else (m, k + 3)).astype(dtype)
    b = rng.normal(size=(k, n + 2)).astype(dtype)
    expected = (a[:k, :m].T if ta else a[:m, :k]).astype(np.float64) @ b[:k, :n].astype(np.float64)
    tolerance = 1e-12 if letter == "d" else 1e-5
    native_split.set_blocks(True)
    results = {}
    for name in ("blocked", "split"):
        c = np.full((m, n + 5), 7.0, dtype=dtype)
        _gemm(letter, True, blocked=name == "blocked", narrow=True)(a, ta, b, False, c, m, n, k)
        np.testing.assert_allclose(c[:, :n], expected, rtol=tolerance, atol=tolerance * np.abs(expected).max())
        assert np.all(c[:, n:] == 7.0), f"the {name} product wrote outside C"
        results[name] = c
    if letter == "d":
        assert np.array_equal(results["blocked"], results["split"])
    else:
        # OpenBLAS's Haswell sgemm (OPENBLAS_CORETYPE=Haswell, as on some of
        # these machines) computes the rows past its last whole 24-row tile with
        # another kernel: the last 8 rows of a 2048-row chunk round differently
        # from the same rows inside one block (9.5e-6 here), which SkylakeX's
        # 16-row tiles never do. Both are numpy's product within rounding (above).
        np.testing.assert_allclose(results["blocked"], results["split"], rtol=1e-6, atol=1e-6 * np.abs(expected).max())
    native_split.set_blocks(False)
    c = np.full((m, n + 5), 7.0, dtype=dtype)
    _gemm(letter, True, blocked=True)(a, ta, b, False, c, m, n, k)
    whole = np.full((m, n + 5), 7.0, dtype=dtype)
    _gemm(letter, False)(a, ta, b, False, whole, m, n, k)
    assert np.array_equal(c, whole), "without blocks, one chunk is one call"
    np.testing.assert_allclose(results["blocked"], whole, rtol=tolerance, atol=tolerance * np.abs(expected).max())


def narrow_loss(w, x):
    return np.sum(np.sin(x @ w))


@pytest.mark.parametrize("split", [False, True])
def test_gradients_with_narrow_products_in_blocks_against_the_closed_form(split, monkeypatch):
    """x @ w (1000x120 @ 120x10) and its gradient's xᵀ @ cos(x @ w), both narrow
    and over SMALL: in blocks on the caller (not split) or within the split."""
    monkeypatch.setenv(MIN_FLOPS, "0" if split else str(10**12))
    rng = np.random.default_rng(11)
    w, x = 0.1 * rng.normal(size=(120, 10)), rng.normal(size=(1000, 120))
    ir = native.compile_module(irad.grad(narrow_loss, 0).lower(w, x)).llvm_ir
    assert ir.count("@irad_split_narrow_dgemm(" if split else "@irad_blocked_dgemm(") >= 2
    gradient = irad.grad(narrow_loss, 0, backend="native")
    g = gradient(w, x)
    expected = x.T @ np.cos(x @ w)
    np.testing.assert_allclose(g, expected, rtol=1e-12, atol=1e-12 * np.abs(expected).max())
    for i, j in [(0, 0), (7, 3), (119, 9)]:  # central differences
        step = np.zeros_like(w)
        step[i, j] = 1e-6
        difference = (narrow_loss(w + step, x) - narrow_loss(w - step, x)) / 2e-6
        assert abs(g[i, j] - difference) <= 1e-6 * max(1.0, abs(difference))
    assert all(np.array_equal(g, gradient(w, x)) for _ in range(10))


@pytest.mark.parametrize("blocked", [False, True])
def test_the_module_computes_in_blocks_what_it_is_told_is_narrow(blocked, blocks_restored):
    """native_split.narrow() is the rule's one place: the module blocks any
    product it is called for as narrow (here one 40 columns wide) and gets
    the product; the entry compiled code calls follows narrow()."""
    native_split.set_blocks(True)
    m, n, k = 1000, 40, 100
    assert m * n * k > native_split.SMALL and not native_split.narrow(m, n, k, False)
    rng = np.random.default_rng(5)
    a, b = rng.normal(size=(m, k)), rng.normal(size=(k, n))
    c = np.full((m, n), 7.0)
    _gemm("d", True, blocked=blocked, narrow=True)(a, False, b, False, c, m, n, k)
    np.testing.assert_allclose(c, a @ b, rtol=1e-12, atol=1e-12 * np.abs(a @ b).max())
    ir = native.compile_module(irad.grad(narrow_loss, 0).lower(np.ones((100, 40)), np.ones((1000, 100)))).llvm_ir
    assert "@irad_split_dgemm(" in ir and "narrow_dgemm" not in ir


def test_narrow_products_go_in_blocks_only_with_blas_on_one_thread(monkeypatch):
    assert native_split.narrow(1000, 10, 120, False)
    assert not native_split.narrow(1000, 10, 120, True)  # op(B) transposed: OpenBLAS's small kernels refuse some
    assert not native_split.narrow(1000, 16, 120, False) and not native_split.narrow(100, 10, 100, False)
    monkeypatch.setenv(THREADS, "2")
    assert not native_split.narrow(1000, 10, 120, False)
