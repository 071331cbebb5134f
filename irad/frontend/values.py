"""What an expression lowers to: the frontend's value model.

Every value the frontend holds for a Python value is of one `Kind`, which
`value_kind` tells (the one classifier; dispatch on it rather than on classes):

* KNOWN: a Python object known while lowering, as `Static` (a number, string,
  shape, None, a module or class, a global's value). A call specialises its
  callee on known arguments (callables.StaticShape), so they stay known
  across calls.
* RUNTIME: a number or array computed at run time, an SSA value with its IR
  type. An SSA number that is a constant may still be known
  (numpy_scalars.known_number): a call passes it as a static value too. An
  array that is a *view* of another, or shares its buffer, is a RUNTIME value
  that the path's views.ViewState lists as a member of a base (views.py).
* TREE: a container of values (a tuple, `ListValue`, `RecordValue`,
  `MappingValue`, a function's **kwargs).
* CALLABLE: a function a program names or makes (closures and partials,
  irad/frontend/callables.py; methods of values, lists, dicts and arrays; a
  known function, as a `Static`).
* ITERABLE: range, zip, enumerate and reversed objects (irad/frontend/iteration.py).
* ABSENT: None (a call that returns nothing) and `NoValue` (a variable that
  has no value here, with why).
* SELECTION: `x[m]` for a boolean mask known only at run time, whose length is
  known only at run time: only reductions and elementwise operations take it
  (irad/frontend/masked_reads.py).

Value classes defined elsewhere declare their kind in a class attribute `KIND`.

Containers are pytrees (irad/base/pytrees.py): `ListValue` and `RecordValue`
(a list or NamedTuple: a tuple of its items that remembers its class),
`MappingValue` (a dict or a dataclass); `value_node` takes one apart and
`make_value` builds one. A call's arguments, a function's results and a
branch's variables are flattened into SSA values and rebuilt by
irad/frontend/callables.py (`flatten`, `rebuild`), where a tree's leaves may
also be functions and objects known while lowering. A leaf argument is named
after its path (`ir_name`): `%params.W`, `%layers.0.b`, `%state.v`.
"""

from __future__ import annotations

import enum
import functools
import re
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from irad.base.pytrees import NONE, Node, dict_order, is_namedtuple_class
from irad.ir.isa import isa
from irad.ir.symbols import value_name
from irad.ir.types import F32, is_bool, is_float, is_int, is_tensor


class Kind(enum.Enum):
    """What the frontend knows about a Python value (the module docstring says more)."""

    KNOWN = "known"
    RUNTIME = "runtime"
    TREE = "tree"
    CALLABLE = "callable"
    ITERABLE = "iterable"
    ABSENT = "absent"
    SELECTION = "selection"


@dataclass(frozen=True)
class Static:
    """A Python object known at lowering time (a module, a function, a flag, ...).
    `origin` says where it lives when it was read from outside the function (a
    `globals.Global`): an array read from there becomes a hidden argument;
    anything else is reported to it, to be guarded (checked at each call)."""

    obj: object
    origin: object = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.origin is not None:
            self.origin.observe(self.obj)


@dataclass(frozen=True, eq=False)
class NoValue:
    """What a local variable holds where Python's would have a value irad does not
    give it (assigned on one path of a branch only, paths whose values irad cannot
    join, created inside an `scf.for` loop): reading it is the error, with why."""

    why: str  # "it is assigned on only one path of the branch at f.py:3:5"
    hint: str


Value = SSAValue | tuple | Static | object | None  # of one Kind: see value_kind


def value_kind(value: Value) -> Kind:
    """The kind of a value of the frontend."""
    if isinstance(value, SSAValue):
        return Kind.RUNTIME
    if isinstance(value, Static):
        return Kind.CALLABLE if callable(value.obj) else Kind.KNOWN
    if isinstance(value, (tuple, MappingValue)):
        return Kind.TREE
    if value is None or isinstance(value, NoValue):
        return Kind.ABSENT
    kind = getattr(type(value), "KIND", None)
    if kind is None:  # pragma: no cover - a value class without a KIND is irad's mistake
        raise TypeError(f"irad internal: {type(value).__name__} declares no Kind (values.py)")
    return kind


def is_array(v) -> bool:
    """A numpy array computed at run time: an SSA value of tensor type."""
    return isa(v, SSAValue) and isa(v.type, TensorType)


# ---- containers: lists, NamedTuples, dicts and dataclasses in a program -------------
class ListValue(tuple):
    """A list in a program: a tuple of its items (so unpacking, indexing and
    iteration work as on a tuple) that flattens and rebuilds as a list.

    `mutable` says whether the program may change it (`append`, `pop`, ...;
    irad/frontend/lists.py): only a list the program made itself, never a
    copy irad makes when it rebuilds a value (a helper's argument, a call's
    result, a variable after a join), which is what `make_value` gives."""

    cls = list
    mutable = False
    why = hint = ""  # why it cannot change (when that is not only that it is a copy), and what to do
    rows_of = None  # an array whose rows its items are, in order (all of them): np.stack(xs) is it
    nested = True  # False: numbers and arrays only (nothing inside to look for)


