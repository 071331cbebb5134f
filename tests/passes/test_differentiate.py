"""The irad-differentiate pass on IR alone (no Python frontend)."""

import math
import subprocess
import sys
from pathlib import Path

import pytest
from xdsl.dialects import func
from xdsl.parser import Parser

from irad.backends.python.translate import compile_module
from irad.ir.dialect import make_context
from irad.base.errors import DifferentiationError
from irad.passes.differentiate import DifferentiatePass
from irad.passes.ad.differentiator import Differentiator
from tests.mlir_roundtrip import record
from tests.reference import central_difference

VENV_BIN = Path(sys.executable).parent


def parse(text):
    return Parser(make_context(), text).parse_module()


def differentiate(text):
    module = parse(text)
    DifferentiatePass().apply(make_context(), module)
    module.verify()
    record(module)
    return module


def functions(module):
    return {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}


CHAIN = """
func.func private @sq(%x: f64) -> f64 {
  %y = arith.mulf %x, %x : f64
  func.return %y : f64
}
func.func private @g(%x: f64, %y: f64) -> f64 {
  %a = func.call @sq(%x) : (f64) -> f64
  %b = math.sin %y : f64
  %c = arith.mulf %a, %b : f64
  func.return %c : f64
}
func.func @f(%x: f64, %y: f64) -> f64 {
  %a = func.call @g(%x, %y) : (f64, f64) -> f64
  %b = func.call @sq(%a) : (f64) -> f64
  %c = func.call @g(%b, %x) : (f64, f64) -> f64
  func.return %c : f64
}
func.func @main(%x: f64, %y: f64) -> (f64, f64, f64) {
  %v, %gx, %gy = irad.value_and_grad @f(%x, %y) {wrt = [0, 1]} : (f64, f64) -> (f64, f64, f64)
  func.return %v, %gx, %gy : f64, f64, f64
}
"""


def test_gradient_of_ir_matches_finite_differences():
    module = differentiate(CHAIN)
    compiled = compile_module(module)
    main, primal = compiled.function("main"), compiled.function("f")
    args = (0.7, 1.1)
    value, gx, gy = main(*args)
    assert value == pytest.approx(primal(*args)[0], rel=1e-12)
    assert gx == pytest.approx(central_difference(lambda *a: primal(*a)[0], args, 0), rel=1e-6)
    assert gy == pytest.approx(central_difference(lambda *a: primal(*a)[0], args, 1), rel=1e-6)


def test_generated_functions_are_memoised_per_callee_and_activity():
    fns = functions(differentiate(CHAIN))
    generated = sorted(n for n in fns if ".augmented." in n or ".pullback." in n)
    # @g is called once with (d, d) and @sq always with d: one pair each.
    assert generated == [
        "f.augmented.dd", "f.pullback.dd",
        "g.augmented.dd", "g.pullback.dd",
        "sq.augmented.d", "sq.pullback.d",
    ]


def test_metadata_names_the_primal_role_and_order():
    fns = functions(differentiate(CHAIN))
    pb = fns["g.pullback.dd"]
    assert pb.attributes["irad.primal"].root_reference.data == "g"
    assert pb.attributes["irad.role"].data == "pullback"
    assert pb.attributes["irad.order"].value.data == 1
    assert fns["g.augmented.dd"].attributes["irad.role"].data == "augmented_primal"
    # metadata survives a print/parse round trip
    reparsed = functions(parse(str(differentiate(CHAIN))))
    assert reparsed["g.pullback.dd"].attributes["irad.primal"].root_reference.data == "g"


def test_gradient_wrt_one_argument_has_no_code_for_the_other():
    text = CHAIN.replace(
        "%v, %gx, %gy = irad.value_and_grad @f(%x, %y) {wrt = [0, 1]} : (f64, f64) -> (f64, f64, f64)\n"
        "  func.return %v, %gx, %gy : f64, f64, f64",
        "%gx = irad.grad @f(%x, %y) {wrt = [0]} : (f64, f64) -> f64\n"
        "  %z = arith.constant 0.0 : f64\n  func.return %z, %gx, %z : f64, f64, f64",
    )
    fns = functions(differentiate(text))
    assert "f.pullback.dc" in fns
    assert str(fns["f.pullback.dc"].function_type).endswith("-> f64")
    # the inner @g is called with (d, d) at %a? no: y is constant there, so (d, c)
    assert "g.pullback.dc" in fns


