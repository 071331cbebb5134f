"""The rule table: Python rrules, signatures, opt-out, declining,
non-differentiable values, cache soundness, validation, checker and report.

Gradients are checked against central finite differences or closed forms.
"""

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irad
from irad.testing import central_difference, check_grad, check_rrule
from tests import rule_programs as P


def fd(f, *args, i=0):
    return central_difference(f, args, i, [1.0])


# ---- Python rules -----------------------------------------------------------------
def test_rrule_is_inlined_and_used(rule_table):
    irad.rrule(P.cube)(P.cube_rule_scaled)
    g = irad.grad(P.uses_cube, argnums=(0, 1))(1.5, 0.5)
    # x: the wrong (tenfold) rule fired; y: cube(y) goes through the same rule
    assert g[0] == pytest.approx(30.0 * 1.5**2 * 0.5)
    assert g[1] == pytest.approx(1.5**3 + 30.0 * 0.5**2)
    module = irad.grad(P.uses_cube, argnums=(0, 1)).lower(1.5, 0.5)
    assert "@cube.pullback" not in str(module)  # nothing generated for the callee


def test_correct_rrule_matches_finite_differences(rule_table):
    irad.rrule(P.cube)(P.cube_rule)
    check_rrule(P.cube, 1.3)
    check_grad(P.uses_cube, 1.3, -0.7)


def test_rrule_for_a_library_function_replaces_its_op_adjoint(rule_table):
    x = 0.4
    assert irad.grad(P.uses_sin)(x) == pytest.approx(math.cos(x) * x + math.sin(x))
    irad.rrule(math.sin)(P.sin_rule)
    assert irad.grad(P.uses_sin)(x) == pytest.approx(2 * math.cos(x) * x + math.sin(x))


def test_rule_for_the_requested_function_itself(rule_table):
    irad.rrule(P.cube)(P.cube_rule_scaled)
    assert irad.grad(P.cube)(2.0) == pytest.approx(120.0)


def test_multiple_outputs_and_none_cotangents(rule_table):
    irad.rrule(P.two_outputs)(P.two_outputs_rule)
    x, y = 0.7, 1.9
    gx, gy = irad.grad(P.uses_two_outputs, argnums=(0, 1))(x, y)
    # d/dx (x*y)*(x+y) via the rule: da = b, db = a -> b*y + a
    assert gx == pytest.approx((x + y) * y + x * y)
    assert gy == 0.0  # the rule says y's cotangent is zero
    pullback = str(irad.grad(P.uses_two_outputs, argnums=1).lower(x, y))
    assert "arith.mulf" not in pullback.split("@uses_two_outputs.pullback")[-1]


def test_rule_helpers_are_copied_into_the_module(rule_table, monkeypatch):
    from irad.passes import pipelines

    irad.rrule(P.cube)(P.helper_rule)
    check_grad(P.uses_cube, 0.8, 1.1)
    monkeypatch.setattr(pipelines, "optimise_passes", lambda options: ())  # the inliner would inline it
    assert "func.call @tests.rule_programs.tanh_helper" in str(irad.grad(P.uses_cube).lower(0.8, 1.1))


@pytest.mark.parametrize("target, args", [
    ("softplus", (0.0,)), ("softplus", (-30.0,)), ("sigmoid", (2.5,)),
    ("logaddexp", (0.3, 0.3)), ("logaddexp", (-2.0, 5.0)), ("hypot", (3.0, -4.0)),
])
def test_builtin_rules_pass_the_checker(target, args):
    from irad import numerics

    fn = math.hypot if target == "hypot" else getattr(numerics, target)
    check_rrule(fn, *args)


# ---- signatures ------------------------------------------------------------------------
def test_most_specific_signature_wins(rule_table):
    irad.rrule(P.cube)(P.cube_rule)
    irad.rrule(P.cube, types=(float,))(P.cube_rule_scaled)
    assert irad.grad(P.cube)(1.0) == pytest.approx(30.0)  # the (float,) entry


