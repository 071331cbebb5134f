"""Statements other than those that branch, loop, jump or define: assignments
(plain, augmented, annotated, to names, items and unpacked targets),
expression statements, `pass`, `with np.errstate(...)`, `assert`, `raise`
and `import`.

`Statements` is a collaborator of the FunctionLowering `fl` that holds it
(`fl.statements`); `fl.statement` routes the others (`if`, `while`, jumps to
`fl.control_flow`, `for` to `fl.iteration`, `def` to `fl.calls`). What the
others use: `assign`, `indices_evaluated`.

What it needs from `fl`: the source (`src`), the emitter (`em`), the path
(`env`, `control`), `expr`, `as_number`, `check`, and the other
collaborators: `expressions`, `arrays`, `lists`, `control_flow`.
"""

from __future__ import annotations

import ast
import contextlib
import sys
from xdsl.ir import SSAValue
from irad.frontend.arrays import known_value
from irad.frontend.known_methods import format_string
from irad.ir.symbols import value_name
from irad.base.errors import raised_name
from irad.frontend import contexts, imports, masked_writes, nested_targets, ufunc_at
from irad.frontend.masked_reads import Selection
from irad.frontend.values import ListValue, Value, is_array
from irad.frontend.source import SUBSET_HINT
from irad.ir.types import I1

UNSUPPORTED_STATEMENTS = {
    ast.Try: ("a `try` statement", "irad's programs catch no exceptions (a `raise` is a run-time check); "
              "catch them around the call of the compiled function"),
    ast.ClassDef: ("a class definition", "define it at module level"),
    ast.Global: ("a `global` statement (a write to a module's variable: irad's programs are functions of "
                 "their arguments, run many times from one lowering)",
                 "return the value and assign the global around the call (`result, COUNT = f(x)`); reading a "
                 "global needs no `global` statement"),
    ast.Nonlocal: ("a `nonlocal` statement in the function irad transforms (a closure whose enclosing "
                   "function irad does not lower, so its variable cannot be written; a nested def called in "
                   "the function that defines it may write it)",
                   "pass the value in and return the new one: `def add(total, v): return total + v`, then "
                   "`total = add(total, v)` in the enclosing function"),
    ast.Delete: ("a `del` statement", "remove it"),
}


