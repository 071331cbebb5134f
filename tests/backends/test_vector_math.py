"""exp, log and tanh over arrays natively, through glibc's libmvec
(irad/backends/native/vector_math.py), and tanh through irad's own (native/tanh_ir.py).

Values are checked against libm itself, called through ctypes: within 4 ulp
(libmvec's documented bound) over a dense sample of each function's domain
and over hypothesis' floats, and bitwise on the special values (signed
zeros, infinities, NaN, overflow, underflow). The optimised LLVM
IR is checked for vector calls, and gradients through these functions
against central finite differences. irad's own tanh is also checked against
an independent, more precise reference (x87's 64-bit `tanhl` through numpy's
longdouble) and for the same bits at every vector width."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irad
from irad import config
from irad.backends.native import llvm_jit
from irad.backends.native import compile as native
from irad.backends.native import vector_math
from irad.base.errors import BackendError
from tests.backends.test_backend_native import needs_native
from tests.reference import central_difference

needs_libmvec = pytest.mark.skipif(not vector_math.available(), reason="no vector math library (x86-64 glibc's libmvec) here")
pytestmark = [pytest.mark.native, needs_native]

ULP_BOUND = 4  # libmvec's documented bound; measured maxima are in docs/backends/native.md


def exp_array(x):
    return np.exp(x)


def log_array(x):
    return np.log(x)


def tanh_array(x):
    return np.tanh(x)


ARRAY_FUNCTIONS = {"exp": exp_array, "log": log_array, "tanh": tanh_array}
TYPES = {np.float64: (ctypes.c_double, ""), np.float32: (ctypes.c_float, "f")}


def _libm(name: str, dtype) -> np.ufunc:
    """libm's scalar function, called from Python (not through irad)."""
    c_type, suffix = TYPES[dtype]
    fn = getattr(ctypes.CDLL(ctypes.util.find_library("m")), name + suffix)
    fn.restype, fn.argtypes = c_type, [c_type]
    return np.frompyfunc(fn, 1, 1)


def libm(name: str, x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):  # libm sets the flags numpy reports
        return _libm(name, x.dtype.type)(x).astype(x.dtype)


@functools.cache
def _compiled(name: str, dtype, n: int):
    """The native module of ARRAY_FUNCTIONS[name] on n elements of dtype."""
    return native.compile_module(irad.lower(ARRAY_FUNCTIONS[name], np.zeros(n, dtype)))


def run_native(name: str, x: np.ndarray) -> np.ndarray:
    return _compiled(name, x.dtype.type, x.size).function(name + "_array")(x)[0]


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """How many floats of their type lie between a and b (finite, same type)."""
    bits = {np.float64: np.int64, np.float32: np.int32}[a.dtype.type]
    ia, ib = a.view(bits).astype(np.int64), b.view(bits).astype(np.int64)
    lowest = np.int64(np.iinfo(bits).min)
    order = lambda i: np.where(i < 0, lowest - i, i)  # noqa: E731 - monotone in the float's value
    return np.abs(order(ia) - order(ib))


def same_special(a: np.ndarray, b: np.ndarray) -> bool:
    """Bitwise equal, except that any NaN equals any NaN."""
    bits = {np.float64: np.int64, np.float32: np.int32}[a.dtype.type]
    return bool(np.all((a.view(bits) == b.view(bits)) | (np.isnan(a) & np.isnan(b))))


def dense_sample(name: str, dtype) -> np.ndarray:
    """Each function's whole domain, |x| spaced evenly in the exponent, and its core range densely."""
    info = np.finfo(dtype)
    exponents = np.linspace(np.log10(info.smallest_subnormal), np.log10(info.max), 20_000)
    with np.errstate(over="ignore"):  # the last exponents round past the largest float
        magnitudes = 10.0 ** exponents
    if name == "exp":
        core = np.linspace(np.log(info.smallest_subnormal), np.log(info.max), 20_000)
        x = np.concatenate([core, magnitudes[magnitudes < 800], -magnitudes[magnitudes < 800]])
    elif name == "log":
        x = np.concatenate([magnitudes, np.linspace(0.5, 2.0, 20_000)])
    else:
        x = np.concatenate([np.linspace(-25, 25, 20_000), magnitudes, -magnitudes])
    x = x.astype(dtype)
    return x[np.isfinite(x)]


