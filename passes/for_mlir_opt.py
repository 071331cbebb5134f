"""`irad-for-mlir-opt`: from hand-written requests to a module upstream MLIR 22 lowers.

One pass name for the whole way from IR holding request ops to IR that
`mlir-opt` 22 takes to the LLVM dialect with irad's lowering pipeline
(`irad.backends.native.compile.LOWERING`, the command in docs/ir-conventions.md):

    irad-differentiate{checkpoint=...}   irad.grad, irad.value_and_grad, irad.vjp
    irad-lower-tape                      the tape ops become memref code
    irad-jvp                             irad.jvp (after reverse mode: forward over reverse)
    irad-optimize, irad-symbol-dce       as the Python API's pipelines
    then expand_for_llvm                 math.isinf/isnormal, which MLIR 22 cannot lower, and
                                         math.expm1, which it lowers to exp(x) - 1: libm's expm1

The result holds no irad op, only func, arith, math, scf, memref (and whatever
else the input held, such as the llvm ops of a printing `@main`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from irad.ir.mlir_ops import expand_for_llvm
from irad.passes.differentiate import DifferentiatePass
from irad.passes.jvp import JvpPass
from irad.passes.lower_tape import LowerTapePass
from irad.passes.optimize import OptimizePass
from irad.passes.symbol_dce import SymbolDCEPass


@dataclass(frozen=True)
class ForMlirOptPass(ModulePass):
    """Differentiate every request, lower the tape, optimise, and expand the math
    ops MLIR 22 has no lowering for: the module is ready for mlir-opt 22.
    `checkpoint` is irad-differentiate's option."""

    name = "irad-for-mlir-opt"

    checkpoint: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for step in (
            DifferentiatePass(checkpoint=self.checkpoint),
            LowerTapePass(),
            JvpPass(),
            OptimizePass(),
            SymbolDCEPass(),
        ):
            step.apply(ctx, op)
        expand_for_llvm(op)
