"""What programs do with dicts and tuples beyond building and indexing them
with constants (irad/frontend/values.py holds the values themselves):

* `dict(a=a, b=b)`, `dict(d, c=c)`, `dict(zip(keys, values))`, `dict(pairs)`:
  a dict whose keys (str) are known while lowering;
* a dict's `keys()`, `values()`, `items()`, `get(k, default)` and `copy()`,
  and iterating it (`for k in d`, irad/frontend/iteration.py), in insertion
  order as Python does; `k in d`. A dict is fixed: `d[k] = v`, `update` and
  `pop` are refused with the rewrite (`dict(d, k=v)`);
* a tuple or list indexed by an int known only at run time, `(a, b, c)[i]`:
  its items have one type (numbers, arrays of one shape, or containers of one
  structure of them), stacked into one tensor per leaf and read at `i` (negative
  `i` counts from the end; out of range is a run-time error, as Python's
  IndexError). The result is a value, not the item itself: irad refuses to
  write into it in place, since numpy would write into that item.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import IndexType, TensorType
from xdsl.ir import SSAValue

from irad.frontend import numpy_scalars
from irad.frontend.callables import rebuild
from irad.frontend.values import Kind, ListValue, MappingValue
from irad.frontend.values import Static
from irad.frontend.views import Slice
from irad.ir import tensor as T
from irad.ir.types import I64, describe, is_int

_FIXED = "irad's dicts have the keys they are built with; build a new one: dict(d, key=value)"


# ---- dict(...) -----------------------------------------------------------------------------
def make_dict(fl, args: list, kwargs: dict, node) -> MappingValue:
    """dict(), dict(mapping or pairs), with keyword entries after them."""
    if len(args) > 1:
        raise fl.src.error(node, f"dict expected at most 1 argument, got {len(args)}")
    items: dict = {}
    if args:
        items.update(_pairs(fl, args[0], node))
    for key, value in kwargs.items():
        items[key] = _item_value(fl, value, node)
    ordered = not (args and isinstance(args[0], MappingValue) and not args[0].ordered)
    return MappingValue(dict, tuple(items.items()), ordered)


def _pairs(fl, source, node) -> list[tuple[str, object]]:
    if isinstance(source, MappingValue) and source.cls is dict:
        return list(source.items)
    if isinstance(source, Static) and isinstance(source.obj, dict):  # a dict known while lowering
        origin = source.origin
        return [(_str_key(fl, Static(k), node),
                 fl._static_value(Static(v, origin and origin.item(k)), node)) for k, v in source.obj.items()]
    pairs = []
    for pair in fl.iteration.items_of(source, node):
        if isinstance(pair, Static) and isinstance(pair.obj, tuple):
            pair = tuple(Static(p) for p in pair.obj)
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise fl.src.error(node, "dict() of a sequence takes pairs (key, value)",
                               "pass key=value arguments, a dict, or zip(keys, values)")
        pairs.append((_str_key(fl, pair[0], node), _item_value(fl, pair[1], node)))
    return pairs


def _str_key(fl, key, node) -> str:
    if not (isinstance(key, Static) and isinstance(key.obj, str)):
        raise fl.src.error(node, f"a dict key must be a str known while lowering, got {fl.kind_of(key)}",
                           "use constant str keys: irad's dicts have a fixed structure")
    return key.obj


def _item_value(fl, value, node):
    """A value stored in a dict: numbers known while lowering become constants."""
    if isinstance(value, Static) and fl.is_number(value.obj):
        return fl.static_number(value, node)
    return value


# ---- a dict's methods ----------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class DictMethod:
    """`d.items` and friends, bound to the dict `d` (called in calls.py)."""

    name: str
    mapping: MappingValue
    KIND = Kind.CALLABLE

    def call(self, fl, args: list, kwargs: dict, node):
        d = self.mapping
        if kwargs:
            raise fl.src.error(node, f"dict.{self.name}() takes no keyword arguments")
        arity = {"get": (1, 2)}.get(self.name, (0,))
        if len(args) not in arity:
            raise fl.src.error(node, f"dict.{self.name}() takes {' or '.join(map(str, arity))} arguments "
                               f"({len(args)} given)")
        if self.name in ("keys", "values", "items"):
            keys = ordered_keys(fl, d, node)
            if self.name == "keys":
                return keys
            return tuple(d.get(k.obj) if self.name == "values" else (k, d.get(k.obj)) for k in keys)
        if self.name == "copy":
            return d  # a shallow copy: the same values, and a dict cannot change
        key = _str_key(fl, args[0], node)  # get
        return d.get(key, args[1] if len(args) == 2 else Static(None))


_READING = ("keys", "values", "items", "get", "copy")
_CHANGING = ("update", "pop", "popitem", "setdefault", "clear", "__setitem__", "__delitem__")


def dict_attribute(fl, d: MappingValue, node: ast.Attribute):
    """`d.items` (a method to call) of a dict value."""
    if node.attr in _READING:
        return DictMethod(node.attr, d)
    if node.attr in _CHANGING:
        raise fl.src.error(node, f"dict.{node.attr}() changes the dict, which irad does not support", _FIXED)
    raise fl.src.error(node, f"a dict has no attribute '{node.attr}' irad supports",
                       "irad takes a dict's keys(), values(), items(), get() and copy()")


def ordered_keys(fl, d: MappingValue, node) -> tuple[Static, ...]:
    """A dict's keys in the order Python iterates them (insertion order)."""
    if not d.ordered:
        raise fl.src.error(
            node, "this dict had its keys inserted in different orders on the paths into a branch, so "
            "the order Python iterates it in depends on the path",
            "build it with its keys in the same order on every path",
        )
    return tuple(Static(k) for k in d.keys())


