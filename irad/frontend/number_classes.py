"""The Python classes a run-time number may have: what `isinstance` answers from.

irad holds a number as i1, i64, f32 or f64, which is not its Python class:

* a join widens (joins.py: bool < int < float), so a float may be an int or a
  bool on one path into it (`v = True if c else 1.5`), and an int a bool;
* numpy's scalars are held as Python's numbers (numpy_scalars.py), though
  `isinstance(np.int64(1), int)` and `isinstance(np.bool_(True), bool)` are
  False;
* arithmetic keeps an int an int where Python does (`v * 2` of an int is an
  int, `v / 2` a float).

`classes(v, parameters)` follows a number back to the values that reach it:
through the conversions a join made (`mark`), `scf.if`/`for`/`while` results
and loop arguments, a call's results (the classes its callee returns,
`mark_call`), a parameter (what the callers passed, `parameters`) and `+ - *`,
max, min, abs and choices of floats; every other value has the class of its
type and numpy_scalars.kind. isinstance answers when every class gives the
same answer and is refused otherwise (calls.py).
"""

from __future__ import annotations

import weakref

import numpy as np
from xdsl.dialects import arith, func, math, scf
from xdsl.ir import BlockArgument, Operation, SSAValue

from irad.frontend import numpy_scalars
from irad.frontend.emitter import INT_LITERAL
from irad.ir.types import F32, is_bool, is_float, is_int

# the conversion a join made -> (the value it converted, the message's origin:
# `file:line:col: 'v' is an int on one path into this if and a float on another`)
_JOINED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# a func.call -> per result, {class: origin} of what its callee returns
_CALLS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

# float ops whose result is an int in Python where every operand is one
_INT_PRESERVING = (arith.AddfOp, arith.SubfOp, arith.MulfOp, arith.NegfOp, arith.MaximumfOp, arith.MinimumfOp,
                   arith.MaxnumfOp, arith.MinnumfOp, arith.SelectOp, math.AbsFOp)
_NUMPY = (np.bool_, np.int64, np.float32)  # (np.float64 is a float: a helper's float parameter may be one)
_DEPTH = 400  # values followed back from one number: beyond it, every class its type may be


def mark(widened: SSAValue, source: SSAValue, origin: str) -> None:
    """`widened` is `source` converted by a join (`origin` names the variable and the join)."""
    if isinstance(widened.owner, Operation):
        _JOINED[widened.owner] = (source, origin)


def mark_call(call: Operation, results: tuple) -> None:
    """The classes (`{class: origin}` per result) the callee of `call` returns."""
    _CALLS[call] = results


def passed(value: SSAValue, parameters: dict | None = None) -> tuple:
    """What a call passes of an argument's classes (CallShape.classes): () for
    the class of its type alone, else ((class, origin), ...); np.float64 is left
    out (the callee counts every float parameter as maybe one)."""
    found = {c: o for c, o in classes(value, parameters).items() if c is not np.float64}
    if set(found) == own_classes(value.type, numpy_scalars.PYTHON):
        return ()
    return tuple(sorted(found.items(), key=lambda item: (item[0].__module__, item[0].__name__)))


def parameters(arguments, given: tuple) -> dict:
    """A function's parameters' classes, from what its callers passed (`passed`)."""
    out = {}
    for k, argument in enumerate(arguments):
        own = own_classes(argument.type, numpy_scalars.PYTHON)
        if own:
            out[argument] = dict(given[k]) if k < len(given) and given[k] else dict.fromkeys(own, "")
            if is_float(argument.type) and argument.type != F32:
                out[argument].setdefault(np.float64, "")
    return out


def own_classes(t, kind: str) -> frozenset:
    """The classes a number of IR type `t` and numpy_scalars kind `kind` may be."""
    if t == F32:
        return frozenset({np.float32})
    python, numpy = ((float, np.float64) if is_float(t) else (bool, np.bool_) if is_bool(t)
                     else (int, np.int64) if is_int(t) else (None, None))
    if python is None:
        return frozenset()
    if kind == numpy_scalars.PYTHON:
        return frozenset({python})
    if kind == numpy_scalars.NUMPY:
        return frozenset({numpy})
    return frozenset({python, numpy})


def classes(value: SSAValue, parameters: dict | None = None) -> dict:
    """{class: origin} for every class `value` may have at run time; the origin
    is "" for the class of its own type and kind, else where a join brought it
    in. `parameters` maps a function's parameters to theirs."""
    if not own_classes(value.type, numpy_scalars.PYTHON):
        return {}  # not a number
    walk = _Walk(parameters or {})
    while True:  # a loop reaches itself: again, from what the last pass found, until nothing grows
        found = walk(value)
        if walk.memo == walk.previous:
            return found
        walk.previous, walk.memo, walk.budget = walk.memo, {}, _DEPTH


