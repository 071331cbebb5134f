"""Statement-level control flow and recursion, differentiated in reverse mode.

Every gradient is checked against central finite differences of the same
Python function run as plain Python (float64), at points away from branch
boundaries so the stencil never crosses one. The conftest fixture also parses
every emitted module with mlir-opt 22.
"""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irad
from irad.frontend.entry_arguments import signature_of
from irad.frontend.module_lowering import lower_function
from tests.api.test_gradients import check_fd
from tests.frontend.test_joins import BACKENDS
from tests.mlir_roundtrip import record
from tests.reference import five_point_difference

# ---------------------------------------------------------------------------
# Branches
# ---------------------------------------------------------------------------


def piecewise(x):
    if x > 1.0:
        y = x * x
    else:
        y = math.sin(x) + 2.0 * x
    return y * 3.0


def elif_chain(x, a):
    if x < -2.0:
        y = a * x
    elif x < 0.0:
        y = math.exp(x) * a
    elif x < 2.0:
        y = x * x * a
    else:
        y = math.log(x) + a
    return y - x


def branch_assigns_several(x, y):
    u = x
    v = y
    if x * y > 1.0:
        u = x * y
        v = u - y
    else:
        v = v * v
    return u * v + x


def branch_without_else(x):
    y = x
    if x > 0.5:
        y = math.tanh(x) * 4.0
    return y * x


def returns_from_branches(x):
    if x > 0.0:
        return math.sqrt(x)
    return -x * x


def mixed_int_float_in_branches(x, n):
    if n > 2:
        s = 1
    else:
        s = x
    return s * x


@pytest.mark.parametrize("x", [2.5, 0.3, -0.7])
def test_piecewise_both_sides(x):
    check_fd(piecewise, x)


@pytest.mark.parametrize("x", [-3.0, -1.0, 1.0, 3.0])
def test_elif_chain_every_arm(x):
    check_fd(elif_chain, x, 1.7)


@pytest.mark.parametrize("x,y", [(2.0, 1.5), (0.2, 0.3)])
def test_branch_assigning_several_variables(x, y):
    check_fd(branch_assigns_several, x, y)


@pytest.mark.parametrize("x", [1.2, 0.2])
def test_branch_without_else(x):
    check_fd(branch_without_else, x)


@pytest.mark.parametrize("x", [0.8, -0.8])
def test_return_from_either_branch(x):
    check_fd(returns_from_branches, x)


@pytest.mark.parametrize("n", [1, 5])
def test_int_and_float_merge_to_float(n):
    check_fd(mixed_int_float_in_branches, 0.7, n)
    assert irad.grad(mixed_int_float_in_branches)(0.7, 5) == pytest.approx(1.0)


# ---------------------------------------------------------------------------
# for loops
# ---------------------------------------------------------------------------


def several_carried(x, y, n):
    a = x
    b = y
    s = 0  # an int that becomes a float in the loop
    for i in range(n):
        a, b = b, a * 0.5 + math.sin(b)
        s += a * i
    return s + a * b


def stepped_range(x, start, stop, step):
    s = 0.0
    for i in range(start, stop, step):
        s = s * 0.9 + x * i
    return s


def nested_loops(x, n):
    s = 0.0
    for i in range(n):
        t = x
        for j in range(i):
            t = math.sin(t) + x * j
        s += t * t
    return s


def square_plus(v, w):
    return v * v + w


def loop_calls_helper(x, n):
    s = x
    for i in range(n):
        s = square_plus(math.cos(s), x)
    return s


def inner_loop_helper(v, n):
    for k in range(n):
        v = v * 0.5 + math.sin(v)
    return v


def loop_calls_looping_helper(x, n):
    s = 0.0
    for i in range(n):
        s += inner_loop_helper(x + s * 0.1, i)
    return s


def loop_with_branch(x, n):
    s = x
    for i in range(n):
        if s > 1.0:
            s = s * 0.5
        else:
            s = s * s + 0.6
    return s


def runtime_step(x, step):
    s = 1.0
    for i in range(10, -10, step):
        s = s + x * i * s * 0.01
    return s


def constant_start(q):
    return math.cos(q)


