"""The simplification `irad-optimize` (passes/optimize.py) repeats after the
inliner: canonicalization with irad's float folds, CSE and DCE.

The canonicalization is xDSL's (its folders and each op's canonicalization
patterns, as `canonicalize` applies them) plus FLOAT_FOLDS,
ElementwiseOfBroadcasts (passes/sink_broadcasts.py), SumOfSlicesIntoZeros
(passes/join_slice_sums.py) and ReductionOfSplat (passes/splat_reductions.py),
driven more cheaply
than `canonicalize` drives them, with the same results:

* the patterns of an op type are looked up once per type, not once per op (xDSL
  builds them afresh, and an applier for them, at every op it visits);
* one worklist walk: xDSL's walker, having reached a fixed point on its worklist
  (which gets every op a rewrite inserts or changes, the users of what it
  replaces and the operands of what it erases), walks the whole module again to
  confirm it, and rewrites nothing there. The users of an op changed in place
  go on the worklist too, so nothing such a change enables is missed;
* no dead-code check per op: DCE runs once over the module after the walk;
* a pattern that needs an operand defined by some op type (a constant, for
  the constant folds: `operand_from`) is not tried on ops without one;
* after the first round, no whole-module walk: CSE and DCE (xDSL's) report
  what they change as a rewriter reports it to the walker (the users of a
  value CSE replaced, the producers of the operands of what they erased:
  `Touched`), and the next walk starts from those ops alone. If it rewrites
  nothing, the module is what CSE and DCE left, which they leave unchanged
  when run again: the fixed point, found without a confirming round.
"""

from collections.abc import Callable, Sequence

from xdsl.context import Context
from xdsl.dialects import arith, builtin, tensor
from xdsl.dialects.builtin import MemRefType, UnregisteredOp
from xdsl.dialects.linalg.ops import GenericOp, ReduceOp
from xdsl.folder import Folder
from xdsl.ir import Block, Operation, Region
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriterListener, PatternRewriteWalker, RewritePattern
from xdsl.traits import (
    ConstantLike,
    HasCanonicalizationPatternsTrait,
    HasFolder,
    IsolatedFromAbove,
    IsTerminator,
    MemoryEffect,
    NoMemoryEffect,
    SymbolOpInterface,
)
from xdsl.transforms.canonicalization_patterns.arith import FoldConstConstOp, FoldConstsByReassociation
from xdsl.transforms.common_subexpression_elimination import CSEDriver, KnownOps, OperationInfo
from xdsl.transforms.dead_code_elimination import LiveSet, would_be_trivially_dead

from irad.ir.walk import backwards_regions_first, operands as operand_tuple
from irad.passes.sink_broadcasts import ELEMENTWISE, ElementwiseOfBroadcasts, ElementwiseOfSplats
from irad.passes.float_folds import DispatchedFloatFolds
from irad.passes.join_slice_sums import SumOfSlicesIntoZeros
from irad.passes.splat_reductions import ExtractOfSplat, GenericOfSplats, ReductionOfSplat
from irad.ir.isa import isa


# xDSL's float patterns that rewrite an op only when an operand is defined by a
# constant (both fold constants): as irad's float folds declare with `operand_from`.
_XDSL_OPERAND_FROM: dict[type[RewritePattern], tuple[type[Operation], ...]] = {
    FoldConstConstOp: (arith.ConstantOp,),  # both operands constants
    FoldConstsByReassociation: (arith.ConstantOp,),  # one operand a constant
}


def operand_from(pattern: RewritePattern) -> tuple[type[Operation], ...] | None:
    """The op types one of which must define an operand of an op for `pattern`
    to rewrite it; None if the pattern declares none."""
    pattern = getattr(pattern, "pattern", pattern)  # a _Guarded xDSL pattern
    return _XDSL_OPERAND_FROM.get(type(pattern), getattr(pattern, "operand_from", None))


def _reassociates(op: Operation) -> bool:
    fastmath = op.properties.get("fastmath")
    return fastmath is not None and arith.FastMathFlag.REASSOC in fastmath.data  # type: ignore[attr-defined]


def _all_constant(op: Operation) -> bool:
    return all(isa(v.owner, arith.ConstantOp) for v in operand_tuple(op))


# What else xDSL's float patterns require before they rewrite, checked before
# they run: they read operands and flags through xDSL's named accessors (op.lhs,
# op.fastmath), each a generic lookup that costs several times a plain read,
# before reaching the check that fails on most ops (no `reassoc` flag: irad
# emits none unless asked; not both operands constants).
_XDSL_GUARDS: dict[type[RewritePattern], Callable[[Operation], bool]] = {
    FoldConstsByReassociation: _reassociates,  # requires `reassoc` on the op (and its user)
    FoldConstConstOp: _all_constant,
}


