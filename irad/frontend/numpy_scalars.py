"""numpy's scalars and Python's numbers: which a number is, where they differ.

An element of an array (`x[0]`, `for v in x`), a full reduction (`np.sum(x)`),
a numpy function of numbers (`np.sin(0.5)`), and arithmetic or a comparison
with one of them are numpy scalars (np.bool_, np.int64, np.float64); literals,
`len(x)`, `float(...)`, `int(...)`, `x.item()`, `math.*` and arithmetic of
those are Python's numbers. irad holds both as the same IR number (i1, i64,
f64) and computes the same value for both, except where numpy's rules differ:

* bools: numpy's `+` of two bools is `or` and `*` is `and` (bools again);
  `-` of two bools, unary `-` and unary `+` raise; `abs` keeps a bool. Python
  counts them (`True + True == 2`); `max` and `min` of bools are one of them
  in both (calls.py).
* `int ** negative int` raises in numpy; Python gives a float.

`kind(v)` says which `v` is, from the ops that made it: overrides set where
the frontend knows (`mark`: numpy functions' results, `float(...)`, `not`),
else by the op (a constant is Python's, `tensor.extract` numpy's, arithmetic
is numpy's if an operand is: `np.float64(1) + 1.0` is one), through `scf.if`
and `scf.for` (a join of what reaches it). A function's parameters and a
call's results are EITHER (irad cannot tell), but the entry's parameters
have the kinds of the arguments it was compiled for (`mark_parameters`, from
pytrees.Arguments: a Python float and an np.float64 compile apart): the operations above refuse
EITHER where the two rules would give different results. A numpy bool a join
widens to an int or float (`v = m[0]` on one path, `v = 2` on another) is
JOINED_BOOL: beside another bool, numpy's `+` on that path would be `or`.
"""

from __future__ import annotations

import weakref

import numpy as np
from xdsl.dialects import arith, scf, tensor
from xdsl.dialects.builtin import IndexType, StringAttr, TensorType
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from irad.ir.isa import isa
from irad.ir.types import F32, F64, I1 as _I1, I64 as _I64, is_bool, is_float

KIND = "irad.scalar_kind"  # an override on the op that made a number; dropped after lowering (held_ints.strip)
WIDTH = "irad.numpy_float"  # "32" or "64" on a numpy float scalar's conversion or constant; dropped likewise
NUMPY, PYTHON, EITHER, JOINED_BOOL = "numpy", "python", "either", "joined-bool"
_DEPTH = 150  # ops followed back from one number: beyond it, EITHER (a refusal, never a guess)


_PARAMETERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # a function's block -> its parameters' kinds


def mark_parameters(block: Block, kinds) -> None:
    """Say which kind of number each of a function's first parameters is."""
    _PARAMETERS[block] = tuple(kinds)


def of_argument(value) -> str:
    """The kind of a leaf of an entry's argument: numpy's scalars and 0-d arrays
    are numpy's, Python's numbers Python's; an array is no number (EITHER)."""
    if isinstance(value, np.ndarray):
        return NUMPY if value.ndim == 0 else EITHER
    return NUMPY if isinstance(value, np.generic) else PYTHON


def mark(value: SSAValue, kind: str) -> SSAValue:
    """Say which kind of number the op-made `value` is (see the module doc)."""
    if isa(value, SSAValue) and isa(value.owner, Operation) and not isa(value.type, TensorType):
        attr = _KIND_ATTRS.get(kind)
        if attr is None:
            attr = _KIND_ATTRS[kind] = StringAttr(kind)
        value.owner.attributes[KIND] = attr
        _KNOWN.pop(value, None)  # (float widths read the marks)
    return value


_KIND_ATTRS: dict[str, StringAttr] = {}  # one attribute per kind: attributes are immutable


def kind(v: SSAValue) -> str:
    """NUMPY, PYTHON, EITHER or JOINED_BOOL: what `v` is in the program run as numpy."""
    return _Walk()(v) or PYTHON


def known_number(v: SSAValue) -> int | bool | np.integer | np.bool_ | None:
    """The int or bool an SSA number is known to be while lowering (a constant),
    as the Python object of its kind (`np.int64(3)` for numpy's, `3` for
    Python's), which a call passes as a static value; None for a run-time
    value, a float, or a constant irad cannot tell the kind of."""
    owner = v.owner
    if not isinstance(owner, arith.ConstantOp) or v.type not in (_I64, _I1):
        return None
    found = kind(v)
    if found not in (PYTHON, NUMPY):
        return None
    raw = owner.value.value.data
    if v.type == _I1:
        return np.bool_(raw) if found == NUMPY else bool(raw)
    return np.int64(raw) if found == NUMPY else int(raw)