def holds_containers(items) -> bool:
    """Whether a list's items include containers (what `ListValue.nested` says)."""
    return any(not isinstance(v, SSAValue) for v in items)


def new_list(items) -> ListValue:
    """A list the program made (it may change)."""
    value = ListValue(items)
    value.mutable = True
    value.nested = holds_containers(value)
    return value


class RecordValue(tuple):
    """A NamedTuple in a program: its items, and its class (for fields)."""

    def __new__(cls, items, record_cls: type):
        value = super().__new__(cls, items)
        value.cls = record_cls
        return value

    def field(self, name: str):
        return self[self.cls._fields.index(name)]


@dataclass(frozen=True, eq=False)
class MappingValue:
    """A dict (str keys) or a dataclass instance in a program: its keys and values,
    in the order they were written (a dict flattens by sorted key). A dict whose
    paths into a branch inserted its keys in different orders is not `ordered`:
    Python's order depends on the path, so irad refuses to iterate it."""

    cls: type
    items: tuple  # ((key, value), ...)
    ordered: bool = True

    def get(self, key: str, default=None):
        for k, v in self.items:
            if k == key:
                return v
        return default

    def keys(self) -> tuple:
        return tuple(k for k, _ in self.items)


@dataclass(frozen=True, eq=False)
class Method:
    """`model.forward` for a NamedTuple or dataclass value: a function of its
    class, called with the value as its first argument."""

    fn: object
    receiver: object
    KIND = Kind.CALLABLE


def value_node(value) -> tuple[Node, tuple] | None:
    """The node of a container value and its items in flattening order."""
    if isinstance(value, RecordValue):
        return Node(value.cls, tuple(value.cls._fields), ()), tuple(value)
    if isinstance(value, tuple):
        cls = value.cls if isinstance(value, ListValue) else tuple
        return Node(cls, tuple(range(len(value))), ()), tuple(value)
    if isinstance(value, MappingValue):
        if value.cls is not dict:
            return Node(value.cls, value.keys(), ()), tuple(v for _, v in value.items)
        keys = tuple(sorted(value.keys()))
        order = dict_order(value.keys()) if value.ordered else None
        return Node(dict, keys, (), order), tuple(value.get(k) for k in keys)
    if value is None or (isinstance(value, Static) and value.obj is None):
        return NONE, ()
    return None


def make_value(cls: type, keys: tuple, items: list, order: tuple | None = ()):
    """A program value of class `cls` holding `items` under `keys` (a dict's
    inserted in `order`, if given; None: an order that depends on the path)."""
    if cls is NONE.cls:
        return Static(None)
    if cls is tuple:
        return tuple(items)
    if cls is list:
        return ListValue(items)
    if is_namedtuple_class(cls):
        return RecordValue(items, cls)
    pairs = tuple(zip(keys, items))
    if order:
        found = dict(pairs)
        pairs = tuple((k, found[k]) for k in order)
    return MappingValue(cls, pairs, order is not None)


def mark_orders(joined, *paths):
    """`joined`, the value a join rebuilt from one path's, with each dict in it
    whose keys the `paths` inserted in different orders no longer `ordered`."""
    if isinstance(joined, MappingValue):
        found = [p for p in paths if isinstance(p, MappingValue)]
        same = all(p.ordered for p in found) and len({p.keys() for p in found}) <= 1
        items = tuple((k, mark_orders(v, *(p.get(k) for p in found))) for k, v in joined.items)
        if same and all(a is b for (_, a), (_, b) in zip(items, joined.items)):
            return joined
        return MappingValue(joined.cls, items, joined.ordered and same)
    if isinstance(joined, tuple):
        found = [p for p in paths if isinstance(p, tuple) and len(p) == len(joined)]
        items = [mark_orders(v, *(p[i] for p in found)) for i, v in enumerate(joined)]
        if all(a is b for a, b in zip(items, joined)):
            return joined
        node, _ = value_node(joined)
        return make_value(node.cls, node.keys, items)
    return joined


def same_orders(a, b) -> bool:
    """Do the dicts in two values of one structure have their keys in one order?"""
    if isinstance(a, MappingValue) and isinstance(b, MappingValue):
        return a.keys() == b.keys() and a.ordered == b.ordered and all(
            same_orders(x, b.get(k)) for k, x in a.items)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return all(same_orders(x, y) for x, y in zip(a, b))
    return True


def python_class(value) -> type | None:
    """The Python class a value of a program has at run time, from its IR type
    or its container: what `isinstance` answers from."""
    if isinstance(value, SSAValue):
        t = value.type
        if is_tensor(t):
            return np.ndarray
        if is_float(t):
            return np.float32 if t == F32 else float
        if is_bool(t):
            return bool
        return int if is_int(t) else None
    if isinstance(value, (ListValue, RecordValue, MappingValue)):
        return value.cls
    if isinstance(value, tuple):
        return tuple
    return None


@functools.lru_cache(maxsize=4096)  # per name: every function binds its parameters (`x`, ...)
def ir_name(path: str) -> str:
    """`params['W']` -> `params.W`: the characters MLIR allows in a value name."""
    return value_name(re.sub(r"[^\w$.-]+", ".", path).strip(".") or "arg")
