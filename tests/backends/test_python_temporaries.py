"""The numpy backend's saved temporaries (irad/backends/python/temporaries.py):
out= into owned, dead operands and sums fused with their product or negation.

Gradients of the benchmark workloads and of aliasing-sensitive programs are
checked against central finite differences in float64 (and JAX where it is
installed); the caller's arrays must come back unchanged. The generated source
is checked for where the rewrites apply and where a live alias forbids them.
"""

import re
import warnings
import runpy
from pathlib import Path

import numpy as np
import pytest

import irad
from irad.base.errors import RuntimeCheckError
from irad.backends.python import translate as python_backend
from irad.backends.python import arrays as python_arrays
from tests.reference import central_difference, check_against_numpy, copies

BENCH = Path(__file__).resolve().parents[2] / "bench"
ARRAYS = runpy.run_path(str(BENCH / "arrays.py"))
NATIVE = runpy.run_path(str(BENCH / "native.py"))


def source(f, *args, argnums=0) -> str:
    """The Python source the numpy backend generates for f's gradient."""
    module = irad.grad(f, argnums).lower(*args)
    return python_backend.compile_module(module).source


def _workloads():
    rng = np.random.default_rng(3)
    gmm = (rng.normal(size=4), rng.normal(size=(4, 3)), 0.1 * rng.normal(size=(4, 3)), rng.normal(size=(20, 3)))
    lstm = (0.3 * rng.normal(size=(3, 16)), 0.3 * rng.normal(size=(4, 16)), 0.1 * rng.normal(size=16),
            rng.normal(size=(6, 2, 3)))  # the unrolled LSTM reads 6 steps
    mlp = (0.2 * rng.normal(size=(4, 6)), 0.1 * rng.normal(size=6), 0.2 * rng.normal(size=(6, 3)),
           0.1 * rng.normal(size=3), rng.normal(size=(5, 4)), np.eye(3)[rng.integers(0, 3, size=5)])
    points = rng.normal(size=(10, 3)) + np.array([0.0, 0.0, 8.0])
    cam = np.array([0.1, -0.05, 0.02, 0.1, 0.2, -3.0, 1.2, 0.01, -0.001])
    return {
        "gmm": (ARRAYS["make_gmm"], gmm, (0, 1, 2)),
        "lstm unrolled": (ARRAYS["make_lstm"], lstm, (0, 1, 2)),
        "lstm loop": (ARRAYS["make_lstm_loop"], lstm, (0, 1, 2)),
        "mlp": (ARRAYS["make_mlp"], mlp, (0, 1, 2, 3)),
        "reprojection": (NATIVE["make_array_reprojection"], (cam, points, 0.1 * rng.normal(size=(10, 2))), (0, 1)),
    }


WORKLOADS = _workloads()


def _jax_gradient(make, args, argnums):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    return [np.asarray(g) for g in jax.grad(make(jnp), argnums=argnums)(*args)]


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_bench_workload_gradients_match_finite_differences(name):
    make, args, argnums = WORKLOADS[name]
    f = make(np)
    before = copies(args)
    grads = irad.grad(f, argnums)(*args)
    for a, b in zip(args, before):
        np.testing.assert_array_equal(a, b)  # the caller's arrays are never written
    for i, g in zip(argnums, grads):
        np.testing.assert_allclose(g, central_difference(f, args, i), rtol=1e-6, atol=1e-7, err_msg=f"arg {i}")


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_bench_workload_gradients_match_jax(name):
    make, args, argnums = WORKLOADS[name]
    expected = _jax_gradient(make, args, argnums)
    for g, e in zip(irad.grad(make(np), argnums)(*args), expected):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


def test_the_bench_gradients_use_the_rewrites():
    make, args, argnums = WORKLOADS["gmm"]
    text = source(make(np), *args, argnums=argnums)
    assert "out=" in text and "np.einsum(" in text and re.search(r"\(-np\.add\.reduce\(\w+, axis=", text)


# ---- aliasing-sensitive programs ----------------------------------------------------


def twice(a, b):
    y = a * b  # `a` is `b` when called with one array twice
    return np.sum(np.exp(y * 0.5) + b)


def through_views(x):
    y = x * 2.0
    head = y[0:2]  # a view of y, read after y's last elementwise use
    z = np.exp(y)
    return np.sum(z) + np.sum(head * head)


def transposed_view(X):
    y = np.tanh(X * 3.0)
    t = y.T
    return np.sum(np.sin(y)) + np.sum(t[0] * 2.0)


def written_in_place(x):
    y = np.copy(x)
    y *= 2.0
    row = y[1:]
    y[0] = np.sin(x[1])
    y += np.exp(x * 0.5)
    return np.sum(row * y[1:]) + np.sum(y * y)


def accumulated_in_a_loop(x):
    acc = np.zeros(3)
    for i in range(3):
        prev = acc
        acc = acc + np.sin(x * (i + 1.0))
        acc = acc * prev + 1.0
    return np.sum(acc * acc)