def special_values(dtype) -> np.ndarray:
    info = np.finfo(dtype)
    values = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, -np.nan, info.smallest_subnormal, -info.smallest_subnormal,
              info.tiny, info.max, -info.max, 88.72, 88.73, 103.98, -103.98, 709.78, 709.79, -745.13, -745.14, -708.5, 19.1]
    return np.array(values, dtype=dtype)


@needs_libmvec
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", sorted(ARRAY_FUNCTIONS))
def test_within_bound_of_libm_over_the_domain(name, dtype):
    x = dense_sample(name, dtype)
    got = run_native(name, x)
    if dtype == np.float64:
        want = libm(name, x)
        finite = np.isfinite(want)
        assert same_special(got[~finite], want[~finite])
        assert ulp_distance(got[finite], want[finite]).max() <= ULP_BOUND
    else:  # float32 against libm in float64, in float32 ulp
        want = libm(name, x.astype(np.float64))
        with np.errstate(over="ignore"):  # beyond float32: excluded below
            rounded = want.astype(np.float32)
        finite = np.isfinite(rounded) & (np.abs(want) <= np.finfo(np.float32).max)
        error = np.abs(got[finite].astype(np.float64) - want[finite]) / np.spacing(np.abs(rounded[finite])).astype(np.float64)
        assert error.max() <= ULP_BOUND


@needs_libmvec
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", sorted(ARRAY_FUNCTIONS))
def test_special_values_as_libm(name, dtype):
    """Zeros, infinities, NaN, overflow and underflow as libm's, bit for bit;
    the values near the thresholds within the bound (libmvec computes
    every element: a short array too, and a loop's last elements)."""
    x = special_values(dtype)
    got, want = run_native(name, x), libm(name, x)
    special = ~np.isfinite(want) | (want == 0) | (x == 0) | ~np.isfinite(x)
    assert same_special(got[special], want[special])
    assert np.all(np.sign(got[~special]) == np.sign(want[~special]))
    assert np.all(ulp_distance(got[~special], want[~special]) <= ULP_BOUND)


@needs_libmvec
@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(width=64), min_size=37, max_size=37), st.sampled_from(sorted(ARRAY_FUNCTIONS)))
def test_any_floats_within_bound_of_libm(values, name):
    x = np.array(values)
    got, want = run_native(name, x), libm(name, x)
    special = ~np.isfinite(want)
    assert same_special(got[special], want[special])
    assert np.all(ulp_distance(got[~special], want[~special]) <= ULP_BOUND)


def _calls(ir: str) -> set[str]:
    return set(re.findall(r"call [^@]*@([\w.]+)\(", ir))


def libmvec_tanh(monkeypatch) -> None:
    """Loops call libmvec's tanh, as they call its exp and log (as on a
    target without fused multiply-adds); the object cache's key cannot tell."""
    monkeypatch.setattr(vector_math, "own_tanh", lambda features: False)
    monkeypatch.setenv("IRAD_NATIVE_CACHE", "0")


@needs_libmvec
@pytest.mark.parametrize("name", sorted(ARRAY_FUNCTIONS))
def test_the_loop_calls_a_vector_function(name, monkeypatch):
    libmvec_tanh(monkeypatch)
    ir = native.compile_module(irad.lower(ARRAY_FUNCTIONS[name], np.zeros(1000))).jit.optimised_ir()
    vector_call = rf"call <\d+ x double> @{re.escape(vector_math.PREFIX)}\w+\._ZGV\w+v_{name}\("
    assert re.search(vector_call, ir), sorted(_calls(ir))


def test_switched_off_loops_call_libm(switches):
    switches(native_vector_math="0")
    module = native.compile_module(irad.lower(tanh_array, np.zeros(1000)))
    ir = module.jit.optimised_ir()
    assert not any(c.startswith(vector_math.PREFIX) or "_ZGV" in c for c in _calls(ir))
    x = np.linspace(-3, 3, 1000)
    got = module.function("tanh_array")(x)[0]
    assert same_special(got, libm("tanh", x))  # libm itself: bitwise


def test_an_unknown_library_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("IRAD_NATIVE_VECTOR_MATH", "svml")
    with pytest.raises(BackendError, match="IRAD_NATIVE_VECTOR_MATH must be one of libmvec or 0, not 'svml'"):
        native.compile_module(irad.lower(tanh_array, np.zeros(8)))