def test_typed_rule_only_matches_its_types(rule_table):
    irad.rrule(P.scaled, types=(float, int))(P.scaled_declines_for_floats)
    # (float, float) does not match the entry: the callee is differentiated
    assert irad.grad(P.uses_scaled)(1.5, 3.0) == pytest.approx(5.0)
    report = irad.explain(P.uses_scaled, 1.5, 3.0)
    assert [d.kind for d in report.decisions if d.callee.startswith("scaled")] == ["no-rule", "no-rule"]


def test_ambiguous_match_names_both_entries(rule_table):
    irad.rrule(P.scaled, types=(float, None))(P.scaled_rule)
    irad.rrule(P.scaled, types=(None, float))(P.scaled_rule)
    with pytest.raises(irad.DifferentiationError, match="ambiguous") as err:
        irad.grad(P.uses_scaled)(1.0, 2.0)
    assert str(err.value).count("rule_programs.py") >= 2


def test_bad_types_are_rejected_when_registering():
    with pytest.raises(TypeError, match="rule signature"):
        irad.rrule(P.cube, types=(str,))
    with pytest.raises(TypeError, match="one entry per argument"):
        irad.rrule(P.cube, types=float)


# ---- opting out and declining ----------------------------------------------------------
def test_opt_out_differentiates_the_callee(rule_table):
    irad.rrule(P.cube)(P.cube_rule_scaled)
    irad.opt_out(P.cube, types=(float,))
    assert irad.grad(P.cube)(2.0) == pytest.approx(12.0)
    kinds = {d.kind for d in irad.explain(P.uses_cube, 2.0, 1.0).decisions if d.callee == "cube"}
    assert kinds == {"opted-out"}


def test_declining_rule_falls_back_to_the_callee(rule_table):
    irad.rrule(P.scaled)(P.scaled_declines_for_floats)
    # k is a float: the rule declines, and the body is differentiated (no runtime branch)
    assert irad.grad(P.uses_scaled)(1.5, 3.0) == pytest.approx(5.0)
    kinds = [d.kind for d in irad.explain(P.uses_scaled, 1.5, 3.0).decisions if d.callee.startswith("scaled")]
    assert kinds == ["declined", "declined"]
    module = str(irad.grad(P.uses_scaled).lower(1.5, 3.0))
    assert "scf.if" not in module


def test_static_isinstance_picks_the_pullback_at_lowering(rule_table):
    irad.rrule(P.scaled)(P.scaled_rule)
    check_rrule(P.scaled, 1.5, 3)
    check_rrule(P.scaled, 1.5, 3.0)


# ---- non-differentiable values -----------------------------------------------------------
def test_stop_gradient(rule_table):
    x, y = 1.5, 2.0
    # d/dx [sg(x*y) * x + y] = x*y ; d/dy = 1
    assert irad.grad(P.stopped, argnums=(0, 1))(x, y) == pytest.approx((x * y, 1.0))


def test_non_differentiable_function_gets_no_code(rule_table):
    irad.non_differentiable(P.cube)
    assert irad.grad(P.uses_cube, argnums=(0, 1))(2.0, 3.0) == pytest.approx((0.0, 8.0))
    text = str(irad.grad(P.uses_cube, argnums=0).lower(2.0, 3.0))
    assert "@cube.pullback" not in text and "@cube.augmented" not in text


def test_non_differentiable_as_decorator(rule_table):
    def marked(x):
        return x

    assert irad.non_differentiable(marked) is marked
    assert [r.kind for r in irad.rules.list_rules(marked)] == ["non-differentiable"]


def test_gradient_of_a_non_differentiable_function_is_an_error(rule_table):
    irad.non_differentiable(P.cube)
    with pytest.raises(irad.DifferentiationError, match="non-differentiable"):
        irad.grad(P.cube)(1.0)


