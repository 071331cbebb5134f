"""Walking the ops nested in an op, as `Operation.walk()` does, at less cost."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue


def walk(op: Operation) -> Iterator[Operation]:
    """`op.walk()`: `op`, then every op nested in it, in the same (pre-)order.

    xDSL's walk nests a generator per op, block and region, so each op of a
    flat function comes up through four generator frames; here through two:
    the ops of a block come from one loop (`walk_block`), and only an op
    with regions opens a nested walk.
    The passes walk whole modules many times; this takes about a tenth off
    compiling a large call tree. As with xDSL's, the op after the current one
    is read before the current one is handed out."""
    yield op
    for region in op.regions:
        for block in region.blocks:
            yield from walk_block(block)


def walk_block(block: Block) -> Iterator[Operation]:
    """`block.walk()`: every op of `block` and every op nested in them, as `walk`."""
    op = block._first_op
    while op is not None:
        following = op._next_op  # the fields behind xDSL's `next_op` property
        if op.regions:
            yield from walk(op)
        else:
            yield op
        op = following


def ops_of(block: Block) -> list[Operation]:
    """`list(block.ops)`, without its first walk: `list` asks xDSL's BlockOps for
    its length, which it counts by walking the block (20,000 ops, 7 ms)."""
    ops = []
    op = block._first_op
    while op is not None:
        ops.append(op)
        op = op._next_op
    return ops


def find(op: Operation, classes: type | tuple[type, ...]) -> list[Operation]:
    """`[inner for inner in walk(op) if isinstance(inner, classes)]` in one loop
    per block, without a generator frame per op or a Python-level isinstance
    against xDSL's ABCs per op (the answer is remembered per class: xDSL
    registers no virtual subclasses). The passes look for calls, loops and
    requests in whole modules."""
    return find_among((op,), classes)


def find_among(ops: Sequence[Operation], classes: type | tuple[type, ...]) -> list[Operation]:
    """`find` of each of `ops`, one after the other."""
    found: list[Operation] = []
    answers: dict[type, bool] = {}
    for op in ops:
        _scan(op, classes, answers, found, alone=True)
    return found


def _scan(op: Operation | None, classes, answers: dict[type, bool], found: list[Operation], alone=False) -> None:
    """`find` of `op` (`alone`) or of it and the ops after it in its block."""
    while op is not None:
        kind = type(op)
        answer = answers.get(kind)
        if answer is None:
            answer = answers[kind] = issubclass(kind, classes)
        if answer:
            found.append(op)
        for region in op.regions:  # recursion by the nesting of regions, not of calls
            for block in region.blocks:
                _scan(block._first_op, classes, answers, found)
        op = None if alone else op._next_op


def backwards_regions_first(region: Region) -> list[Operation]:
    """`list(region.walk(reverse=True, region_first=True))`: the order in which
    xDSL's rewrite walker fills its worklist (a stack, so the first op comes
    out first), without a generator per op, block and region."""
    found: list[Operation] = []
    _backwards(region, found)
    return found


def _backwards(region: Region, found: list[Operation]) -> None:
    for block in reversed(region.blocks):
        op = block._last_op
        while op is not None:
            if op.regions:  # recursion by the nesting of regions, not of calls
                for inner in reversed(op.regions):
                    _backwards(inner, found)
            found.append(op)
            op = op._prev_op


def operands(op: Operation) -> tuple:
    """`tuple(op.operands)`, read from the op's own tuple: `op.operands` wraps the
    op in a sequence view whose every item goes through two `__getitem__`s, and
    CSE and canonicalization read the operands of every op they visit."""
    return op._operands  # an SSAValues: a tuple (its hash and == are tuple's)


def inside(anchor: Operation | None, region_op: Operation) -> bool:
    """Whether `anchor` is `region_op` or nested in it."""
    while anchor is not None:
        if anchor is region_op:
            return True
        anchor = anchor.parent_op()
    return False


def defined_inside(v: SSAValue, region_op: Operation) -> bool:
    """Is `v` a result of an op nested in `region_op` (or of it), or an argument of a block in its regions?"""
    return inside(v.block.parent_op() if isinstance(v, BlockArgument) else v.owner, region_op)