# ---- sums of vector functions: vectorised, added in order (llvm_build.OPTIONS) ----
def sum_of_tanh(x):
    return np.sum(np.tanh(x))


def row_sums_of_exp(x):
    return np.sum(np.exp(x), axis=1)


def column_sums_of_log(x):
    return np.sum(np.log(x), axis=0)


SUMS = {"sum_of_tanh": (sum_of_tanh, "tanh", None), "row_sums_of_exp": (row_sums_of_exp, "exp", 1),
        "column_sums_of_log": (column_sums_of_log, "log", 0)}


@needs_libmvec
def test_a_sum_of_a_vector_function_calls_it_on_vectors_and_adds_in_order(monkeypatch):
    libmvec_tanh(monkeypatch)
    ir = native.compile_module(irad.lower(sum_of_tanh, np.zeros(1000))).jit.optimised_ir()
    assert re.search(rf"call <\d+ x double> @{re.escape(vector_math.PREFIX)}\w+\._ZGV\w+v_tanh\(", ir), sorted(_calls(ir))
    reductions = re.findall(r"call (.*)@llvm\.vector\.reduce\.fadd", ir)
    assert reductions and not any("reassoc" in flags or "fast" in flags for flags in reductions)


@pytest.mark.parametrize("name", sorted(SUMS))
def test_fused_sums_add_the_elements_in_their_order(name):
    """Each short sum (at most blocked_sums.SEQUENTIAL elements; longer ones
    are blocked, tests/backends/test_blocked_sums.py) equals, bit for bit, the
    elements (the vector function's own, computed by a separate native loop)
    added one after the other in Python: vectorising the loop did not
    reassociate the sum."""
    f, function, axis = SUMS[name]
    rng = np.random.default_rng(5)
    x = rng.uniform(0.1, 3.0, size=(11, 11))
    got = native.compile_module(irad.lower(f, x)).function(name)(x)[0]
    elements = run_native(function, x.ravel()).reshape(x.shape)
    if axis is None:
        want = functools.reduce(lambda a, b: a + b, elements.ravel().tolist(), 0.0)
    else:
        lines = elements if axis == 1 else elements.T
        want = np.array([functools.reduce(lambda a, b: a + b, line.tolist(), 0.0) for line in lines])
    assert np.array_equal(got, want)


def fma_array(x, y, z):
    return x * y + z


def test_arithmetic_loops_use_the_host_vector_width():
    """The target machine is this CPU: with AVX2, four doubles per instruction,
    with AVX-512 eight where the CPU's tuning prefers 512-bit vectors (Zen 4)
    and four where it prefers 256-bit ones (Intel's AVX-512 CPUs); SSE2's two
    without either."""
    features = llvm_jit._host()[2]
    if not features.get("avx2"):
        pytest.skip("no AVX2 here")
    lanes = "(4|8)" if features.get("avx512f") else "4"
    x = np.zeros(1000)
    ir = native.compile_module(irad.lower(fma_array, x, x, x)).jit.optimised_ir()
    assert re.search(rf"fmul <{lanes} x double>", ir) and re.search(rf"fadd <{lanes} x double>", ir)


def _at_width(monkeypatch, bits: int) -> None:
    """Compile for this AVX-512 CPU with LLVM's vectoriser at most `bits` wide."""
    if not llvm_jit._host()[2].get("avx512f"):
        pytest.skip("no AVX-512 here")
    tuning = config.default("native_tuning")
    monkeypatch.setenv("IRAD_NATIVE_TUNING", tuning + (",+prefer-256-bit" if bits == 256 else ""))


