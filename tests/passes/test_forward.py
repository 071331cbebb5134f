"""Forward mode and higher order: jvp, jacfwd, jacrev, hessian, frule,
grad of grad, checked against finite differences and closed forms."""

import math

import pytest

import irad
from irad.testing import central_difference
from tests import programs
from tests import rule_programs as P


def flat(nested):
    """Nested tuples, flattened (pytest.approx compares flat sequences)."""
    if isinstance(nested, tuple):
        return [x for item in nested for x in flat(item)]
    return [nested]


def fd(f, args, i, cts=(1.0,)):
    return central_difference(f, args, i, list(cts))


def smooth(x, y):
    return math.sin(x) * y**3 + math.exp(-x * y) + math.hypot(x, y)


def branchy(x, y):
    a = x * y if x > y else x + math.sinh(y)
    return a * a + (math.log1p(x * x) if a > 0.0 else math.atan2(x, y))


def vector(x, y, n):
    return x * y * n, math.exp(x) + y, n + 1, math.tanh(x - y * y)


def calls_helpers(x, y):
    return programs.uses_helper(x, y) * programs.twice(x)


POINTS = [(0.7, 1.3), (-1.1, 0.4), (2.0, -0.5), (0.3, 0.35)]  # away from the kink x == y


@pytest.mark.parametrize("f", [smooth, branchy, calls_helpers], ids=lambda f: f.__name__)
@pytest.mark.parametrize("point", POINTS)
def test_jvp_matches_finite_differences(f, point):
    for direction in [(1.0, 0.0), (0.0, 1.0), (0.6, -1.7)]:
        out, tangent = irad.jvp(f, point, direction)
        assert out == pytest.approx(f(*point), rel=1e-14)
        expected = sum(d * fd(f, point, i) for i, d in enumerate(direction))
        assert tangent == pytest.approx(expected, rel=1e-6, abs=1e-8)


def test_jvp_with_argnums_and_int_arguments():
    out, tangent = irad.jvp(vector, (1.5, 0.5, 3), (2.0,), argnums=1)
    assert out == pytest.approx(vector(1.5, 0.5, 3))
    assert tangent == pytest.approx((2.0 * 1.5 * 3, 2.0, None, 2.0 * -2 * 0.5 * (1 - math.tanh(1.5 - 0.25) ** 2)))
    _, t = irad.jvp(vector, (1.5, 0.5, 3), (1.0, 0.0, None))
    assert t[2] is None
    with pytest.raises(irad.IradError, match="int \\(i64\\), not a float: it must be None"):
        irad.jvp(vector, (1.5, 0.5, 3), (1.0, 0.0, 1.0))
    with pytest.raises(irad.IradError, match="one tangent per primal"):
        irad.jvp(vector, (1.5, 0.5, 3), (1.0,))


@pytest.mark.parametrize("point", POINTS)
def test_jacobians_of_a_vector_function(point):
    x, y = point
    f = lambda x, y: vector(x, y, 2)[:2] + vector(x, y, 2)[3:]  # noqa: E731 (plain Python, for FD)
    expected = tuple(
        tuple(central_difference(lambda *a: f(*a)[k], (x, y), i, [1.0]) for i in range(2))
        for k in range(3)
    )

    def floats(x, y):
        a, b, _, d = vector(x, y, 2)
        return a, b, d

    for jac in (irad.jacfwd, irad.jacrev):
        got = jac(floats, argnums=(0, 1))(x, y)
        assert len(got) == 3
        for row, want in zip(got, expected):
            assert row == pytest.approx(want, rel=1e-6, abs=1e-8)


def test_jacobian_structure_follows_argnums():
    assert irad.jacfwd(smooth)(0.7, 1.3) == pytest.approx(fd(smooth, (0.7, 1.3), 0), rel=1e-6)
    rev = irad.jacrev(smooth, argnums=(1, 0))(0.7, 1.3)
    assert rev == pytest.approx((fd(smooth, (0.7, 1.3), 1), fd(smooth, (0.7, 1.3), 0)), rel=1e-6)


def test_jacobian_needs_float_outputs():
    with pytest.raises(irad.IradError, match="must return floats"):
        irad.jacfwd(vector)(1.0, 2.0, 3)


def closed_form(x, y):
    return x**3 * y + math.exp(x * y)


def closed_form_hessian(x, y):
    e = math.exp(x * y)
    return ((6 * x * y + y * y * e, 3 * x * x + e + x * y * e), (3 * x * x + e + x * y * e, x * x * e))


