"""Tests of the irad dialect, its xDSL universe and the irad-opt driver."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points
from io import StringIO

import pytest
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    ArrayAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    f16,
    f32,
    f64,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.universe import Universe
from xdsl.utils.exceptions import ParseError, VerifyException

from irad.cli import IradOptMain, irad_opt_main, main
from irad.ir.types import is_differentiable
from irad.ir.dialect import (
    IRAD,
    DerivativeRequestOp,
    GradOp,
    ValueAndGradOp,
    VjpOp,
    make_context,
)
from irad.universe import IRAD_UNIVERSE

IRAD_PASSES = (
    "irad-differentiate",
    "irad-jvp",
    "irad-lower-tape",
    "irad-inline",
    "irad-optimize",
    "irad-float-folds",
    "irad-sink-broadcasts",
    "irad-join-slice-sums",
    "irad-symbol-dce",
    "irad-sink-accumulations",
    "irad-hoist-loop-invariants",
    "irad-for-mlir-opt",
    "irad-split-loops",
    "irad-vmap",
)


# --- helpers --------------------------------------------------------------


def _callee(name: str = "f", inputs=(f64, f64), outputs=(f64,)) -> func.FuncOp:
    """A func.func returning its first argument (or a zero of the right type)."""
    callee = func.FuncOp(name, (list(inputs), list(outputs)))
    block = callee.body.block
    values = []
    for output in outputs:
        if output in inputs:
            values.append(block.args[list(inputs).index(output)])
        else:
            zero = arith.ConstantOp(IntegerAttr(0, output))
            block.add_op(zero)
            values.append(zero.result)
    block.add_op(func.ReturnOp(*values))
    return callee


def _module_with(op_factory, arg_types=(f64, f64), callee: func.FuncOp | None = None):
    """A module holding ``callee`` and a function whose body is the request
    op built by ``op_factory(block_args)``."""
    caller = func.FuncOp("main", (list(arg_types), []))
    block = caller.body.block
    op = op_factory(block.args)
    block.add_ops([op, func.ReturnOp()])
    ops = [callee, caller] if callee is not None else [caller]
    return ModuleOp(ops), op


def _print(op) -> str:
    stream = StringIO()
    Printer(stream=stream).print_op(op)
    return stream.getvalue()


def _parse(text: str) -> ModuleOp:
    return Parser(make_context(), text).parse_module()


def _detached_args(*types: Attribute):
    return Block(arg_types=types).args


# --- construction and accessors -------------------------------------------


def test_grad_op_construction_and_accessors():
    x, y = _detached_args(f64, f64)
    op = GradOp("f", [x, y], [0, 1], [f64, f64])
    assert isinstance(op, DerivativeRequestOp)
    assert op.callee == SymbolRefAttr("f")
    assert tuple(op.args) == (x, y)
    assert op.wrt_indices == (0, 1)
    assert op.wrt == ArrayAttr([IntegerAttr(0, i64), IntegerAttr(1, i64)])
    assert tuple(op.value_results) == ()
    assert tuple(op.gradient_results) == tuple(op.results)
    op.verify()


def test_value_and_grad_op_construction_and_accessors():
    x, y = _detached_args(f64, f32)
    op = ValueAndGradOp(SymbolRefAttr("f"), [x, y], [1], [f64, f32])
    assert op.callee == SymbolRefAttr("f")
    assert op.wrt_indices == (1,)
    assert tuple(op.value_results) == (op.results[0],)
    assert tuple(op.gradient_results) == (op.results[1],)
    op.verify()


def test_is_differentiable():
    assert is_differentiable(f64)
    assert is_differentiable(TensorType(f32, [3]))
    assert not is_differentiable(i32)
    assert not is_differentiable(TensorType(i32, [3]))
    # the one predicate the verifier, the frontend and the passes share: f16 is
    # not differentiated anywhere, so the verifier refuses it too
    assert not is_differentiable(f16)
    assert not is_differentiable(TensorType(f16, [3]))


def test_verifier_refuses_a_request_the_pass_cannot_serve():
    h = _detached_args(f16)[0]
    with pytest.raises(VerifyException, match="operand #0 of type f16"):
        GradOp("f", [h], [0], [f16]).verify()


# --- printing and parsing -------------------------------------------------


def test_custom_syntax_print_and_round_trip():
    module, op = _module_with(
        lambda args: GradOp("f", list(args), [0, 1], [f64, f64]), callee=_callee()
    )
    module.verify()
    op.args[0].name_hint, op.args[1].name_hint = "x", "y"
    op.results[0].name_hint, op.results[1].name_hint = "gx", "gy"
    text = _print(module)
    assert (
        "%gx, %gy = irad.grad @f(%x, %y) {wrt = [0, 1]} : (f64, f64) -> (f64, f64)"
        in text
    )
    reparsed = _parse(text)
    reparsed.verify()
    assert _print(reparsed) == text


def test_value_and_grad_syntax_from_text():
    text = """
    func.func @f(%x: f64, %y: f64) -> f64 {
      func.return %x : f64
    }
    func.func @main(%x: f64, %y: f64) -> (f64, f64) {
      %v, %gx = irad.value_and_grad @f(%x, %y) {wrt = [0]} : (f64, f64) -> (f64, f64)
      func.return %v, %gx : f64, f64
    }
    """
    module = _parse(text)
    module.verify()
    (op,) = [op for op in module.walk() if isinstance(op, ValueAndGradOp)]
    assert op.wrt_indices == (0,)
    assert op.callee == SymbolRefAttr("f")
    assert (
        "%v, %gx = irad.value_and_grad @f(%x, %y) {wrt = [0]} "
        ": (f64, f64) -> (f64, f64)" in _print(module)
    )


def test_discardable_attributes_follow_wrt():
    x, y = _detached_args(f64, f64)
    op = GradOp("f", [x, y], [1], [f64])
    op.attributes["tag"] = StringAttr("t")
    assert '{wrt = [1], tag = "t"} :' in _print(op)


def test_generic_form_round_trip():
    module, _ = _module_with(
        lambda args: ValueAndGradOp("f", list(args), [1], [f64, f64]),
        callee=_callee(),
    )
    stream = StringIO()
    Printer(stream=stream, print_generic_format=True).print_op(module)
    generic = stream.getvalue()
    assert '"irad.value_and_grad"' in generic
    assert "<{callee = @f, wrt = [1 : i64]}>" in generic
    reparsed = _parse(generic)
    reparsed.verify()
    assert _print(reparsed) == _print(module)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("irad.grad @f(%x) : (f64) -> f64", "expects an attribute dictionary"),
        ("irad.grad @f(%x) {wrt = 0} : (f64) -> f64", "list of integers"),
        ("irad.grad @f(%x) {wrt = [0], callee = @g} : (f64) -> f64", "callee before"),
        ("irad.grad @f(%x) {wrt = [0]} : (f64, f64) -> f64", "expected 2 operand"),
    ],
)
def test_parse_errors(body: str, message: str):
    text = f"func.func @main(%x: f64) {{\n  %g = {body}\n  func.return\n}}"
    with pytest.raises(ParseError, match=message):
        _parse(text)


# --- verifier -------------------------------------------------------------


@pytest.mark.parametrize(
    ("make_op", "message"),
    [
        (lambda x, y, n: GradOp("f", [x, y], [], []), "non-empty 'wrt'"),
        (lambda x, y, n: GradOp("f", [x, y], [2], [f64]), "index 2 is out of range"),
        (
            lambda x, y, n: GradOp("f", [x, y], [1, 0], [f64, f64]),
            r"strictly increasing 'wrt' indices, got \[1, 0\]",
        ),
        (lambda x, y, n: GradOp("f", [x, n], [1], [i32]), "operand #1 of type i32"),
        (lambda x, y, n: GradOp("f", [x, y], [0], [f64, f64]), "one result per"),
        (lambda x, y, n: GradOp("f", [x, y], [1], [f64]), "result #0 has type f64"),
        (
            lambda x, y, n: ValueAndGradOp("f", [x, y], [0], [f64]),
            "callee's result",
        ),
        (
            lambda x, y, n: ValueAndGradOp("f", [x, y], [0], [i32, f64]),
            "must be one scalar float",
        ),
        (
            lambda x, y, n: ValueAndGradOp("f", [x, y], [0], [f64, f32, f64]),
            r"returns 2 floats \(f64, f32\); use 'irad.vjp'",
        ),
        (lambda x, y, n: VjpOp("f", [x, y, x], [0], []), "one cotangent result per 'wrt' entry"),
        (lambda x, y, n: VjpOp("f", [x, y, x], [3], [f64]), "index 3 is out of range"),
        (lambda x, y, n: VjpOp("f", [x, y, x], [1], [f64]), "result #0 has type f64, but it is the cotangent of argument #1 of type f32"),
        (lambda x, y, n: VjpOp("f", [x, n, x], [1], [i32]), "operand #1 of type i32"),
    ],
)
def test_verifier_errors(make_op, message: str):
    x, y, n = _detached_args(f64, f32, i32)
    op = make_op(x, y, n)
    with pytest.raises(VerifyException, match=message) as error:
        op.verify()
    assert f"'{op.name}' op" in str(error.value)


def test_verifier_checks_found_callee():
    # Operand types must match the callee's inputs.
    module, _ = _module_with(
        lambda args: GradOp("f", list(args), [0], [f64]),
        arg_types=(f64, f32),
        callee=_callee(),
    )
    with pytest.raises(VerifyException, match="do not match the inputs of @f"):
        module.verify()

    # The differentiated result must be the one float, a scalar.
    module, _ = _module_with(
        lambda args: GradOp("f", list(args), [0], [f64]),
        callee=_callee(outputs=(i64,)),
    )
    with pytest.raises(VerifyException, match=r"must be one scalar float .*, but it returns \(i64\)"):
        module.verify()
    module, _ = _module_with(
        lambda args: GradOp("f", list(args), [0], [f64]),
        callee=_callee(outputs=(f64, f64)),
    )
    with pytest.raises(VerifyException, match=r"one float result of @f, but it returns 2 floats \(f64, f64\); use 'irad.vjp'"):
        module.verify()
    vector = TensorType(f64, [2])
    module, _ = _module_with(
        lambda args: GradOp("f", list(args), [1], [f64]),
        arg_types=(vector, f64),
        callee=_callee(inputs=(vector, f64), outputs=(vector,)),
    )
    with pytest.raises(VerifyException, match="use 'irad.vjp' to seed a tensor result"):
        module.verify()

    # value_and_grad returns exactly the callee's results first.
    module, _ = _module_with(
        lambda args: ValueAndGradOp("f", list(args), [0], [f64, f64]),
        callee=_callee(outputs=(f64, i64)),
    )
    with pytest.raises(VerifyException, match=r"value results \(f64\) do not match the results of @f \(f64, i64\)"):
        module.verify()


def test_gradient_requests_accept_integer_and_boolean_results_beside_the_float():
    for op_factory, types in [
        (lambda args: GradOp("f", list(args), [0, 1], [f64, f64]), ()),
        (lambda args: ValueAndGradOp("f", list(args), [1], [i1, f64, i64, f64]), ()),
    ]:
        module, _ = _module_with(op_factory, callee=_callee(outputs=(i1, f64, i64)))
        module.verify()


def test_vjp_takes_one_cotangent_per_float_result():
    callee = _callee(inputs=(f64, i64, f64), outputs=(f64, i64, f64))
    module, op = _module_with(
        lambda args: VjpOp("f", list(args), [0, 2], [f64, f64]), arg_types=(f64, i64, f64, f64, f64), callee=callee
    )
    module.verify()
    primal, cotangents = op.split(3)
    assert tuple(primal) == tuple(op.args[:3]) and tuple(cotangents) == tuple(op.args[3:])
    bad = [
        ((f64, i64, f64, f64), "one cotangent per float result \\(f64, f64: @f returns \\(f64, i64, f64\\)\\), but has \\(f64\\)"),
        ((f64, i64, f64, f64, i64), "but has \\(f64, i64\\)"),
        ((f64, i64), "expects the 3 argument\\(s\\) of @f, then the cotangents, but has 2 operand"),
    ]
    for arg_types, message in bad:
        module, _ = _module_with(
            lambda args: VjpOp("f", list(args), [0], [f64]), arg_types=arg_types,
            callee=_callee(inputs=(f64, i64, f64), outputs=(f64, i64, f64)),
        )
        with pytest.raises(VerifyException, match=message):
            module.verify()
    module, _ = _module_with(
        lambda args: VjpOp("f", list(args), [0], [f64]), arg_types=(f64,), callee=_callee(inputs=(f64,), outputs=(i64,))
    )
    with pytest.raises(VerifyException, match="returns no float result"):
        module.verify()


def test_vjp_syntax_round_trip():
    text = """
    func.func @h(%x: f64, %n: i64) -> (f64, i64, f64) {
      func.return %x, %n, %x : f64, i64, f64
    }
    func.func @main(%x: f64, %n: i64, %du: f64, %dv: f64) -> f64 {
      %dx = irad.vjp @h(%x, %n, %du, %dv) {wrt = [0]} : (f64, i64, f64, f64) -> f64
      func.return %dx : f64
    }
    """
    module = _parse(text)
    module.verify()
    printed = _print(module)
    assert "%dx = irad.vjp @h(%x, %n, %du, %dv) {wrt = [0]} : (f64, i64, f64, f64) -> f64" in printed
    stream = StringIO()
    Printer(stream=stream, print_generic_format=True).print_op(module)
    assert '"irad.vjp"(%x, %n, %du, %dv) <{callee = @h, wrt = [0 : i64]}>' in stream.getvalue()
    assert _print(_parse(stream.getvalue())) == printed


def test_verifier_skips_unknown_callee():
    module, _ = _module_with(lambda args: GradOp("nowhere", list(args), [0], [f64]))
    module.verify()


# --- context, universe, entry point --------------------------------------


def test_make_context_registers_irad_dialects():
    ctx = make_context()
    assert set(ctx.registered_dialect_names) == {
        "builtin", "func", "arith", "math", "scf", "cf", "tensor", "linalg", "irad",
    }  # fmt: skip
    assert ctx.get_op("irad.grad") is GradOp
    assert ctx.get_op("irad.value_and_grad") is ValueAndGradOp
    assert ctx.get_op("irad.vjp") is VjpOp


def _imported_modules_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print('\\n'.join(sys.modules))"
    output = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout
    return set(output.split())


def test_imports_stay_lazy():
    after_universe = _imported_modules_after("import irad.universe")
    assert "irad.ir.dialect" not in after_universe
    assert not any(name.startswith("irad.passes.") for name in after_universe)

    after_context = _imported_modules_after(
        "from irad.ir.dialect import make_context; make_context()"
    )
    assert "xdsl.dialects.linalg" not in after_context
    assert "xdsl.dialects.riscv" not in after_context


def test_universe_entry_point_is_discoverable():
    (plugin,) = [ep for ep in entry_points(group="xdsl.universe") if ep.name == "irad"]
    universe = plugin.load()
    assert universe is IRAD_UNIVERSE
    assert set(universe.all_dialects) == {"irad"}
    assert universe.all_dialects["irad"]() is IRAD
    assert set(universe.all_passes) == set(IRAD_PASSES)

    multiverse = Universe.get_multiverse()
    assert "irad" in multiverse.all_dialects
    assert set(IRAD_PASSES) <= set(multiverse.all_passes)


@pytest.mark.parametrize("name", IRAD_PASSES)
def test_universe_pass_loaders_return_the_named_pass(name: str):
    pass_class = IRAD_UNIVERSE.all_passes[name]()
    assert pass_class.name == name


# --- irad-opt and irad ----------------------------------------------------


REQUEST = """
func.func @f(%x: f64) -> f64 {
  func.return %x : f64
}
func.func @main(%x: f64) -> f64 {
  %g = irad.grad @f(%x) {wrt = [0]} : (f64) -> f64
  func.return %g : f64
}
"""


@pytest.fixture
def request_file(tmp_path):
    path = tmp_path / "request.mlir"
    path.write_text(REQUEST)
    return str(path)


def test_irad_opt_registers_once_with_entry_point(request_file):
    # The entry point already provides irad: no duplicate registration error.
    tool = IradOptMain(args=[request_file])
    assert "irad" in tool.ctx.registered_dialect_names
    assert set(IRAD_PASSES) <= set(tool.available_passes)


def test_irad_opt_works_without_entry_point(monkeypatch, capsys, request_file):
    # The multiverse minus irad's names, as if the entry point were missing.
    full = Universe.get_multiverse()
    without_irad = Universe(
        all_dialects={k: v for k, v in full.all_dialects.items() if k != "irad"},
        all_passes={
            k: v for k, v in full.all_passes.items() if k not in IRAD_PASSES
        },
        all_targets=full.all_targets,
        all_frontends=full.all_frontends,
    )
    monkeypatch.setattr(Universe, "get_multiverse", staticmethod(lambda: without_irad))
    tool = IradOptMain(args=[request_file])
    assert "irad" in tool.ctx.registered_dialect_names
    assert set(IRAD_PASSES) <= set(tool.available_passes)
    tool.run()
    assert "irad.grad @f(%x) {wrt = [0]}" in capsys.readouterr().out


def test_irad_opt_main_prints_custom_syntax(capsys, request_file):
    irad_opt_main([request_file])
    assert "irad.grad @f(%x) {wrt = [0]} : (f64) -> f64" in capsys.readouterr().out


def test_irad_opt_subcommand_forwards(capsys, request_file):
    main(["opt", request_file, "--print-op-generic"])
    assert '"irad.grad"(%x) <{callee = @f, wrt = [0 : i64]}>' in capsys.readouterr().out


def test_irad_opt_reports_user_errors_without_traceback(capsys, tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text(REQUEST.replace("wrt = [0]", "wrt = [1]"))
    with pytest.raises(SystemExit) as exit_info:
        irad_opt_main([str(bad)])
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert "irad-opt: error: 'irad.grad' op 'wrt' index 1 is out of range" in err
    assert "Traceback" not in err