@needs_libmvec
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", sorted(ARRAY_FUNCTIONS))
@pytest.mark.parametrize("bits", [512, 256])
def test_loops_call_the_vector_function_of_the_preferred_width(bits, name, dtype, monkeypatch):
    """At 512 bits AVX-512's function (8 doubles), at 256 (`+prefer-256-bit`)
    AVX2's (4): the loop is vectorised at either width, not split into calls
    of one lane, and stays within the bound of libm."""
    _at_width(monkeypatch, bits)
    libmvec_tanh(monkeypatch)
    x = dense_sample(name, dtype)
    module = native.compile_module(irad.lower(ARRAY_FUNCTIONS[name], x))
    c_type, suffix = ("double", "") if dtype == np.float64 else ("float", "f")
    lanes, letter = bits // (8 * np.dtype(dtype).itemsize), {512: "e", 256: "d"}[bits]
    call = rf"call <{lanes} x {c_type}> @{re.escape(vector_math.PREFIX)}libmvec\._ZGV{letter}N{lanes}v_{name}{suffix}\("
    ir = module.jit.optimised_ir()
    assert re.search(call, ir), sorted(_calls(ir))
    got = module.function(name + "_array")(x)[0]
    want = libm(name, x.astype(np.float64))
    finite = np.isfinite(want) & (np.abs(want) <= np.finfo(dtype).max)
    error = np.abs(got[finite].astype(np.float64) - want[finite]) / np.spacing(np.abs(want[finite].astype(dtype))).astype(np.float64)
    assert error.max() <= ULP_BOUND


@needs_libmvec
def test_a_narrower_loop_computes_lanes_of_the_same_function(monkeypatch):
    """Where LLVM vectorises narrower than the vector function (a CPU whose
    tuning prefers 256-bit vectors though it has AVX-512), the loop calls a
    narrower variant that computes its lanes with that same function: the
    same bits as the full-width loop, element by element."""
    x = np.linspace(-4.0, 4.0, 1001)
    libmvec_tanh(monkeypatch)
    _at_width(monkeypatch, 512)
    full = native.compile_module(irad.lower(tanh_array, x)).function("tanh_array")(x)[0]
    _at_width(monkeypatch, 256)
    monkeypatch.setattr(vector_math, "_isa", lambda features: ("e", 8))  # AVX-512's function at 256 bits
    monkeypatch.setenv("IRAD_NATIVE_CACHE", "0")  # its key cannot tell this module from AVX2's
    module = native.compile_module(irad.lower(tanh_array, x))
    ir = module.jit.optimised_ir()
    assert re.search(rf"call <4 x double> @{re.escape(vector_math.PREFIX)}tanh\.n4\(", ir), sorted(_calls(ir))
    assert same_special(module.function("tanh_array")(x)[0], full)


# ---- irad's own tanh (native/tanh_ir.py) ----
@pytest.fixture
def own_tanh():
    """Skips where loops call libmvec's tanh (no fused multiply-add, or vector math off)."""
    if not vector_math.own_tanh(llvm_jit._host()[1]):
        pytest.skip("loops call libmvec's tanh here (no fused multiply-add, or vector math off)")


def exact_tanh(x: np.ndarray) -> np.ndarray:
    """tanh to 64 bits of mantissa (x87's tanhl), 11 bits more than float64's."""
    if np.finfo(np.longdouble).nmant < 63:
        pytest.skip("no 80-bit long double here")
    return np.tanh(x.astype(np.longdouble))


def ulp_error(got: np.ndarray, exact: np.ndarray, dtype) -> np.ndarray:
    """|got - exact| in ulp of `exact` rounded to dtype (finite, nonzero exact)."""
    spacing = np.spacing(np.abs(exact.astype(dtype))).astype(np.longdouble)
    return np.asarray((np.abs(got.astype(np.longdouble) - exact) / spacing).astype(np.float64))


@pytest.mark.usefixtures("own_tanh")
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_own_tanh_within_bound_of_the_exact_value(dtype):
    """Over the dense sample, 200,000 values where the formula changes
    regime (|x| < 3, near the cap) and the specials: within 2.5 ulp of tanh
    (bench/vector_math.py: 2.36 in float64, 1.96 in float32; libmvec documents 4), and
    the specials as libm's, bit for bit."""
    rng = np.random.default_rng(3)
    cap = 22.0 if dtype == np.float64 else 10.0
    x = np.concatenate([dense_sample("tanh", dtype), rng.uniform(-3, 3, 100_000), rng.uniform(-0.2, 0.2, 50_000),
                        rng.uniform(cap - 4, cap + 1, 50_000), special_values(dtype)]).astype(dtype)
    got = native.compile_module(irad.lower(tanh_array, x)).function("tanh_array")(x)[0]
    exact = exact_tanh(x)
    finite = np.isfinite(x) & (x != 0)
    assert ulp_error(got[finite], exact[finite], dtype).max() <= 2.5
    assert same_special(got[~finite], libm("tanh", x[~finite]))
    assert np.all(np.signbit(got) == np.signbit(x)) and np.all(np.abs(got[finite]) <= 1)


