"""`irad-inline`: inline `func.call`s judged on the primal call graph.

A generated function (it carries `irad.primal`) is inlined at every call
unless its primal is recursive; other functions only when small and not on a
cycle (passes/optimisation/inliner.py has the rules and the options).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from irad.passes.optimisation.inliner import DEFAULT_MAX_DEPTH, DEFAULT_THRESHOLD, KEEP_ALL_INLINED, inline_calls


@dataclass(frozen=True)
class InlinePass(ModulePass):
    """Inline `func.call`s judged on the primal call graph (see the module docstring)."""

    name = "irad-inline"

    threshold: int = DEFAULT_THRESHOLD
    max_depth: int = DEFAULT_MAX_DEPTH
    keep_shared: int = KEEP_ALL_INLINED

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        inline_calls(op, self.threshold, self.max_depth, self.keep_shared)


__all__ = ["InlinePass"]
