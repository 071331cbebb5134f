"""Recompute cheap array producers into each consumer, so they fuse (native backend).

MLIR's `--linalg-fuse-elementwise-ops` fuses an elementwise producer into its
consumer only when the producer has one use. A gradient uses its forward
intermediates twice (the forward pass and the pullback read `x - mean` and
its square, and a broadcast of the cotangent feeds two products), so those
stay materialised: on the vectorised GMM, four (N, K, d) arrays, 6 MB each at
N = 3000, written once and read back from memory. JAX (XLA) fuses them by
recomputing the producer inside each consumer loop.

`recompute_cheap_producers` does the same on the tensor module, before
mlir-opt: an op whose result is a large array, computed elementwise from its
operands by cheap arithmetic (a broadcast, + - * /, negation, min/max,
comparisons, selects, conversions; no exp, log or tanh) and used more than
once, gets one copy per use. Each copy then has a single use and fuses into
its consumer; the consumers are visited first (in reverse order), so a
producer of a copied op is copied for each copy in turn. Recomputing is exact:
the same operations on the same operands give the same bits, and a fused
reduction accumulates in the same order.

`IRAD_NATIVE_RECOMPUTE=0` turns it off (for measurements).
"""

from __future__ import annotations

import os

from xdsl.dialects import arith, func, tensor
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation

SWITCH = "IRAD_NATIVE_RECOMPUTE"
# Smaller arrays stay in cache anyway; copying their producers would only add
# code for mlir-opt and LLVM to compile.
MIN_ELEMENTS = 1 << 14
# An op used more often stays materialised: a bound on what the copies cost
# to compile, however the uses branch.
MAX_COPIES_PER_OP = 64

_CHEAP_ARITH = (
    arith.AddfOp, arith.SubfOp, arith.MulfOp, arith.DivfOp, arith.NegfOp, arith.MaximumfOp, arith.MinimumfOp,
    arith.MaxnumfOp, arith.MinnumfOp, arith.CmpfOp, arith.SelectOp, arith.UIToFPOp, arith.SIToFPOp,
    arith.AddiOp, arith.SubiOp, arith.MuliOp, arith.CmpiOp, arith.AndIOp, arith.OrIOp, arith.XOrIOp,
    arith.ExtFOp, arith.TruncFOp,
)


def enabled() -> bool:
    return os.environ.get(SWITCH, "") != "0"


def _large(op: Operation) -> bool:
    if len(op.results) != 1:
        return False
    t = op.results[0].type
    if not isinstance(t, TensorType) or any(d < 0 for d in t.get_shape()):
        return False
    elements = 1
    for d in t.get_shape():
        elements *= d
    return elements >= MIN_ELEMENTS


def _cheap_body(op: linalg.GenericOp) -> bool:
    return all(isinstance(inner, (*_CHEAP_ARITH, linalg.YieldOp)) for inner in op.body.walk())


def _cheap(op: Operation) -> bool:
    """Computed elementwise from its operands, by cheap arithmetic."""
    if isinstance(op, (linalg.BroadcastOp, tensor.SplatOp)):
        return True
    if isinstance(op, _CHEAP_ARITH):
        return True  # on tensors: elementwise
    if isinstance(op, linalg.GenericOp):
        return (
            all(str(it.data) == "parallel" for it in op.iterator_types.data)
            and len(op.outputs) == 1
            and _cheap_body(op)
        )
    return False


def recompute_cheap_producers(module: ModuleOp) -> int:
    """Copy each cheap, large, multiply used array producer once per use (in
    place). Returns the number of copies made."""
    copies = 0
    for function in [op for op in module.ops if isinstance(op, func.FuncOp)]:
        for block in [b for region in function.regions for b in region.blocks]:
            copies += _recompute_in(block)
    return copies


def _recompute_in(block) -> int:
    copies = 0
    for op in reversed(list(block.ops)):
        if not (_large(op) and _cheap(op)):
            continue
        uses = [use for use in op.results[0].uses]
        if len(uses) < 2 or len(uses) > MAX_COPIES_PER_OP:
            continue
        for use in uses[1:]:
            copy = op.clone()
            block.insert_op_before(copy, use.operation if use.operation.parent_block() is block else op)
            use.operation.operands[use.index] = copy.results[0]
            copies += 1
    return copies