def test_integer_arguments_get_no_cotangent():
    module = differentiate("""
func.func @f(%x: f64, %n: i64) -> f64 {
  %m = arith.sitofp %n : i64 to f64
  %y = arith.mulf %x, %m : f64
  func.return %y : f64
}
func.func @main(%x: f64, %n: i64) -> f64 {
  %g = irad.grad @f(%x, %n) {wrt = [0]} : (f64, i64) -> f64
  func.return %g : f64
}
""")
    pb = functions(module)["f.pullback.dc"]
    assert all(op.name != "arith.sitofp" for op in pb.walk())
    assert compile_module(module).function("main")(2.0, 5) == (5.0,)


def test_rules_are_inlined_and_callees_without_rules_recursed_into():
    module = parse("""
func.func private @irad.numerics.sigmoid(%x: f64) -> f64 {
  %h = arith.constant 0.5 : f64
  %a = arith.mulf %h, %x : f64
  %t = math.tanh %a : f64
  %b = arith.mulf %h, %t : f64
  %y = arith.addf %b, %h : f64
  func.return %y : f64
}
func.func private @user(%x: f64) -> f64 {
  %y = math.exp %x : f64
  func.return %y : f64
}
func.func @f(%x: f64) -> f64 {
  %a = func.call @irad.numerics.sigmoid(%x) : (f64) -> f64
  %b = func.call @user(%a) : (f64) -> f64
  func.return %b : f64
}
func.func @main(%x: f64) -> f64 {
  %g = irad.grad @f(%x) {wrt = [0]} : (f64) -> f64
  func.return %g : f64
}
""")
    differentiator = Differentiator(module)
    differentiator.rewrite_requests()
    decisions = {d.callee: d.kind for d in differentiator.decisions if d.caller == "f"}
    assert decisions == {"f": "no-rule", "irad.numerics.sigmoid": "rule", "user": "no-rule"}
    fns = functions(module)
    assert "user.pullback.d" in fns
    assert not any(n.startswith("irad.numerics.sigmoid.") for n in fns)
    x = 0.3
    s = 1 / (1 + math.exp(-x))
    expected = math.exp(s) * s * (1 - s)
    assert compile_module(module).function("main")(x)[0] == pytest.approx(expected, rel=1e-12)


def test_conditional_differentiates_both_branches():
    module = differentiate("""
func.func @f(%x: f64) -> f64 {
  %zero = arith.constant 0.0 : f64
  %c = arith.cmpf ogt, %x, %zero : f64
  %r = scf.if %c -> (f64) {
    %s = math.sin %x : f64
    %t = arith.mulf %s, %x : f64
    scf.yield %t : f64
  } else {
    %e = math.exp %x : f64
    scf.yield %e : f64
  }
  func.return %r : f64
}
func.func @main(%x: f64) -> f64 {
  %g = irad.grad @f(%x) {wrt = [0]} : (f64) -> f64
  func.return %g : f64
}
""")
    main = compile_module(module).function("main")
    assert main(0.5)[0] == pytest.approx(math.cos(0.5) * 0.5 + math.sin(0.5), rel=1e-12)
    assert main(-0.5)[0] == pytest.approx(math.exp(-0.5), rel=1e-12)


def test_recursion_becomes_recursion_between_generated_functions():
    module = parse("""
func.func private @r(%x: f64) -> f64 {
  %y = func.call @r(%x) : (f64) -> f64
  func.return %y : f64
}
func.func @main(%x: f64) -> f64 {
  %g = irad.grad @r(%x) {wrt = [0]} : (f64) -> f64
  func.return %g : f64
}
""")
    DifferentiatePass().apply(make_context(), module)
    text = str(module)
    # the tape-threading pair calls itself as the primal does (and is called
    # once more by the pair with flat residuals, which allocates the tape)
    assert text.count("func.call @r.augmented.tape.d(") == 2
    assert text.count("func.call @r.pullback.tape.d(") == 2


def test_grad_of_function_with_tuple_result_is_an_error():
    module = parse("""
func.func @f(%x: f64) -> (f64, f64) {
  func.return %x, %x : f64, f64
}
func.func @main(%x: f64) -> f64 {
  %g = irad.grad @f(%x) {wrt = [0]} : (f64) -> f64
  func.return %g : f64
}
""")
    with pytest.raises(DifferentiationError, match="must return exactly one float"):
        DifferentiatePass().apply(make_context(), module)


