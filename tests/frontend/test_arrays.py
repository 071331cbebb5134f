"""numpy arrays: gradients against central finite differences, projection,
float32, in-place writes, errors, and the shape of the emitted IR."""

import runpy
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import irad
from irad.ir.types import type_of_value
from tests import array_programs as p
from tests.reference import central_difference
from tests.frontend.test_joins import BACKENDS

RNG = np.random.default_rng(0)
BENCH = SimpleNamespace(**runpy.run_path(str(Path(__file__).resolve().parents[2] / "bench" / "arrays.py")))


def normal(*shape):
    return RNG.normal(size=shape)


def positive(*shape):
    return RNG.uniform(0.5, 2.0, size=shape)


def check(f, *args, rtol=1e-5, atol=1e-7):
    floats = [i for i, a in enumerate(args) if isinstance(a, float)
              or (isinstance(a, np.ndarray) and a.dtype.kind == "f")]
    value, grads = irad.value_and_grad(f, tuple(floats))(*args)
    assert np.allclose(value, f(*args), rtol=1e-12, atol=1e-12)
    for i, g in zip(floats, grads):
        expected = central_difference(f, args, i)
        assert np.shape(g) == np.shape(args[i]), f"gradient {i} has shape {np.shape(g)}"
        if isinstance(args[i], np.ndarray):
            assert g.dtype == args[i].dtype
        np.testing.assert_allclose(g, expected, rtol=rtol, atol=atol, err_msg=f"d/d arg {i}")


CASES = [
    (p.add_mul, lambda: (normal(3, 4), normal(3, 4))),
    (p.add_mul, lambda: (normal(3, 1), normal(1, 4))),  # (3,1) vs (1,4)
    (p.add_mul, lambda: (normal(4), normal(2, 3, 4))),  # rank broadcast
    (p.add_mul, lambda: (normal(2, 1, 4), normal(3, 1))),
    (p.div, lambda: (normal(2, 3), positive(3))),
    (p.scalar_times_array, lambda: (0.7, normal(2, 3))),  # scalar vs array
    (p.negate_pow, lambda: (positive(5),)),
    (p.power, lambda: (positive(2, 3), normal(3))),
    (p.u_sin, lambda: (normal(2, 3),)),
    (p.u_cos, lambda: (normal(4),)),
    (p.u_tan, lambda: (RNG.uniform(-1, 1, size=(3, 2)),)),
    (p.u_exp, lambda: (normal(2, 2),)),
    (p.u_log, lambda: (positive(3, 2),)),
    (p.u_log1p, lambda: (positive(4),)),
    (p.u_expm1, lambda: (normal(4),)),
    (p.u_sqrt, lambda: (positive(2, 5),)),
    (p.u_tanh, lambda: (normal(6),)),
    (p.u_abs, lambda: (normal(3, 3),)),
    (p.u_sign, lambda: (normal(5),)),
    (p.u_maximum, lambda: (normal(3, 4), normal(4))),
    (p.u_minimum, lambda: (normal(3, 1), normal(1, 4))),
    (p.u_where, lambda: (normal(3, 4), normal(4))),
    (p.u_clip, lambda: (normal(10),)),
    (p.u_scalar_ufunc, lambda: (0.3,)),
    (p.r_sum_axis0, lambda: (normal(3, 4),)),
    (p.r_sum_axis_neg, lambda: (normal(2, 3, 4),)),
    (p.r_sum_keepdims, lambda: (normal(3, 4),)),
    (p.r_sum_tuple_axes, lambda: (normal(2, 3, 4),)),
    (p.r_mean, lambda: (normal(3, 4),)),
    (p.r_mean_keepdims, lambda: (normal(2, 5),)),
    (p.r_max, lambda: (normal(3, 4),)),
    (p.r_min, lambda: (normal(3, 4),)),
    (p.r_prod, lambda: (positive(2, 3),)),
    (p.la_matmul, lambda: (normal(3, 4), normal(4, 2))),
    (p.la_matvec, lambda: (normal(3, 4), normal(4))),
    (p.la_vecmat, lambda: (normal(3), normal(3, 4))),
    (p.la_dot, lambda: (normal(5), normal(5))),
    (p.la_outer, lambda: (normal(3), normal(4))),
    (p.la_trace, lambda: (normal(3, 3),)),
    (p.la_transpose, lambda: (normal(3, 2),)),
    (p.s_reshape, lambda: (normal(2, 6),)),
    (p.s_newaxis, lambda: (normal(3), normal(4))),
    (p.s_squeeze, lambda: (normal(1, 3, 1),)),
    (p.s_concatenate, lambda: (normal(2, 3), normal(3, 3))),
    (p.s_stack, lambda: (normal(3), normal(3))),
    (p.s_shape, lambda: (normal(3, 2),)),
    (p.c_creation, lambda: (normal(3),)),
    (p.c_arange, lambda: (normal(3),)),
    (p.c_array, lambda: (0.4, -1.3)),
    (p.i_int, lambda: (normal(3, 4),)),
    (p.i_slices, lambda: (normal(4, 5),)),
    (p.i_runtime_start, lambda: (normal(5, 2), 2)),
    (p.i_runtime_int, lambda: (normal(4), 0)),  # x[-1] wraps as in Python
    (p.i_int_array, lambda: (normal(4, 2), np.array([3, 0, 3, -1]))),
    (p.i_compare, lambda: (normal(3, 3),)),
    (p.w_set_element, lambda: (normal(3),)),
    (p.w_slice_add, lambda: (normal(3), normal(3))),
    (p.w_scale_element, lambda: (normal(2, 3),)),
    (p.w_runtime_index, lambda: (normal(4), 2)),
    (p.more_ufuncs, lambda: (normal(2, 3), positive(3))),
    (p.more_shapes, lambda: (normal(2, 3), normal(3))),
    (p.conditional_arrays, lambda: (positive(3),)),
    (p.conditional_arrays, lambda: (-positive(3),)),
    (p.rnn_loop, lambda: (0.5 * normal(3, 3), normal(3, 2), normal(5, 2))),
    (p.w_in_loop, lambda: (normal(4),)),
    (p.w_slices_in_loop, lambda: (normal(3),)),
    (p.w_in_while_with_mask, lambda: (normal(4),)),
    (p.w_in_branches, lambda: (normal(3), 0.7)),
    (p.w_in_branches, lambda: (normal(3), -0.7)),
    (p.mlp_loss, lambda: (normal(3, 5), normal(5), normal(5, 2), normal(2), normal(4, 3), normal(4, 2))),
    (p.logsumexp, lambda: (normal(3, 4),)),
    (p.softmax_cross_entropy, lambda: (normal(4, 3), np.eye(3)[[0, 2, 1, 1]])),
    (p.variance, lambda: (normal(5, 3),)),
    # the benchmark's workloads: a Gaussian mixture, an LSTM over a sequence (written out
    # and as a loop), an MLP with softmax cross-entropy
    *[(make(np), lambda args=args: args) for make, args, _ in BENCH._arguments("small").values()],
]