@pytest.mark.parametrize("point", POINTS)
def test_hessian_closed_form(point):
    assert flat(irad.hessian(closed_form, (0, 1))(*point)) == pytest.approx(flat(closed_form_hessian(*point)), rel=1e-12)
    assert irad.hessian(closed_form)(*point) == pytest.approx(closed_form_hessian(*point)[0][0], rel=1e-12)


@pytest.mark.parametrize("f", [smooth, branchy, calls_helpers], ids=lambda f: f.__name__)
def test_hessian_against_finite_differences_of_the_gradient(f):
    point = (0.7, 1.3)
    h = irad.hessian(f, (0, 1))(*point)
    g = irad.grad(f, (0, 1))
    for i in range(2):
        for j in range(2):
            want = central_difference(lambda *a: g(*a)[i], point, j, [1.0])
            assert h[i][j] == pytest.approx(want, rel=1e-5, abs=1e-7)
    assert h[0][1] == pytest.approx(h[1][0], rel=1e-12)


def test_reverse_over_reverse_and_mixed_orders():
    x, y = 0.4, 1.7
    want = closed_form_hessian(x, y)
    assert irad.grad(irad.grad(closed_form))(x, y) == pytest.approx(want[0][0], rel=1e-12)
    assert irad.grad(irad.grad(closed_form), argnums=1)(x, y) == pytest.approx(want[0][1], rel=1e-12)
    assert irad.jacrev(irad.grad(closed_form, 1), (0, 1))(x, y) == pytest.approx(want[1], rel=1e-12)
    third = irad.grad(irad.grad(irad.grad(closed_form)))(x, y)
    assert third == pytest.approx(6 * y + y**3 * math.exp(x * y), rel=1e-10)


def uses_gradient_inside(x):
    return irad.grad(closed_form)(x, 2.0) * x


def test_programs_may_call_derivatives():
    x = 0.3
    # d/dx [x * d/dx closed_form(x, 2)]
    inner = 3 * x * x * 2 + 2 * math.exp(2 * x)
    outer = x * (6 * x * 2 + 4 * math.exp(2 * x)) + inner
    assert uses_gradient_inside(x) == pytest.approx(x * inner)
    assert irad.grad(uses_gradient_inside)(x) == pytest.approx(outer, rel=1e-12)


def test_metadata_of_second_order_code(monkeypatch):
    from irad.passes import pipelines

    monkeypatch.setattr(pipelines, "optimise_passes", lambda options: ())  # keep the generated functions
    monkeypatch.setattr(irad.compiled, "_CACHE", {})  # not a switch of the cache key: compiled afresh
    module = irad.grad(irad.grad(closed_form)).lower(0.4, 1.7)
    from xdsl.dialects import func

    orders = {}
    for fn in module.ops:
        if isinstance(fn, func.FuncOp) and "irad.role" in fn.attributes:
            assert fn.attributes["irad.primal"].root_reference.data == "closed_form"
            orders[fn.sym_name.data] = fn.attributes["irad.order"].value.data
    # generated from generated code: one order up, still naming the original primal
    assert orders["closed_form.augmented.dc"] == 1
    assert orders["closed_form.augmented.dc.augmented.dc"] == 2
    assert orders["closed_form.grad.grad"] == 2
    from irad.frontend.transformations import Transformation
    from irad.passes.pipelines import Options
    from irad.pipeline import transformation_module
    from xdsl.dialects.builtin import f64

    jvp_module, *_ = transformation_module(Transformation("jacfwd", irad.grad(closed_form)), (f64, f64), Options(inline=False))
    derived = {
        fn.sym_name.data: fn.attributes["irad.derived_from"].root_reference.data
        for fn in jvp_module.ops
        if fn.attributes.get("irad.role") is not None and fn.attributes["irad.role"].data == "jvp"
    }
    assert derived and all(fn.startswith(source) for fn, source in derived.items()), derived


# ---- frule ----------------------------------------------------------------------------


def test_frule_is_inlined(rule_table):
    irad.frule(P.cube)(P.cube_frule_scaled)
    _, t = irad.jvp(P.uses_cube, (1.5, 0.5), (1.0, 0.0))
    assert t == pytest.approx(30.0 * 1.5**2 * 0.5)  # the (wrong, tenfold) rule fired
    # reverse mode is not affected by a forward rule
    assert irad.grad(P.uses_cube)(1.5, 0.5) == pytest.approx(3 * 1.5**2 * 0.5)
    assert "@cube.jvp" not in str(irad.jacfwd(P.uses_cube).lower(1.5, 0.5))


