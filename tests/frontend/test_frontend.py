"""The frontend: Python source -> func/arith/math/scf IR."""

import math

import pytest
from xdsl.dialects import func

import irad
from tests import programs


def functions(module):
    return {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}


def op_names(fn):
    return [op.name for op in fn.walk() if op is not fn]


def test_helper_calls_stay_calls_with_their_own_function():
    module = irad.lower(programs.uses_helper, 1.0, 2.0)
    fns = functions(module)
    assert set(fns) == {"uses_helper", "helper", "square"}
    assert op_names(fns["uses_helper"]).count("func.call") == 2
    assert "math.sin" in op_names(fns["helper"])
    module.verify()


def test_entry_is_public_helpers_private_with_their_python_name():
    fns = functions(irad.lower(programs.uses_helper, 1.0, 2.0))
    assert fns["uses_helper"].sym_visibility is None
    assert fns["helper"].sym_visibility.data == "private"
    assert fns["helper"].attributes["irad.target"].data == "tests.programs.helper"


def test_one_function_per_signature():
    module = irad.lower(programs.twice, 3.0)
    assert list(functions(module)) == ["square", "twice"]  # shared callee, lowered once
    ints = functions(irad.lower(programs.mixed, 1.0, 3))
    assert str(ints["mixed"].function_type) == "(f64, i64) -> f64"


def test_types_and_promotion():
    fn = functions(irad.lower(programs.mixed, 1.0, 3))["mixed"]
    names = op_names(fn)
    assert "arith.sitofp" in names  # int promoted where mixed with a float
    assert "arith.floordivsi" in names  # n // 2 stays integer


def test_global_constant_is_baked_in():
    text = str(irad.lower(programs.mixed, 1.0, 3))
    assert "3.000000e+00" in text


def test_conditional_expression_is_scf_if():
    fn = functions(irad.lower(programs.conditional, 1.0))["conditional"]
    assert "scf.if" in op_names(fn)


def test_tuple_return_gives_several_results():
    fn = functions(irad.lower(programs.two_outputs, 1.0, 2.0))["two_outputs"]
    assert len(fn.function_type.outputs.data) == 2


def test_closure_values_are_constants():
    scaled = programs.closure_factory(4.0)
    text = str(irad.lower(scaled, 1.0))
    assert "4.000000e+00" in text


def test_library_helpers_keep_their_rule_target_as_symbol():
    fns = functions(irad.lower(programs.with_rule, 1.0))
    assert "irad.numerics.softplus" in fns and "irad.numerics.sigmoid" in fns


def test_literal_integer_powers_are_multiplications():
    fn = functions(irad.lower(programs.square, 1.0))["square"]
    assert op_names(fn) == ["arith.mulf", "func.return"]


def asinh_times_x(x):
    return math.asinh(x) * x


def test_math_asinh_lowers_to_its_op():
    assert "math.asinh" in op_names(functions(irad.lower(asinh_times_x, 0.7))["asinh_times_x"])
    assert irad.grad(asinh_times_x)(0.7) == pytest.approx(math.asinh(0.7) + 0.7 / math.sqrt(1.49), rel=1e-14)
