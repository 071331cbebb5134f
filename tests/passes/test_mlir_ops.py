"""Every op of MLIR 22's math dialect, and every arith op on floats, has an
entry in the registry of op derivatives: a derivative (swept against finite
differences in test_op_sweep.py), no derivative (piecewise constant, or
integers), or refused with a reason, which the passes report."""

from __future__ import annotations

import pytest
from xdsl.parser import Parser

from irad.base.errors import DifferentiationError
from irad.ir.dialect import make_context
from irad.passes.ad.derivatives import DERIVATIVES
from irad.passes.differentiate import DifferentiatePass
from irad.passes.jvp import JvpPass
from tests import mlir22


@pytest.mark.parametrize("ops", [mlir22.MATH_OPS, mlir22.ARITH_FLOAT_OPS], ids=["math", "arith"])
def test_every_op_is_differentiated_or_classified(ops):
    missing = sorted(ops - DERIVATIVES.keys())
    assert not missing, f"ops of MLIR 22 with no entry in passes/derivatives/: {missing}"


def test_refused_ops_say_why():
    refused = {n: e.refused for n, e in DERIVATIVES.items() if e.refused}
    assert set(refused) == {"arith.bitcast", "arith.scaling_extf", "arith.scaling_truncf"}
    assert all(len(why) > 20 for why in refused.values())


# x -> bits -> x: a cast to an integer and back must not pass for a constant
ROUND_TRIP = """
func.func @f(%x: f64) -> f64 {
  %i = arith.bitcast %x : f64 to i64
  %y = arith.bitcast %i : i64 to f64
  func.return %y : f64
}
func.func @main(%x: f64, %t: f64) -> (f64, f64, f64) {
  %g = irad.grad @f(%x) {wrt = [0]} : (f64) -> f64
  %v, %tv = irad.jvp @f(%x, %t) {wrt = [0]} : (f64, f64) -> (f64, f64)
  func.return %g, %v, %tv : f64, f64, f64
}
"""


@pytest.mark.parametrize("mode", [DifferentiatePass, JvpPass])
def test_a_refused_op_on_a_varying_value_is_an_error_in_both_modes(mode):
    module = Parser(make_context(), ROUND_TRIP).parse_module()
    with pytest.raises(DifferentiationError, match=r"@f: arith.bitcast: no derivative for the op `arith.bitcast`: it reinterprets") as err:
        mode().apply(make_context(), module)
    assert "hint:" in str(err.value)
