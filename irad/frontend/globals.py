"""Global arrays as hidden arguments.

A numpy array a program reads from outside its arguments (a module global, a
closure cell, a helper's default value, or an attribute or tuple item reached
from one) may change between calls: `BATCH[:] = new` mutates it in place,
`BATCH = other` rebinds the name. Baked into the IR as a constant at the first
compile, it would make every later gradient silently stale. So the frontend
makes each such array a *hidden argument*: an extra `func.func` argument after
the function's own, named after the global (`%BATCH`), which the API reads
afresh at every call. Numbers (and numpy scalars) stay baked in as
constants, guarded (below).

- `Global` says where an array lives: the holder (a globals dict, a cell or a
  function's defaults), the name in it, then attribute and item steps. Two
  reads of one place are one argument.
- `HiddenArguments` (one per function being lowered) gives each global the
  function reads its block argument, created on first use. A call passes the
  callee's globals from the caller's own hidden arguments, so a helper's
  globals become its callers' too, up to the entry. (A rule's IR has no
  caller to pass them: in rule lowering a global array is an error.)
- Recursion: a function's recursive calls see its declaration, which assumes
  the globals found so far. `ModuleLowering` lowers it again, the assumed
  globals first and in the same order, until the set no longer grows (it only
  grows, so this stops): a fixed point, in the same loop that settles the
  result types.
- `HiddenGlobals` is what the API keeps beside compiled code: the entry's
  globals in argument order and the (dtype, shape) each had when compiled.
  `read()` gives their values now; None when one changed dtype or shape (the
  caller compiles again); an error naming the global when one is no longer an
  array irad can take.

Everything else read from outside and used while lowering is baked into the
IR: numbers, strings, None, the length and keys of a container, the function
a name calls, the class of an object whose methods it calls. Each such read is a *guard* (`Guards`, one per module lowered,
which every `Global` of the module carries): the place and what was found
there. `Static` reports each object it holds with an origin (`observe`), so no
path of the frontend can bake a value unguarded. `CallGuards.holds()`, a
function generated from the guards, checks them all at each call (tens of
nanoseconds a guard); when one fails the caller compiles again, so a changed
value is seen, exactly as when it was first lowered.
"""

from __future__ import annotations

import itertools
import re
import types
from dataclasses import dataclass, field, replace

import numpy as np
from xdsl.ir import Attribute, Block, BlockArgument

from irad.base.errors import UnsupportedError
from irad.ir.symbols import value_name
from irad.ir.types import refusal, type_of_value

GLOBAL, CLOSURE, DEFAULT = "global", "closure", "default"


@dataclass(frozen=True, eq=False)
class Global:
    """Where an array a function reads lives, outside its arguments."""

    holder: object  # a globals dict (GLOBAL), a cell (CLOSURE), a function (DEFAULT)
    name: str
    kind: str = GLOBAL
    steps: tuple = ()  # ("attr", name), ("item", index) or ("slice", (start, stop, step)), in order
    where: str = ""  # file:line:col of a read, for errors
    guards: Guards | None = field(default=None, repr=False)  # the module's, recording what it bakes in

    def _identity(self):
        return id(self.holder), self.name, self.steps

    def __eq__(self, other) -> bool:
        return isinstance(other, Global) and self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash(self._identity())

    def attribute(self, attr: str) -> Global:
        return replace(self, steps=(*self.steps, ("attr", attr)))

    def item(self, index) -> Global:
        if isinstance(index, slice):
            return replace(self, steps=(*self.steps, ("slice", (index.start, index.stop, index.step))))
        return replace(self, steps=(*self.steps, ("item", index)))

    def observe(self, obj: object) -> None:
        """`obj`, found here, is used while lowering: guard it (see Guards)."""
        if self.guards is not None:
            self.guards.observe(self, obj)

    def at(self, where: str) -> Global:
        return self if self.where else replace(self, where=where)

    @property
    def label(self) -> str:
        """How the program spells it: `BATCH`, `cfg.W`, `WEIGHTS[0]`."""
        text = self.name
        for kind, step in self.steps:
            text += f".{step}" if kind == "attr" else f"[{_slice_text(step)}]" if kind == "slice" else f"[{step!r}]"
        return text

    def describe(self) -> str:
        what = {GLOBAL: "the global", CLOSURE: "the closure variable", DEFAULT: "the default of"}[self.kind]
        return f"{what} '{self.label}'"

    def read(self) -> object:
        """The object there now; LookupError when it is gone."""
        if self.kind == CLOSURE:
            try:
                obj = self.holder.cell_contents
            except ValueError:
                raise LookupError(self.name) from None
        elif self.kind == DEFAULT:
            obj = _default(self.holder, self.name)
        else:
            obj = self.holder[self.name]
        for kind, step in self.steps:
            try:
                obj = getattr(obj, step) if kind == "attr" else obj[slice(*step) if kind == "slice" else step]
            except (AttributeError, IndexError, KeyError, TypeError):
                raise LookupError(step) from None
        return obj