def test_correct_frule_and_int_arguments(rule_table):
    irad.frule(P.scaled)(P.scaled_frule)
    for args in [(1.5, 3), (1.5, 3.0)]:
        _, t = irad.jvp(P.uses_scaled, args, (1.0, None if isinstance(args[1], int) else 0.5))
        want = fd(P.uses_scaled, args, 0) + (0.5 * fd(P.uses_scaled, args, 1) if isinstance(args[1], float) else 0.0)
        assert t == pytest.approx(want, rel=1e-6)


def test_frule_declines_and_opt_out(rule_table):
    irad.frule(P.cube)(P.cube_frule_declines_for_ints)
    irad.opt_out(P.cube, types=(float,), mode="forward")
    irad.rrule(P.cube)(P.cube_rule_scaled)
    _, t = irad.jvp(P.cube, (2.0,), (1.0,))
    assert t == pytest.approx(12.0)  # forward: opted out, so differentiated
    assert irad.grad(P.cube)(2.0) == pytest.approx(120.0)  # reverse: the rrule still applies


def test_frule_errors(rule_table):
    irad.frule(P.cube)(P.cube_frule_bad)
    with pytest.raises(irad.IradError, match=r"frule cube_frule_bad returns 2 tangents for 1 results") as err:
        irad.jvp(P.uses_cube, (1.5, 0.5), (1.0, 0.0))
    assert "rule_programs.py:" in str(err.value)


def test_hessian_of_a_program_with_user_rules(rule_table):
    irad.rrule(P.cube)(P.cube_rule)
    x, y = 0.8, -1.3
    # uses_cube = x^3 y + y^3
    want = [6 * x * y, 3 * x * x, 3 * x * x, 6 * y]
    assert flat(irad.hessian(P.uses_cube, (0, 1))(x, y)) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("max_order, second", [(None, 870.0), (1, 60.0)])
def test_rrule_declines_beyond_max_order(rule_table, max_order, second):
    # a tenfold rule whose pullback reads the primal value: d/dx [30 y / x]
    # = 30 (y' x - y) / x^2, with y' from the rule again (30 x^2) or from
    # cube's body (3 x^2) once the rule declines at order 2
    irad.rrule(P.cube, max_order=max_order)(P.cube_rule_from_value)
    x = 2.0
    assert irad.grad(P.cube)(x) == pytest.approx(30 * x * x)
    assert irad.grad(irad.grad(P.cube))(x) == pytest.approx(second * x)


@pytest.mark.parametrize("x", [0.0, -3.0, 2.5])
def test_builtin_frules_exact_at_kinks(x):
    from irad import numerics

    assert irad.jvp(numerics.softplus, (x,), (1.0,))[1] == pytest.approx(irad.grad(numerics.softplus)(x), rel=1e-15)
    assert irad.jvp(numerics.softplus, (0.0,), (1.0,))[1] == 0.5
    _, t = irad.jvp(numerics.logaddexp, (x, x), (1.0, 0.0))
    assert t == 0.5
    _, t = irad.jvp(math.hypot, (3.0, x + 4.0), (0.5, -1.0))
    assert t == pytest.approx(fd(math.hypot, (3.0, x + 4.0), 0) * 0.5 - fd(math.hypot, (3.0, x + 4.0), 1), rel=1e-6)


# ---- control flow: forward mode, and Hessians through the reverse-mode tape ------------
from tests.passes import test_control_flow as CF  # noqa: E402  (programs live in that file)

CONTROL_FLOW = [
    (CF.piecewise, (1.7,)),
    (CF.piecewise, (0.4,)),
    (CF.elif_chain, (-0.9, 1.3)),
    (CF.several_carried, (0.7, 1.1, 5)),
    (CF.nested_loops, (0.3, 4)),
    (CF.loop_calls_looping_helper, (0.45, 3)),
    (CF.loop_with_branch, (0.8, 6)),
    (CF.halve_until_small, (37.0,)),
    (CF.newton_sqrt, (2.5,)),
    (CF.early_return_in_loop, (0.6, 7)),
    (CF.break_and_continue, (0.35,)),
    (CF.while_with_break, (0.9,)),
    (CF.return_in_nested_loop, (0.7, 4)),
    (CF.power_rec, (1.1, 5)),
    (CF.even_part, (0.9, 6)),
    (CF.tree_rec, (0.8, 4)),
    (CF.recursion_in_a_loop, (0.6, 3)),
]


def _floats(args):
    return [i for i, a in enumerate(args) if isinstance(a, float)]


