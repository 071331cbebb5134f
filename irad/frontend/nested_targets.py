"""Assignments whose target's base is an expression, not a name.

    a[i][j] = v        a.T[0] = v        a[:, 0][1] += v      (a view of a named array)
    p["W"][i] = v      xs[k][i] = v      state.h[0] = v       (an array a container holds)
    layers[0]["W"] = v                                         (a container a container holds)

numpy writes into the array the base expression gives. irad lowers the part
of the target that is an array into a hidden name, keyed by its source text
(so that a refusal names `a[0]` or `p["W"]`), and writes the item there as
into any named array: views.py carries a view's write back into the array it
views, and refuses what numpy would make visible where irad cannot follow.

Where that array is an item of a container (a dict, list, tuple, NamedTuple
or dataclass instance), the container is left out of that check while the
write is made (it is the way in, not another holder), and the updated array
is then put back into its item: items of inner containers are replaced, and
the outermost container's item is assigned under its own rules
(dict_keys.py for a dict, lists.py for a list), which count this statement
as a change of it. A tuple or record bound to a name is bound anew.
Container keys must be known while lowering, as irad's containers have a
fixed structure.
"""

from __future__ import annotations

import ast

from irad.frontend.control_state import is_user_variable
from irad.frontend.lists import values_inside
from irad.frontend.arrays import known_value
from irad.frontend.values import ListValue, MappingValue, RecordValue, Static, is_array, new_list


def assign(fl, target: ast.Subscript, value, node: ast.AST) -> None:
    """`<expr>[index] = value` where `<expr>` is not a name: its indices evaluated
    first (`c["k"][c["k"] > 1] = v` reads `c["k"]` before the write takes `c` apart)."""
    with fl.statements.indices_evaluated(target) as target:
        _assign(fl, target, value, node)


def _assign(fl, target: ast.Subscript, value, node: ast.AST) -> None:
    root, steps = _chain(target.value)
    if root is None:
        raise fl.src.error(
            target, f"assignment to an item of `{ast.unparse(target.value)}`, which no variable holds, "
            "is not supported", "bind it to a variable first and assign to that variable's item",
        )
    held = fl.expressions.name(root)
    if isinstance(held, Static):  # a global's or an enclosing function's object: read anew at each call
        raise fl.src.error(
            target, f"in-place write into `{ast.unparse(target.value)}`, part of '{root.id}', which this function "
            "does not own (a global or a variable of an enclosing function)",
            f"copy what you change into a variable of this function first: x = np.copy({ast.unparse(target.value)})",
        )
    keys = []  # the container part of the chain: its keys, known while lowering
    for step in steps:
        if is_array(held) or not _is_container(held):
            break
        key = _key(fl, held, step)
        keys.append(key)
        held = _item(held, key)
    if not keys:  # a view of the named array `root`: numpy writes through it
        name = ast.unparse(target.value)
        fl.iteration.assign_hidden(name, fl.expr(target.value))
        try:
            fl.arrays.assign_item(name, target.slice, value, node)
        finally:
            fl.iteration.release([name])
        return
    inner = steps[len(keys) - 1]  # the node that gives the container's item
    if inner is target.value and _is_container(held):  # the item assigned is a container's own
        _refuse_shared(fl, root.id, [held], target)
        new = _replaced(fl, held, _key(fl, held, target), value, target)
    else:
        name = ast.unparse(inner)
        rest = _rebased(target, steps, len(keys) - 1, name)
        with _left_out(fl, root.id, keys, node):
            fl.iteration.assign_hidden(name, held)
            fl.statements.assign(rest, value, node)
            new = fl.env[name]
            fl.iteration.release([name])
    _put_back(fl, root, keys, new, node)


def refuse_attribute(fl, target: ast.Attribute) -> None:
    """`obj.field = v`: irad's records are values, which a program replaces rather than changes."""
    obj = ast.unparse(target.value)
    record = fl.expr(target.value)
    cls = getattr(record, "cls", None)
    if isinstance(record, RecordValue):
        why = f"a {cls.__name__}'s fields cannot be set (Python raises AttributeError)"
        hint = f"make a new value: {obj} = {obj}._replace({target.attr}=...)"
    else:
        why = f"irad's {'dataclass instances' if cls not in (None, dict) else 'objects'} are values, not changed in place"
        hint = f"make a new value: {obj} = dataclasses.replace({obj}, {target.attr}=...)"
    raise fl.src.error(target, f"assignment to the attribute `{obj}.{target.attr}` is not supported: {why}", hint)


def _chain(node: ast.expr) -> tuple[ast.Name | None, list[ast.expr]]:
    """The name a target's base starts from, and the steps (subscripts and
    attributes) from it to the base, innermost first."""
    steps = []
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        steps.append(node)
        node = node.value
    return (node if isinstance(node, ast.Name) else None), steps[::-1]


def _is_container(value) -> bool:
    return isinstance(value, (tuple, MappingValue))