class _Guarded(RewritePattern):
    """An xDSL pattern tried only on ops that meet `guard`, a condition it requires."""

    def __init__(self, pattern: RewritePattern, guard: Callable[[Operation], bool]) -> None:
        self.pattern, self.guard = pattern, guard

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if self.guard(op):
            self.pattern.match_and_rewrite(op, rewriter)


def _guarded(pattern: RewritePattern) -> RewritePattern:
    guard = _XDSL_GUARDS.get(type(pattern))
    return pattern if guard is None else _Guarded(pattern, guard)


class Canonicalize(RewritePattern):
    """Fold an op (xDSL's folders), else apply its canonicalization patterns, else
    irad's float folds, else sink broadcasts below it (broadcast_sinking.py), else
    join a sum of slices into zeros (slice_sums.py); what applies to an op type is
    found once per type.

    A pattern that needs an operand defined by some op type (`operand_from`: a
    constant, say) is skipped on ops without one: most float ops of a
    differentiated module have no constant operand, and trying each pattern
    costs several times what looking at the operands' owners once costs."""

    def __init__(self, ctx: Context) -> None:
        self.folder = Folder(ctx)
        self.float_folds = DispatchedFloatFolds()
        self.sink_broadcasts = ElementwiseOfBroadcasts()
        self.splats = ElementwiseOfSplats()
        self.join_slices = SumOfSlicesIntoZeros()
        self.splat_reductions = ReductionOfSplat()
        self.splat_extracts = ExtractOfSplat()
        self.splat_generics = GenericOfSplats()
        self.by_type: dict[type[Operation], tuple[bool, list[tuple[RewritePattern, tuple | None]]]] = {}
        # the `operand_from` requirements an op of a type meets by defining an operand
        self.meets: dict[type, frozenset[tuple]] = {}
        self.requirements: set[tuple] = set()

    def _for(self, op_type: type[Operation]) -> tuple[bool, list[tuple[RewritePattern, tuple | None]]]:
        found = self.by_type.get(op_type)
        if found is None:
            # constants are not folded: they would fold to themselves forever
            folds = op_type.has_trait(HasFolder) and not op_type.has_trait(ConstantLike)
            patterns = [
                _guarded(pattern)
                for trait in op_type.get_traits_of_type(HasCanonicalizationPatternsTrait)
                for pattern in trait.get_patterns(op_type)
            ]
            patterns += self.float_folds.patterns_for(op_type)
            if getattr(op_type, "name", None) in ELEMENTWISE:  # elementwise ops on broadcasts, on splats
                patterns += [self.sink_broadcasts, self.splats]
            if op_type is arith.AddfOp:  # sums of slices written into zeros
                patterns.append(self.join_slices)
            if op_type is ReduceOp:  # reductions of one number, in closed form
                patterns.append(self.splat_reductions)
            if op_type is tensor.ExtractOp:  # and their numbers read back
                patterns.append(self.splat_extracts)
            if op_type is GenericOp:  # elementwise generics of one number each
                patterns.append(self.splat_generics)
            found = self.by_type[op_type] = (folds, [(p, operand_from(p)) for p in patterns])
            new = {needs for _, needs in found[1] if needs is not None} - self.requirements
            if new:
                self.requirements |= new
                self.meets.clear()  # answers per type are recomputed with the new requirements
        return found

    def _met(self, op: Operation) -> frozenset[tuple]:
        """The requirements the owners of `op`'s operands meet."""
        met: frozenset[tuple] = frozenset()
        for operand in operand_tuple(op):
            owner_type = type(operand.owner)
            meets = self.meets.get(owner_type)
            if meets is None:
                meets = self.meets[owner_type] = frozenset(
                    needs for needs in self.requirements if issubclass(owner_type, needs)
                )
            met |= meets
        return met

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        folds, patterns = self._for(type(op))
        if folds:
            folded = self.folder.try_fold(op)
            if folded is not None:
                rewriter.replace(op, new_ops=folded[1], new_results=folded[0])
                return
        met = None
        for pattern, needs in patterns:
            if needs is not None:
                if met is None:
                    met = self._met(op)
                if needs not in met:
                    continue
            pattern.match_and_rewrite(op, rewriter)
            if rewriter.has_done_action:
                return


