"""Large tensors made of one number, filled when the program runs.

mlir-opt bufferizes a constant tensor into a global whose LLVM IR spells out
every element (np.ones((3000, 3000)) was 190 MB of IR), and its canonicalizer
folds a `tensor.splat` of a constant back into such a constant. A
`linalg.fill` of a `tensor.empty` it leaves alone: it becomes a loop that
fills a buffer, or is folded into the ops that read it. So every splat of
more than LARGE_SPLAT elements becomes one before the module goes to
mlir-opt; smaller ones stay constants, which LLVM folds into the code.
"""

from __future__ import annotations

import math

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp, TensorType
from xdsl.dialects.linalg.ops import FillOp
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import Rewriter

from irad.ir.constants import LARGE_SPLAT, scalar_constant


def fill_large_splats(module: ModuleOp) -> None:
    for op in list(module.walk()):
        scalar = _large_splat(op)
        if scalar is None:
            continue
        t = op.results[0].type
        empty = tensor.EmptyOp([], t)
        Rewriter.replace_op(op, [*scalar, empty, FillOp([_value(scalar, op)], [empty.tensor], [t])])


def _large_splat(op: Operation) -> list[Operation] | None:
    """The ops that make the number a large splat is filled with (none: a
    tensor.splat's operand), or None for any other op."""
    if not op.results or not isinstance(t := op.results[0].type, TensorType) or not t.has_static_shape():
        return None
    if math.prod(t.get_shape()) <= LARGE_SPLAT:
        return None
    if isinstance(op, tensor.SplatOp) and not op.dynamicSizes:
        return []
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, DenseIntOrFPElementsAttr) and len(op.value) == 1:
        return [scalar_constant(op.value)]
    return None


def _value(made: list[Operation], op: Operation) -> SSAValue:
    return made[0].results[0] if made else op.input