def test_running_the_pass_again_reuses_generated_functions():
    first = str(differentiate(CHAIN))
    before = set(functions(parse(first)))
    again = first.rstrip().removesuffix("}") + """
  func.func @main2(%x: f64, %y: f64) -> f64 {
    %g:2 = irad.grad @f(%x, %y) {wrt = [0, 1]} : (f64, f64) -> (f64, f64)
    func.return %g#0 : f64
  }
}"""
    fns = functions(differentiate(again))
    assert set(fns) - before == {"main2"}


def test_unknown_op_is_reported_with_its_location():
    module = parse("""
func.func @f(%x: f64) -> f64 {
  %e = tensor.empty() : tensor<2xf64>
  %t = linalg.fill ins(%x : f64) outs(%e : tensor<2xf64>) -> tensor<2xf64>
  %c0 = arith.constant 0 : index
  %y = tensor.extract %t[%c0] : tensor<2xf64>
  func.return %y : f64
}
func.func @main(%x: f64) -> f64 {
  %g = irad.grad @f(%x) {wrt = [0]} : (f64) -> f64
  func.return %g : f64
}
""")
    with pytest.raises(DifferentiationError, match=r"@f: linalg.fill: no adjoint"):
        DifferentiatePass().apply(make_context(), module)


@pytest.mark.parametrize("driver", ["irad-opt", "xdsl-opt"])
def test_pass_runs_in_the_command_line_drivers(driver, tmp_path):
    source = tmp_path / "chain.mlir"
    source.write_text(CHAIN)

    def run(pipeline: str) -> str:
        return subprocess.run(
            [str(VENV_BIN / driver), str(source), "-p", pipeline],
            capture_output=True, text=True, check=True,
        ).stdout

    kept = run("irad-differentiate,irad-optimize{max-depth=0}")  # inlining off
    assert "func.call @f.augmented.dd" in kept and "irad.primal = @g" in kept
    assert "func.call" not in run("irad-differentiate,irad-optimize")


def test_unstructured_control_flow_is_reported():
    module = Parser(make_context(), """
func.func @f(%x: f64) -> f64 {
  cf.br ^bb1
^bb1:
  func.return %x : f64
}
func.func @main(%x: f64) -> f64 {
  %g = irad.grad @f(%x) {wrt = [0]} : (f64) -> f64
  func.return %g : f64
}
""").parse_module()
    with pytest.raises(DifferentiationError, match="@f has 2 blocks"):
        DifferentiatePass().apply(make_context(), module)


def test_a_while_whose_condition_region_computes_passed_values_is_reported():
    module = parse("""
func.func @f(%x: f64) -> f64 {
  %r = scf.while (%a = %x) : (f64) -> f64 {
    %one = arith.constant 1.0 : f64
    %b = arith.mulf %a, %a : f64
    %c = arith.cmpf ogt, %a, %one : f64
    scf.condition(%c) %b : f64
  } do {
  ^bb0(%b: f64):
    %h = arith.constant 0.5 : f64
    %d = arith.mulf %b, %h : f64
    scf.yield %d : f64
  }
  func.return %r : f64
}
func.func @main(%x: f64) -> f64 {
  %g = irad.grad @f(%x) {wrt = [0]} : (f64) -> f64
  func.return %g : f64
}
""")
    with pytest.raises(DifferentiationError, match="scf.while.*condition region passes on values"):
        DifferentiatePass().apply(make_context(), module)


def test_a_request_for_a_declared_function_with_a_rule_uses_the_rule():
    module = differentiate("""
func.func private @irad.numerics.softplus(f64) -> f64
func.func @main(%x: f64) -> f64 {
  %g = irad.grad @irad.numerics.softplus(%x) {wrt = [0]} : (f64) -> f64
  func.return %g : f64
}
""")
    pb = functions(module)["irad.numerics.softplus.pullback.d"]
    assert any(op.name == "math.tanh" for op in pb.walk())


