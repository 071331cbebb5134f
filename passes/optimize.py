"""
The post-AD optimisation pipeline: the metadata-aware inliner, canonicalization with
irad's float folds, CSE and DCE, repeated until nothing changes.

The canonicalization is xDSL's (its folders and each op's canonicalization
patterns, as `canonicalize` applies them) plus FLOAT_FOLDS, driven more cheaply
than `canonicalize` drives them, with the same results:

* the patterns of an op type are looked up once per type, not once per op (xDSL
  builds them afresh, and an applier for them, at every op it visits);
* one worklist walk: xDSL's walker, having reached a fixed point on its worklist
  (which gets every op a rewrite inserts or changes, the users of what it
  replaces and the operands of what it erases), walks the whole module again to
  confirm it, and rewrites nothing there. The users of an op changed in place
  go on the worklist too, so nothing such a change enables is missed;
* no dead-code check per op: DCE runs once over the module after the walk.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.folder import Folder
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern
from xdsl.traits import ConstantLike, HasCanonicalizationPatternsTrait, HasFolder
from xdsl.transforms.common_subexpression_elimination import cse
from xdsl.transforms.dead_code_elimination import region_dce

from irad.passes.float_folds import DispatchedFloatFolds
from irad.passes.inline import DEFAULT_MAX_DEPTH, DEFAULT_THRESHOLD, inline_calls


def _count_ops(module: builtin.ModuleOp) -> int:
    return sum(1 for _ in module.walk())


class Canonicalize(RewritePattern):
    """Fold an op (xDSL's folders), else apply its canonicalization patterns, else
    irad's float folds; what applies to an op type is found once per type."""

    def __init__(self, ctx: Context) -> None:
        self.folder = Folder(ctx)
        self.float_folds = DispatchedFloatFolds()
        self.by_type: dict[type[Operation], tuple[bool, list[RewritePattern]]] = {}

    def _for(self, op_type: type[Operation]) -> tuple[bool, list[RewritePattern]]:
        found = self.by_type.get(op_type)
        if found is None:
            # constants are not folded: they would fold to themselves forever
            folds = op_type.has_trait(HasFolder) and not op_type.has_trait(ConstantLike)
            patterns = [
                pattern
                for trait in op_type.get_traits_of_type(HasCanonicalizationPatternsTrait)
                for pattern in trait.get_patterns(op_type)
            ]
            patterns += self.float_folds.patterns_for(op_type)
            found = self.by_type[op_type] = (folds, patterns)
        return found

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        folds, patterns = self._for(type(op))
        if folds:
            folded = self.folder.try_fold(op)
            if folded is not None:
                rewriter.replace(op, new_ops=folded[1], new_results=folded[0])
                return
        for pattern in patterns:
            pattern.match_and_rewrite(op, rewriter)
            if rewriter.has_done_action:
                return


class _OneWalk(PatternRewriteWalker):
    """A PatternRewriteWalker that walks a region once and then works off its
    worklist to a fixed point (see the module docstring)."""

    def _handle_operation_modification(self, op: Operation) -> None:
        super()._handle_operation_modification(op)
        for result in op.results:
            for use in result.uses:
                self._worklist.push(use.operation)

    def rewrite_region(self, region) -> bool:
        self._populate_worklist(region)
        return self._process_worklist(self._get_rewriter_listener())


def canonicalize(ctx: Context, module: builtin.ModuleOp) -> bool:
    """xDSL's canonicalization and irad's float folds to a fixed point; True if
    anything changed. Leaves dead ops for DCE."""
    return _OneWalk(Canonicalize(ctx)).rewrite_module(module)


@dataclass(frozen=True)
class OptimizePass(ModulePass):
    """
    Inlines calls as `irad-inline` does (`threshold`, `max-depth` are its options),
    then canonicalizes (xDSL's folders
    and canonicalization patterns with irad's float folds, to a fixed point; see
    the module docstring), then runs xDSL's CSE and DCE; repeats the last three
    while CSE or DCE change the module, since what they merge or remove can
    enable more folds. A round in which CSE and DCE change nothing leaves a fixed
    point of all three. At most `max_rounds` rounds.
    """

    name = "irad-optimize"

    max_rounds: int = 10
    threshold: int = DEFAULT_THRESHOLD
    max_depth: int = DEFAULT_MAX_DEPTH

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        # The inliner runs once: it already reaches its own fixed point (callers
        # first, each exposed call judged in turn), and a second run would start
        # counting `max-depth` afresh below the calls the first one kept. (No CSE
        # right after it: since irad-differentiate inlines the primal call tree,
        # it inlines a pair per request, and a CSE before the walk cost more than
        # it saved the walk: 10% of the pipeline on bench/compile_time.py's trees.)
        inline_calls(op, self.threshold, self.max_depth)
        for _ in range(self.max_rounds):
            canonicalize(ctx, op)
            # CSE erases each op it replaces (bar a multi-result op whose results it
            # can only partly replace), so the op count tells whether it did anything.
            size = _count_ops(op)
            cse(op)
            removed_dead = region_dce(op.body)
            if not removed_dead and _count_ops(op) == size:
                return