def contains(key, container) -> Static | None:
    """`k in d` for a dict value and a key known while lowering (None otherwise)."""
    if isinstance(container, MappingValue) and container.cls is dict and isinstance(key, Static):
        return Static(key.obj in container.keys())
    return None


# ---- a tuple indexed at run time -----------------------------------------------------------------
def item_at(fl, items: tuple, index: SSAValue, node):
    """`items[index]` for an int `index` known at run time (see the module doc)."""
    what = "list" if isinstance(items, ListValue) else "tuple"
    index = fl.em.to_int(index)  # a bool indexes as 0 or 1, as in Python
    if not is_int(index.type):
        raise fl.src.error(node, f"{what} indices must be integers, got {describe(index.type)}")
    if not items:
        raise fl.src.error(node, f"indexing an empty {what} (Python raises IndexError)")
    found = []
    for item in items:
        leaves = fl.tree_leaves(item, node)
        if leaves is None:
            raise fl.src.error(
                node, f"a {what} of {fl.kind_of(item)} (and others) indexed by an int known only at run time: "
                "irad must know which item while lowering",
                "index with a constant, or choose with if/elif on the int",
            )
        found.append(leaves)
    tree = found[0][1]
    for _, other in found[1:]:
        if other != tree:
            raise fl.src.error(
                node, f"the items of this {what} have different types ({_shown(tree)} and {_shown(other)}), "
                "so indexing it with an int known only at run time has no single type",
                "give the items one type (float(...) for numbers, arrays of one shape), or index with a constant",
            )
    position = _position(fl, index, len(items), node, what)
    chosen = [_pick(fl, [leaves[k] for leaves, _ in found], position) for k in range(len(found[0][0]))]
    return rebuild(tree, iter(chosen))


def _shown(tree) -> str:
    return describe(tree) if not hasattr(tree, "children") else f"a {tree.cls.__name__} container"


def _position(fl, index: SSAValue, n: int, node, what: str) -> SSAValue:
    """index wrapped as Python wraps a negative one, checked in range: an `index` value."""
    em = fl.em
    inside = em.op(arith.AndIOp(em.op(arith.CmpiOp(index, em.const(-n, I64), "sge")),
                                em.op(arith.CmpiOp(index, em.const(n, I64), "slt"))))
    fl.check(inside, node, f"{what} index out of range")
    negative = em.op(arith.CmpiOp(index, em.const(0, I64), "slt"))
    wrapped = em.op(arith.SelectOp(negative, em.op(arith.AddiOp(index, em.const(n, I64))), index))
    return em.op(arith.IndexCastOp(wrapped, IndexType()))


def _pick(fl, values: list[SSAValue], position: SSAValue) -> SSAValue:
    """values[position]: the values stacked into one tensor, read at `position`."""
    em = fl.em
    first = values[0]
    if not isinstance(first.type, TensorType):
        stacked = em.op(tensor.FromElementsOp(*values))
        picked = em.op(tensor.ExtractOp(stacked, [position], first.type))
        kinds = {numpy_scalars.kind(v) for v in values}
        return numpy_scalars.mark(picked, kinds.pop() if len(kinds) == 1 else numpy_scalars.EITHER)
    dims = tuple(T.shape(first))
    rows = [T.reshape(em, v, (1, *dims)) for v in values]
    stacked = rows[0] if len(rows) == 1 else em.op(
        tensor.ConcatOp(rows, 0, TensorType(T.element(first), [len(rows), *dims])))
    step = Slice((position, *[0] * len(dims)), (1, *dims), (1,) * (len(dims) + 1), dims)
    return step.read(em, stacked)  # not a view of the items, nor a fresh array: not written into


__all__ = ["DictMethod", "contains", "dict_attribute", "item_at", "make_dict", "ordered_keys"]
