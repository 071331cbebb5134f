"""Who owns the buffers native code returns (docs/backends/native.md, Memory).

The rule, at the native call boundary (irad.backends.native.compile._claim): each
allocation has one owner, and the arrays handed to the user share memory with
nothing irad keeps (residuals) nor with each other. Values are checked against
closed forms or central finite differences. `make memcheck` reruns this file
under glibc's heap checks and MLIR's runtime memref verification, and
`test_programs_run_clean_under_glibc_heap_checks` does a short version of that
in every run, so a double free fails instead of passing by luck.
"""

from __future__ import annotations

import ctypes
import gc
import glob
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import MemRefType, f64

import irad
from irad.backends.native import compile as native
from irad.backends.native import checks as native_checks
from irad.backends.native import tiers
from irad.base.errors import RuntimeCheckError
from tests.backends import test_native_checks as nc
from tests.backends.test_backend_native import BENCH_ARRAYS, _parse, needs_native
from tests.frontend import test_arrays as ta
from tests.passes import test_control_flow as cf

pytestmark = [pytest.mark.native, needs_native]

ROOT = Path(__file__).resolve().parents[2]
Z = np.array([0.1, -0.5, 2.0])
POSITIVE = np.array([0.3, 1.5, 2.0])


# ---- programs whose adjoint reuses their output: the output is also a residual -------
def exp(z):
    return np.exp(z)


def expm1(z):
    return np.expm1(z)


def tanh(z):
    return np.tanh(z)


def tan(z):
    return np.tan(z)


def sqrt(z):
    return np.sqrt(z)


def reciprocal(z):
    return 1.0 / z


def power(z, y):
    return z**y


def softmax(z):
    e = np.exp(z - np.max(z))
    return e / np.sum(e)


def max_keepdims(x):
    return np.max(x, axis=0, keepdims=True)


def min_axis(x):
    return np.min(x, axis=0)


def prod_axis(x):
    return np.prod(x, axis=1)


def sum_of_exp(x, y):
    return np.sum(np.exp(x + y))


def output_twice_and_input(z):
    y = np.exp(z)
    return y, y * 1.0, z


def _softmax_jacobian(z):
    s = softmax(z)
    return np.diag(s) - np.outer(s, s)


# f, arguments, and the Jacobian of f at them in closed form
CLOSED_FORMS = [
    (exp, (Z,), lambda z: np.diag(np.exp(z))),
    (expm1, (Z,), lambda z: np.diag(np.exp(z))),
    (tanh, (Z,), lambda z: np.diag(1.0 - np.tanh(z) ** 2)),
    (tan, (Z / 2,), lambda z: np.diag(1.0 / np.cos(z) ** 2)),
    (sqrt, (POSITIVE,), lambda z: np.diag(0.5 / np.sqrt(z))),
    (reciprocal, (POSITIVE,), lambda z: np.diag(-1.0 / z**2)),
    (softmax, (Z,), _softmax_jacobian),
]


@pytest.mark.parametrize("backend", ["native", "python"])
@pytest.mark.parametrize("f, args, jacobian", CLOSED_FORMS, ids=[f.__name__ for f, _, _ in CLOSED_FORMS])
def test_mutating_the_output_leaves_the_pullback_alone(backend, f, args, jacobian):
    out, pullback = irad.vjp(f, *args, backend=backend)
    np.testing.assert_allclose(out, f(*args), rtol=1e-13)
    out[:] = 0.0
    ct = np.array([1.0, -2.0, 0.5])
    (got,) = pullback(ct)
    np.testing.assert_allclose(got, ct @ jacobian(*args), rtol=1e-12, atol=1e-14)
    assert not np.shares_memory(got, ct)


@pytest.mark.parametrize("f, args, jacobian", CLOSED_FORMS, ids=[f.__name__ for f, _, _ in CLOSED_FORMS])
def test_dropping_the_output_before_the_pullback(f, args, jacobian):
    out, pullback = irad.vjp(f, *args, backend="native")
    del out
    gc.collect()
    scribble = [np.full(3, 7.0) for _ in range(20)]  # would reuse freed memory
    for ct in np.eye(3):
        (got,) = pullback(ct)
        np.testing.assert_allclose(got, ct @ jacobian(*args), rtol=1e-12, atol=1e-14)
    del pullback, scribble
    gc.collect()