@pytest.mark.parametrize(
    "f, make_args", CASES, ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(CASES)]
)
def test_gradient_matches_finite_differences(f, make_args):
    check(f, *make_args())


def test_array_types():
    assert str(type_of_value(np.zeros((2, 3)))) == "tensor<2x3xf64>"
    assert str(type_of_value(np.zeros(3, dtype=np.float32))) == "tensor<3xf32>"
    assert str(type_of_value(np.zeros(3, dtype=np.int32))) == "tensor<3xi32>"  # wrapping in 32 bits
    assert str(type_of_value(np.zeros(3, dtype=np.uint8))) == "tensor<3xi9>"  # its carrier
    assert str(type_of_value(np.zeros(3, dtype=bool))) == "tensor<3xi1>"
    assert type_of_value(np.zeros(3, dtype=complex)) is None


def test_projection_scalar_broadcast_gets_a_scalar_cotangent():
    g = irad.grad(p.scalar_times_array, (0, 1))(0.5, np.ones((2, 3)))
    assert isinstance(g[0], float) and g[0] == pytest.approx(6.0)
    assert g[1].shape == (2, 3)


def test_projection_size_one_axes_are_summed():
    x, y = normal(3, 1), normal(1, 4)
    gx, gy = irad.grad(p.add_mul, (0, 1))(x, y)
    assert gx.shape == (3, 1) and gy.shape == (1, 4)
    # f = sum(x * y + x - y / 3): summed over the axis each was broadcast along
    np.testing.assert_allclose(gx, np.full((3, 1), np.sum(y) + 4.0))
    np.testing.assert_allclose(gy, np.full((1, 4), np.sum(x) - 1.0))


