"""Iteration: `for` loops, comprehensions and `sum(...)` over what has a static
length (or a `range` with run-time bounds).

What a loop walks is built from the iterable's value:

* `range(...)`, `reversed(range(...))`: `i = start + k * step` (counting down
  for `reversed`), bounds known while lowering or at run time;
* an array: its rows along the first axis, `X[k]` (a view, as numpy's iterator
  gives; a rank-1 array gives its elements);
* a tuple or list literal (or a comprehension's result, or `x.shape`): its items;
* `zip(...)` (stops at the shortest), `enumerate(..., start)` and `reversed(...)`
  of those.

A loop over tuple items is *unrolled*: the body is lowered once per item, so the
items may differ in type (`for f in (np.sin, np.cos)`, `for v in (x, 2.0, 3)`).
Everything else lowers to one `scf.for` over the trip count, however large, with
the loop variable computed from the induction variable. `break`, `continue` and
`return` work in both (flags, as in irad/frontend/control_flow.py).

A list comprehension or generator expression used as a value is unrolled into
a tuple: its length must be known while lowering, so its `if` conditions must be
too. `sum(<generator>)` is a loop instead: `acc = start; for ...: if ...: acc =
acc + elt` (an `scf.for` when no tuple is walked, whatever the conditions).

The array a loop walks is held, for the loop, by a hidden name that shares it
(`$iter` in the comments; the name is `iter.<n>`), so in-place writes to the
array inside the loop are seen by the rows still to come, as in numpy, and a
name rebound in the body does not change what the loop walks.
"""

from __future__ import annotations

import ast
import builtins
import copy
import dataclasses
import functools
from dataclasses import dataclass

from xdsl.dialects import arith, cf, scf
from xdsl.ir import Block, Region, SSAValue

from irad.frontend import integers, numpy_scalars
from irad.frontend.arrays import known_value
from irad.frontend.callables import Closure, free_names, local_names
from irad.frontend.containers import ordered_keys
from irad.frontend.control_flow import INDEX
from irad.frontend.values import Kind, MappingValue, Static, is_array, new_list
from irad.ir.types import I1, I64, is_float



class _RuntimeCompared(Exception):
    pass


_UNBOUND = object()  # a name the function has not bound


class _Unordered:
    """A run-time value's place in a sort key: comparing it is refused."""

    def __lt__(self, other):
        raise _RuntimeCompared

    __gt__ = __le__ = __ge__ = __lt__

    def __eq__(self, other):
        raise _RuntimeCompared

    __hash__ = object.__hash__


def _sort_key(fl, value):
    """What sorted() compares of an item: its value known while lowering, a
    tuple's items' keys; a run-time value is a key that refuses comparison."""
    if isinstance(value, tuple):
        return tuple(_sort_key(fl, v) for v in value)
    known, obj = known_value(value)
    return obj if known and not isinstance(obj, tuple) else (_sort_key(fl, obj) if known else _Unordered())


# ---- iterables as values ----------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class RangeValue:
    """range(start, stop, step) with int (i64) bounds; `step_sign` is 1 or -1 when
    the step is a constant, 0 when it is known at run time."""

    start: SSAValue
    stop: SSAValue
    step: SSAValue
    step_sign: int
    KIND = Kind.ITERABLE


@dataclass(frozen=True, eq=False)
class ZipValue:
    items: tuple
    strict: bool = False
    KIND = Kind.ITERABLE


@dataclass(frozen=True, eq=False)
class EnumerateValue:
    inner: object
    start: object  # an int value
    KIND = Kind.ITERABLE


@dataclass(frozen=True, eq=False)
class ReversedValue:
    inner: object
    KIND = Kind.ITERABLE


ITERABLES = (RangeValue, ZipValue, EnumerateValue, ReversedValue)


# ---- walks: what a loop steps through, item by item ------------------------------------
class _Walk:
    length: int | None = None  # known while lowering, or None
    unrolled = False  # True: only an unrolled loop can give its items (a tuple's)

    _trips: SSAValue | None = None

    def trips(self, fl) -> SSAValue:
        """The number of items as i64, emitted once (before the loop)."""
        if self._trips is None:
            self._trips = fl.em.const(self.length, I64) if self.length is not None else self._count(fl)
        return self._trips

    def _count(self, fl) -> SSAValue:
        """The number of items when it is known only at run time."""
        raise NotImplementedError

    def item(self, fl, k):
        """The k-th item: k is an int (unrolled) or an i64 value (inside scf.for)."""
        raise NotImplementedError


class _Items(_Walk):
    unrolled = True

    def __init__(self, values: tuple) -> None:
        self.values = values
        self.length = len(values)

    def item(self, fl, k):
        return self.values[k]


def walk_bounds(walk: _Walk) -> tuple:
    """The numbers a walk's length comes from (a range's bounds), for errors."""
    return (walk.r.start, walk.r.stop, walk.r.step) if isinstance(walk, _Range) else ()