# ---- soundness: the cache follows the table ---------------------------------------------
@pytest.mark.parametrize("edit", ["register", "replace", "remove", "opt_out", "non_differentiable"])
def test_table_edits_recompile(rule_table, edit):
    g = irad.grad(P.uses_cube)
    irad.rrule(P.cube)(P.cube_rule)
    true = g(1.5, 2.0)
    assert true == pytest.approx(3 * 1.5**2 * 2.0)
    if edit == "register":
        irad.rrule(P.cube, types=(float,))(P.cube_rule_scaled)
        expected = 30 * 1.5**2 * 2.0
    elif edit == "replace":
        irad.rrule(P.cube)(P.cube_rule_scaled)
        expected = 30 * 1.5**2 * 2.0
    elif edit == "remove":
        irad.rrule(P.cube)(P.cube_rule_scaled)
        assert g(1.5, 2.0) == pytest.approx(30 * 1.5**2 * 2.0)
        irad.rules.remove(P.cube)
        expected = true
    elif edit == "opt_out":
        irad.rrule(P.cube)(P.cube_rule_scaled)
        assert g(1.5, 2.0) == pytest.approx(30 * 1.5**2 * 2.0)
        irad.opt_out(P.cube, types=(float,))
        expected = true
    else:
        irad.non_differentiable(P.cube, types=(float,))
        expected = 0.0
    assert g(1.5, 2.0) == pytest.approx(expected)


def test_rules_can_be_listed_and_removed(rule_table):
    irad.rrule(P.cube)(P.cube_rule)
    entries = irad.rules.list_rules(P.cube)
    assert len(entries) == 1 and entries[0].kind == "rrule"
    assert "rule_programs.py" in entries[0].origin
    targets = {r.target for r in irad.rules.list_rules()}
    assert {"irad.numerics.softplus", "irad.numerics.hypot", "irad.markers.stop_gradient"} <= targets
    irad.rules.remove(P.cube)
    assert irad.rules.list_rules(P.cube) == []
    with pytest.raises(KeyError, match="no entry"):
        irad.rules.remove(P.cube)


# ---- validation ------------------------------------------------------------------------
@pytest.mark.parametrize("rule, target, args, message", [
    (P.wrong_count_rule, P.cube, (1.0, 2.0), r"returns 2 cotangents, expected one per argument of the primal \(1: x\)"),
    (P.int_cotangent_rule, P.scaled, (1.0, 3.0), r"rule int_cotangent_rule: the pullback returns a cotangent for argument 1 \('n', int \(i64\)\); it is not a float"),
    (P.wrong_type_rule, P.cube, (1.0, 2.0), r"rule wrong_type_rule: the pullback returns a cotangent for argument 0 \('x', float \(f64\)\) that is int \(i64\), expected float"),
    (P.bad_shape_rule, P.cube, (1.0, 2.0), r"must return `\(y, pullback\)`"),
])
def test_bad_rules_are_reported_with_their_location(rule_table, rule, target, args, message):
    irad.rrule(target)(rule)
    program = P.uses_scaled if target is P.scaled else P.uses_cube
    args = (1.0, 3) if target is P.scaled else args
    with pytest.raises(irad.IradError, match=message) as err:
        irad.grad(program)(*args)
    assert "rule_programs.py:" in str(err.value)
    assert "Traceback" not in str(err.value)


def test_function_without_source_and_no_rule():
    from tests import rule_programs_c as C

    with pytest.raises(irad.UnsupportedError, match="irad.rrule.*irad.non_differentiable") as err:
        irad.grad(C.uses_builtin)(1.0)
    assert "rule_programs_c.py:" in str(err.value)


# ---- the checker -----------------------------------------------------------------------
def test_check_rrule_reports_a_wrong_rule(rule_table):
    irad.rrule(P.cube)(P.cube_rule_scaled)
    with pytest.raises(AssertionError, match="cotangent of arg 0.*differs"):
        check_rrule(P.cube, 1.2)


def test_check_rrule_needs_a_rule():
    with pytest.raises(AssertionError, match="no rrule"):
        check_rrule(P.cube, 1.2)