def test_float32_primal_gets_float32_cotangent():
    x = normal(2, 3).astype(np.float32)
    w = normal(3, 4).astype(np.float32)
    gx, gw = irad.grad(p.f32_program, (0, 1))(x, w)
    assert gx.dtype == np.float32 and gw.dtype == np.float32
    ref = central_difference(p.f32_program, (x.astype(np.float64), w.astype(np.float64)), 0)
    np.testing.assert_allclose(gx, ref, rtol=1e-4, atol=1e-5)


def test_compiled_code_is_specialised_per_shape():
    g = irad.grad(p.u_sin)
    for shape in [(3,), (2, 2), (3,)]:
        x = normal(*shape)
        np.testing.assert_allclose(g(x), np.cos(x))


def test_gradients_are_owned_arrays():
    g = irad.grad(p.add_mul)(np.zeros((2, 2)), np.ones((2, 2)))
    g[0, 0] = 5.0  # writable and not shared with a constant inside the compiled code
    again = irad.grad(p.add_mul)(np.zeros((2, 2)), np.ones((2, 2)))
    assert again[0, 0] != 5.0


@pytest.mark.parametrize(
    "f, args, message",
    [
        (p.w_argument, (np.ones(3),), "in-place write to the argument array 'x'"),
        (p.w_view_of_argument, (np.ones(3),), "in-place write to 'z', which is a view of the argument array 'x'"),
        (p.w_call_result, (np.ones(3),), "'z', which may be a view of another array"),
        (p.truth_of_array, (np.ones(3),), "truth value of an array is ambiguous"),
    ],
)
def test_unsupported_array_code_is_a_located_error(f, args, message):
    with pytest.raises(irad.UnsupportedError, match=message) as info:
        irad.grad(f)(*args)
    assert "array_programs.py:" in str(info.value)


def test_unsupported_numpy_function_is_named():
    def f(x):
        return np.sum(np.fft.fft(x))

    with pytest.raises(irad.UnsupportedError, match=r"numpy\.fft\.fft: irad has no complex numbers") as info:
        irad.grad(f)(np.ones(3))
    assert "test_arrays.py:" in str(info.value) and "hint:" in str(info.value)

    def g(x):
        return np.sum(np.linalg.eig(x)[0])

    with pytest.raises(irad.UnsupportedError, match=r"numpy\.linalg\.eig is not supported"):
        irad.grad(g)(np.ones((3, 3)))


def test_broadcast_error_names_shapes():
    def f(x, y):
        return np.sum(x + y)

    with pytest.raises(irad.UnsupportedError, match=r"shapes \(3,\) and \(4,\) cannot be broadcast"):
        irad.grad(f)(np.ones(3), np.ones(4))


def test_int_and_bool_arrays_are_inactive():
    def f(x, idx, mask):
        return np.sum(np.where(mask, x[idx], 0.0))

    with pytest.raises(irad.IradError, match="not a float"):
        irad.grad(f, 1)(np.ones(3), np.array([0, 1, 2]), np.ones(3, dtype=bool))
    g = irad.grad(f)(np.arange(3.0), np.array([2, 2, 0]), np.array([True, False, True]))
    np.testing.assert_allclose(g, [1.0, 0.0, 1.0])


def test_vjp_with_array_output():
    def f(x):
        return np.sin(x) * 2.0

    x = normal(2, 3)
    out, pullback = irad.vjp(f, x)
    np.testing.assert_allclose(out, np.sin(x) * 2.0)
    (g,) = pullback(np.ones((2, 3)))
    np.testing.assert_allclose(g, 2.0 * np.cos(x))


def _ops(module) -> list[str]:
    return [op.name for op in module.walk()]


def test_matmul_pullback_is_two_matmuls():
    module = irad.grad(p.la_matmul, (0, 1)).lower(normal(3, 4), normal(4, 2))
    assert _ops(module).count("linalg.matmul") == 3  # the primal and two in the pullback


def test_unbroadcast_is_a_reduction():
    module = irad.grad(p.add_mul, (0, 1)).lower(normal(3, 1), normal(1, 4))
    names = _ops(module)
    assert "linalg.broadcast" in names and "linalg.reduce" in names