class _OneWalk(PatternRewriteWalker):
    """A PatternRewriteWalker that walks a region once and then works off its
    worklist to a fixed point (see the module docstring); or, given the ops
    CSE and DCE touched, works off only those (`rewrite_ops`)."""

    def _handle_operation_modification(self, op: Operation) -> None:
        super()._handle_operation_modification(op)
        for result in op.results:
            for use in result.uses:
                self._worklist.push(use.operation)

    def rewrite_region(self, region) -> bool:
        push = self._worklist.push
        for op in backwards_regions_first(region):  # xDSL's `_populate_worklist`, cheaper
            push(op)
        return self._process_worklist(self._get_rewriter_listener())

    def rewrite_ops(self, ops: Sequence[Operation]) -> bool:
        for op in reversed(ops):  # a stack: the first found is rewritten first
            self._worklist.push(op)
        return self._process_worklist(self._get_rewriter_listener())


class Touched:
    """The ops whose neighbourhood CSE or DCE changed, as a rewriter would have
    reported them to the canonicalization walk: the users of a value CSE
    replaced, and the producers of the operands of an op CSE or DCE erased
    (of the ops nested in it too). Without them, only a whole new walk would
    see what those changes enable."""

    def __init__(self) -> None:
        self.found: dict[Operation, None] = {}
        self.erased: set[Operation] = set()

    def users_of(self, op: Operation) -> None:
        for result in op.results:
            for use in result.uses:
                self.found[use.operation] = None

    def removed(self, op: Operation) -> None:
        for inner in op.walk():
            self.erased.add(inner)
            for operand in inner.operands:
                if isinstance(operand.owner, Operation):
                    self.found[operand.owner] = None

    def live(self) -> list[Operation]:
        return [op for op in self.found if op not in self.erased]


_NO_ITEMS: frozenset = frozenset()


def _cse_key(op: Operation) -> object:
    """What xDSL's CSE compares ops on (its OperationInfo: name, attributes,
    properties, operands, result types) as a plain tuple, which costs about a
    third as much to build and hash. Ops with regions keep OperationInfo, which
    also compares their regions structurally (the two kinds of key never match)."""
    if op.regions:
        return OperationInfo(op)
    name = op.name
    if name == UnregisteredOp.name:
        name = op.op_name.data  # type: ignore[attr-defined]
    attributes, properties = op.attributes, op.properties
    return (
        name,
        operand_tuple(op),
        tuple(result.type for result in op.results),
        frozenset(attributes.items()) if attributes else _NO_ITEMS,
        frozenset(properties.items()) if properties else _NO_ITEMS,
    )


class _KnownOps(KnownOps):
    """xDSL's KnownOps keyed by `_cse_key`."""

    def __getitem__(self, k: Operation) -> Operation:
        return self._known_ops[_cse_key(k)]

    def __setitem__(self, k: Operation, v: Operation) -> None:
        self._known_ops[_cse_key(k)] = v

    def __contains__(self, k: Operation) -> bool:
        return _cse_key(k) in self._known_ops

    def get(self, k: Operation, default=None):
        return self._known_ops.get(_cse_key(k), default)

    def pop(self, k: Operation) -> Operation:
        return self._known_ops.pop(_cse_key(k))


class _TouchingCSE(CSEDriver):
    """xDSL's CSE, telling `touched` what it replaces and erases, with cheaper
    keys (`_cse_key`) and, for an op with no regions whose type has no effects,
    xDSL's steps without its per-op trait queries (the answers are the type's)."""

    def __init__(self, touched: Touched) -> None:
        super().__init__(_known_ops=_KnownOps())
        self.touched = touched
        self.changed = False

    def _simplify_operation(self, op: Operation) -> None:
        if op.regions or not _effect_free(type(op)):
            super()._simplify_operation(op)
        elif all(result.first_use is None for result in op.results):
            self._mark_erasure(op)  # trivially dead
        else:  # one key for the lookup and the insertion
            known, key = self._known_ops._known_ops, _cse_key(op)
            if existing := known.get(key):
                self._replace_and_delete(op, existing)
            else:
                known[key] = op

    # xDSL's, with _KnownOps for its KnownOps
    def _simplify_block(self, block: Block) -> None:
        for op in block.ops:
            if op.regions:
                if op.has_trait(IsolatedFromAbove, value_if_unregistered=True):
                    outer = self._known_ops
                    self._known_ops = _KnownOps()
                    for region in op.regions:
                        self._simplify_region(region)
                    self._known_ops = outer
                else:
                    for region in op.regions:
                        self._simplify_region(region)
            self._simplify_operation(op)

    def _simplify_region(self, region: Region) -> None:
        if len(region.blocks) == 1:
            outer = self._known_ops
            self._known_ops = _KnownOps(outer)
            self._simplify_block(region.block)
            self._known_ops = outer

    def _replace_and_delete(self, op: Operation, existing: Operation) -> None:
        self.touched.users_of(op)
        self.changed = True
        super()._replace_and_delete(op, existing)

    def _commit_erasures(self) -> None:
        for op in self._to_erase:
            if op.parent is not None:
                self.touched.removed(op)
                self.changed = True
        super()._commit_erasures()


