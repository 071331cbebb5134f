"""`irad-differentiate`: reverse-mode differentiation of func/arith/math/scf IR.

The pass replaces each request op (`irad.grad`, `irad.value_and_grad`,
`irad.vjp`) by calls to generated functions: an augmented primal and a
pullback per (callee, activity), built by the Differentiator
(passes/ad/differentiator.py), which asks the rule table once at every call
op. It works on IR alone (no Python frontend), so it runs inside stock
`xdsl-opt` too.

Requests are rewritten the innermost first. A forward-mode request (irad.jvp)
that a reverse-mode one reaches (reverse over forward: jacrev(jacfwd(f))) is
rewritten first, by forward mode, so that reverse mode differentiates the
code it generated.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from irad.base.errors import DifferentiationError
from irad.ir.dialect import JvpOp
from irad.ir.locations import location
from irad.ir.walk import find
from irad.rules import RuleTable
from irad.passes.ad.decisions import CallDecision
from irad.passes.ad.differentiator import REQUESTS, Differentiator, reached_ops
from irad.passes.ad.forward import ForwardDifferentiator
from irad.passes.optimisation.inliner import KEEP_ALL_INLINED
from irad.ir.symbols import functions_by_name


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
        _forward_requests_first(op)
        differentiator = Differentiator(
            op, checkpoint=self.checkpoint, inline=self.inline, hoist=self.hoist, keep_shared=self.keep_shared
        )
        differentiator.rewrite_requests()
        if self.remarks:
            differentiator.attach_remarks()


def call_decisions(module: ModuleOp, name: str, active: tuple[bool, ...], table: RuleTable) -> tuple[CallDecision, ...]:
    """Differentiate @name for `active` against `table`; what was decided at
    each call (irad.explain's report)."""
    differentiator = Differentiator(module, table)
    differentiator.reverse(name, active)
    return tuple(differentiator.decisions)


def _forward_requests_first(module: ModuleOp) -> None:
    """Rewrite, by forward mode, the irad.jvp requests that reverse-mode
    requests reach, the innermost first."""
    functions = functions_by_name(module)
    below = [r for r in reached_ops(functions, [r.callee.root_reference.data for r in find(module, REQUESTS)])
             if isinstance(r, JvpOp)]
    if not below:
        return
    for request in below:
        if any(isinstance(r, REQUESTS) for r in reached_ops(functions, [request.callee.root_reference.data])):
            raise DifferentiationError(
                f"{location(request)}: reverse mode over forward mode over reverse mode is not supported\n"
                "  hint: take the inner derivatives in one mode (jacrev(jacrev(...)) or jacfwd(jacrev(...)))"
            )
    forward = ForwardDifferentiator(module)
    for request in reversed(below):  # callees' requests were found after their callers'
        if request.parent is not None:
            forward.rewrite_request(request)


__all__ = ["DifferentiatePass", "call_decisions"]
