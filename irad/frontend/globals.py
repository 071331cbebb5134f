"""Global arrays as hidden arguments.

A numpy array a program reads from outside its arguments (a module global, a
closure cell, a helper's default value, or an attribute or tuple item reached
from one) may change between calls: `BATCH[:] = new` mutates it in place,
`BATCH = other` rebinds the name. Baked into the IR as a constant at the first
compile, it would make every later gradient silently stale. So the frontend
makes each such array a *hidden argument*: an extra `func.func` argument after
the function's own, named after the global (`%BATCH`), which the API reads
afresh at every call. Numbers (and numpy scalars) are immutable and stay
baked in as constants.

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
"""

from __future__ import annotations

import re
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
    steps: tuple = ()  # ("attr", name) or ("item", index), applied in order
    where: str = ""  # file:line:col of a read, for errors

    def _identity(self):
        return id(self.holder), self.name, self.steps

    def __eq__(self, other) -> bool:
        return isinstance(other, Global) and self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash(self._identity())

    def attribute(self, attr: str) -> Global:
        return replace(self, steps=(*self.steps, ("attr", attr)))

    def item(self, index) -> Global:
        return replace(self, steps=(*self.steps, ("item", index)))

    def at(self, where: str) -> Global:
        return self if self.where else replace(self, where=where)

    @property
    def label(self) -> str:
        """How the program spells it: `BATCH`, `cfg.W`, `WEIGHTS[0]`."""
        text = self.name
        for kind, step in self.steps:
            text += f".{step}" if kind == "attr" else f"[{step!r}]"
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
                obj = getattr(obj, step) if kind == "attr" else obj[step]
            except (AttributeError, IndexError, KeyError, TypeError):
                raise LookupError(step) from None
        return obj


def _default(fn, name: str) -> object:
    code = fn.__code__
    params = code.co_varnames[: code.co_argcount]
    defaults = fn.__defaults__ or ()
    index = params.index(name) - (len(params) - len(defaults))
    if index < 0:
        raise LookupError(name)
    return defaults[index]


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
    """The globals an entry function takes as hidden arguments (after its own),
    in order, with the array key each had when it was lowered."""

    globals: tuple[Global, ...] = ()
    keys: tuple[tuple, ...] = field(default=())
    reader: str = ""  # the function that reads them, for errors

    @staticmethod
    def now(globals_: tuple[Global, ...], reader: str) -> HiddenGlobals:
        return HiddenGlobals(tuple(globals_), tuple(array_key(g.read()) for g in globals_), reader)

    def read(self) -> tuple | None:
        """The arrays as they are now, to pass after the arguments; None when one
        has another dtype or shape than when compiled (compile again)."""
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

__all__ = ["CLOSURE", "DEFAULT", "GLOBAL", "Global", "HiddenArguments", "HiddenGlobals", "NO_GLOBALS", "is_hidden"]