@pytest.mark.parametrize("f, args, jacobian", CLOSED_FORMS, ids=[f.__name__ for f, _, _ in CLOSED_FORMS])
def test_jacrev_matches_the_closed_form(f, args, jacobian):
    np.testing.assert_allclose(irad.jacrev(f, backend="native")(*args), jacobian(*args), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(irad.jacfwd(f, backend="native")(*args), jacobian(*args), rtol=1e-12, atol=1e-14)


def test_power_with_an_array_exponent():
    y = np.array([2.0, 0.5, 3.0])
    out, pullback = irad.vjp(power, POSITIVE, y, backend="native")
    out[:] = -1.0
    dz, dy = pullback(np.ones(3))
    np.testing.assert_allclose(dz, y * POSITIVE ** (y - 1), rtol=1e-12)
    np.testing.assert_allclose(dy, np.log(POSITIVE) * POSITIVE**y, rtol=1e-12)


@pytest.mark.parametrize("backend", ["native", "python"])
def test_gradients_with_respect_to_two_arguments_are_independent_arrays(backend):
    x, y = Z, np.array([0.2, 0.1, -1.0])
    dx, dy = irad.grad(sum_of_exp, argnums=(0, 1), backend=backend)(x, y)
    assert not np.shares_memory(dx, dy)
    np.testing.assert_allclose(dx, np.exp(x + y), rtol=1e-13)
    dx[:] = 0.0
    np.testing.assert_allclose(dy, np.exp(x + y), rtol=1e-13)
    del dx
    gc.collect()
    np.testing.assert_allclose(dy, np.exp(x + y), rtol=1e-13)


@pytest.mark.parametrize("backend", ["native", "python"])
def test_tuple_outputs_share_memory_with_nothing(backend):
    z = Z.copy()
    (y, same, back), pullback = irad.vjp(output_twice_and_input, z, backend=backend)
    assert not np.shares_memory(y, same) and not np.shares_memory(back, z)
    y[:] = 0.0
    back[:] = 0.0
    np.testing.assert_allclose(same, np.exp(Z), rtol=1e-13)
    np.testing.assert_array_equal(z, Z)
    (got,) = pullback((np.ones(3), np.ones(3), np.ones(3)))
    np.testing.assert_allclose(got, 2.0 * np.exp(Z) + 1.0, rtol=1e-13)
    value, tangent = irad.jvp(output_twice_and_input, (z,), (np.ones(3),), backend=backend)
    assert not any(np.shares_memory(a, b) for a in (*value, *tangent) for b in (*value, *tangent) if a is not b)
    np.testing.assert_allclose(tangent[0], np.exp(Z), rtol=1e-13)


# reductions along an axis: their residuals include rank-0 and keepdims arrays
RNG = np.random.default_rng(13)
REDUCTIONS = [
    (max_keepdims, (Z,)),
    (max_keepdims, (RNG.normal(size=(3, 2)),)),
    (min_axis, (RNG.normal(size=4),)),
    (min_axis, (RNG.normal(size=(3, 2)),)),
    (prod_axis, (RNG.normal(size=(2, 3)),)),
]


@pytest.mark.parametrize("f, args", REDUCTIONS, ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(REDUCTIONS)])
def test_reductions_along_an_axis(f, args):
    out, pullback = irad.vjp(f, *args, backend="native")
    want = f(*args)
    np.testing.assert_allclose(out, want, rtol=1e-13)
    ct = np.linspace(0.5, 1.5, want.size).reshape(want.shape)
    if np.ndim(want):
        out[...] = 0.0
    else:
        ct = float(ct)
    (got,) = pullback(ct)

    def weighted(x):
        return float(np.sum(ct * f(x)))

    np.testing.assert_allclose(got, ta.central_difference(weighted, args, 0), rtol=1e-6, atol=1e-8)
    jacobian = irad.jacrev(f, backend="native")(*args)
    assert jacobian.shape == want.shape + args[0].shape
    np.testing.assert_allclose(np.tensordot(ct, jacobian, np.ndim(want)), got, rtol=1e-12, atol=1e-14)


RANK0 = """
  func.func @twice(%x: tensor<f64>) -> tensor<f64> {
    %y = arith.addf %x, %x : tensor<f64>
    func.return %y : tensor<f64>
  }"""


def test_a_rank0_array_crosses_both_ways():
    (out,) = native.compile_module(_parse(RANK0)).function("twice")(np.array(1.5))
    assert out.shape == () and out == 3.0


# ---- the boundary itself, on buffers made here ------------------------------------
_libc = ctypes.CDLL(None)
_libc.malloc.restype = ctypes.c_void_p
_libc.malloc.argtypes = [ctypes.c_size_t]


def _native_allocation(nbytes: int) -> int:
    """Memory laid out as native code allocates it (native/runtime.ll): a
    header before it that names what malloc returned, for its owner to free."""
    base = _libc.malloc(native_checks.HEADER + nbytes)
    memory = base + native_checks.HEADER
    ctypes.c_void_p.from_address(memory - native_checks.HEADER + 16).value = base
    assert native_checks.allocation_base(memory) == base
    return memory


