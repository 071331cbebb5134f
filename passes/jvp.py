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

from irad.passes.ad.forward import ForwardDifferentiator


@dataclass(frozen=True)
class JvpPass(ModulePass):
    """Replace irad.jvp requests by calls to generated jvp functions,
    consulting the rule table (forward mode) at every call."""

    name = "irad-jvp"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        ForwardDifferentiator(op).rewrite_requests()


__all__ = ["JvpPass"]