def _slice_text(step: tuple) -> str:
    start, stop, by = ("" if v is None else repr(v) for v in step)
    return f"{start}:{stop}" + (f":{by}" if by else "")


def _default_index(fn, name: str) -> int:
    """The index of parameter `name`'s value in `fn.__defaults__`."""
    code = fn.__code__
    params = code.co_varnames[: code.co_argcount]
    return params.index(name) - (len(params) - len(fn.__defaults__ or ()))


def _default(fn, name: str) -> object:
    index = _default_index(fn, name)
    if index < 0:
        raise LookupError(name)
    return fn.__defaults__[index]


# ---- guards: what a module baked in of the values it read from outside ---------------
VALUE, LAYOUT, SAME, TYPE = "value", "layout", "same", "type"
_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a `class` statement (not numpy's or Python's own)
_VALUES = (bool, int, float, complex, str, bytes, type(None), np.generic)
_CONTAINERS = (tuple, list, dict)


@dataclass(frozen=True)
class Guard:
    """What a module assumed of the object at `place`: its exact type and value
    (VALUE: a number, string, None, or a tuple or list of them), its type and
    layout (LAYOUT: another container's length and, for a dict, its keys in
    order; its items have guards of their own where they are read), that it
    is that very object (SAME: a Python function it calls), or its class
    (TYPE: an object of a class defined in Python, whose methods it calls)."""

    place: Global
    kind: str
    expected: object  # the value; (type, length, keys or None); the function

    def holds_for(self, obj: object) -> bool:
        if self.kind == SAME:
            return obj is self.expected
        if self.kind == TYPE:
            return type(obj) is self.expected
        if self.kind == LAYOUT:
            return _layout(obj) == self.expected
        return type(obj) is type(self.expected) and (obj is self.expected or bool(obj == self.expected))


def _plain(obj) -> bool:
    """A tuple or list of numbers, strings and None (nested): compared whole."""
    return all(isinstance(v, _VALUES) or isinstance(v, (tuple, list)) and _plain(v) for v in obj)


def _layout(obj) -> tuple:
    return type(obj), len(obj), tuple(obj) if isinstance(obj, dict) else None


def guard_of(place: Global, obj: object) -> Guard | None:
    """The guard for using `obj`, found at `place`, while lowering; None for what
    is read at each call (arrays: hidden arguments) or resolved once (modules,
    classes, other objects; docs/python-subset.md)."""
    if isinstance(obj, np.ndarray):
        return None
    if isinstance(obj, _VALUES):
        return Guard(place, VALUE, obj)
    if isinstance(obj, (tuple, list)) and _plain(obj):  # a shape, axes: used whole, as a value
        return Guard(place, VALUE, type(obj)(obj) if type(obj) is list else obj)  # a list: a snapshot
    if isinstance(obj, _CONTAINERS):
        return Guard(place, LAYOUT, _layout(obj))
    if isinstance(obj, types.FunctionType):
        return Guard(place, SAME, obj)
    if type(obj).__flags__ & _HEAP_TYPE:  # an object of a Python class: its methods are its class's
        return Guard(place, TYPE, type(obj))
    return None


class Guards:
    """The guards of one module being lowered, one per place (the first read wins)."""

    def __init__(self) -> None:
        self.found: dict[Global, Guard] = {}
        self.whole: set[tuple] = set()  # the places of tuples and lists compared whole

    def observe(self, place: Global, obj: object) -> None:
        if place in self.found or self._within_whole(place):
            return
        guard = guard_of(place, obj)
        if guard is not None:
            self.found[place] = guard
            if guard.kind == VALUE and isinstance(obj, (tuple, list)):
                self.whole.add(place._identity())

    def _within_whole(self, place: Global) -> bool:
        """Is `place` inside a tuple or list whose guard compares it whole (an item of it)?"""
        holder, name, steps = place._identity()
        return bool(self.whole) and any((holder, name, steps[:k]) in self.whole for k in range(len(steps)))

    def freeze(self) -> CallGuards:
        return CallGuards(tuple(self.found.values()))