def _descriptor_over(allocated: int, offset: int, size: int) -> ctypes.Structure:
    d = native._descriptor(1)()
    d.allocated = d.aligned = allocated
    d.offset = offset
    d.sizes[0] = size
    d.strides[0] = 1
    return d


def test_memrefs_sharing_an_allocation_get_one_owner():
    address = _native_allocation(4 * 8)
    (ctypes.c_double * 4).from_address(address)[:] = [1.0, 2.0, 3.0, 4.0]
    tape = MemRefType(f64, [-1])
    # the whole buffer's first half, and a view at an offset into it
    first, second = native._claim(
        [_descriptor_over(address, 0, 2), _descriptor_over(address, 2, 2)], [tape, tape], []
    )
    owner = first.descriptor.owner
    assert isinstance(owner, native.NativeBuffer) and second.descriptor.owner is owner
    free = owner.free
    del first, owner
    gc.collect()
    assert free.alive  # the second still views it
    del second
    gc.collect()
    assert not free.alive  # freed once, by its one owner


def test_a_memref_in_an_arguments_memory_is_never_freed():
    argument = native._claim([_descriptor_over(_native_allocation(2 * 8), 0, 2)], [MemRefType(f64, [-1])], [])[0]
    (result,) = native._claim([_descriptor_over(argument.descriptor.allocated, 1, 1)], [MemRefType(f64, [-1])], [argument])
    assert result.descriptor.owner is argument.descriptor.owner


def test_array_results_are_fresh_arrays_even_when_returned_twice_or_an_argument():
    twice = _parse("""
      func.func @f(%x: tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>, tensor<2xf64>) {
        %y = arith.addf %x, %x : tensor<2xf64>
        func.return %x, %y, %y : tensor<2xf64>, tensor<2xf64>, tensor<2xf64>
      }""")
    argument = np.array([5.0, 6.0])
    same, y, again = native.compile_module(twice).function("f")(argument)
    assert same.tolist() == [5.0, 6.0] and y.tolist() == again.tolist() == [10.0, 12.0]
    arrays = [argument, same, y, again]
    assert not any(np.shares_memory(a, b) for a in arrays for b in arrays if a is not b)
    assert all(a.flags.owndata and a.flags.writeable for a in arrays[1:])


def test_the_tape_of_a_vjp_is_owned_once_and_freed_with_the_pullback():
    f = BENCH_ARRAYS["make_lstm_loop"](np)
    rng = np.random.default_rng(3)
    args = (0.1 * rng.normal(size=(4, 32)), 0.1 * rng.normal(size=(8, 32)), 0.1 * rng.normal(size=32),
            rng.normal(size=(3, 2, 4)))
    out, pullback = irad.vjp(f, *args, backend="native")
    ref_out, ref_pullback = irad.vjp(f, *args)
    residuals = pullback.residuals
    tapes = [r for r in residuals if isinstance(r, native.NativeMemRef)]
    owners = {id(r.descriptor.owner) for r in tapes}
    assert len(owners) == len(tapes) == 1
    free = tapes[0].descriptor.owner.free
    for _ in range(2):  # runs again: the pullback frees nothing it was given
        for got, want in zip(pullback(2.0), ref_pullback(2.0)):
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    assert out == pytest.approx(ref_out, rel=1e-12)
    del pullback, residuals, tapes
    gc.collect()
    assert not free.alive


# ---- every array test program: vjp and jacrev against the Python backend -------------
ARRAY_CASES = [(f, make()) for f, make in ta.CASES]


def _floats(args):
    return [
        i for i, a in enumerate(args)
        if isinstance(a, float) or (isinstance(a, np.ndarray) and a.dtype.kind == "f")
    ]


@pytest.mark.parametrize("point", ARRAY_CASES, ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(ARRAY_CASES)])
def test_vjp_and_jacrev_of_every_array_program(point):
    f, args = point
    out, pullback = irad.vjp(f, *args, backend="native")
    ref_out, ref_pullback = irad.vjp(f, *args)
    assert out == pytest.approx(ref_out, rel=1e-12, abs=1e-13)
    del out
    gc.collect()
    for ct in (1.0, -0.5):  # the pullback runs again
        for got, want in zip(pullback(ct), ref_pullback(ct)):
            if want is None:
                assert got is None
            else:
                np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-13)
    wrt = tuple(_floats(args))
    for got, want in zip(irad.jacrev(f, wrt, backend="native")(*args), irad.jacrev(f, wrt)(*args)):
        np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-13)


# ---- leaks: libc's bytes in use over a loop of calls -------------------------------
class _Mallinfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                     "keepcost")
    ]


def _mallinfo2():
    try:
        function = ctypes.CDLL(None).mallinfo2
    except AttributeError:
        return None
    function.restype = _Mallinfo2
    return function


MALLINFO2 = _mallinfo2()