def cse(module: builtin.ModuleOp, touched: Touched) -> bool:
    """xDSL's CSE; True if it changed anything."""
    driver = _TouchingCSE(touched)
    driver.simplify(module)
    return driver.changed


# Op types whose ops are dead once their results are: no memory effects whatever
# the op (Pure, NoMemoryEffect), not a terminator, not a symbol. Other types ask
# per op (effects that depend on the op, as scf.for's on its body).
_DEAD_IF_UNUSED: dict[type[Operation], bool] = {}


def _effect_free(op_type: type[Operation]) -> bool:
    found = _DEAD_IF_UNUSED.get(op_type)
    if found is None:
        found = _DEAD_IF_UNUSED[op_type] = _effect_free_type(op_type)
    return found


def _effect_free_type(op_type: type[Operation]) -> bool:
    effects = op_type.get_traits_of_type(MemoryEffect)
    return (
        bool(effects)
        and all(isinstance(trait, NoMemoryEffect) for trait in effects)
        and not op_type.has_trait(IsTerminator)
        and not op_type.has_trait(SymbolOpInterface)
    )


def dead_if_unused(op: Operation) -> bool:
    """Would `op` be dead if nothing used its results? xDSL's query
    (`would_be_trivially_dead`), answered once per op type where the type decides
    it, and with the effects MLIR gives linalg ops, which xDSL does not declare (so
    its DCE keeps every dead linalg.generic or linalg.reduce): an op of the linalg
    dialect on tensors (no memref operand) has the effects of its body, as in
    MLIR, where a structured op with pure tensor semantics has none of its own and
    linalg.index, linalg.yield are pure."""
    if _effect_free(type(op)) or would_be_trivially_dead(op):
        return True
    return _linalg_on_tensors(op) and all(
        inner is block.last_op and inner.name == "linalg.yield" or dead_if_unused(inner)
        for region in op.regions
        for block in region.blocks
        for inner in block.ops
    )


def _linalg_on_tensors(op: Operation) -> bool:
    return (
        op.name.startswith("linalg.")
        and op.name != "linalg.yield"
        and not any(isinstance(v.type, MemRefType) for v in op.operands)
    )


class _LiveSet(LiveSet):
    """xDSL's liveness for DCE with irad's `dead_if_unused`, noting whether a
    region has several blocks."""

    several_blocks = False

    def propagate_region_liveness(self, region) -> None:
        self.several_blocks |= len(region.blocks) > 1
        super().propagate_region_liveness(region)

    def propagate_op_liveness(self, op: Operation) -> None:
        for region in op.regions:
            self.propagate_region_liveness(region)
        live = self._live_ops
        if op in live:
            return
        if not dead_if_unused(op):
            self.set_live(op)
            return
        for result in op.results:  # loops, not a generator: asked of every op
            for use in result.uses:
                if use.operation in live:
                    self.set_live(op)
                    return


def dce(module: builtin.ModuleOp, touched: Touched) -> bool:
    """xDSL's DCE (`region_dce`) with irad's `dead_if_unused`; True if it removed
    anything. xDSL propagates
    liveness until a sweep changes nothing, which for single-block regions is
    always the second: a reverse sweep sees every user of a value (later in its
    block, or nested in a later op, whose regions are swept first) before the
    value. So the second sweep is made only where a region has several blocks."""
    live = _LiveSet()
    live.changed = False
    live.propagate_region_liveness(module.body)
    while live.several_blocks and live.changed:
        live.changed = False
        live.propagate_region_liveness(module.body)
    live.changed = False
    live.delete_dead(module.body, PatternRewriterListener(operation_removal_handler=[touched.removed]))
    return live.changed


def canonicalize(ctx: Context, module: builtin.ModuleOp, only: Sequence[Operation] | None = None) -> bool:
    """xDSL's canonicalization and irad's float folds to a fixed point; True if
    anything changed. Leaves dead ops for DCE. With `only`, the walk starts
    from those ops (what CSE and DCE touched) instead of the whole module."""
    walker = _OneWalk(Canonicalize(ctx))
    return walker.rewrite_module(module) if only is None else walker.rewrite_ops(only)
