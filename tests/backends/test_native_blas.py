"""Matrix products through BLAS in native code (irad/backends/native/blas.py).

Gradients of matmul-heavy programs on the native backend, checked against
central finite differences in float64 and against the program run as numpy
(tests/reference.py), and against the numpy backend's gradient; with the
threshold set so that the products call BLAS, and so that they stay loops.
"""

import functools
import math

import numpy as np
import pytest
from xdsl.dialects import func, llvm, tensor
from xdsl.dialects.builtin import TensorType, f64
from xdsl.dialects.linalg.ops import FillOp, MatmulOp

import irad
from irad import config
from irad.backends.native import lapack
from irad.backends.native import compile as native
from irad.backends.native import blas as native_blas
from irad.base.errors import BackendError
from irad.ir.constants import LARGE_SPLAT, float_constant, is_splat_of, splat_number
from tests.reference import NATIVE_MISSING, check_against_numpy, copies, float_positions

THREADS = config.switch("native_blas_threads").variable
pytestmark = [
    pytest.mark.native,
    pytest.mark.skipif(NATIVE_MISSING is not None, reason=str(NATIVE_MISSING)),
]


def mlp(w1, b1, w2, b2, x, labels):
    h = np.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(np.sum(labels * log_probs, axis=1))


def attention(wq, wk, wv, x):
    q, k, v = x @ wq, x @ wk, x @ wv
    scores = (q @ k.T) / 2.0
    e = np.exp(scores - np.max(scores, axis=1, keepdims=True))
    out = (e / np.sum(e, axis=1, keepdims=True)) @ v
    return np.sum(out * out)


def lstm_loop(wx, wh, b, xs):
    n = wh.shape[0]
    h = np.zeros((xs.shape[1], n))
    c = np.zeros((xs.shape[1], n))
    for t in range(xs.shape[0]):
        gates = xs[t] @ wx + h @ wh + b
        c = 1.0 / (1.0 + np.exp(-gates[:, n:2 * n])) * c + np.tanh(gates[:, 0:n]) * np.tanh(gates[:, 3 * n:4 * n])
        h = np.tanh(c) * gates[:, 2 * n:3 * n]
    return np.sum(h**2)


def transposes_and_views(a, b, c):
    """Products of transposes, slices with strided rows, a strided column
    slice (not a BLAS layout: copied), a reshaped vector, matvec and vecmat."""
    p = a.T @ b                       # (6, 5) from a (7, 6), b (7, 5)
    q = p @ c[1:6, 2:8]               # c (8, 10): the slice's rows are strided
    r = a[:, ::2] @ b[0:3, :]         # a column stride 2: copied before the call
    v = np.sum(q, axis=1)
    s = a @ v                         # matvec
    t = v @ a.T                       # vecmat
    u = a.reshape(6, 7) @ b[0:7, 0:4]
    return np.sum(np.sin(q)) + np.sum(r * r) + np.sum(s * t) + np.sum(np.cos(u))


def stacks_and_einsums(a, b, c, d):
    """Contractions that are matrix products: a batched matmul, c d^T, and a
    stack whose output rows come from the second operand."""
    p = a @ b                                  # (2, 4, 3) @ (2, 3, 5)
    q = np.einsum("ij,kj->ik", c, d)
    r = np.einsum("bki,bkj->bji", a, p)
    return np.sum(np.tanh(p)) + np.sum(q * q) + np.sum(np.sin(r))


def vectors(a, c, v):
    """Matrix-vector products (?gemv): columns and rows of slices, transposes."""
    x = a @ c[:, 2]                   # a (7, 8), c (8, 10): a strided column
    y = c[3, 1:9] @ a.T               # part of a row of c, a transposed
    z = a.T @ v                       # v (7,)
    w = v @ a
    return np.sum(np.tanh(x * y)) + np.sum(np.sin(z) * w)


def reused_in_place(wh, x):
    """h is read by two products, the gradient's h.T @ d after an op that may
    reuse h's buffer in place; when BLAS read h's buffer through a pointer
    taken earlier (CSE merged two reads of h), d(wh) came out wrong."""
    h = np.tanh(x)
    h = np.tanh(x + h @ wh)
    return np.sum(h**2)


def _mlp_args(rng, dtype, samples=9, features=5, width=7, classes=4):
    return tuple(a.astype(dtype) for a in (
        0.3 * rng.normal(size=(features, width)), 0.1 * rng.normal(size=width),
        0.3 * rng.normal(size=(width, classes)), 0.1 * rng.normal(size=classes),
        rng.normal(size=(samples, features)), np.eye(classes)[rng.integers(0, classes, size=samples)],
    ))