def known_static(v: SSAValue) -> int | bool | float | np.generic | None:
    """What a call passes as a static value, which its callee is specialised on:
    `known_number`'s ints and bools, and float64 constants as Python's float or
    numpy's float64 (`tail(x, 0.75)`: the callee may compute a slice bound from
    it, as JAX sees a Python float); None for anything else (float32 constants
    stay run-time values)."""
    number = known_number(v)
    if number is not None:
        return number
    owner = v.owner
    if not isinstance(owner, arith.ConstantOp) or v.type != F64 or (
            WIDTH in owner.attributes and owner.attributes[WIDTH].data != "64"):
        return None
    found = kind(v)
    if found not in (PYTHON, NUMPY):
        return None
    raw = float(owner.value.value.data)
    return np.float64(raw) if found == NUMPY else raw


def is_numpy_bool(v: SSAValue) -> bool:
    return is_bool(v.type) and not isinstance(v.type, TensorType) and kind(v) == NUMPY


def join(a: str | None, b: str | None) -> str | None:
    """What a value that is `a` on one path and `b` on another is (None: no path yet)."""
    if a is None or a == b:
        return b
    if b is None:
        return a
    return JOINED_BOOL if JOINED_BOOL in (a, b) else EITHER


def _arithmetic(kinds) -> str | None:
    """An op of numbers: numpy's if one of them is (numpy's scalars win)."""
    kinds = [k for k in kinds if k is not None]
    if NUMPY in kinds:
        return NUMPY
    if any(k != PYTHON for k in kinds):
        return EITHER
    return PYTHON if kinds else None


class _Walk:
    """`kind` by following ops back; a loop's back edge adds nothing while the
    walk is inside that loop (None), so what was found then is not memoised."""

    LIMIT = EITHER  # beyond _DEPTH ops: irad cannot tell

    def __init__(self):
        self.memo: dict[SSAValue, str | None] = {}
        self.open: set[SSAValue] = set()
        self.cut = False  # met a value being walked (a loop's back edge)

    def __call__(self, v: SSAValue) -> str | None:
        if v in self.memo:
            return self.memo[v]
        if v in self.open:
            self.cut = True
            return None
        if len(self.open) > _DEPTH:
            return self.LIMIT
        self.open.add(v)
        cut, self.cut = self.cut, False
        try:
            found = self._derive(v)
        finally:
            self.open.discard(v)
        if not self.cut:
            self.memo[v] = found
        self.cut = self.cut or cut
        return found

    def _derive(self, v: SSAValue) -> str | None:
        if isinstance(v.type, IndexType):
            return PYTHON  # a loop counter
        if isinstance(v, BlockArgument):
            return self._argument(v)
        owner = v.owner
        if KIND in owner.attributes:
            return owner.attributes[KIND].data
        if isinstance(owner, arith.ConstantOp):
            return PYTHON
        if isinstance(owner, tensor.ExtractOp):
            return NUMPY
        if isinstance(owner, arith.SelectOp):  # one of the two: a choice, not arithmetic
            return join(self(owner.lhs), self(owner.rhs))
        if isinstance(owner, scf.IfOp):
            return join(*(self(_yielded(r.block, v.index)) for r in owner.regions))
        if isinstance(owner, scf.ForOp):
            return join(self(owner.iter_args[v.index]), self(_yielded(owner.body.block, v.index)))
        if owner.regions or any(isinstance(o.type, TensorType) for o in owner.operands) or not owner.operands:
            return EITHER  # a call, a while loop, ...: irad cannot tell
        return _arithmetic(self(o) for o in owner.operands)

    def _argument(self, v: BlockArgument) -> str | None:
        loop = v.block.parent_op()
        if isinstance(loop, scf.ForOp) and v.index > 0:
            k = v.index - 1
            return join(self(loop.iter_args[k]), self(_yielded(loop.body.block, k)))
        kinds = _PARAMETERS.get(v.block)
        if kinds is not None and v.index < len(kinds):
            return kinds[v.index]  # the entry's parameter, for the arguments it was compiled for
        return EITHER  # a function's parameter, a while loop's value


def _is_join(v: SSAValue) -> bool:
    """Where JOINED_BOOL can be (arithmetic of it is numpy's or EITHER): a
    `for` loop's carried value or an `if`'s or loop's result; never a
    function's parameter, which bool_rule meets on most ops (_argument)."""
    if isinstance(v, BlockArgument):
        return v.index > 0 and isinstance(v.block.parent_op(), scf.ForOp)
    return isinstance(v.owner, (scf.IfOp, scf.ForOp))