def _key(fl, container, step: ast.expr):
    """The key `step` (a subscript or an attribute) reads from `container`."""
    if isinstance(step, ast.Attribute):
        if isinstance(container, (RecordValue, MappingValue)) and container.cls is not dict:
            return step.attr
        raise fl.src.error(step, f"assignment through `.{step.attr}` of {fl.kind_of(container)} is not supported",
                           "bind the value to a variable, change that, and build the container anew")
    if isinstance(step.slice, ast.Slice):
        raise fl.src.error(step, "assignment through a slice of a list or tuple is not supported",
                           "index the item itself: xs[i][...] = v")
    known, key = known_value(fl.expr(step.slice))
    if isinstance(container, MappingValue) and container.cls is dict:
        if known and isinstance(key, str) and key in container.keys():
            return key
    elif known and isinstance(key, int) and not isinstance(key, bool) and -len(container) <= key < len(container):
        return key % len(container)
    raise fl.src.error(step, f"assignment through `{ast.unparse(step)}` needs a key of the container known "
                       "while lowering", "index containers with constant keys (str for dicts, int for lists)")


def _item(container, key):
    return container.get(key) if isinstance(container, MappingValue) else (
        container.field(key) if isinstance(container, RecordValue) and isinstance(key, str) else container[key])


def _replaced(fl, container, key, new, node):
    """`container` with its item `key` replaced by `new` (a new value: containers are values in irad)."""
    if isinstance(container, MappingValue):
        return MappingValue(container.cls, tuple((k, new if k == key else v) for k, v in container.items),
                            container.ordered)
    if isinstance(container, RecordValue):
        i = container.cls._fields.index(key) if isinstance(key, str) else key
        return RecordValue(tuple(new if j == i else v for j, v in enumerate(container)), container.cls)
    items = tuple(new if j == key else v for j, v in enumerate(container))
    if isinstance(container, ListValue):
        return new_list(items)
    if type(container) is tuple:
        return items
    raise fl.src.error(node, f"assignment into {fl.kind_of(container)} is not supported")


def _put_back(fl, root: ast.Name, keys: list, new, node) -> None:
    """root[keys[0]][keys[1]]... = new: inner containers replaced, the outer one's item assigned."""
    outer = fl.expressions.name(root)
    path = _path(outer, keys)
    _refuse_shared(fl, root.id, path[1:], node)
    new = _rebuilt(fl, path[1:], keys[1:], new, node)
    if (isinstance(outer, MappingValue) and outer.cls is dict) or isinstance(outer, ListValue):
        item = ast.Subscript(value=ast.Name(root.id, ast.Load()), slice=ast.Constant(keys[0]), ctx=ast.Store())
        fl.statements.assign(ast.copy_location(item, node), new, node)  # the container's own rules
    else:  # a tuple, NamedTuple or dataclass instance: bound anew
        fl.statements.assign(ast.Name(root.id, ast.Store()), _replaced(fl, outer, keys[0], new, node), node)


def _path(container, keys: list) -> list:
    """The containers `keys` walk through from `container`, the outermost first."""
    path = [container]
    for key in keys[:-1]:
        path.append(_item(path[-1], key))
    return path


def _rebuilt(fl, path: list, keys: list, new, node):
    """path[0] with the item `keys` reach replaced by `new`, each container on the way anew."""
    for container, key in zip(reversed(path), reversed(keys)):
        new = _replaced(fl, container, key, new, node)
    return new


def _refuse_shared(fl, root: str, containers: list, node) -> None:
    """Python changes an inner container in place, where irad replaces it: the
    change must not be one other variables, or other items, would see."""
    for container in containers:
        holders = [other for other, held in fl.path.slots().items() for v in values_inside(held) if v is container]
        if holders != [root]:
            others = [h for h in holders if h != root] or [root]
            shown = f"'{others[0]}'" if is_user_variable(others[0]) else "a value irad keeps for a loop"
            raise fl.src.error(
                node, f"changing {fl.kind_of(container)} inside '{root}', which {shown} also holds, is not supported",
                "change it through one variable only, and give the others a copy",
            )


def _rebased(target: ast.Subscript, steps: list[ast.expr], after: int, name: str) -> ast.Subscript:
    """`target` read from the hidden name `name` in place of `steps[after]`: the
    steps after it, then the target's own subscript, applied to that name."""
    base: ast.expr = ast.Name(name, ast.Load())
    for step in [*steps[after + 1:], target]:
        fields = {"value": base, "ctx": ast.Load() if step is not target else ast.Store()}
        if isinstance(step, ast.Subscript):
            base = ast.Subscript(slice=step.slice, **fields)
        else:
            base = ast.Attribute(attr=step.attr, **fields)
        ast.copy_location(base, step)
    return base


class _left_out:
    """The item being written left out of its root container while its array is
    written (the container is the way in, not another holder of the array; its
    other items, and other variables, still are)."""

    def __init__(self, fl, root: str, keys: list, node) -> None:
        self.fl, self.root, self.keys, self.node = fl, root, keys, node

    def __enter__(self):
        self.saved = self.fl.env[self.root]
        self.fl.env[self.root] = _rebuilt(self.fl, _path(self.saved, self.keys), self.keys, Static(None), self.node)

    def __exit__(self, *exc):
        self.fl.env[self.root] = self.saved
        return False