class _Range(_Walk):
    def __init__(self, fl, r: RangeValue, reverse: bool = False) -> None:
        self.r, self.reverse = r, reverse
        bounds = [integers.constant_int(v) for v in (r.start, r.stop, r.step)]
        if all(b is not None for b in bounds) and bounds[2] != 0:
            self.length = len(range(*bounds))
            self.constants = bounds
        else:
            self.constants = None

    def _count(self, fl) -> SSAValue:
        r = self.r
        return fl.iteration.trip_count(r.start, r.stop, r.step, r.step_sign)

    def item(self, fl, k):
        r = self.r
        if isinstance(k, int):
            if self.constants is None:
                raise AssertionError("an unrolled walk has a static length")
            start, _, step = self.constants
            position = self.length - 1 - k if self.reverse else k
            return fl.integer(start + position * step, None)
        em = fl.em
        if self.reverse:  # counting down: position = trips - 1 - k
            if self.length is not None:
                last = em.const(self.length - 1, I64)
            else:  # the trip count, emitted before the loop (trips() runs first)
                last = em.op(arith.SubiOp(self._trips, em.const(1, I64)))
            k = em.op(arith.SubiOp(last, k))
        return em.op(arith.AddiOp(r.start, em.op(arith.MuliOp(k, r.step))))


class _Rows(_Walk):
    """The rows of the array a hidden name holds (its elements for rank 1)."""

    def __init__(self, name: str, length: int) -> None:
        self.name, self.length = name, length

    def item(self, fl, k):
        return fl.arrays.item_at(fl.env[self.name], k)


class _BufferRows(_Walk):
    """The items of a list that are the rows of an array (lists.py): values of
    their own, not views."""

    def __init__(self, buffer, length: int) -> None:
        self.buffer, self.length = buffer, length

    def item(self, fl, k):
        return fl.lists.buffer_row(self.buffer, k)


class _Zip(_Walk):
    def __init__(self, walks: list[_Walk]) -> None:
        self.walks = walks
        self.unrolled = any(w.unrolled for w in walks)
        lengths = [w.length for w in walks]
        self.length = min(lengths) if all(n is not None for n in lengths) else None

    def _count(self, fl) -> SSAValue:
        counts = [w.trips(fl) for w in self.walks]
        result = counts[0]
        for c in counts[1:]:
            result = fl.em.op(arith.MinSIOp(result, c))
        return result

    def item(self, fl, k):
        return tuple(w.item(fl, k) for w in self.walks)


class _Enumerate(_Walk):
    def __init__(self, walk: _Walk, start) -> None:
        self.walk, self.start = walk, start
        self.unrolled, self.length = walk.unrolled, walk.length

    def _count(self, fl) -> SSAValue:
        return self.walk.trips(fl)

    def item(self, fl, k):
        start = integers.constant_int(self.start)
        if isinstance(k, int) and start is not None:
            index = fl.integer(start + k, None)
        else:
            kv = fl.em.const(k, I64) if isinstance(k, int) else k
            index = fl.em.op(arith.AddiOp(self.start, kv))
        return (index, self.walk.item(fl, k))


class _Reversed(_Walk):
    def __init__(self, walk: _Walk) -> None:
        self.walk, self.unrolled, self.length = walk, walk.unrolled, walk.length

    def item(self, fl, k):
        if isinstance(k, int):
            return self.walk.item(fl, self.length - 1 - k)
        em = fl.em
        return self.walk.item(fl, em.op(arith.SubiOp(em.const(self.length - 1, I64), k)))