def _bytes_in_use() -> int:
    gc.collect()
    info = MALLINFO2()
    return info.uordblks + info.hblkhd  # heap chunks in use, and mmapped ones


def _loop_program(x, n):
    s = x
    for i in range(n):
        s = np.sin(s) * x + 0.1
    return np.sum(s)


LARGE = np.linspace(0.1, 1.0, 512)  # 4 KB a buffer: a leaked one per call shows


def _grad_call():
    irad.grad(sum_of_exp, argnums=(0, 1), backend="native")(LARGE, LARGE)


def _vjp_call():
    out, pullback = irad.vjp(tanh, LARGE, backend="native")
    pullback(out)


def _jacrev_call():
    irad.jacrev(softmax, backend="native")(Z)


def _loop_tape_call():
    out, pullback = irad.vjp(_loop_program, LARGE, 20, backend="native")
    pullback(1.0)
    irad.grad(_loop_program, backend="native")(LARGE, 20)


def _scalar_tape_call():
    out, pullback = irad.vjp(cf.loop_with_branch, 0.3, 500, backend="native")
    pullback(1.0)
    irad.grad(cf.loop_with_branch, backend="native")(0.3, 500)


def _index_after_a_loop(x, n, i):
    s = x
    for k in range(n):
        s = np.sin(s) * x + 0.1
    return np.sum(s) * s[i]


# calls that fail a check deep inside, with buffers and a tape alive
# (tests/backends/test_native_checks.py checks their messages and values)
FAILING = [(nc.power, (1.0, -1)), (nc.sum_of_sines, (Z, -1)), (_index_after_a_loop, (LARGE, 20, 600))]


def _failed_check_call():
    for f, args in FAILING:
        with pytest.raises(RuntimeCheckError):
            irad.grad(f, backend="native")(*args)
        with pytest.raises(RuntimeCheckError):
            irad.vjp(f, *args, backend="native")
    assert irad.grad(_index_after_a_loop, backend="native")(Z, 3, 1)[1] != 0.0  # and the next call runs


LEAK_PROGRAMS = [_grad_call, _vjp_call, _jacrev_call, _loop_tape_call, _scalar_tape_call, _failed_check_call]


@pytest.mark.skipif(MALLINFO2 is None, reason="needs glibc's mallinfo2")
@pytest.mark.parametrize("call", LEAK_PROGRAMS, ids=[c.__name__.strip("_") for c in LEAK_PROGRAMS])
def test_allocations_are_freed_over_a_loop_of_calls(call):
    for _ in range(3):  # compiled, and caches warm
        call()
    # loading -O2 code allocates: none may land inside the measured calls (tiers.py)
    tiers.wait_all(timeout=600)
    before = _bytes_in_use()
    for _ in range(100):
        call()
    grown = _bytes_in_use() - before
    assert grown < 16 * 1024, f"{grown} bytes still in use after 100 calls"  # one 4 KB buffer a call: 400 KB


# ---- under glibc's heap checks, in a process of its own ----------------------------
def memcheck_environment() -> dict[str, str]:
    """glibc's strict heap checks (MALLOC_CHECK_=3 aborts on any inconsistency;
    MALLOC_PERTURB_ fills freed memory, so a use after free reads garbage);
    since glibc 2.34 they need libc_malloc_debug preloaded."""
    env = dict(os.environ, MALLOC_CHECK_="3", MALLOC_PERTURB_="165", PYTHONPATH=str(ROOT))
    debug = sorted(glob.glob("/lib/*/libc_malloc_debug.so.0") + glob.glob("/usr/lib/*/libc_malloc_debug.so.0"))
    if debug:
        env["LD_PRELOAD"] = " ".join(filter(None, [debug[0], os.environ.get("LD_PRELOAD")]))
    return env


def exercise() -> None:
    """Every repro of the ownership rule once, then exit (a double free of a
    residual showed at interpreter exit)."""
    for f, args, jacobian in CLOSED_FORMS:
        out, pullback = irad.vjp(f, *args, backend="native")
        del out
        gc.collect()
        (got,) = pullback(np.ones(3))
        np.testing.assert_allclose(got, np.ones(3) @ jacobian(*args), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(irad.jacrev(f, backend="native")(*args), jacobian(*args), rtol=1e-12, atol=1e-14)
    for call in LEAK_PROGRAMS:
        call()
    for f, args in REDUCTIONS:
        out, pullback = irad.vjp(f, *args, backend="native")
        pullback(np.ones_like(out) if np.ndim(out) else 1.0)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc heap checks")
def test_programs_run_clean_under_glibc_heap_checks():
    proc = subprocess.run(
        [sys.executable, "-c", "from tests.backends.test_native_memory import exercise; exercise()"],
        cwd=ROOT, env=memcheck_environment(), capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, f"exit status {proc.returncode}\n{proc.stderr[-3000:]}"
