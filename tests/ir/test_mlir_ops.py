"""MLIR 22's math and arith ops in irad's IR vocabulary (irad/ir/mlir_ops.py).

The checked-in list of MLIR 22's ops (tests/mlir22.py) is what the registry of
op derivatives is checked against (tests/passes/test_mlir_ops.py); here it is
checked against the installed mlir-opt 22 itself, and every math op is checked
to parse in irad's context and in the context stock `xdsl-opt` builds.
"""

from __future__ import annotations

import pytest
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType, f32, f64, i1
from xdsl.ir import Block, Region
from xdsl.dialects.builtin import FunctionType
from xdsl.universe import Universe

from irad.backends.native.mlir_tools import find_tool
from irad.ir.dialect import make_context
from irad.ir.mlir_ops import IsInfOp, IsNormalOp, expand_for_llvm
from tests import mlir22

needs_mlir_opt = pytest.mark.skipif(find_tool("mlir-opt") is None, reason="needs mlir-opt 22 (mlir-22-tools)")


@needs_mlir_opt
@pytest.mark.mlir
def test_the_list_of_math_ops_is_mlir_22s():
    assert mlir22.ops_in_mlir_opt("math") == mlir22.MATH_OPS


@needs_mlir_opt
@pytest.mark.mlir
def test_the_lists_of_arith_ops_are_mlir_22s():
    assert not mlir22.ARITH_FLOAT_OPS & mlir22.ARITH_INTEGER_OPS
    assert mlir22.ops_in_mlir_opt("arith") == mlir22.ARITH_FLOAT_OPS | mlir22.ARITH_INTEGER_OPS


def _stock_xdsl_opt_context() -> Context:
    """The dialects as `xdsl-opt` registers them: from the multiverse of every
    installed `xdsl.universe` entry point."""
    ctx = Context()
    for name, factory in Universe.get_multiverse().all_dialects.items():
        ctx.register_dialect(name, factory)
    return ctx


@pytest.mark.parametrize("context", [make_context, _stock_xdsl_opt_context], ids=["irad", "xdsl-opt"])
def test_every_math_op_of_mlir_22_parses(context):
    ctx = context()
    missing = sorted(name for name in mlir22.MATH_OPS if ctx.get_optional_op(name) is None)
    assert not missing, f"no op definition for {missing}"
    # irad's arith float ops: all of MLIR's but the block-scaled ones (types xDSL lacks)
    unknown = sorted(name for name in mlir22.ARITH_FLOAT_OPS if ctx.get_optional_op(name) is None)
    assert unknown == ["arith.scaling_extf", "arith.scaling_truncf"]


def _run(module: ModuleOp, *args):
    from irad.backends.python.translate import compile_module

    return compile_module(module).function("f")(*args)


@pytest.mark.parametrize("t", [f64, f32])
def test_class_tests_expand_to_comparisons_that_compute_the_same(t):
    import math

    import numpy as np

    block = Block(arg_types=[t])
    tests = [IsInfOp(block.args[0]), IsNormalOp(block.args[0])]
    block.add_ops([*tests, func.ReturnOp(*(op.result for op in tests))])
    module = ModuleOp([func.FuncOp("f", FunctionType.from_lists([t], [i1, i1]), Region(block))])
    dtype = np.float64 if t == f64 else np.float32
    tiny = float(np.finfo(dtype).tiny)
    values = [0.0, -0.0, 1.5, -2.0, tiny, -tiny, tiny / 2, math.inf, -math.inf, math.nan]
    before = [_run(module, x) for x in values]
    expand_for_llvm(module)
    module.verify()
    assert not any(isinstance(op, (IsInfOp, IsNormalOp)) for op in module.walk())
    assert [_run(module, x) for x in values] == before
    assert before[7] == (True, False) and before[4] == (False, True) and before[6] == (False, False)


def test_class_tests_on_tensors_expand_too():
    t = TensorType(f64, [3])
    block = Block(arg_types=[t])
    tests = [IsInfOp(block.args[0]), IsNormalOp(block.args[0])]
    block.add_ops([*tests, func.ReturnOp(*(op.result for op in tests))])
    result = TensorType(i1, [3])
    module = ModuleOp([func.FuncOp("f", FunctionType.from_lists([t], [result, result]), Region(block))])
    expand_for_llvm(module)
    module.verify()
    assert not any(isinstance(op, (IsInfOp, IsNormalOp)) for op in module.walk())


def test_expand_for_llvm_refuses_a_module_defining_expm1():
    """A hand-written module (irad-for-mlir-opt) that defines @expm1 would have
    math.expm1 call it; the native backend renames its functions apart first."""
    from xdsl.parser import Parser

    from irad.base.errors import BackendError

    text = """
    func.func @expm1(%x: f64) -> f64 {
      %y = math.expm1 %x : f64
      func.return %y : f64
    }
    """
    module = Parser(make_context(), text).parse_module()
    with pytest.raises(BackendError, match=r"defines a function @expm1.*\n  hint: rename the function @expm1"):
        expand_for_llvm(module)