class Iteration:
    """`for` loops, comprehensions, sum(), and the builtins that make iterables
    (range, zip, enumerate, reversed): a collaborator of the FunctionLowering
    `fl` that holds it (`fl.iteration`).

    What the others use: the builtins (`make_range`, `make_zip`,
    `make_enumerate`, `make_reversed`), a value's items and length (`items_of`,
    `length_of`), `stmt_For`, the comprehensions (`expr_ListComp`,
    `expr_GeneratorExp`, `expr_DictComp`), `sum_call` and `sum_values`, and for
    lists.py's stacked appends `scf_for` and the hidden names (`hidden_name`,
    `assign_hidden`, `release`).

    What it needs from `fl`: the source (`src`), the emitter (`em`), the path
    (`env`, `control`, `path`), the lowering of expressions and statements
    (`expr`, `statement`, `assign`, `as_number`, `binary`, `kind_of`,
    `runtime_error`, `_static_value`), and the other collaborators: `arrays`,
    `control_flow` (scf loops, jump flags), `lists` (the lists a loop walks or
    appends to) and `calls`.
    """

    def __init__(self, fl) -> None:
        self.fl = fl
        self.hidden_count = 0  # the hidden names made so far (`iter.<n>`, `acc.<n>`)
        # per comprehension node, its copy with hidden targets and their names (`_scoped`)
        self.scoped_copies: dict[ast.AST, tuple[ast.AST, list[str]]] = {}
        # per dict comprehension node, the list comprehension of its pairs (`expr_DictComp`)
        self.dict_pairs: dict[ast.DictComp, ast.ListComp] = {}

    # ---- the builtins --------------------------------------------------------------------
    def make_range(self, args: list, node) -> RangeValue:
        if not 1 <= len(args) <= 3:
            raise self.fl.src.error(node, f"range expected 1 to 3 arguments, got {len(args)}")
        values = []
        plain = not any(isinstance(a, ast.Starred) for a in getattr(node, "args", ()))
        for i, arg in enumerate(args):
            sub = node.args[i] if plain and i < len(node.args) else node  # where to point an error
            v = self.fl.as_number(arg, sub)
            if is_float(v.type) or is_array(v):
                raise self.fl.src.error(sub, "range() takes ints, not floats", "convert with int(...)")
            values.append(self.fl.em.to_int(v))
        if len(values) == 1:
            values.insert(0, self.fl.em.const(0, I64))
        if len(values) == 2:
            values.append(self.fl.em.const(1, I64))
        start, stop, step = values
        literal = integers.constant_int(step)
        if literal == 0:
            raise self.fl.src.error(node, "range() with a step of 0", "use a nonzero step")
        if literal is None:  # known at run time: Python raises for 0, MLIR would divide by it
            nonzero = self.fl.em.op(arith.CmpiOp(step, self.fl.em.const(0, step.type), "ne"))
            self.fl.em.op(cf.AssertOp(nonzero, f"{self.fl.src.location(node)}: range() arg 3 must not be zero"))
            sign = 0
        else:
            sign = 1 if literal > 0 else -1
        return RangeValue(start, stop, step, sign)

    def sorted_items(self, args: list, kwargs: dict, node) -> tuple:
        """sorted(xs) by what is known while lowering: keys (`sorted(params)`,
        `sorted(params.items())`), ints, tuples whose known first items decide;
        with key=, the key of each item, which must be known while lowering
        (`key=lambda kv: kv[1]["order"]` over known values). Comparing run-time
        values would order by data: refused."""
        reverse = kwargs.pop("reverse", Static(False))
        key = kwargs.pop("key", Static(None))
        if len(args) != 1 or kwargs:
            raise self.fl.src.error(node, "sorted() takes one iterable, key= and reverse=",
                                    "sort by the items themselves: sorted(d.items()) orders by the keys")
        items = self.items_of(args[0], node)
        keys = [_sort_key(self.fl, v) for v in self._keys(key, items, node)]
        try:
            order = sorted(range(len(items)), key=lambda k: keys[k],
                           reverse=bool(self.fl.arrays.static(reverse, node, "sorted's reverse=")))
        except _RuntimeCompared:
            raise self.fl.src.error(node, "sorted() would compare values known only at run time (the order "
                                    "would depend on the data)",
                                    "sort keys or ints known while lowering (sorted(d.items()) with distinct "
                                    "keys), or use np.sort / np.argsort on an array") from None
        return tuple(items[k] for k in order)

    def _keys(self, key, items: list, node) -> list:
        """The items themselves, or key(item) for each (key= of sorted, min, max)."""
        if isinstance(key, Static) and key.obj is None:
            return list(items)
        return [self._key_of(key, v, node) for v in items]

    def _key_of(self, key, item, node):
        """key(item). A lambda (or a one-line def) of one parameter written in this function is
        evaluated in place, its parameter bound to the item, so that its value
        may be anything known while lowering (`key=lambda kv: kv[0]` gives a
        str, which a call could not return); any other key is called."""
        code = key.code if isinstance(key, Closure) else None
        args = code.source.tree.args if code is not None else None
        body = code.source.tree.body if code is not None else None
        if (code is None or key.definer is not self.fl or key.captured is not None
                or code.source.filename != self.fl.src.filename or len(args.args) != 1 or args.posonlyargs
                or args.vararg or args.kwonlyargs or args.kwarg or len(body) != 1
                or not isinstance(body[0], ast.Return) or body[0].value is None):
            return self.fl.calls.call_value(key, [item], {}, node)
        name = args.args[0].arg
        before = self.fl.env.get(name, _UNBOUND)
        self.assign_hidden(name, item)
        try:
            return self.fl.expr(body[0].value)
        finally:
            if before is _UNBOUND:
                self.release([name])
            else:
                self.assign_hidden(name, before)

    def extremum(self, pick_max: bool, args: list, kwargs: dict, node):
        """min/max of one iterable or of several arguments, with key= and default=
        as Python's: the first item whose key no later one exceeds (a later one
        must be strictly beyond it). Keys known while lowering pick the item
        then (any item: a str, a tuple, an array); run-time number keys pick
        among run-time numbers of one type by selects."""
        name = "max" if pick_max else "min"
        key = kwargs.pop("key", Static(None))
        default = kwargs.pop("default", None)
        if kwargs or not args or (default is not None and len(args) > 1):
            raise self.fl.src.error(node, f"{name}() takes an iterable (with key= and default=) or several "
                                    "arguments (with key=)")
        items = self.items_of(args[0], node) if len(args) == 1 else list(args)
        if not items:
            if default is None:
                raise self.fl.src.error(node, f"{name}() of an empty sequence")
            return default
        scores = self._keys(key, items, node)
        keys = [_sort_key(self.fl, v) for v in scores]
        try:
            best = 0
            for i in range(1, len(items)):
                if (keys[i] > keys[best]) if pick_max else (keys[i] < keys[best]):
                    best = i
            return items[best]
        except _RuntimeCompared:
            pass
        def number(v):  # a known number among run-time ones: a constant
            return self.fl.as_number(v, node) if isinstance(v, Static) and isinstance(v.obj, (int, float)) else v
        values, scores = [number(v) for v in items], [number(v) for v in scores]
        if not all(isinstance(v, SSAValue) and not is_array(v) for v in (*values, *scores)) or len(
                {v.type for v in values}) > 1:
            raise self.fl.src.error(
                node, f"{name}() with a key= known only at run time, of items that are not numbers of one type: "
                "the item it gives would be chosen by the data",
                f"stack the items into an array and index it: xs[np.arg{name}(np.array([key(x) for x in xs]))]")
        best, best_score = values[0], scores[0]
        for v, score in zip(values[1:], scores[1:]):
            best_score, score = self.fl.em.unify(best_score, score)
            predicate = ("ogt" if pick_max else "olt") if is_float(score.type) else ("sgt" if pick_max else "slt")
            beyond = self.fl.em.op(arith.CmpfOp(score, best_score, predicate) if is_float(score.type)
                                   else arith.CmpiOp(score, best_score, predicate))
            best = self.fl.em.op(arith.SelectOp(beyond, v, best))
            best_score = self.fl.em.op(arith.SelectOp(beyond, score, best_score))
        return best

    def make_zip(self, args: list, kwargs: dict, node) -> ZipValue:
        strict = kwargs.pop("strict", Static(False))
        if kwargs:
            raise self.fl.src.error(node, f"zip() got an unexpected keyword argument '{next(iter(kwargs))}'")
        return ZipValue(tuple(args), bool(self.fl.arrays.static(strict, node, "zip's strict=")))

    def make_enumerate(self, args: list, kwargs: dict, node) -> EnumerateValue:
        if "start" in kwargs:
            args = [*args, kwargs.pop("start")]
        if kwargs or not 1 <= len(args) <= 2:
            raise self.fl.src.error(node, "enumerate takes an iterable and an optional start")
        start = self.fl.em.const(0, I64) if len(args) == 1 else self.fl.em.to_int(self.fl.as_number(args[1], node))
        if is_float(start.type):
            raise self.fl.src.error(node, "enumerate's start must be an int")
        return EnumerateValue(args[0], start)

    def make_reversed(self, args: list, node):
        if len(args) != 1:
            raise self.fl.src.error(node, f"reversed expected 1 argument, got {len(args)}")
        value = args[0]
        if isinstance(value, tuple):
            return tuple(reversed(value))
        if isinstance(value, (ZipValue, EnumerateValue)):
            raise self.fl.src.error(node, "reversed() of zip or enumerate is not supported (Python "
                                    "cannot reverse them either)", "reverse the sequences inside it")
        return ReversedValue(value)

    def items_of(self, value, node) -> tuple:
        """The items of an iterable of static length, as a tuple (list(...), tuple(...))."""
        walk, hidden = self.walk_of(value, node)
        try:
            if walk.length is None:
                raise self.fl.runtime_error(node, "the length of this sequence is only known at run time",
                                            "a tuple, list or comprehension needs a length known while lowering",
                                            walk_bounds(walk))
            return tuple(walk.item(self.fl, k) for k in range(walk.length))
        finally:
            self.release(hidden)

    def length_of(self, value, node):
        """len() of a tuple or an iterable: a static int where known."""
        if isinstance(value, tuple):
            return Static(len(value))
        walk, hidden = self.walk_of(value, node)
        try:
            return Static(walk.length) if walk.length is not None else walk.trips(self.fl)
        finally:
            self.release(hidden)

    # ---- what a loop walks -----------------------------------------------------------------
    def walk_of(self, value, node) -> tuple[_Walk, list[str]]:
        """The walk over `value`, and the hidden names it binds (release them after)."""
        hidden: list[str] = []
        try:
            return self._walk(value, node, hidden), hidden
        except BaseException:
            self.release(hidden)
            raise

    def _walk(self, value, node, hidden: list[str]) -> _Walk:
        if getattr(value, "rows_of", None) is not None:  # a list grown in an scf.for: one loop
            return _BufferRows(value.rows_of, len(value))
        if isinstance(value, tuple):
            return _Items(value)
        if isinstance(value, MappingValue) and value.cls is dict:  # a dict walks its keys, in insertion order
            return _Items(ordered_keys(self.fl, value, node))
        if isinstance(value, Static):
            obj = value.obj
            if isinstance(obj, range):
                em = self.fl.em
                r = RangeValue(em.const(obj.start, I64), em.const(obj.stop, I64), em.const(obj.step, I64),
                               1 if obj.step > 0 else -1)
                return _Range(self.fl, r)
            if isinstance(obj, dict):  # a dict known while lowering: its keys
                return _Items(tuple(Static(k) for k in obj))
            if isinstance(obj, (tuple, list)):
                origin = value.origin
                return _Items(tuple(self.fl._static_value(Static(o, origin and origin.item(i)), node)
                                    for i, o in enumerate(obj)))
        if isinstance(value, RangeValue):
            return _Range(self.fl, value)
        if is_array(value):
            dims = value.type.get_shape()
            if not dims:
                raise self.fl.src.error(node, "iteration over a 0-d array", "index it instead")
            if len(dims) == 1:  # its elements are numbers
                self.fl.arrays.no_narrow_number(value, node)
            name = self.hidden_name("iter")
            self.assign_hidden(name, value)
            hidden.append(name)
            return _Rows(name, dims[0])
        if isinstance(value, ZipValue):
            walks = [self._walk(v, node, hidden) for v in value.items]
            if not walks:
                return _Items(())
            if value.strict and len({w.length for w in walks}) > 1:
                raise self.fl.src.error(node, "zip(strict=True) of sequences of different lengths "
                                        f"({', '.join(str(w.length) for w in walks)})")
            return _Zip(walks)
        if isinstance(value, EnumerateValue):
            return _Enumerate(self._walk(value.inner, node, hidden), value.start)
        if isinstance(value, ReversedValue):
            inner = self._walk(value.inner, node, hidden)
            if isinstance(inner, _Range):
                return _Range(self.fl, inner.r, not inner.reverse)
            if inner.length is None:
                raise self.fl.src.error(node, "reversed() of a sequence whose length is known only at run time")
            return _Reversed(inner)
        raise self.fl.src.error(
            node, f"iteration over {self.fl.kind_of(value)} is not supported",
            "loop over range(...), an array, a tuple or list, or zip/enumerate/reversed of those",
        )

    def release(self, hidden: list[str]) -> None:
        for name in hidden:
            self.fl.arrays.views.bind(name, None)
            self.fl.env.pop(name, None)

    def hidden_name(self, base: str) -> str:
        """A variable name no Python program can use (it holds a dot)."""
        self.hidden_count += 1
        return f"{base}.{self.hidden_count}"

    def assign_hidden(self, name: str, value) -> None:
        self.fl.arrays.views.bind(name, value)
        self.fl.env[name] = value

    # ---- for -------------------------------------------------------------------------------
    def stmt_For(self, stmt: ast.For) -> None:
        if stmt.orelse:
            self.fl.control_flow.loop_with_else(stmt)
            return
        iterable = self.fl.expr(stmt.iter)
        walk, hidden = self.walk_of(iterable, stmt.iter)
        walked = self.fl.lists.walking(iterable)  # lists the body may not change (lists.py)
        try:
            # a body that changes a list from before the loop is lowered once per
            # iteration (the list's length differs from one to the next), unless it
            # only appends an item per iteration, which an scf.for writes into a buffer
            if walk.unrolled:
                self._unrolled_for(stmt, walk)
            elif self.fl.lists.unrolls_for_lists(stmt, walk.length, walk_bounds(walk)):
                if not self.fl.lists.stacked_appends(stmt, walk):  # items kept in a buffer (lists.py)
                    self._unrolled_for(stmt, walk)
            elif walk.length is None or not self.fl.lists.tentatively(lambda: self.scf_for(stmt, walk)):
                # a known trip count, and a body one scf.for cannot hold (it needs the
                # loop variable known while lowering: params[f"W{i}"], a shape, a
                # list's index): lowered once per iteration, as Python runs it
                self.scf_for(stmt, walk) if walk.length is None else self._unrolled_for(stmt, walk)
        finally:
            self.fl.lists.done_walking(walked)
            self.release(hidden)

    def scf_for(self, stmt: ast.For, walk: _Walk) -> None:
        em = self.fl.em
        trips = walk.trips(self.fl)
        lower = em.op(arith.ConstantOp.from_int_and_width(0, INDEX))
        upper = em.op(arith.IndexCastOp(trips, INDEX))
        one = em.op(arith.ConstantOp.from_int_and_width(1, INDEX))
        targets = _target_names(stmt.target)

        def bind_target(block: Block) -> None:
            k = self.fl.em.op(arith.IndexCastOp(block.args[0], I64))
            k.name_hint = "k"
            self.fl.statements.assign(stmt.target, walk.item(self.fl, k))

        def build(inits: list[SSAValue], _before: Block | None, body: Block) -> list[SSAValue]:
            return list(self.fl.em.results(scf.ForOp(lower, upper, one, inits, Region(body))))

        self.fl.control_flow.loop(stmt, [INDEX], bind_target, None, build, exclude=set(targets), runs=bool(walk.length))
        for name in targets:  # the loop variables are not kept after an scf.for
            self.fl.control_flow.no_value(name, self.fl.control_flow.not_kept(stmt, target=True))

    def _unrolled_for(self, stmt: ast.For, walk: _Walk) -> None:
        """The body once per item; break/continue/return set flags as in loops."""
        if walk.length is None:
            raise self.fl.src.error(stmt.iter, "a loop over tuple items zipped with a range whose length "
                                    "is only known at run time", "give the range constant bounds")
        saved = (self.fl.control.broke, self.fl.control.continued)
        self.fl.control.broke = False
        outer_exits, self.fl.path.views.exits = self.fl.path.views.exits, ()
        where = f"the loop at {self.fl.src.location(stmt)}"

        def run(start: int) -> None:
            for k in range(start, walk.length):
                self.fl.control.continued = False  # a continue ends one iteration only
                self.fl.arrays.views.after_exits([e for e in self.fl.path.views.exits if not e.broke], where)
                jumped = self.fl.control_flow.jumped()
                if jumped is True:
                    return
                if jumped is not False:
                    self.fl.control_flow.branch(jumped, self.fl.control_flow.taken, lambda k=k: resume(k), stmt)
                    return
                self.fl.statements.assign(stmt.target, walk.item(self.fl, k))
                self.fl.control_flow.run_statements(stmt.body)

        def resume(k: int) -> None:
            self.fl.control.clear_jumps()
            run(k)

        run(0)
        self.fl.arrays.views.after_exits(self.fl.path.views.exits, where)
        self.fl.path.views.exits = outer_exits
        self.fl.control.broke, self.fl.control.continued = saved  # break/continue belong to this loop only

    def trip_count(self, start, stop, step, step_sign) -> SSAValue:
        """len(range(start, stop, step)) as i64 (`step_sign` 0: known at run time)."""
        em = self.fl.em
        zero, one = em.const(0, I64), em.const(1, I64)

        def upward() -> SSAValue:  # max(0, (stop - start + step - 1) // step)
            span = em.op(arith.SubiOp(em.op(arith.AddiOp(em.op(arith.SubiOp(stop, start)), step)), one))
            return em.op(arith.MaxSIOp(zero, em.op(arith.FloorDivSIOp(span, step))))

        def downward() -> SSAValue:  # max(0, (start - stop - step - 1) // -step)
            span = em.op(arith.SubiOp(em.op(arith.SubiOp(em.op(arith.SubiOp(start, stop)), step)), one))
            return em.op(arith.MaxSIOp(zero, em.op(arith.FloorDivSIOp(span, em.op(arith.SubiOp(zero, step))))))

        if step_sign > 0 and integers.constant_int(step) == 1:
            return em.op(arith.MaxSIOp(zero, em.op(arith.SubiOp(stop, start))))
        if step_sign > 0:
            return upward()
        if step_sign < 0:
            return downward()
        positive = em.op(arith.CmpiOp(step, zero, "sgt"))
        return em.op(arith.SelectOp(positive, upward(), downward()))

    # ---- comprehensions --------------------------------------------------------------------
    def expr_ListComp(self, node: ast.ListComp):
        return new_list(self.unrolled_comprehension(node))  # a list, when returned

    def expr_GeneratorExp(self, node: ast.GeneratorExp):
        return self.unrolled_comprehension(node)

    def expr_DictComp(self, node: ast.DictComp) -> MappingValue:
        """`{k: f(v) for k, v in params.items()}`. A dict in a program has str keys
        known while lowering (a fixed structure), so it is unrolled as a list
        comprehension is: over iterables whose length is known while lowering,
        with conditions known while lowering, and each key must come out a str
        known while lowering. A later key replaces an earlier one's value in
        place, as in Python."""
        if node not in self.dict_pairs:  # one node per comprehension: its scoped copy is cached per node
            elt = ast.copy_location(ast.Tuple([node.key, node.value], ast.Load()), node)
            self.dict_pairs[node] = ast.copy_location(ast.ListComp(elt, node.generators), node)
        items: dict[str, object] = {}
        for key, value in self.unrolled_comprehension(self.dict_pairs[node]):
            if not (isinstance(key, Static) and isinstance(key.obj, str)):
                raise self.fl.src.error(
                    node, f"a dict comprehension's key must be a str known while lowering, got {self.fl.kind_of(key)}",
                    "use str keys, such as the keys of a dict (`{k: ... for k in params}`): irad's dicts "
                    "have a fixed structure; for numbered items build a list or a tuple",
                )
            items[key.obj] = value
        return MappingValue(dict, tuple(items.items()))

    def unrolled_comprehension(self, node) -> tuple:
        """A comprehension as the tuple of its items (its length known while lowering)."""
        node, hidden_targets = self._scoped(node)
        results: list = []

        def generate(i: int) -> None:
            if i == len(node.generators):
                results.append(self.fl.expr(node.elt))
                return
            gen = node.generators[i]
            if gen.is_async:
                raise self.fl.src.error(gen, "async comprehensions are not supported")
            walk, hidden = self.walk_of(self.fl.expr(gen.iter), gen.iter)
            try:
                if walk.length is None:
                    raise self.fl.runtime_error(
                        gen.iter, "a comprehension over a range whose length is only known at run time",
                        "its result is a tuple, whose length must be known while lowering; "
                        "use sum(...) or a for loop", walk_bounds(walk),
                    )
                for k in range(walk.length):
                    self.fl.statements.assign(gen.target, walk.item(self.fl, k))
                    if all(self._static_condition(c) for c in gen.ifs):
                        generate(i + 1)
            finally:
                self.release(hidden)

        try:
            generate(0)
        finally:
            # a lambda made in it reads its variables when it is called, after
            # it: their last values, as Python's cells hold them (late binding)
            read_late = _read_by_functions(node)
            self.release([name for name in hidden_targets if name not in read_late])
        cells = tuple((name, self.fl.env[name]) for name in hidden_targets if name in read_late and name in self.fl.env)
        if cells:  # its own lambdas keep them: the comprehension run again (in a loop) binds others
            results = [dataclasses.replace(r, cells=cells) if isinstance(r, Closure) and r.captured is None else r
                       for r in results]
        return tuple(results)

    def _static_condition(self, test: ast.expr) -> bool:
        value = self.fl.expr(test)
        known, obj = known_value(value)
        if not known:
            raise self.fl.src.error(
                test, "the condition of a comprehension that builds a tuple or list must be "
                "known while lowering (its length would depend on data)",
                "use sum(... for ... if c) (a loop), or np.where for an elementwise choice",
            )
        return bool(obj)

    def _scoped(self, node):
        """A copy of a comprehension whose targets are hidden names, so they neither
        see nor change the function's variables (Python gives them their own scope).
        The copy is made once per node: a loop body lowered again meets the same code."""
        cache = self.scoped_copies
        if node not in cache:
            for sub in ast.walk(node):
                if isinstance(sub, ast.NamedExpr):  # Python binds it in the function, once per item
                    raise self.fl.src.error(
                        sub, f"an assignment expression (`{sub.target.id} := ...`) in a comprehension is not supported",
                        "write the comprehension as a `for` loop that assigns the name in a statement",
                    )
            targets = {n.id for g in node.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}
            names = {t: self.hidden_name(t) for t in sorted(targets)}
            copied = copy.deepcopy(node)
            _rename(copied, names)
            copied.generators[0].iter = node.generators[0].iter  # evaluated in the enclosing scope
            cache[node] = (copied, list(names.values()))
        return cache[node]

    def sum_call(self, node: ast.Call):
        """sum(<generator or comprehension>[, start]) is a loop over the generator's
        iterables: `acc = start; for ...: [if ...:] acc = acc + elt`."""
        iterable = node.args[0] if node.args else None
        if not isinstance(iterable, (ast.GeneratorExp, ast.ListComp)):
            args, kwargs = self.fl.calls.call_arguments(node)
            return self.fl.calls.call_value(Static(builtins.sum), args, kwargs, node)
        if len(node.args) > 2 or [k.arg for k in node.keywords] not in ([], ["start"]) or (
            len(node.args) == 2 and node.keywords
        ):
            raise self.fl.src.error(node, "sum takes an iterable and an optional start")
        start_node = node.args[1] if len(node.args) == 2 else (node.keywords[0].value if node.keywords else None)
        scoped, hidden_targets = self._scoped(iterable)
        acc = self.hidden_name("sum")
        loop = self._accumulating_loop(scoped, acc, node)
        self.assign_hidden(acc, self.fl.em.const(0, I64) if start_node is None else self.fl.expr(start_node))
        try:
            self.fl.statement(loop)
            return self.fl.env[acc]
        finally:
            self.release([acc, *hidden_targets])

    def sum_values(self, value, start, node):
        """sum(iterable, start): `start + item0 + item1 + ...` as Python adds them."""
        start = self.fl.em.const(0, I64) if start is None else start
        if getattr(value, "rows_of", None) is not None:  # a list of an array's rows (lists.py): that array
            value = value.rows_of
        if is_array(value) and is_float(value.type.element_type):  # over the first axis: one reduction
            total = self.fl.arrays.reduction(value, Static(0), Static(False), node, arith.AddfOp)
            return self.fl.expressions.binary(ast.Add(), self.fl.as_number(start, node), node, node, total)
        acc, seq, item = self.hidden_name("sum"), self.hidden_name("seq"), self.hidden_name("item")
        loop = ast.For(
            target=ast.Name(id=item, ctx=ast.Store()), iter=ast.Name(id=seq, ctx=ast.Load()),
            body=[_add_into(acc, ast.Name(id=item, ctx=ast.Load()))], orelse=[],
        )
        _locate(loop, node)
        self.assign_hidden(seq, value)
        self.assign_hidden(acc, start)
        try:
            self.fl.statement(loop)
            return self.fl.env[acc]
        finally:
            self.release([acc, seq])

    def truth_call(self, node: ast.Call, every: bool):
        """all(...) and any(...): a loop `acc = True; for ...: acc = acc and (not not elt)`
        (`or`, from False, for any), over a generator's iterables or the items of a value;
        with items known while lowering the result is known too (`all(d > 1 for d in x.shape)`)."""
        name = "all" if every else "any"
        if len(node.args) != 1 or node.keywords:
            raise self.fl.src.error(node, f"{name} takes one iterable")
        iterable = node.args[0]
        acc = self.hidden_name(name)
        combine = functools.partial(_truth_into, every=every)
        if isinstance(iterable, (ast.GeneratorExp, ast.ListComp)):
            scoped, hidden = self._scoped(iterable)
            loop = self._accumulating_loop(scoped, acc, node, combine)
        else:
            seq, item = self.hidden_name("seq"), self.hidden_name("item")
            loop = ast.For(target=ast.Name(id=item, ctx=ast.Store()), iter=ast.Name(id=seq, ctx=ast.Load()),
                           body=[combine(acc, ast.Name(id=item, ctx=ast.Load()))], orelse=[])
            _locate(loop, node)
            self.assign_hidden(seq, self.fl.expr(iterable))
            hidden = [seq, item]
        self.assign_hidden(acc, numpy_scalars.mark(self.fl.em.const(every, I1), numpy_scalars.PYTHON))
        try:
            self.fl.statement(loop)
            return self.fl.env[acc]
        finally:
            self.release([acc, *hidden])

    def _accumulating_loop(self, comp, acc: str, node, combine=None) -> ast.For:
        """for t1 in it1: [if c:] for t2 in it2: ... acc = acc + elt (or `combine(acc, elt)`)"""
        body: list[ast.stmt] = [(combine or _add_into)(acc, comp.elt)]
        for gen in reversed(comp.generators):
            if gen.is_async:
                raise self.fl.src.error(gen, "async comprehensions are not supported")
            for test in reversed(gen.ifs):
                body = [ast.If(test=test, body=body, orelse=[])]
            body = [ast.For(target=gen.target, iter=gen.iter, body=body, orelse=[])]
        loop = body[0]
        _locate(loop, node)
        return loop


