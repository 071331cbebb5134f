"""`irad-jvp`: forward-mode differentiation of func/arith/math/scf IR.

The pass replaces each `irad.jvp` request by a call to a generated jvp
function (passes/ad/forward.py), which computes the primal and its tangent
side by side, asking the rule table in forward mode at every call op.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from irad.ir.dialect import JvpOp
from irad.ir.walk import find
from irad.passes.ad.decisions import CallDecision
from irad.passes.ad.forward import ForwardDifferentiator
from irad.rules import RuleTable
from irad.passes.lower_tape import TAPE_OPS, LowerTapePass


@dataclass(frozen=True)
class JvpPass(ModulePass):
    """Replace irad.jvp requests by calls to generated jvp functions,
    consulting the rule table (forward mode) at every call. Forward mode
    follows the tape as code: a module holding requests and tape ops (forward
    over reverse) has its tape lowered first, to the form `tape`."""

    name = "irad-jvp"

    tape: str = "memref"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if find(op, JvpOp) and find(op, TAPE_OPS):
            LowerTapePass(self.tape).apply(ctx, op)
        ForwardDifferentiator(op).rewrite_requests()


def call_decisions(module: ModuleOp, name: str, active: tuple[bool, ...], table: RuleTable) -> tuple[CallDecision, ...]:
    """The jvp of @name for `active` against `table` (forward mode follows a
    tape as memref code: lowered first); what was decided at each call
    (irad.explain's report)."""
    LowerTapePass().apply(None, module)
    differentiator = ForwardDifferentiator(module, table)
    differentiator.jvp(name, active)
    return tuple(differentiator.decisions)


__all__ = ["JvpPass", "call_decisions"]