@pytest.mark.parametrize("f, args", CONTROL_FLOW, ids=lambda v: getattr(v, "__name__", ""))
def test_jvp_of_control_flow(f, args):
    direction = [0.7 if isinstance(a, float) else None for a in args]
    _, tangent = irad.jvp(f, args, direction)
    expected = sum(0.7 * fd(f, args, i) for i in _floats(args))
    assert tangent == pytest.approx(expected, rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("f, args", CONTROL_FLOW, ids=lambda v: getattr(v, "__name__", ""))
def test_hessian_of_control_flow(f, args):
    """Forward over reverse, through the tape of loops and recursion."""
    wrt = tuple(_floats(args))
    h = irad.hessian(f, wrt)(*args)
    g = irad.grad(f, wrt)
    rows = h if isinstance(h, tuple) else (h,)
    for i, row in enumerate(rows):
        row = row if isinstance(row, tuple) else (row,)
        for j, value in zip(wrt, row):
            want = central_difference(lambda *a: g(*a)[i], args, j, [1.0])
            assert value == pytest.approx(want, rel=1e-5, abs=1e-6)


def test_reverse_over_a_lowered_tape_is_refused():
    """Reverse mode follows the tape ops (tests/passes/test_reverse_over_reverse.py),
    not the memref code irad-lower-tape makes of them: differentiating that is an
    error, never a silent zero."""
    from xdsl.dialects.builtin import f64, i64

    from irad.passes.ad.differentiator import Differentiator
    from irad.pipeline import gradient_module, run

    module, entry, *_ = gradient_module(CF.power_rec, (f64, i64), (0,), False, inline=False)
    run(module, "irad-lower-tape")
    with pytest.raises(irad.DifferentiationError, match="cannot follow derivatives through memory") as err:
        Differentiator(module).reverse(entry, (True, False))
    assert "irad.hessian" in str(err.value)


def _functions(module):
    from xdsl.dialects import func

    return [op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)]


def nested(x, y):
    return smooth(x, y) * calls_helpers(y, x)


@pytest.mark.parametrize("derivative", [
    lambda f: irad.grad(irad.grad(f)),
    lambda f: irad.hessian(f, (0, 1)),
    lambda f: irad.jacrev(irad.grad(f, 1), (0, 1)),
], ids=["grad-grad", "hessian", "jacrev-grad"])
def test_order_two_code_is_inlined_completely(derivative):
    """At order 2 every generated function of a non-recursive call tree is inlined
    into the entry, as at order 1 (irad.derived_from keeps the nodes apart)."""
    module = derivative(nested).lower(0.7, 1.3)
    assert len(_functions(module)) == 1, _functions(module)


def test_order_two_recursion_stays_calls():
    module = irad.hessian(CF.power_rec).lower(1.1, 5)
    names = _functions(module)
    assert len(names) > 1 and any(".tape." in n for n in names)
    assert irad.hessian(CF.power_rec)(1.1, 5) == pytest.approx(20 * 1.1**3, rel=1e-12)


def pow_of_args(x, y):
    return x ** y


def pow_runtime_int(x, n):
    return x ** n


def abs_times(x):
    return abs(x) * x + math.fabs(x - 2.0) * x * x


def test_inactive_exponent_gives_no_nan_at_order_two():
    """A residual that does not depend on x has no tangent, so d(log x) at x < 0
    (NaN) is never multiplied in (0 * NaN)."""
    assert irad.hessian(pow_of_args, 0)(-2.0, 2.0) == pytest.approx(2.0)
    assert irad.hessian(pow_runtime_int)(-2.0, 3) == pytest.approx(-12.0)
    assert irad.jvp(irad.grad(pow_runtime_int), (-2.0, 3), (1.0,), argnums=0)[1] == pytest.approx(-12.0)


@pytest.mark.parametrize("x", [0.5, -1.5, 3.0])
def test_second_derivative_through_abs(x):
    """abs's adjoint uses copysign, which second-order code differentiates."""
    # d2/dx2 [|x| x + |x - 2| x^2] = 2 sign(x) + sign(x - 2) (6x - 4)
    want = 2 * math.copysign(1, x) + math.copysign(1, x - 2) * (6 * x - 4)
    assert irad.grad(irad.grad(abs_times))(x) == pytest.approx(want, rel=1e-12)
    assert irad.hessian(abs_times)(x) == pytest.approx(want, rel=1e-12)


def test_jvp_wants_tuples():
    with pytest.raises(irad.IradError, match=r"takes its primals as a tuple.*\n.*\n  hint: irad.jvp\(f, \(x,\), \(dx,\)\)"):
        irad.jvp(smooth, 1.0, 1.0)
