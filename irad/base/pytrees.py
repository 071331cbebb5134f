"""Pytrees: nested tuples, lists, dicts, NamedTuples and dataclasses of numbers
and arrays, as in JAX, and how they map to IR arguments and results.

A *tree* describes one structure: a leaf is its IR type (f64, i64, tensor<…>,
an xDSL attribute), a container is a `Node` (its class, its keys and its
children's trees). Trees are hashable, so they are part of every cache key: a
function is specialised once per tree of its arguments.

In IR a tree is flattened into its leaves, one function argument (or result)
each, in this order:

* tuples, lists and NamedTuples: by position;
* dicts (str keys only): by sorted key, as JAX does (the node keeps the
  insertion order too, which iterating the dict follows);
* dataclasses: by field, in `dataclasses.fields` order;
* None: an empty node, no leaf.

Python objects cross the API boundary through `flatten` (arguments; the caller
gives the function that types a leaf, irad.ir.types.type_of_value) and
`unflatten` (results, gradients). Values inside a program being lowered are
trees of their own kinds (irad/frontend/values.py: ListValue, RecordValue,
MappingValue), taken apart and built with the same `Node`s.
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import Float32Type
from xdsl.ir import Attribute

ACCEPTED = (
    "float, int or bool scalars, numpy arrays of float64, float32, int or bool (or objects "
    "np.asarray makes one, such as JAX arrays), and "
    "tuples, lists, dicts with str keys, NamedTuples and dataclasses of them (nested)"
)
_NONE = type(None)
INT64 = (-(2**63), 2**63)


# ---- the structure ---------------------------------------------------------------
@dataclass(frozen=True)
class Node:
    """A container: its class, its keys (positions, sorted dict keys or field
    names, in flattening order) and one tree per key. A dict whose keys were
    inserted in another order keeps that order too: a program iterating it
    (`for k in d`, `d.values()`) walks it as Python does."""

    cls: type
    keys: tuple
    children: tuple
    # a dict's keys in insertion order, where that is not `keys`; None where the
    # paths into a join inserted them in different orders (frontend/values.py's MappingValue)
    order: tuple | None = ()

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
            return Node(t.cls, t.keys, tuple(walk(c) for c in t.children), t.order)
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


def show(tree: Tree, leaf: Callable[[object], str]) -> str:
    """`tree` for a message: its containers as Python writes them (`{'a': ..., 'b': ...}`,
    `(..., ...)`, `State(v=...)`), each leaf as `leaf` says (never an IR type's repr)."""
    if not isinstance(tree, Node):
        return leaf(tree)
    if tree.cls is _NONE:
        return "None"
    items = [show(c, leaf) for c in tree.children]
    if tree.cls is dict:
        return "{" + ", ".join(f"{k!r}: {i}" for k, i in zip(tree.keys, items)) + "}"
    if tree.cls is list:
        return "[" + ", ".join(items) + "]"
    if tree.cls is tuple:
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    return f"{tree.cls.__name__}(" + ", ".join(f"{k}={i}" for k, i in zip(tree.keys, items)) + ")"


def describe_object(obj: object) -> str:
    if isinstance(obj, np.ndarray):
        return f"a numpy array of dtype {obj.dtype}"
    if isinstance(obj, np.generic):
        return f"a numpy {obj.dtype} scalar"
    text = repr(obj)
    text = text if len(text) <= 40 else text[:37] + "..."
    return f"a {type(obj).__name__} ({text})"


def flatten(obj: object, path: str, leaf_type: Callable[[object], Attribute | None]) -> tuple[list, Tree]:
    """The leaves of a Python object and its tree, whose leaves are what
    `leaf_type` says of them (None: not a leaf); BadLeaf names the first value
    irad cannot take."""
    leaves: list = []
    return leaves, _flatten(obj, path, leaf_type, leaves)


def _flatten(obj: object, path: str, leaf_type, leaves: list) -> Tree:
    t = leaf_type(obj)
    if t is not None:
        if isinstance(obj, numbers.Integral) and not INT64[0] <= obj < INT64[1]:
            raise BadLeaf(path, obj, f"is the int {obj}, which does not fit in 64 bits (irad's int is i64)")
        leaves.append(obj)
        return t
    found = node_items(obj, path)
    if found is None:
        if not _takes_as_array(obj):
            raise BadLeaf(path, obj)
        array = as_array(obj, path)  # a JAX array, ...: as np.asarray takes it
        t = leaf_type(array)
        if t is None:
            raise BadLeaf(path, obj, f"is {describe_object(obj)}, which np.asarray makes {describe_object(array)}")
        leaves.append(array)
        return t
    cls, keys, items = found
    children = tuple(_flatten(v, path + step(cls, k), leaf_type, leaves) for k, v in zip(keys, items))
    return Node(cls, keys, children, dict_order(obj) if cls is dict else ())


def _takes_as_array(obj: object) -> bool:
    """An object other than a numpy array that says how to be one (`__array__`:
    JAX, PyTorch, CuPy ... arrays)."""
    return not isinstance(obj, (np.ndarray, str, bytes)) and hasattr(type(obj), "__array__")


def as_array(obj: object, path: str) -> np.ndarray:
    """`np.asarray(obj)` for an object with `__array__`; BadLeaf when it refuses."""
    try:
        return np.asarray(obj)
    except Exception as exc:  # a tensor that needs .detach(), a device array, ...
        raise BadLeaf(path, obj, f"is a {type(obj).__name__}, which np.asarray refuses ({exc})") from None


def dict_order(keys) -> tuple:
    """A dict's keys in insertion order where it differs from the sorted order
    (its flattening order), else ()."""
    order = tuple(keys)
    return () if list(order) == sorted(order) else order


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


SCALARS = (float, int, bool, np.float64, np.float32, np.int64, np.bool_)  # scalar leaves


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
    return None if None in children else (node_cls, keys, children, dict_order(obj) if node_cls is dict else ())


def unflatten(tree: Tree, leaves: Iterator) -> object:
    """The Python object of `tree` with its leaves taken, in order, from `leaves`
    (a float32 number as an np.float32, as numpy gives it: `scalar_leaf`)."""
    if not isinstance(tree, Node):
        return scalar_leaf(tree, next(leaves))
    items = [unflatten(child, leaves) for child in tree.children]
    return build(tree.cls, tree.keys, items, tree.order)


def scalar_leaf(t, value):
    """A result leaf of IR type `t` as numpy has it: a backend returns a
    float32 number as a Python float, numpy's is an np.float32 (the
    cotangent of an np.float32 argument, `np.sum` of a float32 array)."""
    return np.float32(value) if isinstance(t, Float32Type) else value


def build(cls: type, keys: tuple, items: list, order: tuple = ()) -> object:
    """An object of a node's class from its items (a dict's in `order`, if given)."""
    if cls is _NONE:
        return None
    if cls in (tuple, list):
        return cls(items)
    if cls is dict:
        found = dict(zip(keys, items))
        return {k: found[k] for k in order} if order else found
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
    if isinstance(tree, Node):  # a dict's insertion order is not structure: joins mark it (mark_orders)
        return (tree.cls, tree.keys, tuple(structure(c) for c in tree.children))
    return None


def is_record_class(cls) -> bool:
    """A NamedTuple or dataclass class, whose instances are pytree nodes."""
    return is_namedtuple_class(cls) or is_dataclass_class(cls)


def record_fields(cls: type) -> tuple[str, ...]:
    if is_namedtuple_class(cls):
        return tuple(cls._fields)
    return tuple(f.name for f in dataclasses.fields(cls))


__all__ = [
    "ACCEPTED",
    "Arguments",
    "BadLeaf",
    "INT64",
    "NONE",
    "Node",
    "SCALARS",
    "Tree",
    "build",
    "flatten",
    "is_data",
    "dict_order",
    "leaf_types",
    "node_items",
    "python_key",
    "structure",
    "tuple_tree",
    "unflatten",
    "with_leaf_types",
]