def test_check_grad(rule_table):
    check_grad(P.uses_cube, 0.3, 0.9)
    irad.rrule(P.cube)(P.cube_rule_scaled)
    with pytest.raises(AssertionError, match="d/d arg 0"):
        check_grad(P.uses_cube, 0.3, 0.9)


# ---- the decision report ---------------------------------------------------------------
def test_explain_reports_every_call(rule_table):
    irad.rrule(P.cube)(P.cube_rule)
    report = irad.explain(P.stopped, 1.0, 2.0)
    kinds = {d.target: d.kind for d in report.decisions}
    assert kinds["irad.markers.stop_gradient"] == "non-differentiable"
    text = str(irad.explain(P.uses_cube, 1.0, 2.0))
    assert "rule inlined" in text and "rule_programs.py" in text
    assert irad.explain(P.uses_hypot, 3.0, 4.0).decisions[-1].kind == "rule"


def test_explain_of_a_transformation_names_the_function_to_give():
    with pytest.raises(irad.IradError, match=r"explain takes the function itself, not grad\(uses_hypot\)"):
        irad.explain(irad.grad(P.uses_hypot), 3.0, 4.0)


def test_explain_in_forward_mode_reports_the_frules(rule_table):
    report = irad.explain(P.uses_hypot, 3.0, 4.0, mode="forward")
    assert report.mode == "forward" and str(report).startswith("irad explain: uses_hypot (forward mode)")
    (hypot,) = [d for d in report.decisions if d.callee == "irad.numerics.hypot"]
    assert hypot.kind == "rule" and hypot.rule.startswith("frule for irad.numerics.hypot")
    # only an rrule: forward mode differentiates the callee
    irad.rrule(P.cube)(P.cube_rule)
    kinds = {d.kind for d in irad.explain(P.uses_cube, 1.0, 2.0, mode="forward").decisions if d.callee == "cube"}
    assert kinds == {"no-rule"}
    stopped = {d.target: d for d in irad.explain(P.stopped, 1.0, 2.0, mode="forward").decisions}
    assert stopped["irad.markers.stop_gradient"].kind == "non-differentiable"
    assert "zero tangent" in stopped["irad.markers.stop_gradient"].describe()
    # y alone: no tangent reaches cube(x), which stays a plain call
    only_y = irad.explain(P.uses_cube, 1.0, 2.0, argnums=1, mode="forward").decisions
    assert [d.kind for d in only_y if d.callee == "cube"] == ["inactive", "no-rule"]


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_explain_at_order_two_reports_both_orders(rule_table, mode):
    # a rule that declines at order 2: the second differentiation sees the body
    irad.rrule(P.cube, max_order=1)(P.cube_rule)
    report = irad.explain(P.uses_cube, 1.5, 0.5, order=2, mode=mode)
    assert report.order == 2 and report.mode == mode
    assert report.gradient == irad.explain(P.uses_cube, 1.5, 0.5)
    assert [d.kind for d in report.gradient.decisions if d.callee == "cube"] == ["rule", "rule"]
    second = {d.callee: d.kind for d in report.decisions}
    assert second["uses_cube.grad"] == "no-rule"  # the gradient itself
    assert second["uses_cube.augmented.dd"] == second["uses_cube.pullback.dd"] == "no-rule"
    # reverse: the rrule is asked at order 2 and declines; forward: there is no frule
    assert second["cube"] == ("declined" if mode == "reverse" else "no-rule")
    text = str(report)
    assert text.splitlines()[0] == f"irad explain: uses_cube, order 2 ({mode} over reverse)"
    assert "  order 1, reverse mode: the gradient" in text
    assert f"  order 2, {mode} mode: the gradient differentiated" in text
    # and what it explains is what the API computes (against the closed form)
    second_derivative = irad.grad(irad.grad(P.uses_cube)) if mode == "reverse" else irad.hessian(P.uses_cube)
    assert second_derivative(1.5, 0.5) == pytest.approx(6 * 1.5 * 0.5)  # d2/dx2 of x^3 y


