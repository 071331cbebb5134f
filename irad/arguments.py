"""How a call's Python arguments become IR arguments, and how results come back.

Arguments and results are pytrees (irad/base/pytrees.py): tuples, lists,
dicts with str keys, NamedTuples and dataclasses of numbers and arrays,
nested. Each argument is flattened into its leaves; the IR function takes
every leaf, in order, then the global arrays it reads (hidden arguments). The
*signature*, the tree of the call with each leaf's IR type, is what a function
is specialised and cached for.

`argnums` selects whole arguments. Their float leaves are differentiated; int
and bool leaves are inactive and get None in the gradient, which has the
argument's structure (a dict for a dict, ...).

A bad argument is an error naming the caller's line (the first frame outside
irad), the function and its `def`, the argument and the path to the value.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np
from xdsl.ir import Attribute

from irad.frontend import bind_arguments
from irad.frontend.callable_entries import parameter_names
from irad.frontend.entry_arguments import flatten_arguments
from irad.base.pytrees import BadLeaf, Node, Tree, node_items, python_key, show, step, unflatten
from irad.frontend import transformations
from irad.frontend.callables import StaticShape, static_argument
from irad.frontend.source import call_site, error_at, name_of
from irad.frontend.transformations import ranges
from irad.ir.types import describe, is_differentiable, is_tensor

_SIGNATURES: dict[object, Node] = {}  # python_key of a call's arguments -> its signature


def arguments(f, args: tuple, kwargs: dict | None = None, static_argnums: Sequence[int] = (),
              static_argnames: Sequence[str] = ()) -> tuple[list, Node]:
    """The leaves of a call's arguments (defaults filled in) and its signature.
    A call whose arguments have the structure and leaf types of an earlier one
    reuses its signature, so building IR types is not paid per call. The
    static arguments (`static_argnums`, `static_argnames`: normalised, as a
    Transformation holds them) are values known while lowering, in the
    signature by value (so an equal value reuses the compiled code and a new
    one compiles anew), with no leaves."""
    args = bind_arguments(f, tuple(args), kwargs or {})
    static = frozenset()
    if static_argnums or static_argnames:
        names = parameter_names(f, len(args))
        static = transformations.static_positions(f, static_argnums, static_argnames, names, len(args))
    leaves: list = []
    try:
        key = python_key(tuple(None if i in static else a for i, a in enumerate(args)), leaves)
        if static:
            key = (key, tuple(static_argument(args[i]) for i in sorted(static)))
    except (BadLeaf, TypeError):  # a dict with other than str keys, an unhashable static: flatten_arguments names it
        key = None
    signature = _SIGNATURES.get(key) if key is not None else None
    if signature is None:
        leaves, signature = flatten_arguments(f, args, call_site, static)
        if key is not None:
            _SIGNATURES[key] = signature
    return leaves, signature


def normalise_argnums(f, argnums, signature: Node) -> tuple[int, ...]:
    """The arguments `argnums` selects, each with at least one float leaf."""
    return transformations.normalise_argnums(f, argnums, signature, parameter_names(f, len(signature.children)))


def argument_trees(signature: Node, nums: Sequence[int], values: dict[int, object]) -> list:
    """For each argument in `nums`, its tree with the leaf values `values`
    (by leaf index); None where a leaf has none (int and bool leaves)."""
    spans = ranges(signature)
    return [None if isinstance(signature.children[a], StaticShape)  # a static argument: no leaves
            else unflatten(signature.children[a], iter([values.get(i) for i in spans[a]])) for a in nums]


def check_tree(f, what: str, value, tree: Tree, skip_inactive: bool) -> list:
    """The leaves of a cotangent or tangent the caller passes for values of
    tree `tree` (named `what` in errors): real numbers or arrays at float
    leaves; at int and bool leaves None (or, with `skip_inactive`, anything:
    it is ignored)."""
    out: list = []

    def walk(v, t: Tree, path: str) -> None:
        if not isinstance(t, Node):
            if is_differentiable(t):
                out.append(seed(f, path, v, t))
            elif v is None or skip_inactive:
                out.append(None)
            else:
                raise error_at(f, f"{path} is for {describe(t)}, not a float: it must be None")
            return
        items = _items(v, t)
        if items is None:
            raise error_at(f, f"{path} must have the structure {show(t, describe)}, got {_short(v)}")
        for key, child, item in zip(t.keys, t.children, items):
            walk(item, child, path + step(t.cls, key))

    walk(value, tree, what)
    return out


def _items(v, node: Node) -> tuple | None:
    """The items of `v` under `node`'s keys, or None if it has another structure
    (a tuple may stand for a list and a list for a tuple)."""
    try:
        found = node_items(v)
    except BadLeaf:
        return None
    if found is None:
        return None
    cls, keys, items = found
    sequences = (tuple, list)
    same = cls is node.cls or (cls in sequences and node.cls in sequences)
    return items if same and keys == node.keys else None


def _short(v) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def seed(f, what: str, value, t: Attribute):
    """A cotangent or tangent the caller passes for a value of type `t`: a real
    number for a float, a real array of its shape for an array."""
    if is_tensor(t):
        shape = tuple(t.get_shape())
        array = np.asarray(value)
        if array.shape != shape or array.dtype.kind not in "fiu":
            raise error_at(f, f"{what} of {name_of(f)} must be a real array of shape {shape}, got {_short(value)}")
        return array
    if hasattr(type(value), "__array__") and not isinstance(value, np.generic) and np.ndim(value) == 0:
        value = np.asarray(value)[()]  # a 0-d JAX array, ...
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise error_at(f, f"{what} of {name_of(f)} must be a real number, got {_short(value)}")
    return float(value)
