"""Which values of a batched tape's records carry the batch.

irad-vmap batches the derivative code of a loop (passes/batching/requests.py):
a push records some values that vary along the batch (the loop's state) and
some that do not (a shared weight). The read of that record, in the pullback,
must give each value back as it was pushed, batched or shared, so that a
shared weight stays one matrix there too. Pushes and reads name no common
op; a record is known by its values' types (one element's), and every push
and read of those types agree on one set of flags: the union of the pushes',
a shared value being broadcast where another push of the same types records
a batched one. A push that would batch a value after a read took it shared is
refused (the read's code is built), which irad's reverse mode, writing every
record before reading it, does not do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.ir import Attribute, Operation
from xdsl.rewriter import InsertPoint

from irad.ir.dialect import set_tape_batch, tape_batch


@dataclass
class _Record:
    flags: list[bool]
    pushes: list[Operation] = field(default_factory=list)
    read: bool = False


class Records:
    """The flags of each record of the batched tapes of one module."""

    def __init__(self):
        self._records: dict[tuple[tuple[Attribute, ...], int], _Record] = {}

    def pushed(self, b, push: Operation, types: Sequence[Attribute], flags: Sequence[bool]) -> None:
        """Register `push` (built, its values batched by `flags`; `types`: one
        element's), widening the flags of its record and of its earlier pushes."""
        key = (tuple(types), b.size)
        record = self._records.setdefault(key, _Record(list(flags)))
        union = [f or g for f, g in zip(record.flags, flags)]
        if union != record.flags and record.read:
            b.refuse(push, "a tape record that a read took as shared is pushed varying along the batch",
                     "take the per-example gradients with a Python loop")
        record.flags = union
        record.pushes.append(push)
        for earlier in record.pushes:
            _widen(b, earlier, union)

    def read_flags(self, b, read: Operation, types: Sequence[Attribute]) -> list[bool]:
        """The flags of the record `read` (unbatched) reads."""
        record = self._records.get((tuple(types), b.size))
        if record is None:
            b.refuse(read, "it reads a record of a batched tape that no batched push wrote",
                     "take the per-example gradients with a Python loop")
        record.read = True
        return list(record.flags)


def _widen(b, push: Operation, flags: Sequence[bool]) -> None:
    """Broadcast the values of `push` that `flags` batches and it does not."""
    old = tape_batch(push)[1]
    if list(old) == list(flags):
        return
    saved = b.insertion_point
    b.insertion_point = InsertPoint.before(push)
    try:
        operands = list(push.operands)
        for i, (was, now) in enumerate(zip(old, flags)):
            if now and not was:
                operands[2 + i] = b.broadcast(operands[2 + i])
        push.operands = operands
    finally:
        b.insertion_point = saved
    set_tape_batch(push, b.size, flags)
