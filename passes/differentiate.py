"""`irad-differentiate`: reverse-mode differentiation of func/arith/math/scf IR.

The pass replaces each request op (`irad.grad`, `irad.value_and_grad`,
`irad.vjp`) by calls to generated functions: an augmented primal and a
pullback per (callee, activity), built by the Differentiator
(passes/ad/differentiator.py), which asks the rule table once at every call
op. It works on IR alone (no Python frontend), so it runs inside stock
`xdsl-opt` too.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from irad.passes.ad.differentiator import Differentiator
from irad.passes.optimisation.inliner import KEEP_ALL_INLINED


@dataclass(frozen=True)
class DifferentiatePass(ModulePass):
    """Replace irad.grad / irad.value_and_grad by calls to generated augmented
    primals and pullbacks, consulting the rule table at every call.

    With `remarks=true`, each generated augmented primal gets an `irad.remarks`
    attribute saying what happened at each call of its primal (for FileCheck).
    With `checkpoint=true`, loops record only each iteration's inputs, and the
    reverse sweep recomputes the body (less memory, about one more forward sweep).
    With `inline=true`, a call whose callee AD differentiates is first inlined
    into its caller (the primal changes in place, not what it computes): one
    pair of generated functions per request instead of one per callee, and
    linear compile time in the depth of the call tree (irad's gradient
    pipeline does this unless the module will be differentiated again);
    `keep-shared=N` keeps shared callees of at least N ops as calls (see
    irad-inline). There the primal of the module's only request, private and
    used by nothing else, becomes its augmented primal (moved, not cloned) and
    is erased. With
    `hoist=true`, loop-invariant scalar code of each function differentiated is
    first moved out of its loops (in place), so that it is read from outside
    rather than recorded every iteration.
    """

    name = "irad-differentiate"
    remarks: bool = False

    checkpoint: bool = False
    inline: bool = False
    hoist: bool = False
    keep_shared: int = KEEP_ALL_INLINED

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        differentiator = Differentiator(
            op, checkpoint=self.checkpoint, inline=self.inline, hoist=self.hoist, keep_shared=self.keep_shared
        )
        differentiator.rewrite_requests()
        if self.remarks:
            differentiator.attach_remarks()


__all__ = ["DifferentiatePass"]