# ---- irad.vjp, and gradients of callees with integer results --------------------------
SEVERAL_RESULTS = """
func.func private @h(%x: f64, %n: i64, %v: tensor<3xf64>) -> (f64, i64, tensor<3xf64>) {
  %s = math.sin %x : f64
  %e = tensor.splat %x : tensor<3xf64>
  %w = arith.mulf %v, %e : tensor<3xf64>
  %k = arith.sitofp %n : i64 to f64
  %y = arith.mulf %s, %k : f64
  func.return %y, %n, %w : f64, i64, tensor<3xf64>
}
func.func @h_public(%x: f64, %n: i64, %v: tensor<3xf64>) -> (f64, i64, tensor<3xf64>) {
  %y, %m, %w = func.call @h(%x, %n, %v) : (f64, i64, tensor<3xf64>) -> (f64, i64, tensor<3xf64>)
  func.return %y, %m, %w : f64, i64, tensor<3xf64>
}
func.func @vjp(%x: f64, %n: i64, %v: tensor<3xf64>, %du: f64, %dw: tensor<3xf64>) -> (f64, tensor<3xf64>) {
  %dx, %dv = irad.vjp @h(%x, %n, %v, %du, %dw) {wrt = [0, 2]} : (f64, i64, tensor<3xf64>, f64, tensor<3xf64>) -> (f64, tensor<3xf64>)
  func.return %dx, %dv : f64, tensor<3xf64>
}
func.func private @counted(%x: f64, %n: i64) -> (i1, f64, i64) {
  %z = arith.constant 0.0 : f64
  %p = arith.cmpf ogt, %x, %z : f64
  %k = arith.sitofp %n : i64 to f64
  %y = math.powf %x, %k : f64
  func.return %p, %y, %n : i1, f64, i64
}
func.func @grad(%x: f64, %n: i64) -> (i1, f64, i64, f64) {
  %p, %y, %m, %g = irad.value_and_grad @counted(%x, %n) {wrt = [0]} : (f64, i64) -> (i1, f64, i64, f64)
  func.return %p, %y, %m, %g : i1, f64, i64, f64
}
"""


def test_vjp_request_against_finite_differences():
    import numpy as np

    from irad.passes.pipelines import Options, autodiff_passes
    from irad.pipeline import run

    module = parse(SEVERAL_RESULTS)
    run(module, autodiff_passes(Options()))
    compiled = compile_module(module)
    h, vjp, grad = compiled.function("h_public"), compiled.function("vjp"), compiled.function("grad")
    x, n, v = 0.8, 3, np.array([0.5, -1.0, 2.0])
    du, dw = -0.7, np.array([1.5, 0.25, -2.0])

    def pairing(x, v):  # <(du, dw), h(x, n, v)>: its gradient is the vjp
        y, _, w = h(x, n, v)
        return du * y + float(np.dot(dw, w))

    dx, dv = vjp(x, n, v, du, dw)
    step = 1e-6
    assert dx == pytest.approx((pairing(x + step, v) - pairing(x - step, v)) / (2 * step), rel=1e-8)
    for i in range(3):
        e = np.eye(3)[i] * step
        assert dv[i] == pytest.approx((pairing(x, v + e) - pairing(x, v - e)) / (2 * step), rel=1e-8)
    # closed form: d/dx = du n cos x + <dw, v>, d/dv = dw x
    assert dx == pytest.approx(du * n * math.cos(x) + float(np.dot(dw, v)), rel=1e-14)
    np.testing.assert_allclose(dv, dw * x, rtol=1e-15)

    p, y, m, g = grad(1.3, 4)
    assert (p, m) == (True, 4) and y == pytest.approx(1.3**4) and g == pytest.approx(4 * 1.3**3, rel=1e-14)


@pytest.mark.parametrize(
    ("callee", "message"),
    [
        ("(f64, f64)", r"@g must return exactly one float .* returns \(f64, f64\)\n  hint: use irad.vjp"),
        ("(i64)", r"@g must return exactly one float .* returns \(i64\)\n  hint: return a float"),
    ],
)
def test_gradient_request_of_several_floats_points_to_vjp(callee, message):
    # the pass checks what the verifier checks, for modules built without verifying
    returned = {"(f64, f64)": "%x, %x : f64, f64", "(i64)": "%n : i64"}[callee]
    module = parse(f"""
func.func @g(%x: f64, %n: i64) -> {callee} {{
  func.return {returned}
}}
func.func @main(%x: f64, %n: i64) -> f64 {{
  %g = "irad.grad"(%x, %n) <{{callee = @elsewhere, wrt = [0]}}> : (f64, i64) -> f64
  func.return %g : f64
}}""")
    (request,) = [op for op in module.walk() if op.name == "irad.grad"]
    from xdsl.dialects.builtin import SymbolRefAttr

    request.properties["callee"] = SymbolRefAttr("g")  # past the verifier
    with pytest.raises(DifferentiationError, match=message):
        DifferentiatePass().apply(make_context(), module)


SQUARE = """
func.func @f(%x: f64) -> f64 {
  %y = arith.mulf %x, %x : f64
  func.return %y : f64
}
func.func @main(%x: f64) -> f64 {
  %g = irad.grad @f(%x) {wrt = [0]} : (f64) -> f64
  func.return %g : f64
}
"""


