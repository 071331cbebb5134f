"""Lists: unpacking into names, and lists that grow and shrink.

Unpacking (`a, b, c = theta`, `w, b = params`, `first, *rest = xs`) takes the
items of a tuple or list, the rows of an array (its elements for a vector,
views, as numpy's iteration gives) or what a range, zip or enumerate walks;
a length that does not match is Python's ValueError, raised while lowering.

A list is a tuple of its items while lowering (values.ListValue), so its
length is always known while lowering. Changing it (`xs.append(v)`,
`extend`, `insert`, `pop`, `clear`, `reverse`, `xs[i] = v`, `xs += ys`)
binds the name to a new value, as functionalisation does for arrays
(irad/frontend/views.py). That is what Python computes as long as nothing
else sees the list, so a list may change only when

* the program made it (a display, a comprehension, `list(...)`, `.copy()`,
  `+`, `*`, a slice, a starred target) or a change of such a list did: the
  copies irad makes when it rebuilds a value (a helper's parameter, a call's
  result, a variable after an `if` whose paths gave it different values, a
  loop's carried variable) never change, and where a copy may stand for a
  list the program holds (a call given the list that returns a list, a
  conditional expression), that list cannot change either;
* no other variable, container or default holds it;
* no `for` loop walks it, and no enclosing expression holds it (in
  `f(xs, xs.pop())` Python's `f` sees the change).

A `for` loop whose body changes a list from before the loop needs its trip
count known while lowering; a `while` loop, or a `for` loop whose trip count
is known only at run time, is refused with the rewrite (an array preallocated
and written into). Where the body appends one item (numbers, arrays, tuples of
them) per iteration and does nothing else with the list (`hs.append(h)` as a
statement of its own, no `break`, `continue` or `return`), the loop stays one
scf.for writing the items into rows of buffers (an array per number or array
in an item), and the list after it holds the rows (`stacked_appends`);
otherwise, or where that fails (the items change type from one iteration to
the next, say), the loop is unrolled: its body lowered once per iteration
(irad/frontend/iteration.py).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import IndexType, TensorType
from xdsl.ir import Block, SSAValue

from irad.base.errors import UnsupportedError

from irad.frontend import containers
from irad.frontend.arrays import is_array, known_value
from irad.frontend.callables import Closure, Keywords, Partial, rebuild
from irad.frontend.emitter import Emitter
from irad.frontend.iteration import ITERABLES, EnumerateValue, ReversedValue, ZipValue
from irad.base.pytrees import Node
from irad.frontend.values import Kind, ListValue, MappingValue, Method, holds_containers, new_list, value_node
from irad.frontend.values import Static
from irad.frontend.views import Slice
from irad.frontend.control_state import is_user_variable
from irad.ir import tensor as T
from irad.ir.constants import zero_constant
from irad.ir.types import I64, is_bool, is_int

# the methods that change a list, and how many arguments each takes
CHANGES = {"append": (1, 1), "extend": (1, 1), "insert": (2, 2), "pop": (0, 1), "clear": (0, 0), "reverse": (0, 0)}
_REFUSED_METHODS = {
    "sort": ("sorting a list is not supported: the order depends on the items' values",
             "sort an array: np.sort(np.array(xs))"),
    "remove": ("list.remove is not supported: it finds the item by comparing values",
               "remove the item by its position: xs.pop(i)"),
    "index": ("list.index is not supported: it finds the item by comparing values",
              "keep track of the position where the item is added"),
    "count": ("list.count is not supported: it compares the items' values",
              "count with np.sum(np.array(xs) == v)"),
}
_GROWTH_HINT = (
    "preallocate an array of a size known while lowering and write into it (hs = "
    "np.zeros((T_MAX, n)) before the loop, hs[t] = h in it), or give the loop a trip count "
    "known while lowering (a constant, a shape, len(...), or an argument made static with "
    "static_argnums=...)"
)


class BufferAppend(ast.stmt):
    """`hs.append(h)` in an scf.for loop that keeps its items in buffers
    (`stacked_appends`): writes the leaves of `value` (of the tree `tree`) into
    row `counter` of `buffers`, one each, and counts it. Its targets are names,
    so the loop carries them."""

    _fields = ("value", "buffers", "counter")


@dataclass(frozen=True, eq=False)
class ListMethod:
    """`xs.append` and the other methods of a list, bound to the list `receiver`
    that the expression `receiver_node` (a variable, for a change) gave."""

    receiver: ListValue
    name: str
    receiver_node: ast.expr
    KIND = Kind.CALLABLE


def values_inside(value) -> Iterator:
    """`value` and everything a container, a function or an iterable holds in it."""
    stack = [value]
    while stack:
        v = stack.pop()
        yield v
        if isinstance(v, ListValue) and not v.nested:
            continue  # numbers and arrays only: nothing more inside
        if isinstance(v, tuple):
            stack.extend(v)
        elif isinstance(v, MappingValue):
            stack.extend(x for _, x in v.items)
        elif isinstance(v, Closure):
            stack.extend(v.defaults)
            stack.extend(x for _, x in (*v.kw_defaults, *(v.captured or ())))
        elif isinstance(v, Partial):
            stack.extend((v.fn, *v.args, *(x for _, x in v.keywords)))
        elif isinstance(v, Keywords):
            stack.extend(x for _, x in v.items)
        elif isinstance(v, (Method, ListMethod)):
            stack.append(v.receiver)
        elif isinstance(v, ZipValue):
            stack.extend(v.items)
        elif isinstance(v, (EnumerateValue, ReversedValue)):
            stack.append(v.inner)


def lists_inside(value) -> list[ListValue]:
    return [v for v in values_inside(value) if isinstance(v, ListValue)]


def _changed_list_names(body: list[ast.stmt]) -> list[str]:
    """The variables a statement list changes as lists, syntactically (not
    inside nested functions, whose changes are refused where they happen):
    `n.append(...)` and the other changes, `n[i] = ...`, `n += ...`, and
    `n = n + [...]` or `n = [*n, ...]`."""
    found: dict[str, None] = {}
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(node))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in CHANGES:
            if isinstance(node.func.value, ast.Name):
                found.setdefault(node.func.value.id, None)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name):
            found.setdefault(node.value.id, None)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            found.setdefault(node.target.id, None)
        elif isinstance(node, ast.Assign) and isinstance(node.value, (ast.BinOp, ast.List)):
            read = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id in read:
                    found.setdefault(target.id, None)
    return list(found)


class Lists:
    """Unpacking, list methods, and lists that change: a collaborator of the
    FunctionLowering `fl` that holds it (`fl.lists`).

    What the others use: freezing lists (`freeze_lists`; values.new_list
    makes them), unpacking (`unpack`), the operations on a list or tuple
    (`sequence_attribute`, `call_list_method`, `sequence_item`,
    `assign_list_item`, `sequence_binary`, `augmented_list`,
    `refuse_known_list_change`), the rules of loops (`walking`,
    `done_walking`, `unrolls_for_lists`, `stacked_appends`, `buffer_row`,
    `refuse_while_lists`), joins (`join_lists`, `differing_lengths`,
    `LENGTH_HINT`) and calls (`calls_may_return_lists`).

    What it needs from `fl`: the source (`src`), the emitter (`em`), the path
    (`env`, `path`), the expressions being evaluated (`pending`), the lowering
    of expressions (`expr`, `assign`, `as_number`, `is_number`,
    `static_number`, `kind_of`, `tree_leaves`, `check`, `runtime_error`,
    `_static_value`), and the other collaborators: `arrays`, `control_flow`
    and `iteration` (the items of an iterable, scf.for, hidden names).
    """

    def __init__(self, fl) -> None:
        self.fl = fl
        self.walked: list[ListValue] = []  # the lists unrolled `for` loops are walking, innermost last

    # ---- freezing lists --------------------------------------------------------------------
    @staticmethod
    def freeze_lists(value, why: str, hint: str = "") -> None:
        """The lists in `value` may no longer change (a copy of them exists, or
        they are one); `why` (and `hint`) say so where a change is refused."""
        for v in lists_inside(value):
            if v.mutable or not v.why:
                v.mutable, v.why, v.hint = False, why, hint

    def list_item(self, value, node) -> object:
        """A value as an item of a list: numbers known while lowering become constants."""
        if isinstance(value, Static) and self.fl.is_number(value.obj):
            return self.fl.static_number(value, node)
        return value

    # ---- unpacking -------------------------------------------------------------------------
    def unpack(self, target: ast.Tuple | ast.List, value) -> None:
        """`a, b = value` and `a, *rest = value`, with Python's errors for the length."""
        items = self._unpacked_items(value, target)
        elts = target.elts
        stars = [i for i, e in enumerate(elts) if isinstance(e, ast.Starred)]
        n = len(items)
        what = self._unpacked_what(value, n)
        hint = "give as many names as there are items, or take the rest with a starred name (a, *rest = ...)"
        if stars:
            k, after = stars[0], len(elts) - stars[0] - 1
            if n < len(elts) - 1:
                raise self.fl.src.error(
                    target, f"not enough values to unpack (expected at least {len(elts) - 1}, got {n}){what}", hint)
            pairs = [*zip(elts[:k], items[:k]), (elts[k].value, new_list(items[k:n - after])),
                     *zip(elts[k + 1:], items[n - after:])]
        else:
            if n != len(elts):
                word = "too many" if n > len(elts) else "not enough"
                raise self.fl.src.error(target, f"{word} values to unpack (expected {len(elts)}, got {n}){what}", hint)
            pairs = list(zip(elts, items))
        for t, v in pairs:
            self.fl.statements.assign(t, v)

    def _unpacked_items(self, value, target) -> tuple:
        if isinstance(value, Static) and isinstance(value.obj, (tuple, list)):  # n, m = x.shape; a global tuple
            origin = value.origin
            items = (Static(v, origin and origin.item(i)) for i, v in enumerate(value.obj))
            # numbers stay known while lowering (shape arithmetic); arrays are hidden arguments
            return tuple(self.fl._static_value(v, target) if isinstance(v.obj, np.ndarray) else v for v in items)
        if isinstance(value, tuple):
            return tuple(value)
        if is_array(value) or isinstance(value, ITERABLES):  # (irad's 0-d arrays are numbers)
            return self.fl.iteration.items_of(value, target)
        if isinstance(value, MappingValue) and value.cls is dict:
            raise self.fl.src.error(target, "unpacking a dict (Python gives its keys) is not supported",
                                    "read the values by key: a, b = d['a'], d['b']")
        raise self.fl.src.error(
            target, f"cannot unpack {self.fl.kind_of(value)}: it is not iterable",
            "unpack a tuple, a list, an array (its rows), or zip, enumerate or range of known length",
        )

    @staticmethod
    def _unpacked_what(value, n: int) -> str:
        if is_array(value):
            return f": the array of shape {T.shape(value)} has {n} {'rows' if len(T.shape(value)) > 1 else 'elements'}"
        if isinstance(value, ListValue):
            return f": the list has {n} items"
        return ""

    # ---- methods ---------------------------------------------------------------------------
    def sequence_attribute(self, base: tuple, node: ast.Attribute):
        """`xs.append` and the other methods of a list (the only attributes a
        list or tuple has in irad)."""
        kind = "list" if isinstance(base, ListValue) else "tuple"
        if kind == "list" and (node.attr in CHANGES or node.attr == "copy"):
            return ListMethod(base, node.attr, node.value)
        if node.attr in _REFUSED_METHODS:
            raise self.fl.src.error(node, *_REFUSED_METHODS[node.attr])
        methods = ", ".join([*CHANGES, "copy"]) if kind == "list" else "none"
        raise self.fl.src.error(node, f"`.{node.attr}` of a {kind} is not supported",
                                f"the {kind} methods irad has: {methods}")

    def call_list_method(self, method: ListMethod, args: list, kwargs: dict, node):
        """`xs.append(v)` and the others: the variable `xs` is bound to the changed list."""
        name = method.name
        least, most = CHANGES.get(name, (0, 0))
        if kwargs or not least <= len(args) <= most:
            count = str(least) if least == most else f"{least} to {most}"
            raise self.fl.src.error(node, f"list.{name}() takes {count} positional arguments ({len(args)} given)")
        items = list(method.receiver)
        if name == "copy":
            return new_list(items)
        variable = self._changed_variable(method, node)
        result = None
        if name == "append":
            items.append(self._new_item(args[0], method.receiver, node))
        elif name == "extend":
            items.extend(self.list_item(v, node) for v in self.fl.iteration.items_of(args[0], node))
        elif name == "insert":
            items.insert(self._known_int(args[0], node, "the position list.insert() takes"),
                         self._new_item(args[1], method.receiver, node))
        elif name == "pop":
            i = -1 if not args else self._known_int(args[0], node, "the position list.pop() takes")
            if not items:
                raise self.fl.src.error(node, "pop from empty list (Python's IndexError)",
                                        "a list's length is known while lowering: pop only as many items as were added")
            if not -len(items) <= i < len(items):
                raise self.fl.src.error(node, f"pop index {i} out of range: the list has {len(items)} items "
                                        "(Python's IndexError)", "pop a position inside the list")
            result = items.pop(i)
        elif name == "clear":
            items = []
        else:  # reverse
            items.reverse()
        self._rebind(variable, items)
        return result

    def _rebind(self, variable: str, items: list) -> None:
        self.fl.env[variable] = new_list(items)

    def _new_item(self, value, receiver: ListValue, node):
        if any(v is receiver for v in lists_inside(value)):
            raise self.fl.src.error(node, "a list holding itself is not supported",
                                    "add a copy of it: xs.append(list(xs))")
        return self.list_item(value, node)

    def _known_int(self, value, node, what: str) -> int:
        known, obj = known_value(value)
        if not known or isinstance(obj, bool) or not isinstance(obj, int):
            raise self.fl.runtime_error(
                node, f"{what} must be an int known while lowering",
                "a list's length is known while lowering, and so is where an item goes or comes from: "
                "use a constant, len(xs) - 1, or the variable of a loop over tuple items", value,
            )
        return obj

    def _changed_variable(self, method: ListMethod, node) -> str:
        """The variable a list method changes, after checking that Python's list
        is one no other name, container or copy sees."""
        receiver = method.receiver_node
        if not isinstance(receiver, ast.Name):
            raise self.fl.src.error(
                node, f"changing a list that no variable holds ({ast.unparse(receiver)}.{method.name}(...)) "
                "is not supported", "build the list in a variable, and put it into the container once it is complete",
            )
        if self.fl.env.get(receiver.id) is not method.receiver:
            raise self.fl.src.error(node, f"the list '{receiver.id}' changed since its method was taken",
                                    f"call {receiver.id}.{method.name}(...) directly")
        self.check_changeable(receiver.id, node)
        return receiver.id

    def check_changeable(self, name: str, node) -> None:
        """The list `name` holds may change: Python's list is seen by nothing else."""
        value = self.fl.env[name]
        if not value.mutable:
            why = value.why or "it is a copy irad made of a list (where a value is passed, returned or joined)"
            raise self.fl.src.error(
                node, f"changing the list '{name}' is not supported here: {why}",
                value.hint or f"change a list this function made: {name} = list({name}) first; "
                "a helper that builds a list returns it (return xs + [v])",
            )
        for other, held in self.fl.path.slots().items():
            count = sum(v is value for v in values_inside(held)) - (other == name)
            if count > 0:
                user = is_user_variable(other)
                holder = f"'{other}'" if user else "a value irad keeps for a loop or a comprehension"
                copy = f"{other} = list({name})" if user and held is value else f"list({name})"
                raise self.fl.src.error(
                    node, f"changing the list '{name}', which {holder} also holds, is not supported",
                    f"irad's lists are values: change a list through one variable only, and give the "
                    f"other a copy ({copy})",
                )
        if any(v is value for v in self.walked):
            raise self.fl.src.error(node, f"changing the list '{name}' while a `for` loop walks it is not supported",
                                    f"walk a copy: for ... in list({name})")
        # an enclosing expression holding the list (`f(xs, xs.pop())`, `xs + [xs.pop()]`) would see the
        # change in Python; the change's own arguments (the last frame) are used up by it
        if any(v is value for frame in self.fl.pending[:-1] for held in frame or () for v in values_inside(held)):
            raise self.fl.src.error(
                node, f"changing the list '{name}' inside an expression that holds it is not supported",
                "change the list in a statement of its own (Python would show the change in the "
                "expression's value)",
            )

    # ---- indexing --------------------------------------------------------------------------
    def sequence_item(self, base: tuple, index_node: ast.expr, node):
        """`t[i]`, `t[a:b]` for a tuple or list: an index known while lowering, or an
        int known only at run time when the items are alike."""
        if isinstance(index_node, ast.Slice):
            bounds = [None if p is None else self._slice_bound(p) for p in (index_node.lower, index_node.upper,
                                                                              index_node.step)]
            if bounds[2] == 0:
                raise self.fl.src.error(node, "slice step cannot be zero")
            items = tuple(base)[slice(*bounds)]
            return new_list(items) if isinstance(base, ListValue) else items
        value = self.fl.expr(index_node)
        known, i = known_value(value)
        kind = "list" if isinstance(base, ListValue) else "tuple"
        if known and not isinstance(i, bool) and isinstance(i, int):
            if not -len(base) <= i < len(base):
                raise self.fl.src.error(node, f"{kind} index {i} out of range: the {kind} has {len(base)} items")
            return base[i]
        v = self.fl.as_number(value, index_node) if not known else None
        if v is None or is_array(v) or not (is_int(v.type) or is_bool(v.type)):
            raise self.fl.src.error(node, f"{kind} indices must be integers, got {self.fl.kind_of(value)}")
        return self._runtime_item(base, v, kind, node)

    def _slice_bound(self, part: ast.expr) -> int:
        known, obj = known_value(self.fl.expr(part))
        if not known or isinstance(obj, bool) or not isinstance(obj, int):
            raise self.fl.src.error(part, "a slice of a tuple or list needs bounds known while lowering",
                                    "slice an array (np.array(xs)[i:j]) for bounds known only at run time")
        return obj

    def _runtime_item(self, base: tuple, i: SSAValue, kind: str, node):
        """`xs[i]` for an i known only at run time: the i-th row of the buffer a
        loop's appends wrote (stacked_appends), or of the items (of one type)
        stacked, leaf by leaf (containers.item_at); checked, negatives wrapped."""
        rows = getattr(base, "rows_of", None)
        if rows is None:
            return containers.item_at(self.fl, base, i, node)
        n = len(base)
        em = self.fl.em
        i = em.to_int(i)
        inside = em.op(arith.AndIOp(em.op(arith.CmpiOp(i, em.const(-n, I64), "sge")),
                                    em.op(arith.CmpiOp(i, em.const(n, I64), "slt"))))
        self.fl.check(inside, node, f"{kind} index out of range")
        negative = em.op(arith.CmpiOp(i, em.const(0, I64), "slt"))
        i = em.op(arith.SelectOp(negative, em.op(arith.AddiOp(i, em.const(n, I64))), i))
        return self.buffer_row(rows, i)

    def assign_list_item(self, name: str, target: ast.Subscript, value, node) -> None:
        """`xs[i] = v` and `xs[a:b] = ys` on a list, at positions known while lowering."""
        self.check_changeable(name, node)
        old = self.fl.env[name]
        items = list(old)
        index = target.slice
        if isinstance(index, ast.Slice):
            bounds = [None if p is None else self._slice_bound(p) for p in (index.lower, index.upper, index.step)]
            new = [self.list_item(v, node) for v in self.fl.iteration.items_of(value, node)]
            try:
                items[slice(*bounds)] = new
            except ValueError as exc:  # an extended slice of another length
                raise self.fl.src.error(node, f"{exc} (Python's ValueError)") from None
        else:
            i = self._known_int(self.fl.expr(index), node, "a list index assigned to")
            if not -len(items) <= i < len(items):
                raise self.fl.src.error(node, f"list assignment index {i} out of range: the list has {len(items)} items")
            items[i] = self._new_item(value, old, node)
        self._rebind(name, items)

    # ---- arithmetic --------------------------------------------------------------------------
    def sequence_binary(self, op: ast.operator, left, right, node):
        """`xs + ys` and `xs * n` of tuples and lists, as Python computes them;
        None when neither side is a sequence."""
        if isinstance(left, Static) and isinstance(right, Static):  # shapes: x.shape + (1,)
            if isinstance(left.obj, tuple) or isinstance(right.obj, tuple):
                try:
                    return Static((left.obj + right.obj) if isinstance(op, ast.Add) else left.obj * right.obj)
                except TypeError:
                    pass
            return None
        if isinstance(left, Static) and isinstance(left.obj, tuple) and isinstance(right, tuple):
            left = tuple(Static(v) for v in left.obj)
        if isinstance(right, Static) and isinstance(right.obj, tuple) and isinstance(left, tuple):
            right = tuple(Static(v) for v in right.obj)
        if not (isinstance(left, tuple) or isinstance(right, tuple)):
            return None
        kind = "list" if isinstance(left if isinstance(left, tuple) else right, ListValue) else "tuple"
        if isinstance(op, ast.Add) and isinstance(left, tuple) and isinstance(right, tuple):
            if isinstance(left, ListValue) != isinstance(right, ListValue):
                other = "tuple" if kind == "list" else "list"
                raise self.fl.src.error(node, f'can only concatenate {kind} (not "{other}") to {kind}',
                                        f"convert one: {kind}(...)")
            items = (*left, *right)
            return new_list(items) if kind == "list" else items
        if isinstance(op, ast.Mult):
            seq, count = (left, right) if isinstance(left, tuple) else (right, left)
            n = self._known_int(count, node, f"the number of times a {kind} is repeated")
            items = tuple(seq) * max(n, 0)
            return new_list(items) if kind == "list" else items
        raise self.fl.src.error(node, f"this operator on a {kind} is not supported",
                                "lists and tuples take + (concatenation) and * (repetition)")

    def augmented_list(self, stmt: ast.AugAssign, current: tuple) -> None:
        """`xs += ys` extends the list in place; `t += (v,)` binds t anew."""
        if not isinstance(current, ListValue) or not isinstance(stmt.op, ast.Add):
            self.fl.statements.assign(stmt.target, self.sequence_binary(stmt.op, current, self.fl.expr(stmt.value), stmt))
            return
        added = self.fl.iteration.items_of(self.fl.expr(stmt.value), stmt.value)  # += takes any iterable, as extend does
        self.check_changeable(stmt.target.id, stmt)
        self._rebind(stmt.target.id, [*current, *(self.list_item(v, stmt) for v in added)])

    # ---- loops, joins and calls ----------------------------------------------------------------
    def changed_lists(self, body: list[ast.stmt]) -> list[str]:
        """The variables holding a list (or a tuple: `t += (v,)`) before a loop that its body changes."""
        return [n for n in _changed_list_names(body) if isinstance(self.fl.env.get(n), tuple)]

    def unrolls_for_lists(self, stmt: ast.For, length: int | None, bounds: tuple = ()) -> bool:
        """Does this `for` loop, lowered to scf.for otherwise, have to be unrolled
        because its body changes a list from before it? Refused when its trip
        count is known only at run time (`bounds`: the numbers it comes from,
        followed back to where they became run-time)."""
        changed = self.changed_lists(stmt.body)
        if not changed:
            return False
        if length is None:
            raise self.fl.runtime_error(
                stmt, f"this loop changes the {self._sequence_kind(changed[0])} '{changed[0]}' (append, extend, "
                "pop, +=, ...), but runs a number "
                "of times known only at run time, and irad's lists have a length known while lowering",
                _GROWTH_HINT, bounds,
            )
        return True

    def refuse_while_lists(self, stmt: ast.While) -> None:
        changed = self.changed_lists(stmt.body)
        if changed:
            raise self.fl.src.error(
                stmt, f"this `while` loop changes the {self._sequence_kind(changed[0])} '{changed[0]}' (append, "
                "extend, pop, +=, ...), but a "
                "`while` loop runs a number of times known only at run time, and irad's lists have a "
                "length known while lowering",
                _GROWTH_HINT.split(", or give")[0] + ", or loop `for t in range(T)` over a trip count known "
                "while lowering (a constant, a shape, len(...), or an argument made static with static_argnums=...)",
            )

    def _sequence_kind(self, name: str) -> str:
        return "list" if isinstance(self.fl.env.get(name), ListValue) else "tuple"

    def refuse_known_list_change(self, base: Static, node: ast.Attribute) -> None:
        """`GLOBAL_LIST.append(v)`: a list known while lowering (read from a global
        or a closure) is a constant of the function."""
        if isinstance(base.obj, list) and node.attr in CHANGES:
            name = ast.unparse(node.value)
            raise self.fl.src.error(
                node, f"changing the list {name}, which irad reads while lowering (a global or a closure "
                "variable) and bakes in, is not supported",
                f"copy it into a list of the function's own: xs = list({name}), and change that",
            )

    # ---- appends in an scf.for: items written into a buffer ------------------------------------
    def stacked_appends(self, stmt: ast.For, walk) -> bool:
        """Lower a loop whose body appends one item per iteration to lists from
        before it as one scf.for writing the items into buffers (rows of an
        array per list); False, with nothing lowered, where the body does more
        with the lists or that fails: the caller unrolls the loop."""
        names = self._appended_once(stmt)
        if not names or not walk.length:
            return False
        # lowered once per iteration instead where that fails, which says what is wrong if anything is
        return self.tentatively(lambda: self._lower_stacked(stmt, walk, names))

    def tentatively(self, lower) -> bool:
        """Run `lower`; where it raises UnsupportedError, undo what it did (the
        path, the lists' flags, the ops it emitted) and return False."""
        saved, last = self.fl.path.copy(), self.fl.em.block.last_op
        flags = [(v, v.mutable, v.why, v.hint) for held in saved.slots().values() for v in lists_inside(held)]
        try:
            lower()
            return True
        except UnsupportedError:
            self.fl.path = saved
            for v, mutable, why, hint in flags:  # the attempt may have frozen lists (a loop carrying them)
                v.mutable, v.why, v.hint = mutable, why, hint
            op = self.fl.em.block.last_op
            while op is not last:
                previous = op.prev_op
                op.detach()
                op.erase(safe_erase=False)
                op = previous
            return False

    def _appended_once(self, stmt: ast.For) -> list[str]:
        """The lists the body of `stmt` changes, if it only appends one item to each
        per iteration (a statement `n.append(v)` of its own, directly in the body,
        the only place the body names `n`; no break, continue or return)."""
        changed = self.changed_lists(stmt.body)
        if not changed or any(not isinstance(self.fl.env[n], ListValue) for n in changed):
            return []
        jumps = [n for n in ast.walk(ast.Module(body=stmt.body, type_ignores=[]))
                 if isinstance(n, (ast.Break, ast.Continue, ast.Return))]
        if jumps:
            return []
        for name in changed:
            uses = [n for s in stmt.body for n in ast.walk(s) if isinstance(n, ast.Name) and n.id == name]
            appends = [s for s in stmt.body if _append_of(s) == name]
            if len(uses) != 1 or len(appends) != 1:
                return []
        return changed

    def _lower_stacked(self, stmt: ast.For, walk, names: list[str]) -> None:
        n = walk.length
        for name in names:
            self.check_changeable(name, stmt)
        first = self._first_items(stmt, walk, names)
        trees, buffers, counters = {}, {}, {}
        for name in names:
            found = self.fl.tree_leaves(first[name], stmt)  # numbers, arrays, tuples of them: a buffer per leaf
            if found is None or not found[0]:
                raise UnsupportedError("only numbers, arrays and containers of them are kept in buffers")
            leaves, trees[name] = found
            buffers[name] = [self.fl.iteration.hidden_name("appended") for _ in leaves]
            counters[name] = self.fl.iteration.hidden_name("count")
            for leaf, buffer in zip(leaves, buffers[name]):
                dims = T.shape(leaf) if isinstance(leaf.type, TensorType) else ()
                zeros = self.fl.em.op(zero_constant(TensorType(T.element(leaf), [n, *dims])))
                self.fl.iteration.assign_hidden(buffer, self.fl.arrays.new(zeros))
            self.fl.iteration.assign_hidden(counters[name], self.fl.em.const(0, I64))
        body = []
        for s in stmt.body:
            name = _append_of(s)
            if name in buffers:
                s = ast.copy_location(BufferAppend(
                    value=s.value.args[0],
                    buffers=ast.Tuple(elts=[ast.Name(id=b, ctx=ast.Store()) for b in buffers[name]], ctx=ast.Store()),
                    counter=ast.Name(id=counters[name], ctx=ast.Store())), s)
                s.tree = trees[name]
            body.append(s)
        loop = ast.copy_location(ast.For(target=stmt.target, iter=stmt.iter, body=body, orelse=[]), stmt)
        try:
            self.fl.iteration.scf_for(loop, walk)
            for name in names:
                arrays, before = [self.fl.env[b] for b in buffers[name]], self.fl.env[name]
                items = [rebuild(trees[name], iter([self.buffer_row(a, k) for a in arrays])) for k in range(n)]
                self.fl.env[name] = new_list([*before, *items])
                if not before and not isinstance(trees[name], Node):
                    self.fl.env[name].rows_of = arrays[0]  # np.stack(xs), sum(xs), xs[i], for x in xs: the buffer
        finally:
            self.fl.iteration.release([b for name in names for b in (*buffers[name], counters[name])])

    def _first_items(self, stmt: ast.For, walk, names: list[str]) -> dict:
        """What the first iteration appends to each list: the body lowered once,
        unrolled, into a block that is thrown away."""
        outer, outer_em = self.fl.path, self.fl.em
        block = Block()
        self.fl.path, self.fl.em = outer.copy(), Emitter(block)
        try:
            self.fl.statements.assign(stmt.target, walk.item(self.fl, 0))
            self.fl.control_flow.run_statements(stmt.body)
            return {name: self.fl.env[name][-1] for name in names}
        finally:
            self.fl.path, self.fl.em = outer, outer_em
            block.drop_all_references()

    def stmt_BufferAppend(self, stmt: BufferAppend) -> None:
        found = self.fl.tree_leaves(self.fl.expr(stmt.value), stmt)
        if found is None or found[1] != stmt.tree:
            raise UnsupportedError("the items change type from one iteration to the next")
        for leaf, buffer in zip(found[0], stmt.buffers.elts):
            if not self._written_no_more(leaf):
                raise UnsupportedError("the item is an array a later write may change")
            self.fl.arrays.assign_item(buffer.id, ast.Name(id=stmt.counter.id, ctx=ast.Load()), leaf, stmt)
        counter = self.fl.env[stmt.counter.id]
        self.fl.env[stmt.counter.id] = self.fl.em.op(arith.AddiOp(counter, self.fl.em.const(1, I64)))

    def _written_no_more(self, value: SSAValue) -> bool:
        """Python's list holds the array itself, so a later write into it shows in
        the list, where the buffer holds the values it had: keep an array there
        only if it is no view and no other name's, and refuse writes into it from
        now on (which unrolling then reports)."""
        if not isinstance(value.type, TensorType):
            return True
        views = self.fl.arrays.views
        if value in views.derived or any(self.fl.env.get(name) is value for name in views.table.members):
            return False
        self.fl.arrays.fresh.discard(value)
        return True

    def buffer_row(self, buffer: SSAValue, k) -> SSAValue:
        """Row k (an int, or an i64 value in range) of an array, as a value of its
        own: an item of a list, not a view a write could go through."""
        em = self.fl.em
        index = k if isinstance(k, int) else em.op(arith.IndexCastOp(k, IndexType()))
        dims = T.shape(buffer)[1:]
        if not dims:
            return em.op(tensor.ExtractOp(buffer, [self.fl.arrays.index_value(index)], T.element(buffer)))
        return Slice((index, *[0] * len(dims)), (1, *dims), (1,) * (len(dims) + 1), dims).read(em, buffer)

    def walking(self, iterable) -> list:
        """Note the lists an unrolled `for` loop walks (see check_changeable);
        returns them, for `done_walking`."""
        walked = lists_inside(iterable)
        self.walked = [*self.walked, *walked]
        return walked

    def done_walking(self, walked: list) -> None:
        self.walked = self.walked[: len(self.walked) - len(walked)]

    def join_lists(self, joined, arms: tuple, envs: tuple, name: str, where: str) -> None:
        """After an `if`, the lists in the variable `name` (rebuilt, so copies) may
        change where, on every path that reaches the join, the list it held may
        change and nothing else held it; otherwise the lists the paths held no
        longer change either (the copy may stand for them). An arm that returned
        (`arms[k]` is None) does not reach the join."""
        new = _ordered_lists(joined)
        if not new:
            return
        per_arm = [None if a is None else _ordered_lists(a) for a in arms]
        for position, copy in enumerate(new):
            held = [None if lists is None else lists[position] if position < len(lists) else False
                    for lists in per_arm]
            if all(h is None or (h is not False and h.mutable and _held_once(h, env)) for h, env in zip(held, envs)):
                copy.mutable, copy.nested = True, holds_containers(copy)
            else:
                self.freeze_lists(copy, f"it is the copy the `if` at {where} joins, of lists that may not change")
                for h in held:
                    if h:
                        self.freeze_lists(h, f"after the `if` at {where}, '{name}' holds a copy of it")

    @staticmethod
    def differing_lengths(a, b) -> str | None:
        """'a list' or 'a tuple' when two values of a join are lists (or tuples) of
        two lengths; None otherwise."""
        if isinstance(a, tuple) and isinstance(b, tuple) and type(a) is type(b) and len(a) != len(b):
            return "a list" if isinstance(a, ListValue) else "a tuple"
        return None

    LENGTH_HINT = (
        "irad's lists have a length known while lowering: change the list alike on every path "
        "(choose the value with an `if` expression or np.where), or preallocate an array and write into it"
    )

    def calls_may_return_lists(self, result, given: tuple, node) -> None:
        """A call whose result holds lists may return (a copy of) a list it was
        given: those no longer change."""
        where = self.fl.src.location(node)
        self.freeze_lists(result, f"it is the result of the call at {where} (irad cannot tell whether "
                                  "it is a list the caller holds)")
        if lists_inside(result):
            self.freeze_lists(given, f"it was given to the call at {where}, whose result holds a list "
                                     "(a copy of it, in Python maybe the list itself)",
                              "irad's lists are values: copy the call's result (ys = list(f(xs))) if the "
                              "list given to it is the one to change")


def _append_of(stmt: ast.stmt) -> str | None:
    """`n` for a statement `n.append(v)` (one positional argument)."""
    if not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, ast.Call):
        return None
    call = stmt.value
    if not (isinstance(call.func, ast.Attribute) and call.func.attr == "append" and isinstance(call.func.value, ast.Name)):
        return None
    if len(call.args) != 1 or call.keywords or isinstance(call.args[0], ast.Starred):
        return None
    return call.func.value.id


def _ordered_lists(value) -> list[ListValue]:
    """The lists in a value of numbers, arrays and containers, in flattening
    order (the same for two values of one structure); not those inside
    functions, whose copies stay unchangeable."""
    out: list[ListValue] = []

    def walk(v) -> None:
        if isinstance(v, ListValue):
            out.append(v)
        found = value_node(v) if isinstance(v, (tuple, MappingValue)) else None
        if found is not None:
            for item in found[1]:
                walk(item)

    walk(value)
    return out


def _held_once(value: ListValue, env: dict) -> bool:
    return sum(sum(v is value for v in values_inside(held)) for held in env.values()) == 1


__all__ = ["Lists", "ListMethod", "CHANGES", "lists_inside"]
