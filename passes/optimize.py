"""`irad-optimize`: the post-AD optimisation pipeline.

The metadata-aware inliner (passes/optimisation/inliner.py), then
canonicalization with irad's float folds, CSE and DCE
(passes/optimisation/simplify.py), repeated until nothing changes.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.passes import ModulePass

from irad.passes.optimisation.inliner import DEFAULT_MAX_DEPTH, DEFAULT_THRESHOLD, KEEP_ALL_INLINED, inline_calls
from irad.passes.optimisation.simplify import Touched, canonicalize, cse, dce


@dataclass(frozen=True)
class OptimizePass(ModulePass):
    """
    Inlines calls as `irad-inline` does (`threshold`, `max-depth`, `keep-shared` are its options),
    then canonicalizes (xDSL's folders
    and canonicalization patterns with irad's float folds, to a fixed point; see
    the module docstring), then runs xDSL's CSE and DCE; repeats the last three
    while CSE or DCE change the module, since what they merge or remove can
    enable more folds: each later canonicalization starts from the ops they
    touched. A round in which CSE and DCE change nothing, or a canonicalization
    after them that rewrites nothing, leaves a fixed point of all three. At most
    `max_rounds` canonicalizations.
    """

    name = "irad-optimize"

    max_rounds: int = 10
    threshold: int = DEFAULT_THRESHOLD
    max_depth: int = DEFAULT_MAX_DEPTH
    keep_shared: int = KEEP_ALL_INLINED

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        # The inliner runs once: it already reaches its own fixed point (callers
        # first, each exposed call judged in turn), and a second run would start
        # counting `max-depth` afresh below the calls the first one kept. (No CSE
        # right after it: since irad-differentiate inlines the primal call tree,
        # it inlines a pair per request, and a CSE before the walk cost more than
        # it saved the walk: 10% of the pipeline on bench/compile_time.py's trees.)
        inline_calls(op, self.threshold, self.max_depth, self.keep_shared)
        touched: Touched | None = None
        for _ in range(self.max_rounds):
            if not canonicalize(ctx, op, None if touched is None else touched.live()) and touched is not None:
                return  # nothing new since CSE and DCE ran, and they are idempotent
            touched = Touched()
            changed_by_cse = cse(op, touched)
            if not dce(op, touched) and not changed_by_cse:
                return
