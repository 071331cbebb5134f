"""irad.ir.dense_bools: large bool constants print as text MLIR reads (xDSL's hex
gives one byte per element, which mlir-opt rejects)."""

import numpy as np
import pytest
from xdsl.dialects import arith
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType, i1
from xdsl.parser import Parser

import irad
from irad import pipeline
from irad.backends.native import compile as native
from irad.backends.native.mlir_tools import find_tool, mlir_opt_parses

MASK = np.tril(np.ones((64, 64), dtype=bool))  # 4096 elements: xDSL would print hex


def _constant(mask: np.ndarray) -> DenseIntOrFPElementsAttr:
    return DenseIntOrFPElementsAttr.from_list(TensorType(i1, mask.shape), [int(b) for b in mask.ravel()])


def test_a_large_bool_constant_reads_back_as_the_same_values():
    text = str(_constant(MASK))
    assert "0x" not in text and "true" in text
    parsed = Parser(pipeline.context(), f"%c = arith.constant {text}").parse_op()
    assert isinstance(parsed, arith.ConstantOp) and parsed.value == _constant(MASK)


@pytest.mark.skipif(find_tool("mlir-opt") is None, reason="needs mlir-opt (mlir-22-tools)")
def test_mlir_opt_reads_a_large_bool_constant():
    ok, diagnostics = mlir_opt_parses(f"func.func @f() -> tensor<64x64xi1> {{\n  %c = arith.constant {_constant(MASK)}\n"
                                      "  func.return %c : tensor<64x64xi1>\n}\n")
    assert ok, diagnostics


@pytest.mark.skipif(native.unavailable_reason() is not None, reason="native backend unavailable")
def test_gradient_through_a_large_triangle_mask_natively():
    """np.tril of a 64×64 array: its mask is a 4096-element bool constant
    (mlir-opt rejected the module before)."""
    a = np.random.default_rng(0).standard_normal((64, 64))
    g = irad.grad(lambda m: np.sum(np.tril(m) * m), backend="native")(a)
    assert np.array_equal(g, 2 * np.tril(a))  # d/dm sum(tril(m) m) = 2 tril(m), exactly
