"""Pytrees: nested tuples, lists, dicts, NamedTuples and dataclasses of numbers
and arrays, as in JAX, and how they map to IR arguments and results.

A *tree* describes one structure: a leaf is its IR type (f64, i64, tensor<…>),
a container is a `Node` (its class, its keys and its children's trees). Trees
are hashable, so they are part of every cache key: a function is specialised
once per tree of its arguments.

In IR a tree is flattened into its leaves, one function argument (or result)
each, in this order:

* tuples, lists and NamedTuples: by position;
* dicts (str keys only): by sorted key, as JAX does;
* dataclasses: by field, in `dataclasses.fields` order;
* None: an empty node, no leaf.

A leaf argument is named after its path: `%params.W`, `%layers.0.b`,
`%state.v` (the parameter's name, then each key or field).

Two views of the same structure live here:

* Python objects at the API boundary: `flatten` (arguments) and `unflatten`
  (results, gradients);
* values inside a program being lowered: `ListValue` and `RecordValue` (a
  list or NamedTuple: a tuple of its items that remembers its class),
  `MappingValue` (a dict or a dataclass); `value_node` takes one apart and
  `make_value` builds one. A call's arguments, a function's results and a
  branch's variables are flattened into SSA values and rebuilt by
  irad/frontend/callables.py (`flatten`, `rebuild`), where a tree's leaves may
  also be functions and objects known while lowering.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from xdsl.ir import Attribute, SSAValue

from irad.frontend.values import Static
from irad.ir.symbols import value_name
from irad.ir.types import F32, is_bool, is_float, is_int, is_tensor, type_of_value

ACCEPTED = (
    "float, int or bool scalars, numpy arrays of float64, float32, int or bool, and "
    "tuples, lists, dicts with str keys, NamedTuples and dataclasses of them (nested)"
)
_NONE = type(None)
INT64 = (-(2**63), 2**63)


# ---- the structure ---------------------------------------------------------------
@dataclass(frozen=True)
class Node:
    """A container: its class, its keys (positions, sorted dict keys or field
    names, in flattening order) and one tree per key."""

    cls: type
    keys: tuple
    children: tuple

    def __repr__(self) -> str:
        inner = ", ".join(f"{k!r}: {c!r}" for k, c in zip(self.keys, self.children))
        return f"{self.cls.__name__}({inner})"

    def __hash__(self) -> int:
        # kept: a signature is a cache key, looked up at every call
        try:
            return self._hash
        except AttributeError:
            object.__setattr__(self, "_hash", hash(tuple(getattr(self, f.name) for f in dataclasses.fields(self))))
            return self._hash


@dataclass(frozen=True, repr=False)
class Arguments(Node):
    """The tree of an entry's arguments (its signature) and, per leaf, which kind
    of number it is (irad/frontend/numpy_scalars.py: numpy's scalars and 0-d
    arrays, Python's numbers; EITHER for an array): a float and an np.float64
    are one IR type, but `(x > 0) + (x > 1)` counts for one and is numpy's `or`
    for the other, so a signature tells them apart and they compile apart."""

    kinds: tuple = ()

    __hash__ = Node.__hash__  # over every field, kinds too (a dataclass would write its own)


Tree = Attribute | Node
NONE = Node(_NONE, (), ())


def tuple_tree(children) -> Node:
    children = tuple(children)
    return Node(tuple, tuple(range(len(children))), children)


def is_namedtuple_class(cls) -> bool:
    return isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")


def is_dataclass_class(cls) -> bool:
    return isinstance(cls, type) and dataclasses.is_dataclass(cls)


def leaf_types(tree) -> list[Attribute]:
    """The IR types of a tree's run-time leaves, in order. Besides containers,
    a call's tree holds shapes of values known while lowering
    (irad/frontend/callables.py), whose `parts()` are the trees inside them."""
    out: list[Attribute] = []

    def walk(t) -> None:
        if isinstance(t, Attribute):
            out.append(t)
        else:
            for part in t.children if isinstance(t, Node) else t.parts():
                walk(part)

    walk(tree)
    return out


def is_data(tree) -> bool:
    """Numbers, arrays and containers of them only (no functions, no objects
    known while lowering): what crosses the API and what a function returns."""
    if isinstance(tree, Node):
        return all(is_data(c) for c in tree.children)
    return isinstance(tree, Attribute)


def with_leaf_types(tree: Tree, types) -> Tree:
    """`tree` with its leaves' types replaced, in order, by `types`."""
    types = iter(types)

    def walk(t: Tree) -> Tree:
        if isinstance(t, Node):
            return Node(t.cls, t.keys, tuple(walk(c) for c in t.children))
        return next(types)

    return walk(tree)


def step(cls: type, key) -> str:
    """How Python spells one step into a container of class `cls`: `[0]`,
    `['W']` or `.field`."""
    if cls is dict:
        return f"[{key!r}]"
    if cls in (tuple, list):
        return f"[{key}]"
    return f".{key}"


@functools.lru_cache(maxsize=4096)  # per name: every function binds its parameters (`x`, ...)
def ir_name(path: str) -> str:
    """`params['W']` -> `params.W`: the characters MLIR allows in a value name."""
    return value_name(re.sub(r"[^\w$.-]+", ".", path).strip(".") or "arg")


# ---- Python objects: arguments in, results out ------------------------------------
class BadLeaf(Exception):
    """A value in an argument irad cannot take, and where it is."""

    def __init__(self, path: str, obj: object, why: str = ""):
        super().__init__(path)
        self.path, self.obj, self.why = path, obj, why

    def describe(self) -> str:
        """`params['W'] is a str ('relu')`."""
        what = self.why or f"is {describe_object(self.obj)}"
        return f"{self.path} {what}"


def describe_object(obj: object) -> str:
    if isinstance(obj, np.ndarray):
        return f"a numpy array of dtype {obj.dtype}"
    if isinstance(obj, np.generic):
        return f"a numpy {obj.dtype} scalar"
    text = repr(obj)
    text = text if len(text) <= 40 else text[:37] + "..."
    return f"a {type(obj).__name__} ({text})"


def flatten(obj: object, path: str) -> tuple[list, Tree]:
    """The leaves of a Python object and its tree; BadLeaf names the first
    value irad cannot take."""
    leaves: list = []
    return leaves, _flatten(obj, path, leaves)


def _flatten(obj: object, path: str, leaves: list) -> Tree:
    t = type_of_value(obj)
    if t is not None:
        if is_int(t) and not isinstance(obj, np.ndarray) and not INT64[0] <= obj < INT64[1]:
            raise BadLeaf(path, obj, f"is the int {obj}, which does not fit in 64 bits (irad's int is i64)")
        leaves.append(obj)
        return t
    found = node_items(obj, path)
    if found is None:
        raise BadLeaf(path, obj)
    cls, keys, items = found
    return Node(cls, keys, tuple(_flatten(v, path + step(cls, k), leaves) for k, v in zip(keys, items)))


def node_items(obj: object, path: str = "") -> tuple[type, tuple, tuple] | None:
    """(class, keys, items in flattening order) of a container; None otherwise
    (BadLeaf, named `path`, for a dict with other than str keys)."""
    cls = type(obj)
    if obj is None:
        return _NONE, (), ()
    if cls in (tuple, list):
        return cls, tuple(range(len(obj))), tuple(obj)
    if is_namedtuple_class(cls):
        return cls, tuple(cls._fields), tuple(obj)
    if cls is dict:
        bad = [k for k in obj if not isinstance(k, str)]
        if bad:
            raise BadLeaf(path, obj, f"is a dict with the key {bad[0]!r}; irad takes dicts with str keys only")
        keys = tuple(sorted(obj))
        return dict, keys, tuple(obj[k] for k in keys)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        keys = record_fields(cls)
        return cls, keys, tuple(getattr(obj, k) for k in keys)
    return None


SCALARS = (float, int, bool, np.float64, np.float32, np.int64, np.int32, np.bool_)  # scalar leaves


def python_key(obj: object, leaves: list) -> object:
    """A cheap key of `obj`'s structure and its leaves' Python types (an array's
    dtype and shape), appending its leaves to `leaves`: equal keys mean equal
    trees, without building IR types. None when `obj` holds something else
    (`flatten` then says what and where)."""
    cls = type(obj)
    if cls in SCALARS:
        if cls is int and not INT64[0] <= obj < INT64[1]:
            return None
        leaves.append(obj)
        return cls
    if cls is np.ndarray:
        leaves.append(obj)
        return (obj.dtype.str, obj.shape)
    found = node_items(obj) if cls is not str else None
    if found is None:
        return None
    node_cls, keys, items = found
    children = tuple(python_key(item, leaves) for item in items)
    return None if None in children else (node_cls, keys, children)


def unflatten(tree: Tree, leaves: Iterator) -> object:
    """The Python object of `tree` with its leaves taken, in order, from `leaves`."""
    if not isinstance(tree, Node):
        return next(leaves)
    items = [unflatten(child, leaves) for child in tree.children]
    return build(tree.cls, tree.keys, items)


def build(cls: type, keys: tuple, items: list) -> object:
    """An object of a node's class from its items."""
    if cls is _NONE:
        return None
    if cls in (tuple, list):
        return cls(items)
    if cls is dict:
        return dict(zip(keys, items))
    if is_namedtuple_class(cls):
        return cls(*items)
    # a dataclass: set its fields, as they were, without running __init__ (whose
    # __post_init__ may check or derive what a gradient does not satisfy)
    obj = cls.__new__(cls)
    for key, item in zip(keys, items):
        object.__setattr__(obj, key, item)
    return obj


def structure(tree: Tree) -> object:
    """The tree without its leaf types: what two values must share to be joined."""
    if isinstance(tree, Node):
        return (tree.cls, tree.keys, tuple(structure(c) for c in tree.children))
    return None


# ---- values inside a program ------------------------------------------------------
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
    in the order they were written (a dict flattens by sorted key)."""

    cls: type
    items: tuple  # ((key, value), ...)

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


def is_record_class(cls) -> bool:
    """A NamedTuple or dataclass class, whose instances are pytree nodes."""
    return is_namedtuple_class(cls) or is_dataclass_class(cls)


def record_fields(cls: type) -> tuple[str, ...]:
    if is_namedtuple_class(cls):
        return tuple(cls._fields)
    return tuple(f.name for f in dataclasses.fields(cls))


def value_node(value) -> tuple[Node, tuple] | None:
    """The node of a container value and its items in flattening order."""
    if isinstance(value, RecordValue):
        return Node(value.cls, tuple(value.cls._fields), ()), tuple(value)
    if isinstance(value, tuple):
        cls = value.cls if isinstance(value, ListValue) else tuple
        return Node(cls, tuple(range(len(value))), ()), tuple(value)
    if isinstance(value, MappingValue):
        keys = tuple(sorted(value.keys())) if value.cls is dict else value.keys()
        return Node(value.cls, keys, ()), tuple(value.get(k) for k in keys)
    if value is None or (isinstance(value, Static) and value.obj is None):
        return NONE, ()
    return None


def make_value(cls: type, keys: tuple, items: list):
    """A program value of class `cls` holding `items` under `keys`."""
    if cls is _NONE:
        return Static(None)
    if cls is tuple:
        return tuple(items)
    if cls is list:
        return ListValue(items)
    if is_namedtuple_class(cls):
        return RecordValue(items, cls)
    return MappingValue(cls, tuple(zip(keys, items)))


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


__all__ = [
    "ACCEPTED",
    "BadLeaf",
    "ListValue",
    "MappingValue",
    "NONE",
    "Node",
    "RecordValue",
    "Tree",
    "flatten",
    "leaf_types",
    "is_data",
    "make_value",
    "python_class",
    "tuple_tree",
    "unflatten",
    "value_node",
]