def _rename(node: ast.AST, names: dict[str, str]) -> None:
    """Rename variables in place, except where a nested lambda or def binds the
    same name (its parameters and locals shadow the comprehension's)."""
    if isinstance(node, ast.Name):
        node.id = names.get(node.id, node.id)
        return
    if isinstance(node, (ast.Lambda, ast.FunctionDef)):
        for default in [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]:
            _rename(default, names)  # evaluated in the enclosing scope
        inner = {k: v for k, v in names.items() if k not in local_names(node)}
        for stmt in [node.body] if isinstance(node, ast.Lambda) else node.body:
            _rename(stmt, inner)
        return
    for child in ast.iter_child_nodes(node):
        _rename(child, names)


def _read_by_functions(node: ast.AST) -> set[str]:
    """The names the lambdas and nested defs inside `node` read from outside them."""
    return {name for inner in ast.walk(node) if isinstance(inner, (ast.Lambda, ast.FunctionDef))
            for name in free_names(inner)}


def _add_into(acc: str, value: ast.expr) -> ast.Assign:
    total = ast.BinOp(left=ast.Name(id=acc, ctx=ast.Load()), op=ast.Add(), right=value)
    return ast.Assign(targets=[ast.Name(id=acc, ctx=ast.Store())], value=total)


def _truth_into(acc: str, value: ast.expr, every: bool) -> ast.Assign:
    truth = ast.UnaryOp(op=ast.Not(), operand=ast.UnaryOp(op=ast.Not(), operand=value))  # bool(value)
    combined = ast.BoolOp(op=ast.And() if every else ast.Or(), values=[ast.Name(id=acc, ctx=ast.Load()), truth])
    return ast.Assign(targets=[ast.Name(id=acc, ctx=ast.Store())], value=combined)


def _locate(tree: ast.AST, node: ast.AST) -> None:
    """Give the nodes built for a construct its location (nodes copied from it keep theirs)."""
    for sub in ast.walk(tree):
        if not hasattr(sub, "lineno") and "lineno" in sub._attributes:
            ast.copy_location(sub, node)


def _target_names(target: ast.expr) -> list[str]:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


__all__ = ["Iteration", "ITERABLES", "RangeValue", "ZipValue", "EnumerateValue", "ReversedValue"]
