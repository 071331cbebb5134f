"""Assigning to a key of a dict: `heads[name] = dense(params, name, h)`,
`d["acc"] = d["acc"] + x`.

irad's dicts are values (values.MappingValue): `d[k] = v` binds `d` to the
dict with that key set (a new key goes last, as Python orders it), and the
joins of branches and loops see the new value as they see any variable's
(a loop whose body changes a dict's keys from one iteration to the next must
be unrolled: a loop over tuple items, or one whose trip count is known while
lowering). Python's dicts are objects that names share, so that is Python's
meaning only where nothing else holds the dict when it changes. irad checks
that from the function's source, conservatively (`_shared`):

* the function binds `d` itself, each time to a new dict (a display, a
  comprehension or `dict(...)`): not a parameter (the caller's dict would
  change) nor a variable of an enclosing function;
* no loop walks `d` while it changes (Python's views would see the change);
* `d` is read only through its items (`d[k]`, `d.get(k)`, `len(d)`, `k in d`,
  `for k in d`, `d.items()` walked at once) or returned; a use that may share it
  (`e = d`, `f(d)`, `[d]`, a partial holding it) comes after every change of the
  dict in the function's text, outside any loop that also changes it. A lambda
  or nested def may read its items (it reads `d` when called), not hand it on.

Anything else is refused with the line of the use that shares the dict, and a
rewrite.
"""

from __future__ import annotations

import ast
import functools

from irad.frontend.values import MappingValue, Static

_READS = frozenset({"get", "keys", "values", "items"})  # methods reading a dict (keys/values/items: views)
_CONSUMERS = frozenset({"list", "tuple", "sum", "len", "sorted", "zip", "enumerate", "min", "max", "dict", "set",
                        "any", "all"})  # builtins that walk a view at once
_NEW_DICT = "`d = {...}`, `d = {k: ... for k in ...}` or `d = dict(...)`"


def assign_key(fl, name: str, index_node: ast.expr, value, node: ast.AST) -> None:
    """`name[index] = value` on the dict `name` holds (see the module's docstring)."""
    shared = _shared(fl.src.tree, name)
    if shared is not None:
        raise fl.src.error(
            node, f"assigning to a key of the dict '{name}' is not supported here: {shared}",
            f"change a dict this function made ({name} = {{...}}, a comprehension or dict(...)) before "
            f"anything else takes it, and give others a copy (dict({name})); or build it at once with a "
            "comprehension over the keys",
        )
    key = fl.expr(index_node)
    key = key.obj if isinstance(key, Static) else None
    if not isinstance(key, str):
        raise fl.src.error(index_node, "a dict key must be a str known while lowering",
                           "use constant str keys: irad's dicts have a fixed structure")
    current = fl.env[name]
    if isinstance(value, Static) and fl.is_number(value.obj):  # as a display stores it
        value = fl.static_number(value, node)
    items = dict(current.items)
    items[key] = value
    fl.env[name] = MappingValue(dict, tuple(items.items()), current.ordered)


@functools.lru_cache(maxsize=256)
def _shared(tree: ast.FunctionDef, name: str) -> str | None:
    """Why the dict `name` may be seen through another name when the function
    `tree` changes it, with the line that shows it; None when it cannot."""
    parents = {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
    args = tree.args
    if name in {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg) if a}:
        return f"'{name}' is a parameter, and the caller's dict would change too"
    changes, bindings, escapes = [], [], []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return f"'{name}' is declared {type(node).__name__.lower()} (line {node.lineno})"
        if not (isinstance(node, ast.Name) and node.id == name):
            continue
        parent = parents.get(node)
        if isinstance(node.ctx, ast.Store):
            bindings.append(node)
            value = _bound_value(node, parent, parents)
            if value is None or not _new_dict(value):
                return f"'{name}' is bound at line {node.lineno} to a value that may be shared, not to a new dict"
            if _inner_function(node, parents, tree) is not None:
                return f"'{name}' is bound in a nested function (line {node.lineno})"
        elif _stored_through(node, parents):  # d[k] = v, and d[k][i] = v (nested_targets.py)
            if _inner_function(node, parents, tree) is not None:
                return f"a nested function changes it (line {node.lineno}), a variable of the function that defines it"
            changes.append(parent)
        elif not _reads_items(node, parent, parents):
            escapes.append(node)
    for change in changes:
        for loop in _loops(change, parents, tree):
            if isinstance(loop, ast.For) and _walks(loop.iter, name):
                return (f"line {change.lineno} changes it while the loop at line {loop.lineno} walks it "
                        f"(walk a copy: for ... in list({name}.items()))")
    if not bindings:
        return f"'{name}' is not bound by this function (a variable of an enclosing one)"
    for use in escapes:
        if _inner_function(use, parents, tree) is not None:
            return f"a nested function uses the dict itself, not only its items (line {use.lineno})"
        if isinstance(_statement(use, parents), ast.Return):
            continue
        for change in changes:
            same_loop = _common_loop(change, use, parents, tree)
            if change.lineno >= use.lineno or same_loop:
                return (f"line {use.lineno} uses the dict as a whole ({_shown(use, parents)}), which may share "
                        f"it, and line {change.lineno} changes it " + ("in the same loop" if same_loop else "after"))
    return None