def test_rrule_for_a_numpy_function_replaces_its_op_adjoint_or_declines(rule_table):
    small, large = normal(3), normal(8)
    irad.rrule(np.sin)(p.np_sin_rule_declining)
    # the rule declines below 8 elements (a static shape): differentiated through its IR
    np.testing.assert_allclose(irad.grad(p.uses_np_sin)(small), np.cos(small) * small + np.sin(small))
    # otherwise its pullback (twice the truth) replaces the op's adjoint
    np.testing.assert_allclose(irad.grad(p.uses_np_sin)(large), 2 * np.cos(large) * large + np.sin(large))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3), st.integers(0, 2**32 - 1))
def test_broadcasting_at_random_shapes(shapes, seed):
    rng = np.random.default_rng(seed)
    x, y = (rng.normal(size=s) if s else float(rng.normal()) for s in shapes.input_shapes)
    check(p.broadcast_mix, x, y)


def test_check_grad_on_arrays(rule_table):
    from irad.testing import check_grad

    check_grad(p.la_matmul, normal(2, 3), normal(3, 2))
    irad.rrule(np.sin)(p.np_sin_rule_declining)  # twice the truth from 8 elements on
    with pytest.raises(AssertionError, match=r"d/d arg 0\[3\]"):
        check_grad(p.uses_np_sin, normal(8))


def test_rule_signature_names_an_array_type_by_example(rule_table):
    irad.rrule(np.sin, types=(np.zeros(4),))(p.np_sin_rule_declining)  # 4 < 8: it declines...
    irad.rrule(np.sin, types=(np.zeros(9),))(p.np_sin_rule_declining)  # ...9 does not
    for n, factor in ((4, 1.0), (9, 2.0), (10, 1.0)):  # shape 10 matches no entry
        x = normal(n)
        np.testing.assert_allclose(irad.grad(p.uses_np_sin)(x), factor * np.cos(x) * x + np.sin(x))


@st.composite
def reductions(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=3))
    rank = len(shape)
    axis = draw(st.one_of(
        st.none(),
        st.integers(-rank, rank - 1),
        st.lists(st.integers(0, rank - 1), min_size=1, max_size=rank, unique=True).map(tuple),
    ))
    reduce = draw(st.sampled_from([np.sum, np.mean, np.max, np.min, np.prod]))
    return shape, axis, draw(st.booleans()), reduce


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reductions(), st.integers(0, 2**32 - 1))
def test_reductions_at_random_shapes_axes_and_keepdims(case, seed):
    shape, axis, keepdims, reduce = case
    x = np.random.default_rng(seed).uniform(0.5, 1.5, size=shape) * np.where(
        np.arange(np.prod(shape)).reshape(shape) % 2, 1.0, -1.0)  # distinct values: no ties
    check(p.make_reduction(reduce, axis, keepdims), x)


def test_checkpointed_loop_reading_an_int_index_array():
    """Checkpointing records the int index tensor; reading it back converts it
    (fptosi) inside a linalg.generic, which the numpy backend runs."""
    x, ii = normal(4), np.array([3, 0, 0])
    g = irad.grad(p.gather_in_loop, checkpoint=True)(x, ii)
    np.testing.assert_allclose(g, central_difference(p.gather_in_loop, (x, ii), 0), rtol=1e-6)


@pytest.mark.parametrize("f, args, message", [
    (p.i_runtime_int, lambda: (normal(4), 4), "index out of bounds for an axis of size 4"),
    (p.i_runtime_int, lambda: (normal(4), -5), "index out of bounds for an axis of size 4"),
    (p.i_runtime_start, lambda: (normal(5, 2), 4), "does not fit an axis of size 5"),
    (p.i_runtime_start, lambda: (normal(5, 2), -1), "does not fit an axis of size 5"),
    (p.i_int_array, lambda: (normal(4, 2), np.array([3, 4, 0, 1])), "index out of bounds"),
], ids=["past-the-end", "too-negative", "slice-past-the-end", "slice-negative", "index-array"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_runtime_indices_are_checked(f, args, message, backend):
    """An index only known at run time is checked where numpy would raise an
    IndexError: irad raises RuntimeCheckError naming the source line, never a
    wrong element; natively too, and the next call runs."""
    g = irad.grad(f, backend=backend)
    with pytest.raises(irad.base.errors.RuntimeCheckError, match=message) as err:
        g(*args())
    assert "array_programs.py:" in str(err.value)
    fine = list(args())
    fine[1] = np.zeros_like(fine[1]) if isinstance(fine[1], np.ndarray) else 1
    np.testing.assert_allclose(g(*fine), central_difference(f, tuple(fine), 0), rtol=1e-6, atol=1e-9)