class _Walk:
    def __init__(self, parameters: dict):
        self.parameters = parameters
        self.memo: dict[SSAValue, dict | None] = {}
        self.previous: dict[SSAValue, dict] = {}
        self.budget = _DEPTH

    def __call__(self, v: SSAValue) -> dict:
        found = self.memo.get(v, False)
        if found is None:  # being followed: what the last pass found
            return self.previous.get(v, {})
        if found is not False:
            return found
        self.memo[v] = None
        self.budget -= 1
        found = self._classes(v) if self.budget > 0 else dict.fromkeys(own_classes(v.type, numpy_scalars.EITHER), "")
        self.memo[v] = found
        return found

    def _union(self, values, origin: str = "") -> dict:
        out: dict = {}
        for v in values:
            for cls, where in self(v).items():
                out.setdefault(cls, where or origin)
        return out

    def _classes(self, v: SSAValue) -> dict:
        owner = v.owner
        if isinstance(v, BlockArgument):
            if v in self.parameters:
                return dict(self.parameters[v])
            loop = owner.parent_op()
            if isinstance(loop, scf.ForOp) and v.index > 0:
                return self._union([loop.iter_args[v.index - 1], loop.body.block.last_op.operands[v.index - 1]])
            if isinstance(loop, scf.WhileOp) and owner is loop.before_region.block:
                return self._union([loop.arguments[v.index], loop.after_region.block.last_op.operands[v.index]])
            if isinstance(loop, scf.WhileOp):
                return self(loop.before_region.block.last_op.operands[v.index + 1])
            return dict.fromkeys(own_classes(v.type, numpy_scalars.kind(v)), "")
        if owner in _JOINED:
            source, origin = _JOINED[owner]
            found = self._union([source], origin)
            for cls in own_classes(v.type, numpy_scalars.PYTHON):  # (the join's type on another path)
                found.setdefault(cls, "")
            return found
        if isinstance(owner, func.CallOp):  # a recursive call before its callee is lowered: its own class
            results = _CALLS.get(owner)
            return dict(results[list(owner.results).index(v)]) if results else dict.fromkeys(
                own_classes(v.type, numpy_scalars.PYTHON), "")
        if isinstance(owner, (scf.IfOp, scf.ForOp, scf.WhileOp)):
            i = list(owner.results).index(v)
            values = [r.blocks[-1].last_op.operands[i] for r in owner.regions if r.blocks
                      and isinstance(r.blocks[-1].last_op, scf.YieldOp)]
            if isinstance(owner, scf.ForOp):
                values.append(owner.iter_args[i])
            if isinstance(owner, scf.WhileOp):  # what the condition passes on
                values.append(owner.before_region.block.last_op.operands[i + 1])
            return self._union(values)
        kind = numpy_scalars.kind(v)
        if owner.operands and any(isinstance(o.owner, func.CallOp) for o in owner.operands):
            kind = numpy_scalars.EITHER  # arithmetic of a call's result: its callee's classes (_CALLS) decide
        if kind == numpy_scalars.EITHER and owner.operands:  # arithmetic of a helper's parameters: theirs
            operands = [set(self(o)) for o in owner.operands]
            if not any(c in _NUMPY for found in operands for c in found):
                kind = numpy_scalars.PYTHON
            elif any(found and all(c in _NUMPY for c in found) for found in operands):
                kind = numpy_scalars.NUMPY  # numpy's scalar with a number: numpy's
        own = dict.fromkeys(own_classes(v.type, kind), "")
        if isinstance(owner, _INT_PRESERVING) and is_float(v.type):
            operands = [o for o in owner.operands if is_float(o.type)]
            ints = [self._int_origin(o) for o in operands]
            if operands and all(o is not None for o in ints):  # an int on a path where every operand is
                own.setdefault(int, next((o for o in ints if o), ""))
        return own

    def _int_origin(self, v: SSAValue) -> str | None:
        """Where `v`, a float, may be an int (or a bool) in Python: the origin, or None."""
        if isinstance(v.owner, arith.ConstantOp) and INT_LITERAL in v.owner.attributes:
            return ""
        found = self(v)
        for cls in (int, np.int64, bool, np.bool_):
            if cls in found:
                return found[cls]
        return None


HINT = ("make it one class on every path where it is made (float(...), int(...), bool(...), or start it as 1.0, "
        "not 1), or test the class before the join")
_NAMES = {bool: "a bool", int: "an int", float: "a float", np.bool_: "numpy's bool", np.int64: "numpy's int64",
          np.float64: "numpy's float64", np.float32: "numpy's float32"}


def refusal(possible: dict, cls, held) -> str:
    """Why isinstance(v, cls) has no one answer for a value of these classes (`held`: irad's)."""
    ordered = sorted(possible.items(), key=lambda item: not item[1])  # a join's first
    first = ordered[0][0]
    other = next(c for c, _ in ordered if issubclass(c, cls) != issubclass(first, cls))
    origins = "; ".join(dict.fromkeys(o for _, o in ordered if o))
    why = f" ({origins})" if origins else " (irad cannot tell numpy's scalars from Python's numbers here)"
    return (f"isinstance of a value that is {_NAMES.get(first, first.__name__)} on one path and "
            f"{_NAMES.get(other, other.__name__)} on another{why}: irad holds it as {_NAMES.get(held, held.__name__)}")
