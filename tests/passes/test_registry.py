"""The registry of op derivatives (passes/derivatives/) and its table in the docs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from xdsl.dialects.builtin import TensorType, f64, i64
from xdsl.ir import Block
from xdsl.parser import Parser

from irad.base.errors import DifferentiationError
from irad.ir.dialect import make_context
from irad.passes.ad.derivatives import DERIVATIVES, TENSOR_FORMS, derivative_of, is_non_differentiable
from irad.passes.differentiate import DifferentiatePass
from irad.passes.jvp import JvpPass

DOCS = Path(__file__).resolve().parents[2] / "docs" / "ir-conventions.md"


def _supported_ops_table() -> tuple[set[str], set[str], set[str]]:
    """(differentiable, non-differentiable, refused) op names in the docs' table."""
    section = DOCS.read_text().split("## Supported ops", 1)[1].split("\n## ", 1)[0]
    differentiable, constant, refused = set(), set(), set()
    for row in re.findall(r"^\|(.+)\|\s*$", section, re.M):
        cells = [c.strip() for c in row.split("|")]
        dialect = cells[0]
        if not re.fullmatch(r"[a-z]+", dialect):
            continue  # the header and its rule
        for names, found in zip(cells[1:], (differentiable, constant, refused)):
            found.update(f"{dialect}.{n}" for quoted in re.findall(r"`([^`]*)`", names) for n in quoted.split())
    return differentiable, constant, refused


def test_the_docs_table_lists_the_registry():
    differentiable, constant, refused = _supported_ops_table()
    assert differentiable == {n for n, e in DERIVATIVES.items() if e.differentiable and not e.refused}
    assert constant == {n for n, e in DERIVATIVES.items() if not e.differentiable}
    assert refused == {n for n, e in DERIVATIVES.items() if e.refused}


def _op(name: str, *operand_types):
    block = Block(arg_types=operand_types)
    cls = make_context().get_op(name)
    return cls.create(operands=list(block.args), result_types=[operand_types[0]])


def test_lookup_is_by_name_with_tensor_forms():
    sin = derivative_of(_op("math.sin", f64))
    assert sin is DERIVATIVES["math.sin"] and sin.name == "math.sin"
    assert sin.reverse is not None and sin.forward is not None and sin.elementwise
    assert derivative_of(_op("math.absf", f64)) is DERIVATIVES["math.absf"]
    on_tensors = derivative_of(_op("math.absf", TensorType(f64, [3])))
    assert on_tensors is TENSOR_FORMS["math.absf"] and on_tensors is not DERIVATIVES["math.absf"]
    assert derivative_of(_op("math.sin", TensorType(f64, [3]))) is sin  # the scalar rule carries over
    assert DERIVATIVES["scf.for"].structured and DERIVATIVES["func.call"].structured
    assert DERIVATIVES["math.copysign"].operands == (0,)


def test_piecewise_constant_ops_are_flagged():
    for name in ("arith.cmpf", "arith.constant", "math.floor", "arith.fptosi", "arith.sitofp"):
        entry = DERIVATIVES[name]
        assert not entry.differentiable and entry.reverse is None and entry.forward is None
    assert is_non_differentiable(_op("math.floor", f64))
    assert not is_non_differentiable(_op("math.sin", f64))
    assert not is_non_differentiable(_op("arith.addi", i64, i64))  # unknown: not known to be constant
    assert derivative_of(_op("arith.addi", i64, i64)) is None


UNKNOWN_OP = """
func.func @f(%x: f64) -> f64 {
  %e = tensor.empty() : tensor<2xf64>
  %t = linalg.fill ins(%x : f64) outs(%e : tensor<2xf64>) -> tensor<2xf64>
  %c0 = arith.constant 0 : index
  %y = tensor.extract %t[%c0] : tensor<2xf64>
  func.return %y : f64
}
func.func @main(%x: f64, %t: f64) -> (f64, f64, f64) {
  %g = irad.grad @f(%x) {wrt = [0]} : (f64) -> f64
  %v, %tv = irad.jvp @f(%x, %t) {wrt = [0]} : (f64, f64) -> (f64, f64)
  func.return %g, %v, %tv : f64, f64, f64
}
"""


@pytest.mark.parametrize(("mode", "message"), [(DifferentiatePass, "no adjoint"), (JvpPass, "no tangent rule")])
def test_an_op_without_an_entry_is_an_error_naming_it(mode, message):
    module = Parser(make_context(), UNKNOWN_OP).parse_module()
    with pytest.raises(DifferentiationError, match=rf"{message} for the op `linalg.fill`"):
        mode().apply(make_context(), module)