@dataclass(frozen=True, eq=False)
class CallGuards:
    """A module's guards, checked at each call by `holds()`, one generated
    expression per guard (no loop, no call per guard)."""

    guards: tuple[Guard, ...] = ()
    holds: object = field(default=None, repr=False)  # () -> bool

    def __post_init__(self) -> None:
        object.__setattr__(self, "holds", _checker(self.guards))

    @property
    def check(self):
        """`holds`, or None when there is nothing to check."""
        return self.holds if self.guards else None

    def changed(self) -> list[str]:
        """The labels of the places whose guard fails now (for messages)."""
        changed = []
        for guard in self.guards:
            try:
                ok = guard.holds_for(guard.place.read())
            except Exception:  # noqa: BLE001 -- gone, or no longer sized: changed
                ok = False
            if not ok:
                changed.append(guard.place.label)
        return changed


_checkers = itertools.count()


def _checker(guards: tuple[Guard, ...]):
    """A function that says whether every guard holds (False if a place is gone).

    One `and` of one term per guard, in recording order: an object read on the
    way to a place (`CFG`, then `CFG["inner"]`) is bound to a name the first
    time and reused by later terms, and an unchanged value is recognised by
    identity before its type and value are compared."""
    if not guards:
        return _always
    env: dict[str, object] = {"_type": type, "_len": len, "_tuple": tuple}
    read: dict[tuple, str] = {}  # a path (holder, name, steps so far) -> the name bound to its object

    def bind(obj) -> str:
        name = f"_c{len(env)}"
        env[name] = obj
        return name

    def path_of(place: Global) -> tuple[str, str]:
        """The expression reading `place` (binding what it reads on the way), and its name."""
        path: tuple = (id(place.holder), place.kind, place.name)
        if path in read:
            expr = read[path]
        else:
            if place.kind == CLOSURE:
                root = f"{bind(place.holder)}.cell_contents"
            elif place.kind == DEFAULT:
                index = _default_index(place.holder, place.name)
                root = f"{bind(place.holder)}.__defaults__[{index}]" if index >= 0 else f"{bind(place.read)}()"
            else:
                root = f"{bind(place.holder)}[{bind(place.name)}]"
            read[path] = name = f"_v{len(read)}"
            expr = f"({name} := {root})"
        for kind, step in place.steps:
            path = (*path, kind, step)
            if path in read:
                expr = read[path]
                continue
            part = f".{step}" if kind == "attr" else f"[{bind(slice(*step) if kind == 'slice' else step)}]"
            read[path] = name = f"_v{len(read)}"
            expr = f"({name} := {expr}{part})"
        return expr, read[path]

    terms = []
    for guard in guards:
        expr, x = path_of(guard.place)
        if guard.kind == SAME:
            terms.append(f"{expr} is {bind(guard.expected)}")
        elif guard.kind == TYPE:
            terms.append(f"_type({expr}) is {bind(guard.expected)}")
        elif guard.kind == LAYOUT:
            cls, length, keys = guard.expected
            term = f"_type({expr}) is {bind(cls)} and _len({x}) == {length}"
            terms.append(term + (f" and _tuple({x}) == {bind(keys)}" if keys is not None else ""))
        else:
            v = bind(guard.expected)
            terms.append(f"{expr} is {v} or (_type({x}) is {bind(type(guard.expected))} and {x} == {v})")
    body = " and ".join(f"({t})" for t in terms)
    source = (f"def _make({', '.join(env)}):\n    def holds():\n        try:\n"
              f"            return {body}\n        except Exception:\n            return False\n"
              "    return holds\n")
    scope: dict = {}
    exec(compile(source, f"<irad guards #{next(_checkers)}>", "exec"), {}, scope)
    return scope["_make"](**env)


def _always() -> bool:
    return True


NO_GUARDS = CallGuards()


def is_hidden(obj: object) -> bool:
    """Is `obj` an array read at each call (not baked in)? 0-d arrays too: they
    can be written in place (`G[...] = 2.0`)."""
    return isinstance(obj, np.ndarray) and type_of_value(obj) is not None


def hint_name(g: Global) -> str:
    """An SSA name for the argument: `cfg.W` stays, `WEIGHTS[0]` becomes `WEIGHTS.0`."""
    dotted = re.sub(r"\.{2,}", ".", re.sub(r"[^\w$.-]+", ".", g.label))  # `W[0].b` -> `W.0.b`
    return value_name(dotted.strip(".") or "global")