def _stored_through(node: ast.Name, parents) -> bool:
    """Is `node` the start of an assignment's target chain (`d[k] = v`, `d[k][i] += v`, `d[k].T[0] = v`)?"""
    step = parents.get(node)
    if not (isinstance(step, ast.Subscript) and step.value is node):
        return False
    while isinstance(step, (ast.Subscript, ast.Attribute)):
        if isinstance(step.ctx, ast.Store):
            return True
        above = parents.get(step)
        if not (isinstance(above, (ast.Subscript, ast.Attribute)) and above.value is step):
            return False
        step = above
    return False


def _walks(iterable: ast.expr, name: str) -> bool:
    """Is `for ... in iterable` walking the dict `name` itself (or a view of it), not a copy?"""
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute) and not iterable.args:
        iterable = iterable.func.value if iterable.func.attr in ("keys", "values", "items") else iterable
    return isinstance(iterable, ast.Name) and iterable.id == name


def _bound_value(node: ast.Name, parent, parents) -> ast.expr | None:
    """The expression `node` is bound to: `d = value`, or its item of a tuple
    display assigned to a tuple of names (`d, i = {}, 0`); None otherwise."""
    if isinstance(parent, ast.Assign) and parent.targets == [node]:
        return parent.value
    above = parents.get(parent)
    if isinstance(parent, (ast.Tuple, ast.List)) and isinstance(above, ast.Assign) and above.targets == [parent] \
            and isinstance(above.value, (ast.Tuple, ast.List)) and len(above.value.elts) == len(parent.elts) \
            and not any(isinstance(e, ast.Starred) for e in (*parent.elts, *above.value.elts)):
        return above.value.elts[parent.elts.index(node)]
    return None


def _new_dict(value: ast.expr) -> bool:
    if isinstance(value, ast.Dict):
        return None not in value.keys  # no `**other`: that other dict is copied, but keep it plain
    if isinstance(value, ast.DictComp):
        return True
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict"


def _reads_items(node: ast.Name, parent, parents) -> bool:
    """Does this read of the dict's name only read its items?"""
    if isinstance(parent, ast.Subscript) and parent.value is node:
        return True
    if isinstance(parent, ast.Compare) and node in parent.comparators:
        return True  # k in d
    if isinstance(parent, (ast.For, ast.comprehension)) and parent.iter is node:
        return True
    if isinstance(parent, ast.Call) and _named(parent.func, "len") and parent.args == [node]:
        return True
    if isinstance(parent, ast.Attribute) and parent.attr in _READS:
        call = parents.get(parent)
        if not (isinstance(call, ast.Call) and call.func is parent):
            return False
        if parent.attr == "get":
            return True
        outer = parents.get(call)  # a view: walked at once
        if isinstance(outer, (ast.For, ast.comprehension)) and outer.iter is call:
            return True
        return isinstance(outer, ast.Call) and any(_named(outer.func, n) for n in _CONSUMERS)
    return False


def _named(func: ast.expr, name: str) -> bool:
    return isinstance(func, ast.Name) and func.id == name


def _inner_function(node, parents, tree):
    """The nested function or lambda `node` is in (None: the function's own body)."""
    while node is not tree:
        node = parents[node]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and node is not tree:
            return node
    return None


def _statement(node, parents) -> ast.stmt:
    while not isinstance(node, ast.stmt):
        node = parents[node]
    return node


def _loops(node, parents, tree) -> set:
    found = set()
    while node is not tree:
        node = parents[node]
        if isinstance(node, (ast.For, ast.While)):
            found.add(node)
    return found


def _common_loop(a, b, parents, tree) -> bool:
    return bool(_loops(a, parents, tree) & _loops(b, parents, tree))


def _shown(node, parents) -> str:
    parent = parents.get(node)
    text = ast.unparse(parent if parent is not None else node)
    return text if len(text) <= 40 else text[:37] + "..."