def _yielded(block: Block, k: int) -> SSAValue:
    return block.last_op.operands[k]


class Refusal(Exception):
    """An operation on bools whose result numpy and Python disagree on, where
    irad cannot match numpy: `message` and `hint` for the frontend's error."""

    def __init__(self, message: str, hint: str):
        super().__init__(message)
        self.message, self.hint = message, hint


_COUNT_OR_OR = "say which you mean: int(a) + int(b) counts, a | b is numpy's `or`, a & b its `and`"
_UNKNOWN = ("irad cannot tell whether {} a numpy bool (an element of a bool array, a comparison of numpy "
            "numbers: numpy's `+` of two is `or`, `*` is `and`) or a Python bool (they count) on every path: "
            "{} through an `if` or loop that joins both, a max/min of both, a function's parameter or a call's "
            "result")
_JOINED = ("a numpy bool on one path into an `if` or loop is an int or float on another, which irad holds "
           "as that number; numpy's {} of it and a bool would be numpy's bool rule on that path")


def bool_rule(symbol: str, operands) -> str | None:
    """Whose rule `symbol` (`+ - *`, `-x`, `+x`) of the numbers `operands`
    follows where numpy's bools differ from Python's: NUMPY, PYTHON, or None
    where they agree (not all bools). Raises Refusal where irad cannot tell,
    and where numpy raises."""
    if any(isa(v.type, TensorType) for v in operands):
        return None
    bools = [v for v in operands if is_bool(v.type)]
    joined = [v for v in operands if not is_bool(v.type) and _is_join(v) and kind(v) == JOINED_BOOL]
    if joined and (bools or len(joined) > 1 or symbol in ("-x", "+x")):
        raise Refusal(f"`{symbol}` here: {_JOINED.format(symbol)}",
                      "give it one type on every path (int(...), float(...), or a bool on every path)")
    if len(bools) != len(operands) or (len(bools) < 2 and symbol in ("+", "-", "*")):
        return None
    found = {kind(v) for v in bools}
    if found == {PYTHON}:
        return PYTHON
    if NUMPY in found:  # beside a numpy bool, a bool of either kind follows numpy's rule
        if symbol in ("-", "-x", "+x"):
            raise Refusal(f"numpy's `{symbol.rstrip('x')}` of numpy bools raises (numpy boolean "
                          f"{'subtract' if symbol == '-' else 'negative' if symbol == '-x' else 'positive'} "
                          "is not supported)", "use `not b` to negate, a ^ b for xor, or int(b) to count")
        return NUMPY
    what = "these bools are" if len(bools) > 1 else "this bool is"
    raise Refusal(f"`{symbol}` of bools: " + _UNKNOWN.format(what, "one comes" if len(bools) > 1 else "it comes"),
                  _COUNT_OR_OR if symbol in ("+", "*", "-") else "convert it: int(b) or bool(b)")


def mark_results(result, args, kind_: str) -> None:
    """Mark the numbers a numpy function returned (`x.item()`: Python's), not
    the arguments it returned unchanged."""
    inputs = {id(v) for v in _leaves(args) if isinstance(v, SSAValue)}
    for leaf in _leaves(result):
        if isinstance(leaf, SSAValue) and id(leaf) not in inputs:
            mark(leaf, kind_)


def _leaves(value) -> list:
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


# ---- numpy's float widths (NEP 50) ------------------------------------------------------
# A number's possible numpy float widths, over the paths that reach it: WEAK
# (a Python number, or a numpy bool: it never widens a float), 32 (np.float32)
# or 64 (np.float64, and numpy's int64, which makes float32 float64).
WEAK = 0
UNKNOWN = frozenset({WEAK, 64})  # a call's result, a function's parameter: irad cannot tell


_CARRIED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # a loop body's block -> {arg index: widths}


def assume_carried(values, widths) -> None:
    """While its loop is lowered (the body before its scf op exists), the
    widths the carried block arguments `values` have: the loop's (control_flow
    lowers the body again until they settle, as its types). None: unknown."""
    for i, v in enumerate(values):
        if isinstance(v, BlockArgument) and not isa(v.type, TensorType):
            _CARRIED.setdefault(v.block, {})[v.index] = widths[i] if widths is not None else UNKNOWN


# widths found by whole walks (no loop being lowered, no depth limit), kept for
# the values' lifetime: each arithmetic op asks for its result's widths, and
# would otherwise walk its whole expression again (quadratic in a long chain)
_KNOWN: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def float_widths(v: SSAValue) -> frozenset:
    """The numpy float widths `v` may have (see above)."""
    known = _KNOWN.get(v)
    if known is not None:
        return known
    walk = _Widths()
    found = walk(v) or frozenset({WEAK})
    if not (walk.cut or walk.partial):
        _KNOWN[v] = found
    return found