def argument_reshaped(x):
    flat = x.reshape(-1)
    return np.sum(np.exp(flat) * flat)


@pytest.mark.parametrize("f, args", [
    (twice, (np.array([0.3, -0.7, 1.1]), np.array([0.9, 0.2, -0.4]))),
    (through_views, (np.array([0.3, -0.7, 1.1, 0.5]),)),
    (transposed_view, (np.array([[0.3, -0.7], [1.1, 0.5], [0.2, 0.1]]),)),
    (written_in_place, (np.array([0.3, -0.7, 1.1]),)),
    (accumulated_in_a_loop, (np.array([0.3, -0.7, 1.1]),)),
    (argument_reshaped, (np.array([[0.3, -0.7], [1.1, 0.5]]),)),
])
def test_aliasing_programs_match_finite_differences(f, args):
    before = copies(args)
    check_against_numpy(f, args)
    for a, b in zip(args, before):
        np.testing.assert_array_equal(a, b)


def test_the_same_array_passed_twice():
    x = np.array([0.3, -0.7, 1.1])
    kept = x.copy()
    ga, gb = irad.grad(twice, (0, 1))(x, x)
    np.testing.assert_array_equal(x, kept)
    one = lambda v: twice(v, v)  # noqa: E731
    np.testing.assert_allclose(ga + gb, central_difference(one, (x,), 0), rtol=1e-6, atol=1e-8)


def test_results_that_are_views_of_arguments_are_fresh():
    x = np.array([[0.3, -0.7], [1.1, 0.5]])
    out, pullback = irad.vjp(lambda v: v.T[0], x)
    out[0] = 100.0  # the caller's copy: x is not a base of it
    assert x[0, 0] == 0.3
    (ct,) = pullback(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(ct, [[1.0, 0.0], [2.0, 0.0]])
    ct[0, 0] = 7.0
    (again,) = pullback(np.array([1.0, 2.0]))
    assert again[0, 0] == 1.0


# ---- where the rewrites apply, and where they must not ---------------------------------


def _line(text: str, pattern: str) -> str:
    (line,) = [ln.strip() for ln in text.splitlines() if re.search(pattern, ln)]
    return line


def test_a_dead_product_is_overwritten():
    def f(x):
        return np.sum(np.exp(x * 2.0) * x)

    text = source(f, np.ones(3))
    assert re.search(r"np\.exp\((\w+), out=\1\)", text)  # x * 2.0 is read by exp alone


def test_no_out_into_an_argument_or_a_value_read_later():
    def f(x):
        y = x * 2.0
        return np.sum(np.exp(x) + y * y) + np.sum(np.sin(y) * y)

    text = source(f, np.ones(3))
    assert "out=x" not in text  # the caller's array
    y = re.search(r"(\w+) = \(x \* \w+\)", text).group(1)
    assert f"out={y})" not in text  # the gradient reads y in sin, cos and two products
    assert "out=" in text  # where nothing else reads an operand


def test_no_out_into_a_value_with_a_live_view():
    text = source(through_views, np.ones(4))
    y = re.search(r"(\w+) = \(x \* \w+\)", text).group(1)
    assert re.search(rf"\w+ = {y}\[0:2, \]", text)  # the view of y exists ...
    assert f"out={y})" not in text  # ... so nothing writes into y


def test_no_out_into_a_value_pushed_on_the_tape():
    def f(x):
        s = x
        for _ in range(3):
            s = np.sin(s * 1.5)
        return np.sum(s)

    text = source(f, np.ones(3))
    # the product in the loop is read by sin and kept for the pullback (cos(s * 1.5))
    product = re.search(r"(\w+) = \(s \* \w+\)", text).group(1)
    assert re.search(rf"\w+\[\w+\] = {product}\n", text)  # pushed (its own flat f64 array), not copied
    assert f"out={product})" not in text
    # a record goes on and comes off in one line: no view of the tape is made
    assert re.search(r"= _record\(\w+\[\w+\], 3, np\.float64\)\n", text)
    assert "[0][" not in text


def rows_squared(x):
    acc = np.zeros(2)
    for i in range(2):
        row = x[i]
        acc = acc + np.sin(row) * row
    return np.sum(acc * acc)


def all_rows_squared(x):
    acc = np.zeros(2)
    for i in range(3):
        row = x[i]
        acc = acc + np.sin(row) * row
    return np.sum(acc * acc)


@pytest.mark.parametrize("f,copy", [
    (rows_squared, r"= np\.array\(row(_\d+)?, dtype=np\.float64\)\.reshape\(-1\)"),  # each row x[i] is recorded: a copy
    (all_rows_squared, r"= np\.array\(x, dtype=np\.float64\)"),  # a loop over all rows keeps x once (passes/ad/reverse_loops.py)
])
def test_a_view_of_an_argument_is_copied_onto_the_tape(f, copy):
    x = np.array([[0.3, -0.7], [1.1, 0.5], [0.2, 0.9]])
    text = source(f, x)
    assert re.search(r"row(_\d+)? = \w+\.reshape", text)  # x[i], a view of the caller's x (row_1: row is carried)
    assert re.search(copy, text)
    expected = central_difference(f, (x,), 0)
    y = x.copy()
    _, pullback = irad.vjp(f, y)
    y[:] = 5.0  # the caller changes its array before the pullback runs
    np.testing.assert_allclose(pullback(1.0)[0], expected, rtol=1e-6, atol=1e-8)


def test_a_fused_sum_matches_finite_differences_in_float32():
    def f(x, w):
        return np.sum((x * w) ** 2)

    args = (np.arange(6, dtype=np.float32).reshape(2, 3) / 7, np.linspace(-1, 1, 3, dtype=np.float32))
    assert "np.einsum(" in source(f, *args, argnums=(0, 1))
    check_against_numpy(f, args)


def test_a_whole_product_summed_is_one_dot():
    def f(x, y):
        s = np.sum(np.sin(x) * y)
        t = np.sum(x[:, None] * y[None, :])
        return s * s + t * t  # the gradient reads both sums

    x, y = np.array([0.3, -0.7, 1.1]), np.array([0.9, 0.2, -0.4])
    text = source(f, x, y, argnums=(0, 1))
    assert "_vdot(" in text  # sum(sin(x) * y): both operands full
    assert re.search(r"np\.einsum\('ab,ab->'", text)  # the outer product's operands are broadcast
    check_against_numpy(f, (x, y))


@pytest.mark.parametrize("op", sorted(python_arrays.UFUNCS))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_out_into_an_operand_gives_the_same_bits(op, dtype):
    """What out= relies on: numpy computes an op into one of its operands
    exactly as into a new array (SIMD loops included), specials too."""
    ufunc = getattr(np, python_arrays.UFUNCS[op].removeprefix("np."))
    rng = np.random.default_rng(7)
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-310, -1.0, 1.0, 0.5]
    for n in (5, 64, 1001):
        a = np.concatenate([specials, 3 * rng.normal(size=n)]).astype(dtype)
        b = np.concatenate([specials[::-1], rng.normal(size=n) + 0.5]).astype(dtype)
        operands = (a, b)[: ufunc.nin]
        with np.errstate(all="ignore"):
            fresh = ufunc(*operands)
            for i in range(ufunc.nin):
                copies_ = [x.copy() for x in operands]
                into = ufunc(*copies_, out=copies_[i])
                assert into.tobytes() == fresh.tobytes(), f"{op} into operand {i}"