@pytest.mark.usefixtures("own_tanh")
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_own_tanh_loops_are_vectorised_arithmetic(dtype):
    """The loop computes tanh in vector registers, inlined: vector divisions
    and fused multiply-adds, no call of a tanh."""
    ir = native.compile_module(irad.lower(tanh_array, np.zeros(1000, dtype))).jit.optimised_ir()
    c_type, suffix = ("double", "f64") if dtype == np.float64 else ("float", "f32")
    # the width is the CPU's: 8 or 16 lanes on Zen 4, 4 or 8 where LLVM prefers 256-bit vectors (Intel's AVX-512)
    assert re.search(rf"fdiv <(4|8|16) x {c_type}>", ir) and re.search(rf"@llvm\.fma\.v(4|8|16){suffix}\(", ir)
    assert not [c for c in _calls(ir) if re.search(r"(^|\.)tanhf?$|_ZGV", c)], sorted(_calls(ir))


@pytest.mark.usefixtures("own_tanh")
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_own_tanh_has_the_same_bits_at_every_width(dtype, monkeypatch):
    """At 512 bits, at 256 (`+prefer-256-bit`) and unvectorised (-O0), on an
    array whose last elements are a remainder loop: the same bits."""
    if not llvm_jit._host()[2].get("avx512f"):
        pytest.skip("no AVX-512 here")
    monkeypatch.setenv("IRAD_NATIVE_CACHE", "0")
    x = np.random.default_rng(4).normal(0.0, 3.0, 1003).astype(dtype)
    results = []
    for bits, level in ((512, "2"), (256, "2"), (512, "0")):
        _at_width(monkeypatch, bits)
        monkeypatch.setenv("IRAD_NATIVE_OPT_LEVEL", level)
        module = native.compile_module(irad.lower(tanh_array, x))
        vectorised = re.search(r"fdiv <\d+ x", module.jit.optimised_ir())
        assert bool(vectorised) == (level != "0")
        results.append(module.function("tanh_array")(x)[0])
    assert all(same_special(r, results[0]) for r in results[1:])


# ---- gradients through the vectorised loops, against central finite differences ----
def tanh_mlp(w1, b1, w2, x):
    h = np.tanh(x @ w1 + b1)
    return np.sum(np.tanh(h @ w2))


def sigmoid_loss(w, x):
    return np.sum(np.log(1.0 / (1.0 + np.exp(-(x * w)))))


def softmax_cross_entropy_mlp(w1, b1, w2, b2, x, labels):
    """The MLP of bench/native.py: a tanh hidden layer, softmax cross-entropy."""
    h = np.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    top = np.max(logits, axis=1, keepdims=True)
    log_p = logits - top - np.log(np.sum(np.exp(logits - top), axis=1, keepdims=True))
    return -np.sum(log_p * labels) / x.shape[0]


def logsumexp(x):
    top = np.max(x)
    return np.log(np.sum(np.exp(x - top))) + top


rng = np.random.default_rng(7)
GRADIENT_CASES = {
    "tanh MLP": (tanh_mlp, (rng.normal(size=(5, 9)), rng.normal(size=9), rng.normal(size=(9, 3)), rng.normal(size=(11, 5)))),
    "sigmoid": (sigmoid_loss, (rng.normal(size=37), rng.normal(size=37))),
    "logsumexp": (logsumexp, (rng.normal(size=41) * 3,)),
    "softmax MLP": (softmax_cross_entropy_mlp, (rng.normal(size=(6, 17)), rng.normal(size=17), rng.normal(size=(17, 4)),
                                               rng.normal(size=4), rng.normal(size=(23, 6)), np.eye(4)[rng.integers(0, 4, 23)])),
}


@pytest.mark.parametrize("case", sorted(GRADIENT_CASES))
def test_gradients_match_finite_differences(case):
    f, args = GRADIENT_CASES[case]
    argnums = tuple(range(len(args) - (case == "softmax MLP")))  # not the labels
    grads = irad.grad(f, argnums=argnums, backend="native")(*args)
    for i, g in zip(argnums, grads):
        np.testing.assert_allclose(g, central_difference(f, args, i), rtol=1e-6, atol=1e-8)
