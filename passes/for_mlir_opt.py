"""`irad-for-mlir-opt`: from hand-written requests to a module upstream MLIR 22 lowers.

One pass name for the whole way from IR holding request ops to IR that
`mlir-opt` 22 takes to the LLVM dialect with irad's lowering pipeline
(`irad.backends.native.compile.LOWERING`, the command in docs/ir-conventions.md):
the Python API's pipeline (passes/pipelines.py: every request, the tape
lowered to memref code, the optimiser), then `expand_for_llvm`: math.isinf /
isnormal, which MLIR 22 cannot lower, and math.expm1, which it lowers to
exp(x) - 1 (libm's expm1 instead).

The result holds no irad op, only func, arith, math, scf, memref (and whatever
else the input held, such as the llvm ops of a printing `@main`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from irad.ir.mlir_ops import expand_for_llvm
from irad.passes.pipelines import Options, autodiff_passes


@dataclass(frozen=True)
class ForMlirOptPass(ModulePass):
    """Rewrite every request, lower the tape, optimise, and expand the math
    ops MLIR 22 has no lowering for: the module is ready for mlir-opt 22.
    `checkpoint` is irad-differentiate's option."""

    name = "irad-for-mlir-opt"

    checkpoint: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for step in autodiff_passes(Options(checkpoint=self.checkpoint)):
            step.apply(ctx, op)
        expand_for_llvm(op)