def _programs(dtype):
    rng = np.random.default_rng(7)
    return {
        "mlp": (mlp, _mlp_args(rng, dtype)),
        "attention": (attention, tuple((0.4 * rng.normal(size=s)).astype(dtype) for s in [(4, 3)] * 3 + [(6, 4)])),
        "lstm loop": (lstm_loop, tuple((0.4 * rng.normal(size=s)).astype(dtype) for s in [(3, 8), (2, 8), (8,), (4, 5, 3)])),
        "transposes and views": (transposes_and_views, tuple(rng.normal(size=s).astype(dtype) for s in [(7, 6), (7, 5), (8, 10)])),
        "reused in place": (reused_in_place, tuple(rng.normal(size=s).astype(dtype) for s in [(5, 5), (6, 5)])),
        "vectors": (vectors, tuple(rng.normal(size=s).astype(dtype) for s in [(7, 8), (8, 10), (7,)])),
        "stacks and einsums": (stacks_and_einsums, tuple(rng.normal(size=s).astype(dtype) for s in [(2, 4, 3), (2, 3, 5), (6, 4), (7, 4)])),
    }


def _blas_calls(f, args) -> int:
    """How many products of f's gradient module call BLAS natively."""
    module = irad.grad(f, float_positions(args)).lower(*args)
    return len(native_blas.products(module))