class HiddenArguments:
    """The hidden arguments of one function being lowered, appended to its block."""

    def __init__(self, block: Block, assumed: tuple[tuple[Global, Attribute], ...] = (), allowed: bool = True):
        self.block = block
        self.allowed = allowed
        self.arguments: dict[Global, BlockArgument] = {}
        for g, t in assumed:
            self._add(g, t)

    def _add(self, g: Global, t: Attribute) -> BlockArgument:
        arg = self.block.insert_arg(t, len(self.block.args))
        arg.name_hint = hint_name(g)
        self.arguments[g] = arg
        return arg

    def argument(self, g: Global, t: Attribute | None = None) -> BlockArgument:
        """The block argument holding the array at `g` (its type that of the value
        now, or `t` when a callee declares it)."""
        arg = self.arguments.get(g)
        if arg is not None:
            return arg
        if not self.allowed:
            raise UnsupportedError(
                f"{g.where}: a rule (or a helper it calls) reads {g.describe()}, a numpy array; "
                "irad reads global arrays at each call, as hidden arguments, which a rule's IR "
                "cannot take\n  hint: pass the array to the target function as an argument, or "
                "build it inside the rule"
            )
        return self._add(g, t if t is not None else type_of_value(g.read()))

    def name_of(self, value) -> str | None:
        """The label of the global a block argument holds, if it is hidden."""
        for g, arg in self.arguments.items():
            if value is arg:
                return g.label
        return None

    def items(self) -> tuple[tuple[Global, Attribute], ...]:
        return tuple((g, arg.type) for g, arg in self.arguments.items())


def array_key(value: np.ndarray) -> tuple:
    """What a compiled module fixes about a hidden array: its dtype and shape."""
    return value.dtype, value.shape  # dtypes hash and compare by value


@dataclass(frozen=True)
class HiddenGlobals:
    """What compiled code takes from outside its arguments: the globals an entry
    function takes as hidden arguments (after its own), in order, with the
    array key each had when it was lowered, and the guards of what it baked in."""

    globals: tuple[Global, ...] = ()
    keys: tuple[tuple, ...] = field(default=())
    reader: str = ""  # the function that reads them, for errors
    guards: CallGuards = NO_GUARDS

    @staticmethod
    def now(globals_: tuple[Global, ...], reader: str, guards: CallGuards = NO_GUARDS) -> HiddenGlobals:
        return HiddenGlobals(tuple(globals_), tuple(array_key(g.read()) for g in globals_), reader, guards)

    def read(self) -> tuple | None:
        """The arrays as they are now, to pass after the arguments; None when one
        has another dtype or shape than when compiled, or a guard fails (compile
        again)."""
        if not self.guards.holds():
            return None
        if not self.globals:
            return ()
        values = []
        for g, key in zip(self.globals, self.keys):
            try:
                value = g.read()
            except LookupError:
                raise UnsupportedError(
                    f"{g.where}: {g.describe()}, an array {self.reader} reads, is no longer defined\n"
                    "  hint: irad reads global arrays at each call; keep it bound to a numpy array"
                ) from None
            if not (isinstance(value, np.ndarray) and array_key(value) == key):
                self._check(g, value)
                return None
            values.append(value)
        return tuple(values)

    def _check(self, g: Global, value: object) -> None:
        """An error unless `value` is an array irad can take in place of the one at `g`."""
        if not is_hidden(value):
            refused = refusal(value)
            if refused is not None:  # a subclass or an int dtype: its own reason and rewrite
                raise UnsupportedError(f"{g.where}: {g.describe()}, an array when {self.reader} was compiled, "
                                       f"is now {refused[0]}\n  hint: {refused[1]}")
            if isinstance(value, np.ndarray):
                what = f"an array of dtype {value.dtype}, which irad cannot lower"
            else:
                what = f"{type(value).__name__} {value!r}"[:120] + ", not a numpy array"
            raise UnsupportedError(
                f"{g.where}: {g.describe()}, an array when {self.reader} was compiled, is now {what}\n"
                "  hint: irad reads global arrays at each call; rebind it to a numpy array of "
                "float, int or bool (np.asarray(...)), or pass the value as an argument"
            )


NO_GLOBALS = HiddenGlobals()

__all__ = ["CLOSURE", "DEFAULT", "GLOBAL", "CallGuards", "Global", "Guards", "HiddenArguments", "HiddenGlobals",
           "NO_GLOBALS", "is_hidden"]