def is_float32(v: SSAValue) -> bool:
    """A number numpy holds as an np.float32 on every path (irad holds it as
    f64, rounded to float32 after each operation: `round_float32`)."""
    return not isa(v.type, TensorType) and float_widths(v) == {32}


def is_float64(v: SSAValue) -> bool:
    """A number numpy holds as an np.float64 or np.int64 on every path: not
    "weak" (NEP 50), so a float32 array beside it becomes float64."""
    return not isa(v.type, TensorType) and not is_bool(v.type) and float_widths(v) == {64}


def mark_width(value: SSAValue, elem) -> SSAValue:
    """Say that the op-made `value` is a numpy float of element type `elem`."""
    if isa(value, SSAValue) and isa(value.owner, Operation):
        value.owner.attributes[WIDTH] = StringAttr("32" if elem == F32 else "64")
        _KNOWN.pop(value, None)
    return value


def round_float32(em, v: SSAValue) -> SSAValue:
    """`v` (f64) rounded to float32 where numpy computes it as an np.float32:
    an operation in f64 rounded once to float32 is the float32 operation for
    + - * / (f64 has more than 2 * 24 + 2 bits), overflow to inf included."""
    if v.type != F64 or not is_float32(v):
        return v
    return em.op(arith.ExtFOp(em.op(arith.TruncFOp(v, F32)), F64))


def _combine(sets) -> frozenset:
    """An operation's widths: the widest operand on each combination of paths."""
    out = frozenset({WEAK})
    for widths in sets:
        if widths:
            out = frozenset(max(a, b) for a in out for b in widths)
    return out


class _Widths(_Walk):
    """float_widths by following ops back, as `kind` does."""

    LIMIT = UNKNOWN

    def __init__(self):
        super().__init__()
        self.partial = False  # met the depth limit or a loop being lowered: not kept in _KNOWN

    def __call__(self, v: SSAValue):
        known = _KNOWN.get(v)
        if known is not None:
            return known
        if len(self.open) > _DEPTH:
            self.partial = True
        return super().__call__(v)

    def _derive(self, v: SSAValue):
        if isinstance(v.type, IndexType):
            return frozenset({WEAK})
        if isinstance(v, BlockArgument):
            return self._argument(v)
        owner = v.owner
        if WIDTH in owner.attributes:
            return frozenset({int(owner.attributes[WIDTH].data)})
        marked = owner.attributes.get(KIND)
        if marked is not None and marked.data != NUMPY:
            return UNKNOWN if marked.data == EITHER else frozenset({WEAK})
        if isinstance(owner, arith.ConstantOp):
            return frozenset({WEAK})
        if isinstance(owner, tensor.ExtractOp):
            return self._typed(v.type)
        if isinstance(owner, arith.SelectOp):
            return (self(owner.lhs) or frozenset()) | (self(owner.rhs) or frozenset())
        if isinstance(owner, scf.IfOp):
            return frozenset().union(*(self(_yielded(r.block, v.index)) or frozenset() for r in owner.regions))
        if isinstance(owner, scf.ForOp):
            return (self(owner.iter_args[v.index]) or frozenset()) | (
                self(_yielded(owner.body.block, v.index)) or frozenset())
        if owner.regions or any(isinstance(o.type, TensorType) for o in owner.operands) or not owner.operands:
            return UNKNOWN
        return _combine(self(o) for o in owner.operands)

    def _argument(self, v: BlockArgument):
        loop = v.block.parent_op()
        if isinstance(loop, scf.ForOp) and v.index > 0:
            k = v.index - 1
            return (self(loop.iter_args[k]) or frozenset()) | (self(_yielded(loop.body.block, k)) or frozenset())
        assumed = _CARRIED.get(v.block, {}).get(v.index)
        if assumed is not None and loop is None:  # a loop being lowered
            self.partial = True
            return assumed
        kinds = _PARAMETERS.get(v.block)
        if kinds is not None and v.index < len(kinds):
            return self._typed(v.type) if kinds[v.index] == NUMPY else (
                frozenset({WEAK}) if kinds[v.index] == PYTHON else UNKNOWN)
        return UNKNOWN

    @staticmethod
    def _typed(t) -> frozenset:
        """A numpy scalar of IR type t: its width (a bool is weak)."""
        if is_bool(t):
            return frozenset({WEAK})
        return frozenset({32 if t == F32 else 64})