@pytest.mark.parametrize("threshold", [1, 10**9], ids=["blas", "loops"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["mlp", "attention", "lstm loop", "transposes and views", "vectors", "stacks and einsums",
                                  "reused in place"])
def test_gradients_of_products_against_finite_differences_and_numpy(name, dtype, threshold, switches):
    switches(native_blas_min_flops=threshold)
    f, args = _programs(dtype)[name]
    assert (_blas_calls(f, args) > 0) == (threshold == 1)
    check_against_numpy(f, args, backend="native")
    wrt = float_positions(args)
    native_grads = irad.grad(f, wrt, backend="native")(*copies(args))
    numpy_grads = irad.grad(f, wrt)(*copies(args))
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    for g, expected in zip(native_grads, numpy_grads):
        # rounding in sums whose terms are much larger than the result
        scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
        np.testing.assert_allclose(g, expected, rtol=tolerance, atol=tolerance * scale)


def square_product(a, b):
    return np.sum(np.tanh(a @ b))


@pytest.mark.parametrize("n", [15, 16, 17, 40])
def test_sizes_around_the_default_threshold(n):
    """16**3 multiply-adds is the default threshold: 15 stays loops, 16 and up call BLAS."""
    rng = np.random.default_rng(n)
    args = (0.3 * rng.normal(size=(n, n)), 0.3 * rng.normal(size=(n, n)))
    # the product, and the two of its gradient (dA = dC B^T, dB = A^T dC)
    assert _blas_calls(square_product, args) == (3 if n**3 >= config.default("native_blas_min_flops") else 0)
    check_against_numpy(square_product, args, backend="native")


def empty_products(a, b, c):
    return np.sum(a @ b) + np.sum(np.exp(b.T @ c))


def test_products_with_an_empty_dimension_stay_loops(switches):
    switches(native_blas_min_flops=1)
    args = (np.ones((3, 0)), np.ones((0, 4)), np.ones((0, 2)))
    assert _blas_calls(empty_products, args) == 0
    value, grads = irad.value_and_grad(empty_products, (0, 1, 2), backend="native")(*args)
    assert value == empty_products(*args) == 4 * 2
    assert [g.shape for g in grads] == [(3, 0), (0, 4), (0, 2)]


def test_the_lowered_module_calls_gemm_above_the_threshold_and_keeps_loops_below(switches):
    rng = np.random.default_rng(0)
    args = (rng.normal(size=(20, 30)), rng.normal(size=(30, 10)))
    module = irad.grad(square_product, (0, 1)).lower(*args)
    symbol = lapack.find().symbol("cblas_dgemm")
    above = native.compile_module(module)
    assert above.llvm_ir.count(f"call void @{symbol}(") == 3
    switches(native_blas_min_flops=20 * 30 * 10 + 1)
    below = native.compile_module(module)
    assert symbol not in below.llvm_ir


def test_a_transpose_feeding_a_product_is_passed_as_a_flag_and_the_module_verifies():
    rng = np.random.default_rng(0)
    args = (rng.normal(size=(20, 30)), rng.normal(size=(30, 10)))
    module = irad.grad(square_product, (0, 1)).lower(*args)
    ready, _ = native.for_mlir_opt(module, tracked=True, destinations=True)
    assert native_blas.call_blas(ready)
    ready.verify()  # xDSL; mlir-opt 22 parses it in the tests above
    assert not any(isinstance(op, MatmulOp) for op in ready.walk())
    calls = [op for op in ready.walk() if isinstance(op, llvm.CallOp)]
    # dA = dC B^T (B transposed), dB = A^T dC (A transposed): flags 111 (no) and 112 (transposed)
    flags = sorted((c.args[1].owner.value.value.data, c.args[2].owner.value.value.data) for c in calls)
    assert flags == [(111, 111), (111, 112), (112, 111)]


def test_matrix_vector_products_call_gemv(switches):
    switches(native_blas_min_flops=1)
    f, args = _programs(np.float64)["vectors"]
    compiled = native.compile_module(irad.grad(f, (0, 1, 2)).lower(*args))
    library = lapack.find()
    # x, y, z, w and, in the gradient, their products with the cotangents
    # that have a vector side (the outer products, K = 1, stay ?gemm)
    assert compiled.llvm_ir.count(f"call void @{library.symbol('cblas_dgemv')}(") >= 4


def test_without_cblas_in_the_library_the_products_stay_loops(monkeypatch):
    monkeypatch.setattr(native_blas, "blas_library", lambda: None)
    rng = np.random.default_rng(1)
    args = (rng.normal(size=(20, 30)), rng.normal(size=(30, 10)))
    compiled = native.compile_module(irad.grad(square_product, (0, 1)).lower(*args))
    assert "cblas" not in compiled.llvm_ir
    check_against_numpy(square_product, args, backend="native")


def test_a_bad_threshold_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("IRAD_NATIVE_BLAS_MIN_FLOPS", "many")
    with pytest.raises(BackendError, match="IRAD_NATIVE_BLAS_MIN_FLOPS must be a whole number"):
        native_blas.min_flops()


def block_products(c, w, xs):
    return np.sum(np.tanh(c[1:6, 2:8] @ w)) + np.sum(np.tanh(xs[2] @ w[0:4, :]))


def test_slices_with_contiguous_rows_are_read_in_their_source(switches):
    """A block of c and the rank-reducing xs[2] call BLAS on c's and xs's own
    buffers, at an offset (no copy); their gradients check against numpy."""
    switches(native_blas_min_flops=1)
    rng = np.random.default_rng(3)
    args = (rng.normal(size=(8, 10)), rng.normal(size=(6, 5)), rng.normal(size=(3, 7, 4)))
    module = irad.grad(block_products, (0, 1, 2)).lower(*args)
    ready, _ = native.for_mlir_opt(module, tracked=True, destinations=True)
    assert native_blas.call_blas(ready)
    ready.verify()
    public = next(op for op in ready.ops if getattr(op, "sym_name", None) and op.sym_name.data.startswith("block"))
    c, _, xs = public.body.blocks.first.args[:3]
    read = [v for op in ready.walk() if isinstance(op, func.CallOp) for v in op.arguments
            if op.callee.string_value().startswith(native_blas.FUNCTION_PREFIX)]
    assert c in read and xs in read
    check_against_numpy(block_products, args, backend="native")


# ---- BLAS threads (irad/backends/native/lapack.py) ------------------------------------------------
def _threads_in_a_fresh_process(environment: dict) -> str:
    """How many threads irad's OpenBLAS runs on in a new process with
    `environment` (OpenBLAS reads OPENBLAS_NUM_THREADS when it loads)."""
    import os
    import subprocess
    import sys

    code = "from irad.backends.native import lapack; print(lapack.get_threads(lapack.find()))"
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", THREADS)}
    done = subprocess.run([sys.executable, "-c", code], env={**env, **environment}, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_blas_runs_on_one_thread_unless_asked_for_more():
    if lapack.find().origin == lapack.NUMPY_BUNDLED:
        pytest.skip("numpy's own BLAS: irad leaves its threads alone")
    assert _threads_in_a_fresh_process({"OPENBLAS_NUM_THREADS": "2"}) == "1"
    assert _threads_in_a_fresh_process({THREADS: "2"}) == "2"
    # 0: OpenBLAS's own choice, here what OPENBLAS_NUM_THREADS said
    assert _threads_in_a_fresh_process({"OPENBLAS_NUM_THREADS": "2", THREADS: "0"}) == "2"


@pytest.mark.parametrize("value", ["two", "-1", "1.5"])
def test_a_bad_thread_count_is_a_clear_error_not_loops(value, monkeypatch):
    """The count is read when the library is first looked up (in a new process)."""
    monkeypatch.setenv(THREADS, value)
    native_blas.blas_library.cache_clear()
    lapack.find.cache_clear()
    with pytest.raises(BackendError, match=f"{THREADS} must be a whole number"):
        native_blas.blas_library()


def test_gradients_are_the_same_bits_on_one_and_two_blas_threads():
    """Products large enough for OpenBLAS to split them among its threads
    (x @ w1 here is 600*16*32 multiply-adds): the gradient, against central
    differences, does not depend on the thread count."""
    rng = np.random.default_rng(3)
    args = _mlp_args(rng, np.float64, samples=600, features=16, width=32, classes=4)
    library = lapack.find()
    gradient = irad.grad(mlp, (0, 1, 2, 3), backend="native")
    before = lapack.get_threads(library)
    try:
        lapack.set_threads(library, 1)
        one = gradient(*copies(args))
        lapack.set_threads(library, 2)
        two = gradient(*copies(args))
    finally:
        lapack.set_threads(library, before)
    for a, b in zip(one, two):
        assert np.array_equal(a, b)
    check_against_numpy(mlp, args, backend="native")


# ---- zero inits made when the program runs (native/large_splats.py) -------------------------------
def energy(x, a):
    return np.sum(np.tanh(a @ x) * x)


def energy_hessian(x, a):
    """Its closed form: Aᵀ diag(-2 t s x) A + Aᵀ diag(s) + diag(s) A, t = tanh(Ax), s = 1 - t²."""
    t = np.tanh(a @ x)
    s = 1 - t * t
    return a.T @ ((-2 * t * s * x)[:, None] * a) + a.T * s + s[:, None] * a


def product_gradients(a, b):
    """The closed form of square_product's gradient, also for stacks of
    products (a @ b of 3-D arrays): dA = S Bᵀ, dB = Aᵀ S, S = 1 - tanh(AB)²."""
    s = 1 - np.tanh(a @ b) ** 2
    return s @ np.swapaxes(b, -1, -2), np.swapaxes(a, -1, -2) @ s


def _blas_call_sites(llvm_ir: str) -> int:
    """Calls of ?gemm and ?gemv in a module's LLVM IR (cblas_ or split,
    native/split.py): one per product that calls BLAS."""
    return sum(1 for line in llvm_ir.splitlines() if "call void @" in line and ("gemm" in line or "gemv" in line))


def _large_init_programs():
    rng = np.random.default_rng(5)
    n = 1024  # the Hessian's n³ product: its zero init has n² elements
    x, a = rng.normal(size=n), rng.normal(size=(n, n)) / np.sqrt(n)
    square = tuple(0.1 * rng.normal(size=(300, 300)) for _ in range(2))
    stack = tuple(0.1 * rng.normal(size=(2, 200, 200)) for _ in range(2))  # a contraction 'Zik,Zkj->Zij'
    return {
        "hessian n=1024": (functools.partial(irad.hessian, energy), (x, a), energy_hessian),
        "grad of a @ b, 300 x 300": (functools.partial(irad.grad, square_product, (0, 1)), square, product_gradients),
        "grad of a stack of products": (functools.partial(irad.grad, square_product, (0, 1)), stack, product_gradients),
    }


@pytest.mark.parametrize("name", list(_large_init_programs()))
def test_products_whose_zero_init_is_filled_when_run_still_call_blas(name):
    """A product's zero init of more than LARGE_SPLAT elements becomes a
    linalg.fill before call_blas looks for products (native/large_splats.py);
    it is still a zero init, and the product a BLAS call. When call_blas did
    not see it as one, the Hessian's n³ product at n = 1024 ran as scalar
    loops, 20-40x slower (docs/benchmarks.md), and no test failed: here every
    product of the lowered module is a BLAS call site in the code compiled
    from it."""
    transformation, args, closed_form = _large_init_programs()[name]
    module = transformation().lower(*args)
    products = native_blas.products(module)
    assert any(math.prod(op.results[0].type.get_shape()) > LARGE_SPLAT for op in products)
    assert _blas_call_sites(native.compile_module(module).llvm_ir) == len(products)
    results, closed = transformation(backend="native")(*args), closed_form(*args)
    if not isinstance(results, tuple):
        results, closed = (results,), (closed,)
    for got, expected in zip(results, closed, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)


def test_a_linalg_fill_is_a_splat_of_its_number():
    """What call_blas asks of a zero init the native backend has filled."""
    zero, t = float_constant(0.0, f64), TensorType(f64, [300, 300])
    empty = tensor.EmptyOp([], t)
    fill = FillOp([zero.result], [empty.tensor], [t])
    assert splat_number(fill.results[0]) is zero.result
    assert is_splat_of(fill.results[0], 0.0) and not is_splat_of(fill.results[0], 1.0)