def loop_from_a_constant_call(x):
    v = constant_start(0.3)  # a call that is never differentiated starts v
    for i in range(2):
        v = v * x
    k = 0
    while k < 2:
        v = v * x + constant_start(0.2)
        k += 1
    return v


@pytest.mark.parametrize("x", [0.7, -1.3])
def test_a_loop_starting_from_a_constant_call(x):
    # issue 13, item 11: the starting value was taken for active, a KeyError
    check_fd(loop_from_a_constant_call, x)
    _, tangent = irad.jvp(loop_from_a_constant_call, (x,), (1.0,))
    assert tangent == pytest.approx(five_point_difference(loop_from_a_constant_call, (x,), 0), rel=1e-6)


def constant_call_each_iteration(x, n):
    for i in range(n):
        x = constant_start(0.5 * i)  # x varies before the loop, not after an iteration
    k = 0
    while k < n:
        x = x + constant_start(0.1 * k)
        k += 1
    return x * x


@pytest.mark.parametrize("n", [0, 1, 3])
def test_a_loop_overwriting_a_varying_value_with_a_constant_call(n):
    # found by the fuzzer: the value the iteration yields was taken for active,
    # and reversing its never-planned call raised a KeyError
    check_fd(constant_call_each_iteration, 0.7, n)
    _, tangent = irad.jvp(constant_call_each_iteration, (0.7, n), (1.0, None))
    assert tangent == pytest.approx(five_point_difference(constant_call_each_iteration, (0.7, n), 0), rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("n", [0, 1, 4])
def test_loop_with_several_carried_variables(n):
    check_fd(several_carried, 0.3, 1.1, n)


@pytest.mark.parametrize(
    "start,stop,step", [(0, 7, 2), (10, -3, -3), (5, 5, 1), (3, 1, 1), (-4, 4, 3)]
)
def test_static_and_runtime_range_bounds(start, stop, step):
    check_fd(stepped_range, 1.3, start, stop, step)


@pytest.mark.parametrize("step", [3, -4, 25])
def test_runtime_step(step):
    check_fd(runtime_step, 0.4, step)


@pytest.mark.parametrize("n", [0, 1, 5])
def test_nested_loops(n):
    check_fd(nested_loops, 0.6, n)


def test_loop_calling_a_helper():
    check_fd(loop_calls_helper, 0.4, 6)


def test_loop_calling_a_helper_that_loops():
    check_fd(loop_calls_looping_helper, 0.4, 5)


@pytest.mark.parametrize("x", [0.3, 2.2])
def test_loop_with_a_branch_inside(x):
    check_fd(loop_with_branch, x, 7)


def test_long_loop_grows_the_tape():
    # 3000 iterations record far more than the tape's initial capacity
    check_fd(loop_with_branch, 0.3, 3000)


def test_the_tape_grows_by_one_slice_copy_on_the_python_backend():
    # irad-lower-tape marks its copy loop (irad.tape_copy), so the backend runs
    # it as one slice assignment instead of a Python loop over the slots
    from irad.backends.python.translate import compile_module

    module = irad.grad(loop_with_branch).lower(0.3, 5)
    assert "irad.tape_copy" in str(module)
    source = compile_module(module).source
    assert re.search(r"\w+\[(\w+):(\w+)\] = \w+\[\1:\2\]", source), source


# ---------------------------------------------------------------------------
# while loops, break, continue, early return
# ---------------------------------------------------------------------------


def halve_until_small(x):
    k = 0
    while x > 1.0:
        x = x * 0.5 + 0.1 * math.sin(x)
        k += 1
    return x * k


def newton_sqrt(a):
    y = a
    while abs(y * y - a) > 1e-12 * a:
        y = 0.5 * (y + a / y)
    return y


def early_return_in_loop(x, n):
    s = 0.0
    for i in range(n):
        s = s + x * (i + 1)
        if s > 3.0:
            return s * s
    return -s


def break_and_continue(x):
    s = 0.0
    for i in range(20):
        if i % 3 == 1:
            continue
        if s > 5.0:
            break
        s += math.sin(x * i) + x
    return s


def while_with_break(x):
    s = x
    n = 0
    while True:
        s = s * 1.3
        n += 1
        if s > 10.0:
            break
    return s + n


def return_in_nested_loop(x, n):
    for i in range(n):
        for j in range(n):
            if x * i * j > 2.0:
                return x * i - j
    return x


@pytest.mark.parametrize("x", [3.0, 37.0, 60.0, 0.5])
def test_while_trip_count_depends_on_input(x):
    check_fd(halve_until_small, x)


def test_while_newton_converges_to_sqrt():
    # the derivative of the converged iteration is that of sqrt
    g = irad.grad(newton_sqrt)(2.0)
    assert g == pytest.approx(0.5 / math.sqrt(2.0), rel=1e-6)


@pytest.mark.parametrize("x,n", [(1.1, 5), (0.1, 5), (2.0, 0)])
def test_early_return_from_inside_a_loop(x, n):
    check_fd(early_return_in_loop, x, n)


@pytest.mark.parametrize("x", [0.3, 0.05])
def test_break_and_continue(x):
    check_fd(break_and_continue, x)


@pytest.mark.parametrize("x", [0.5, 3.0, 20.0])
def test_while_true_with_break(x):
    check_fd(while_with_break, x)


@pytest.mark.parametrize("x", [0.3, 1.5])
def test_return_from_a_nested_loop(x):
    check_fd(return_in_nested_loop, x, 4)


# ---------------------------------------------------------------------------
# Recursion
# ---------------------------------------------------------------------------


def power_rec(x, n):
    if n == 0:
        return 1.0
    return x * power_rec(x, n - 1)


def chain_rec(x, n):
    if n <= 0:
        return x
    return math.sin(chain_rec(x, n - 1)) + 0.1 * x


def even_part(x, n):
    if n == 0:
        return x
    return odd_part(x * 1.1, n - 1) + 0.01 * x


def odd_part(x, n):
    if n == 0:
        return -x * x
    return even_part(math.cos(x), n - 1)


def tree_rec(x, n):
    if n <= 1:
        return x
    return tree_rec(x * 0.9, n - 1) * tree_rec(x * 0.8, n - 2) * 0.5 + x


def recursion_in_a_loop(x, n):
    s = 0.0
    for i in range(n):
        s += chain_rec(x + s * 0.01, i)
    return s


@pytest.mark.parametrize("n", [0, 1, 6])
def test_direct_recursion(n):
    check_fd(power_rec, 1.3, n)


@pytest.mark.parametrize("n", [0, 3, 7])
def test_mutual_recursion(n):
    check_fd(even_part, 0.4, n)


def test_tree_recursion():
    check_fd(tree_rec, 0.7, 6)


def test_recursion_inside_a_loop():
    check_fd(recursion_in_a_loop, 0.3, 5)


def test_deep_recursion():
    g = irad.grad(chain_rec)(0.5, 800)
    assert g == pytest.approx(five_point_difference(chain_rec, (0.5, 800), 0), rel=1e-6)


def test_vjp_of_a_loop():
    out, pullback = irad.vjp(loop_with_branch, 0.3, 6)
    assert out == loop_with_branch(0.3, 6)
    (dx, dn) = pullback(2.0)
    assert dn is None
    assert dx == pytest.approx(2.0 * five_point_difference(loop_with_branch, (0.3, 6), 0), rel=1e-6)
    # the residuals (the tape) can be used again
    assert pullback(1.0)[0] == pytest.approx(dx / 2.0, rel=1e-12)


@settings(max_examples=30, deadline=None)
@given(
    x=st.floats(min_value=-2.0, max_value=2.0),
    n=st.integers(min_value=0, max_value=12),
)
def test_loop_with_branches_matches_finite_differences(x, n):
    # skip points whose finite-difference stencil crosses a branch point
    def branch_path(v):
        s, path = v, []
        for _ in range(n):
            path.append(s > 1.0)
            s = s * 0.5 if s > 1.0 else s * s + 0.6
        return path

    h = 1e-3 * max(0.01, abs(x))
    if any(branch_path(x + k * h) != branch_path(x) for k in (-2, -1, 1, 2)):
        return
    g = irad.grad(loop_with_branch)(x, n)
    fd = five_point_difference(loop_with_branch, (x, n), 0)
    assert g == pytest.approx(fd, rel=1e-5, abs=1e-7)


# ---------------------------------------------------------------------------
# The IR: loops and recursion stay structured
# ---------------------------------------------------------------------------


def test_lowering_emits_scf_ops():
    text = str(lower_function(break_and_continue, signature_of(break_and_continue, (1.0,)))[0])
    assert "scf.for" in text and "scf.if" in text
    text = str(lower_function(halve_until_small, signature_of(halve_until_small, (1.0,)))[0])
    assert "scf.while" in text and "scf.condition" in text
    module, name, _, _ = lower_function(power_rec, signature_of(power_rec, (1.0, 2)))
    assert f"func.call @{name}(" in str(module)


# ---------------------------------------------------------------------------
# Forms that stay unsupported: clear errors
# ---------------------------------------------------------------------------


def loop_over_float(x):
    for v in x:
        x = x * v
    return x


def float_range(x):
    for i in range(2.0):
        x = x * 2.0
    return x


def zero_step(x):
    for i in range(0, 3, 0):
        x = x * 2.0
    return x


def defined_in_one_branch(x):
    if x > 0.0:
        y = x
    return y


def falls_off_the_end(x):
    if x > 0.0:
        return x


def loop_variable_after_loop(x):
    for i in range(3):
        x = x * 2.0
    return x * i


@pytest.mark.parametrize(
    "fn,message",
    [
        (loop_over_float, "iteration over a float (f64) value is not supported"),
        (float_range, "range() takes ints"),
        (zero_step, "step of 0"),
        (defined_in_one_branch, "'y' has no value here: it is assigned on only one path of the branch at"),
        (falls_off_the_end, "reaches its end on others"),
        (loop_variable_after_loop, "'i' has no value here: it is the variable of the loop at"),
    ],
)
def test_unsupported_forms_are_located_errors(fn, message):
    with pytest.raises(irad.UnsupportedError) as info:
        irad.grad(fn)(1.0)
    text = str(info.value)
    assert message in text
    assert "test_control_flow.py:" in text.splitlines()[0]
    assert "\n  hint: " in text


# ---------------------------------------------------------------------------
# Checkpointing: record each iteration's inputs, recompute the body
# ---------------------------------------------------------------------------


def many_residuals(x, n):
    a = x
    for i in range(n):
        a = math.sin(a) * math.cos(a) + math.exp(a * 0.1) * x
    return a


@pytest.mark.parametrize(
    "fn,args",
    [
        (many_residuals, (0.4, 6)),
        (several_carried, (0.3, 1.1, 4)),
        (loop_with_branch, (0.3, 7)),
        (loop_calls_helper, (0.4, 6)),
        (nested_loops, (0.6, 5)),
        (halve_until_small, (37.0,)),
        (break_and_continue, (0.3,)),
        (early_return_in_loop, (0.1, 5)),
        (recursion_in_a_loop, (0.3, 5)),
    ],
)
def test_checkpointed_gradients_match_finite_differences(fn, args):
    wrt = [i for i, a in enumerate(args) if isinstance(a, float)]
    grads = irad.grad(fn, argnums=tuple(wrt), checkpoint=True)(*args)
    for i, g in zip(wrt, grads):
        assert g == pytest.approx(five_point_difference(fn, args, i), rel=1e-6, abs=1e-9)


def _tape_length(fn, args, checkpoint: bool, **options) -> int:
    """How many tape slots the augmented primal fills (differentiating with
    respect to the float and float64-array arguments)."""
    return _augmented_tape(fn, args, checkpoint, **options)[1]


def _augmented_tape(fn, args, checkpoint: bool, **options) -> tuple[list, int]:
    """The tape the augmented primal leaves (a list on the Python backend, its
    length the capacity) and the end of its records."""
    from irad.backends.python.translate import compile_module
    from irad.passes.ad.differentiator import Differentiator
    from irad.pipeline import run

    module, name, _, _ = lower_function(fn, signature_of(fn, args))
    active = tuple(isinstance(a, float) or getattr(a, "dtype", None) == "float64" for a in args)
    gen = Differentiator(module, checkpoint=checkpoint, **options).reverse(name, active)
    run(module, "irad-lower-tape")
    record(module)
    for op in module.ops:
        op.sym_visibility = None
    _, tape, end = compile_module(module).function(gen.augmented)(*args)
    return tape, end


def test_a_loops_reserve_makes_room_for_the_functions_own_record():
    # the reserve before the last loop that records takes the record the
    # function pushes before it returns ([trip count, end, x]) into account:
    # the tape is grown once, to exactly the slots it needs, where that last
    # push used to double it (a copy of all the loop's records)
    for n in (200, 1000):
        tape, end = _augmented_tape(many_residuals, (0.4, n), checkpoint=False)
        assert len(tape) == end


def test_checkpointing_records_less():
    cached = _tape_length(many_residuals, (0.4, 50), checkpoint=False)
    checkpointed = _tape_length(many_residuals, (0.4, 50), checkpoint=True)
    # per iteration: the induction variable and `a`, instead of every
    # residual of the body
    assert checkpointed <= 2 * 50 + 4 < cached


def linear_loop(x, n):
    s = 0.0
    for i in range(n):
        s = s + 2.0 * x
    return s


def test_a_loop_whose_adjoint_reads_nothing_records_nothing():
    # only the loop's trip count and end position, whatever n is
    assert _tape_length(linear_loop, (1.0, 10), False) == _tape_length(linear_loop, (1.0, 1000), False)
    assert irad.grad(linear_loop)(1.0, 7) == 14.0


def scaled_helper(x, y):
    return x * math.sin(y)


def issue_loop(x, y, n):
    s = 0.0
    for i in range(n):
        s = s + scaled_helper(x, y) * i
    return s


def test_the_lean_tape_records_nothing_for_invariants_and_the_index():
    # issue 16, item 5: x, y and sin(y) do not change in the loop, i is the
    # index: with the callee inlined and the invariants hoisted, no iteration
    # records anything (only the function's own record, whatever n is)
    lean = {"inline": True, "hoist": True}
    assert _tape_length(issue_loop, (0.7, 1.3, 3), False, **lean) == _tape_length(
        issue_loop, (0.7, 1.3, 300), False, **lean
    )
    # without them, the call's three residuals, per iteration
    plain = [_tape_length(issue_loop, (0.7, 1.3, n), False) for n in (3, 6)]
    assert plain[1] - plain[0] == 3 * 3
    check_fd(issue_loop, 0.7, 1.3, 3)


def index_in_float_math(x, start, stop, step):
    s = 1.0
    for i in range(start, stop, step):
        for j in range(i % 3):
            s = s * math.cos(x * i + 0.1 * j) + 0.01 * i * j * x
    return s


def one_op_from_recorded(x, n):
    s = x
    for i in range(n):
        u = s * x
        v = u + s
        s = math.sin(v) * u + 0.5 * s
    return s


def while_with_counter(x):
    s = x
    k = 0
    while s < 10.0:
        k = k + 1
        s = s * 1.5 + 0.1 * math.sin(s * k)
    return s


@pytest.mark.parametrize(
    "fn,args",
    [
        (index_in_float_math, (0.3, 0, 7, 1)),
        (index_in_float_math, (0.3, 9, -4, -2)),
        (index_in_float_math, (0.3, 2, 11, 3)),
        (one_op_from_recorded, (0.4, 6)),
        (while_with_counter, (1.3,)),
        (issue_loop, (0.7, 1.3, 5)),
    ],
)
@pytest.mark.parametrize("checkpoint", [False, True])
def test_recomputed_residuals_match_finite_differences(fn, args, checkpoint):
    # the index, integer arithmetic on it and one-op residuals are recomputed
    # in the reversed loop, not recorded; runtime steps, negative ones too
    wrt = tuple(i for i, a in enumerate(args) if isinstance(a, float))
    grads = irad.grad(fn, argnums=wrt, checkpoint=checkpoint)(*args)
    for i, g in zip(wrt, grads):
        assert g == pytest.approx(five_point_difference(fn, args, i), rel=1e-6, abs=1e-9)


def test_recomputing_records_less():
    # u and v are one op from s and x: only s and sin(v) are recorded
    assert _tape_length(one_op_from_recorded, (0.4, 20), False) - _tape_length(
        one_op_from_recorded, (0.4, 10), False
    ) == 10 * 2


# ---------------------------------------------------------------------------
# Loops whose iterations swap or shift their carried values
# ---------------------------------------------------------------------------


def swap_loop(x, y, n):
    a = x
    b = y
    for i in range(n):
        a, b = b, a
    return a * 3.0 + b


def shift_loop(x, n):
    a = x
    b = 0.5
    for i in range(n):
        a, b = math.sin(a) + b, a * x
    return a


def swap_while(x, y):
    a = x
    b = y
    k = 0
    while k < 3:
        a, b = b * 1.5, a
        k += 1
    return a - 2.0 * b


@pytest.mark.parametrize("n", [1, 2, 5])
def test_loop_swapping_its_variables(n):
    """Each yield assigns its values at once: a swap reads the old values."""
    check_fd(swap_loop, 0.6, 0.2, n)
    value, _ = irad.value_and_grad(swap_loop, (0, 1))(0.6, 0.2, n)
    assert value == pytest.approx(swap_loop(0.6, 0.2, n))
    _, tangent = irad.jvp(swap_loop, (0.6, 0.2, n), (1.0, 0.0, None))
    assert tangent == pytest.approx(five_point_difference(swap_loop, (0.6, 0.2, n), 0))


def test_loop_shifting_its_variables():
    check_fd(shift_loop, 0.7, 5)


def test_while_swapping_its_variables():
    check_fd(swap_while, 0.4, -1.1)


def f32_loop(x):
    s = x
    for i in range(3):
        s = 1.5 * x / (s + 2.0)
    return s


def test_float32_division_in_a_loop_stays_float32():
    """A loop joining an f64 value into an f32 carried value narrows it with
    truncf (it was an extf f64 -> f32, which does not verify)."""
    import numpy as np

    x = np.float32(0.3)
    irad.lower(f32_loop, x).verify()
    irad.grad(f32_loop).lower(x).verify()
    g = irad.grad(f32_loop)(x)
    assert g == pytest.approx(five_point_difference(f32_loop, (0.3,), 0), rel=1e-4)


@pytest.mark.parametrize("backend", BACKENDS)
def test_runtime_zero_step_is_a_checked_error(backend):
    g = irad.grad(runtime_step, backend=backend)
    with pytest.raises(irad.base.errors.RuntimeCheckError, match=r"test_control_flow.py:\d+:\d+: range\(\) arg 3 must not be zero"):
        g(0.4, 0)
    assert g(0.4, -3) == pytest.approx(five_point_difference(runtime_step, (0.4, -3), 0), rel=1e-6)


# ---------------------------------------------------------------------------
# Typed records: every i64 comes back from the tape exact
# ---------------------------------------------------------------------------

_INT_RECORD = """
func.func @roundtrip(%n: i64, %k: index) -> (i64, index, index) {
  %tape, %pos = irad.tape_create
  %t, %end = irad.tape_push %tape[%pos] %n, %k : i64, index
  %n2, %k2 = irad.tape_read %t[%end] : i64, index
  func.return %n2, %k2, %end : i64, index, index
}
"""


@pytest.mark.parametrize("backend", ["python", "native"])
@pytest.mark.parametrize("n", [2**53 + 1, 2**62 + 12345, -(2**63), 2**63 - 1, -(2**60) - 7, 0, -1])
def test_integers_on_the_tape_come_back_exact(backend, n):
    # f64 slots hold ints exactly only below 2**53: an i64 takes two, its high
    # and low 32 bits (an i64 converted to f64 and back would lose the low bits)
    from xdsl.parser import Parser

    from irad.backends import check_backend
    from irad.backends.native import compile as native
    from irad.ir.dialect import make_context
    from irad.pipeline import run

    if backend == "native" and native.unavailable_reason() is not None:
        pytest.skip(native.unavailable_reason())
    module = Parser(make_context(), _INT_RECORD).parse_module()
    run(module, "irad-lower-tape")
    record(module)
    got = check_backend(backend).compile(module).function("roundtrip")(n, 12)
    assert tuple(int(v) for v in got) == (n, 12, 3)