def log_sum(x):
    return np.sum(np.log(x)) + np.sum(np.exp(x[:2]))


def test_a_gradient_does_not_compute_the_value_it_discards():
    x = np.array([0.5, 1.5, 2.5])
    text = source(log_sum, x)
    assert "np.log(" not in text  # d/dx log(x) is 1/x: the log itself is dead
    assert "np.exp(" in text  # the exp is its own derivative: kept
    check_against_numpy(log_sum, (x,))


def overflowing(x):
    return np.sum(np.exp(x) * x)


def test_numpy_stays_quiet_inside_and_the_callers_error_state_is_kept():
    x = np.array([1000.0, 0.5])  # exp overflows: IEEE gives inf, numpy would warn
    g = irad.grad(overflowing)
    with np.errstate(over="raise", invalid="raise"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = g(x)
        assert np.geterr()["over"] == "raise"  # restored after the call
        with pytest.raises(FloatingPointError):
            np.exp(x)
    assert np.isinf(got[0]) and got[1] == pytest.approx(np.exp(0.5) * 1.5)


def picked(x, i):
    return np.sum(x[i] * x)


def test_an_error_inside_the_call_restores_the_callers_error_state():
    g = irad.grad(picked)
    g(np.ones(3), 1)
    with np.errstate(over="raise"):
        with pytest.raises(RuntimeCheckError):
            g(np.ones(3), 5)  # out of bounds: checked inside the generated code
        assert np.geterr()["over"] == "raise"


def matrix_steps(w, x):
    h = np.tanh(x)  # made by generated code, not the argument: pushed without a copy
    for _ in range(3):
        h = np.tanh(h @ w) * h
    return np.sum(h * h)


def test_a_matrix_record_goes_on_the_tape_in_its_own_shape():
    """The records of a 2-D loop are the arrays themselves, not reshaped to the
    tape's flat records (`pushed_as_is`); the pops reshape them back."""
    rng = np.random.default_rng(5)
    args = (0.5 * rng.normal(size=(3, 3)), rng.normal(size=(2, 3)))
    text = source(matrix_steps, *args, argnums=(0, 1))
    assert ".reshape((6,))" not in text  # no flattening for a push
    assert "_record_as(" in text  # read back in the shape its reshape gives it: no reshape line
    for i, g in enumerate(irad.grad(matrix_steps, argnums=(0, 1))(*args)):
        np.testing.assert_allclose(g, central_difference(matrix_steps, args, i), rtol=1e-6, atol=1e-8)
