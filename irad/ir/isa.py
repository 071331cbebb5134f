"""`isinstance` against xDSL's classes, at a fraction of its cost.

Every xDSL op and attribute class is an ABC: `isinstance(op, func.CallOp)`
answers at once when `op` is exactly a `func.CallOp`, but for any other op it
calls `ABCMeta.__instancecheck__`, a Python function, and the passes ask
such questions of every op they walk (on a 1,000-function call tree, about
half a million times per compile). `isa` asks the same question of the
op's class once and keeps the answer: xDSL registers no virtual subclasses,
so the class decides it.
"""

from __future__ import annotations

_ANSWERS: dict[tuple[type, type | tuple[type, ...]], bool] = {}


def isa(obj: object, classes: type | tuple[type, ...]) -> bool:
    """`isinstance(obj, classes)`, remembered per class of `obj`."""
    kind = type(obj)
    if kind is classes:
        return True
    key = (kind, classes)
    answer = _ANSWERS.get(key)
    if answer is None:
        answer = _ANSWERS[key] = issubclass(kind, classes)
    return answer