def test_explain_at_order_two_through_a_tape():
    from tests.passes import test_control_flow as cf

    for mode in ("reverse", "forward"):
        report = irad.explain(cf.loop_calls_helper, 0.4, 3, order=2, mode=mode)
        assert {d.kind for d in report.decisions} == {"no-rule"}
    # reverse over reverse reaches the loop's tape-threading generated functions
    text = str(irad.explain(cf.loop_calls_helper, 0.4, 3, order=2))
    assert "@loop_calls_helper.pullback.dc: call to @loop_calls_helper.pullback.tape.dc" in text
    with pytest.raises(irad.IradError, match="mode must be 'reverse' or 'forward'"):
        irad.explain(P.uses_cube, 1.0, 2.0, mode="sideways")
    with pytest.raises(irad.IradError, match="order must be 1 or 2"):
        irad.explain(P.uses_cube, 1.0, 2.0, order=3)


def test_explain_cli_modes_and_orders(capsys):
    from irad.cli import main

    main(["explain", f"{P.__file__}:uses_hypot", "3.0", "4.0", "--mode", "forward"])
    out = capsys.readouterr().out
    assert "(forward mode)" in out and "frule for irad.numerics.hypot" in out
    main(["explain", f"{P.__file__}:uses_hypot", "3.0", "4.0", "--order", "2", "--mode", "forward"])
    out = capsys.readouterr().out
    assert "order 2 (forward over reverse)" in out and "@uses_hypot.grad itself" in out


def test_explain_cli(capsys):
    from irad.cli import main

    main(["explain", f"{P.__file__}:uses_hypot", "3.0", "4.0"])
    out = capsys.readouterr().out
    assert "call to @irad.numerics.hypot" in out and "rule inlined" in out


def test_explain_cli_errors(capsys):
    from irad.cli import main

    with pytest.raises(SystemExit):
        main(["explain", f"{P.__file__}:missing", "1.0"])
    assert "defines no function 'missing'" in capsys.readouterr().err


def test_rule_for_a_function_without_source(rule_table):
    """A C function with a rule: irad calls it as it is and inlines the rule."""
    import operator

    from tests import rule_programs_c as C

    @irad.rrule(operator.mul)
    def _(a, b):
        y = operator.mul(a, b)

        def pullback(dy):
            return dy * b, dy * a

        return y, pullback

    assert irad.grad(C.uses_erf_like)(1.5) == pytest.approx(4.0)
    irad.rules.remove(operator.mul)
    irad.non_differentiable(operator.mul)
    assert irad.grad(C.uses_erf_like)(1.5) == 1.0


# ---- properties ------------------------------------------------------------------------

finite = st.floats(min_value=-40.0, max_value=40.0, allow_nan=False)


@settings(deadline=None, derandomize=True, database=None, max_examples=60)
@given(x=finite, y=finite, dy=st.floats(min_value=-3.0, max_value=3.0))
def test_builtin_rules_against_finite_differences(x, y, dy):
    from irad import numerics

    check_rrule(numerics.softplus, x, cotangent=dy, rtol=1e-5, atol=1e-7)
    check_rrule(numerics.sigmoid, x, cotangent=dy, rtol=1e-5, atol=1e-7)
    check_rrule(numerics.logaddexp, x, y, cotangent=dy, rtol=1e-5, atol=1e-7)
    if abs(x) + abs(y) > 1e-3:  # hypot has a cone point at the origin
        check_rrule(math.hypot, x, y, cotangent=dy, rtol=1e-5, atol=1e-7)


@settings(
    deadline=None, derandomize=True, database=None, max_examples=40,
    suppress_health_check=[HealthCheck.function_scoped_fixture],  # the same rule every time
)
@given(x=finite, y=finite)
def test_user_rule_program_against_finite_differences(rule_table, x, y):
    irad.rrule(P.cube)(P.cube_rule)
    check_grad(P.uses_cube, x / 8, y / 8, rtol=1e-5, atol=1e-6)
