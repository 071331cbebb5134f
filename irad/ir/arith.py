"""Upstream `arith` ops that xDSL 0.75 lacks, so irad can build them.

`arith.remf` is C's fmod (the remainder with the sign of the dividend, exact),
which numpy's `%`, `np.mod` and `np.fmod` and Python's float `%` and `//` are
computed from. It has upstream MLIR's name and syntax, so mlir-opt 22 reads and
lowers it (to LLVM's `frem`); irad's contexts load it (dialect.load_missing_ops).
"""

from __future__ import annotations

from xdsl.dialects.arith import FloatingPointLikeBinaryOperation
from xdsl.irdl import irdl_op_definition, traits_def
from xdsl.traits import Pure


@irdl_op_definition
class RemFOp(FloatingPointLikeBinaryOperation):
    """lhs - n * rhs for the integer n = trunc(lhs / rhs), computed exactly."""

    name = "arith.remf"

    traits = traits_def(Pure())