@pytest.mark.parametrize("x", [-1.5, -0.0, 0.3, 1e200])
def test_a_square_has_one_cotangent_term(x):
    # d(x * x) = 2 * (dy * x): one product, doubled, accumulated once (not
    # dy * x added twice); the closed form 2x, exactly (doubling is exact)
    module = differentiate(SQUARE)
    pullback = functions(module)["f.pullback.d"]
    names = [op.name for op in pullback.walk() if op.name.startswith("arith.") and op.name != "arith.constant"]
    assert names.count("arith.mulf") == 1 and names.count("arith.addf") == 1
    (g,) = compile_module(module).function("main")(x)
    assert g == 2 * x or (math.isinf(g) and math.isinf(2 * x))


TAKEN = """
func.func private @sq(%x: f64) -> f64 {
  %y = arith.mulf %x, %x : f64
  func.return %y : f64
}
func.func private @f(%x: f64, %y: f64) -> f64 {
  %a = func.call @sq(%x) : (f64) -> f64
  %b = math.sin %y : f64
  %c = arith.mulf %a, %b : f64
  func.return %c : f64
}
func.func @main(%x: f64, %y: f64) -> (f64, f64, f64) {
  %v, %gx, %gy = irad.value_and_grad @f(%x, %y) {wrt = [0, 1]} : (f64, f64) -> (f64, f64, f64)
  func.return %v, %gx, %gy : f64, f64, f64
}
"""


def inlined(text):
    module = parse(text)
    DifferentiatePass(inline=True).apply(make_context(), module)
    module.verify()
    return module


def test_the_only_request_of_a_private_primal_takes_its_body():
    """With inline=true, the primal of the module's only request, private and
    referenced by nothing else, becomes its augmented primal (its ops are
    moved, not cloned) and is erased; a primal something else calls stays."""
    module = inlined(TAKEN)
    assert sorted(functions(module)) == ["f.augmented.dd", "f.pullback.dd", "main"]
    main = compile_module(module).function("main")
    primal = compile_module(parse(TAKEN.split("func.func @main")[0])).function("f")
    args = (0.7, 1.1)
    value, gx, gy = main(*args)
    assert value == pytest.approx(math.sin(1.1) * 0.7**2, rel=1e-12)
    assert gx == pytest.approx(central_difference(lambda *a: primal(*a)[0], args, 0), rel=1e-6)
    assert gy == pytest.approx(central_difference(lambda *a: primal(*a)[0], args, 1), rel=1e-6)
    also_called = TAKEN.replace(
        "func.return %v, %gx, %gy : f64, f64, f64",
        "%w = func.call @f(%x, %y) : (f64, f64) -> f64\n  func.return %w, %gx, %gy : f64, f64, f64",
    )
    assert "f" in functions(inlined(also_called))
    public = TAKEN.replace("func.func private @f", "func.func @f")
    assert "f" in functions(inlined(public))


def test_vjp_requests_share_an_augmented_primal_only_on_the_same_arguments():
    """Two requests with more gradients than cotangents: all of the callee's
    arguments decide, not a prefix (a y2 beside a y1 once read y1)."""
    module = parse("""
func.func @f(%x: f64, %y: f64) -> f64 {
  %p = arith.mulf %x, %y : f64
  func.return %p : f64
}
func.func @main(%x: f64, %y1: f64, %y2: f64) -> (f64, f64, f64, f64) {
  %one = arith.constant 1.0 : f64
  %a, %b = irad.vjp @f(%x, %y1, %one) {wrt = [0, 1]} : (f64, f64, f64) -> (f64, f64)
  %c, %d = irad.vjp @f(%x, %y2, %one) {wrt = [0, 1]} : (f64, f64, f64) -> (f64, f64)
  %e, %g = irad.vjp @f(%x, %y1, %one) {wrt = [0, 1]} : (f64, f64, f64) -> (f64, f64)
  func.return %a, %c, %e, %g : f64, f64, f64, f64
}""")
    DifferentiatePass().apply(make_context(), module)
    main = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main")
    augmented = [op for op in main.walk() if isinstance(op, func.CallOp) and ".augmented." in op.callee.root_reference.data]
    assert len(augmented) == 2  # the y1 pair shares one; y2 has its own
    # d(x y)/dx = y, d(x y)/dy = x
    assert compile_module(module).function("main")(3.0, 5.0, 7.0) == (5.0, 7.0, 5.0, 3.0)