class Statements:
    """Lowers the simple statements of one function (see the module docstring)."""

    def __init__(self, fl) -> None:
        self.fl = fl

    def statement(self, stmt: ast.stmt) -> None:
        """Lower one statement of this module's kinds."""
        if isinstance(stmt, ast.Assign):
            if masked_writes.assign_copy(self.fl, stmt):  # y[m] = z[m]
                return
            value = self.fl.expr(stmt.value)
            for target in stmt.targets:
                self.assign(target, value)
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Subscript):
            # y[i] += v, p["W"][i] += v: read, combine, write back, the indices evaluated once
            with self.indices_evaluated(stmt.target) as target:
                mask = masked_writes.runtime_mask(self.fl, target)
                if mask is not None:  # y[y < 0] *= 0.5: a select (masked_writes.py)
                    masked_writes.augment(self.fl, stmt, target, mask)
                else:
                    current = self.fl.expressions.expr_Subscript(target)
                    self.assign(target, self.fl.expressions.binary(stmt.op, current, stmt.value, stmt), stmt)
        elif isinstance(stmt, ast.AugAssign):
            if not isinstance(stmt.target, ast.Name):
                raise self.fl.src.error(
                    stmt, "augmented assignment to anything but a variable",
                    "in-place updates of containers are not supported",
                )
            current = self.fl.expressions.name(stmt.target)
            if isinstance(current, tuple):  # xs += ys extends a list in place; t += (v,) binds anew
                self.fl.lists.augmented_list(stmt, current)
                return
            if isinstance(current, Selection):  # numpy's would change every name holding it
                raise self.fl.src.error(
                    stmt, f"an in-place update of x[m] for a boolean mask computed at run time (at {current.where})",
                    f"bind the result anew: {stmt.target.id} = {ast.unparse(ast.BinOp(stmt.target, stmt.op, stmt.value))}")
            result = self.fl.expressions.binary(stmt.op, current, stmt.value, stmt)
            if is_array(current):  # numpy updates the array in place: y += v is np.add(y, v, out=y)
                self.fl.arrays.update(stmt.target.id, current, result, stmt)
            else:
                self.assign(stmt.target, result)
        elif isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None:
                self.assign(stmt.target, self.fl.expr(stmt.value))
        elif isinstance(stmt, ast.Expr) and ufunc_at.is_ufunc_at(self.fl, stmt.value):
            ufunc_at.lower(self.fl, stmt)  # np.add.at(a, idx, b): an in-place update
        elif isinstance(stmt, ast.Expr):
            if not (isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)):
                self.fl.expr(stmt.value)  # pure: evaluated for its errors only
        elif isinstance(stmt, ast.Pass):
            pass
        elif isinstance(stmt, ast.With):
            self.stmt_With(stmt)
        elif isinstance(stmt, ast.Assert):
            self.stmt_Assert(stmt)
        elif isinstance(stmt, ast.Raise):
            self.stmt_Raise(stmt)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            imports.bind(self.fl, stmt)
        else:
            what, hint = UNSUPPORTED_STATEMENTS.get(
                type(stmt), (f"a `{type(stmt).__name__}` statement", SUBSET_HINT)
            )
            raise self.fl.src.error(stmt, f"{what} is not supported", hint)

    @contextlib.contextmanager
    def indices_evaluated(self, target: ast.expr):
        """`target` (`y[i]`, `p[key()].W[y > 0]`) with each index that is an
        expression evaluated now, in Python's order, and read from a hidden name
        while the `with` lasts (constants, variables and list literals stay as
        written): Python evaluates a target's indices once, where an augmented
        assignment reads and writes the item, and before a container is taken
        apart for a write into its item (nested_targets.py)."""
        temporaries: list[str] = []

        def once(expr):
            if expr is None or isinstance(expr, (ast.Constant, ast.Name)):
                return expr
            name = f"({ast.unparse(expr)})"  # no identifier: a refusal quoting the target shows the source
            if name in self.fl.env:
                name = self.fl.iteration.hidden_name(name)
            self.fl.env[name] = self.fl.expr(expr)
            temporaries.append(name)
            return ast.copy_location(ast.Name(id=name, ctx=ast.Load()), expr)

        def index(node):
            if isinstance(node, ast.Slice):
                return ast.copy_location(ast.Slice(once(node.lower), once(node.upper), once(node.step)), node)
            if isinstance(node, ast.Tuple):
                return ast.copy_location(ast.Tuple([index(e) for e in node.elts], ast.Load()), node)
            return node if isinstance(node, ast.List) else once(node)  # a list literal: an index array

        def chain(node):  # the container first, then its index, as Python
            if isinstance(node, ast.Subscript):
                return ast.copy_location(ast.Subscript(chain(node.value), index(node.slice), node.ctx), node)
            if isinstance(node, ast.Attribute):
                return ast.copy_location(ast.Attribute(chain(node.value), node.attr, node.ctx), node)
            return node

        try:
            yield chain(target)
        finally:
            for name in temporaries:
                self.fl.env.pop(name)

    def stmt_With(self, stmt: ast.With) -> None:
        """`with np.errstate(...):` its body, as if the `with` were not there (contexts.py)."""
        for item in stmt.items:
            contexts.enter(self.fl, stmt, item)
        self.fl.control_flow.run_statements(stmt.body)

    def assign(self, target: ast.expr, value: Value, node: ast.AST | None = None) -> None:
        if isinstance(target, ast.Name):
            if isinstance(value, SSAValue) and value.name_hint is None:
                value.name_hint = value_name(target.id)
            self.fl.arrays.views.bind(target.id, value)  # an alias or a view shares an array
            self.fl.env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            self.fl.lists.unpack(target, value)  # lists.py
        elif _is_item(target) and isinstance(self.fl.env.get(target.value.id), ListValue):
            self.fl.lists.assign_list_item(target.value.id, target, value, node or target)
        elif _is_item(target):
            self.fl.arrays.assign_item(target.value.id, target.slice, value, node or target)
        elif isinstance(target, ast.Subscript):  # a[i][j] = v, p["W"][i] = v, c["k"][c["k"] > 1] = v
            nested_targets.assign(self.fl, target, value, node or target)
        elif isinstance(target, ast.Attribute):
            nested_targets.refuse_attribute(self.fl, target)
        else:
            raise self.fl.src.error(
                target,
                f"assignment to a {type(target).__name__.lower()} is not supported",
                "assign to plain variable names",
            )

    def stmt_Assert(self, stmt: ast.Assert) -> None:
        """`assert cond, msg`: a run-time check (cf.assert) that fails with
        `file:line:col: assertion failed: msg`, as an index out of bounds does.
        Python drops asserts under `python -O`; so does irad then."""
        if sys.flags.optimize:
            return
        test = self.fl.expr(stmt.test)
        message = "assertion failed: " + (
            self._message(stmt.msg) if stmt.msg is not None else ast.unparse(stmt.test)
        )
        known = self.fl.expressions.static_condition(test)
        if known is True:
            return
        if known is False:
            self._fail(stmt, message)
            return
        value = self.fl.as_number(test, stmt.test)
        if is_array(value):
            raise self.fl.src.error(stmt.test, "the truth value of an array is ambiguous",
                                    "assert np.all(...) of a comparison, or a comparison of numbers")
        self.fl.check(self.fl.em.to_bool(value), stmt, message)

    def stmt_Raise(self, stmt: ast.Raise) -> None:
        """`raise E(text)`: a check that fails where it is reached, raising an
        exception that is both a RuntimeCheckError and an E (errors.check_failure),
        its message `file:line:col: E: text`. The `from` cause is not kept."""
        if stmt.exc is None:
            raise self.fl.src.error(stmt, "a bare `raise` (it re-raises the exception being handled, and "
                                    "irad's programs have no `try`)", "raise an exception: raise ValueError(...)")
        call = stmt.exc if isinstance(stmt.exc, ast.Call) else None
        known, cls = known_value(self.fl.expr(call.func if call else stmt.exc))
        if not (known and isinstance(cls, type) and issubclass(cls, Exception)):
            raise self.fl.src.error(stmt.exc, f"`raise {ast.unparse(stmt.exc)}`: irad raises an exception class "
                                    "known while lowering, or an instance made by calling one",
                                    "raise ValueError(...) (or another exception class) directly")
        if call and call.keywords:
            raise self.fl.src.error(call, "keyword arguments of a raised exception are not supported",
                                    "pass its message positionally: raise E(\"...\")")
        texts = [self._message(arg) for arg in call.args] if call else []
        text = texts[0] if len(texts) == 1 else "(" + ", ".join(texts) + ")" if texts else ""
        self._fail(stmt, f"{raised_name(cls)}: {text}")

    def _fail(self, stmt: ast.stmt, message: str) -> None:
        """A check that fails where it is reached (it may sit in a branch never taken)."""
        self.fl.check(self.fl.em.const(False, I1), stmt, message)
        self.fl.control.returned = True  # like a return, it ends this path: nothing after it runs

    def _message(self, node: ast.expr) -> str:
        """An assert's or exception's message: its text where known while lowering, else its source."""
        if isinstance(node, ast.JoinedStr):  # an f-string: known parts filled in, others as source
            return format_string(self.fl, node, message=True).obj
        known, obj = known_value(self.fl.expr(node))
        return str(obj) if known else ast.unparse(node)


def _is_item(target: ast.expr) -> bool:
    """`name[...]`: an in-place write to an array."""
    return isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)
