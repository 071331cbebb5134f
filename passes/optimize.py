"""
The post-AD optimisation pipeline: the metadata-aware inliner, canonicalization with
irad's float folds, CSE and DCE, repeated until nothing changes.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker
from xdsl.transforms.canonicalize import CanonicalizationRewritePattern
from xdsl.transforms.common_subexpression_elimination import cse
from xdsl.transforms.dead_code_elimination import region_dce

from irad.passes.float_folds import DispatchedFloatFolds
from irad.passes.inline import DEFAULT_MAX_DEPTH, DEFAULT_THRESHOLD, inline_calls


def _count_ops(module: builtin.ModuleOp) -> int:
    return sum(1 for _ in module.walk())


@dataclass(frozen=True)
class OptimizePass(ModulePass):
    """
    Inlines calls as `irad-inline` does (`threshold`, `max-depth` are its options;
    followed by CSE when it inlined anything), then runs xDSL's canonicalization
    patterns and folders together with irad's float folds (one greedy worklist walk,
    xDSL's `canonicalize` plus FLOAT_FOLDS), then xDSL's CSE and DCE; repeats the
    last three while CSE or DCE change the module, since what they merge or remove
    can enable more folds. The walk itself runs to a fixed point, so a round in which
    CSE and DCE change nothing leaves a fixed point of all three. At most
    `max_rounds` rounds.
    """

    name = "irad-optimize"

    max_rounds: int = 10
    threshold: int = DEFAULT_THRESHOLD
    max_depth: int = DEFAULT_MAX_DEPTH

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        walker = PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [CanonicalizationRewritePattern(), DispatchedFloatFolds()],
                ctx=ctx,
                folding_enabled=True,
            ),
            post_walk_func=region_dce,
        )
        # The inliner runs once: it already reaches its own fixed point (callers
        # first, each exposed call judged in turn), and a second run would start
        # counting `max-depth` afresh below the calls the first one kept.
        if inline_calls(op, self.threshold, self.max_depth):
            # Inlined bodies repeat constants and shared primal values; merging
            # them first shrinks what the walk visits (by 15% on the call trees of
            # bench/inlining.py, by 60% when the callees share their arguments).
            cse(op)
        for _ in range(self.max_rounds):
            walker.rewrite_module(op)
            # CSE erases each op it replaces (bar a multi-result op whose results it
            # can only partly replace), so the op count tells whether it did anything.
            size = _count_ops(op)
            cse(op)
            removed_dead = region_dce(op.body)
            if not removed_dead and _count_ops(op) == size:
                return
