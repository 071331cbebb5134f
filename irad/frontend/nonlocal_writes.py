"""`nonlocal`: a nested function writing a variable of the function that defines it
(the counter a closure increments, the state a step function updates).

The nested def is lowered from a copy whose `nonlocal` statements are gone and
whose every `return v` is `return (v, (n1, n2, ...))`, the values its nonlocal
names hold when it returns (`return (None, (...))` where it reaches its end); it
reads them from the definer as it reads any free variable. Its call, in the
function that defines it, assigns those values to the names there, as Python's
cells do, and gives `v`. The write is an assignment of the definer's path, so a
loop or a branch around the call carries or joins it as any other.

A closure that writes its definer's variables is called only where those are
the current ones: in the definer itself. Passed to another function, returned,
or called by another nested function, its writes could not reach the definer:
refused there with the rewrite.
"""

from __future__ import annotations

import ast
import copy

from irad.frontend.callables import Closure, own_scope


def nonlocal_names(fn: ast.FunctionDef | ast.Lambda) -> tuple[str, ...]:
    """The names `fn`'s own `nonlocal` statements declare (not its nested functions')."""
    if isinstance(fn, ast.Lambda):
        return ()
    names: dict[str, None] = {}
    for node in own_scope(fn.body):
        if isinstance(node, ast.Nonlocal):
            names.update(dict.fromkeys(node.names))
    return tuple(names)


def returning_nonlocals(fn: ast.FunctionDef, names: tuple[str, ...]) -> ast.FunctionDef:
    """A copy of `fn` without its `nonlocal` statements, returning `(value, (names...))`."""
    tree = copy.deepcopy(fn)

    def finals(at: ast.AST) -> ast.Tuple:
        return ast.copy_location(ast.Tuple([ast.copy_location(ast.Name(n, ast.Load()), at) for n in names],
                                           ast.Load()), at)

    def returned(value: ast.expr | None, at: ast.AST) -> ast.Return:
        value = value if value is not None else ast.copy_location(ast.Constant(None), at)
        return ast.copy_location(ast.Return(ast.copy_location(ast.Tuple([value, finals(at)], ast.Load()), at)), at)

    def rewrite(body: list[ast.stmt]) -> list[ast.stmt]:
        out = []
        for stmt in body:
            if isinstance(stmt, ast.Nonlocal):
                continue
            if isinstance(stmt, ast.Return):
                out.append(returned(stmt.value, stmt))
                continue
            if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                for field in ("body", "orelse", "finalbody"):
                    if isinstance(getattr(stmt, field, None), list):
                        setattr(stmt, field, rewrite(getattr(stmt, field)))
                for case in getattr(stmt, "cases", ()):  # match
                    case.body = rewrite(case.body)
            out.append(stmt)
        return out or [ast.copy_location(ast.Pass(), stmt) for stmt in body[:1]]

    tree.body = rewrite(tree.body) + [returned(None, tree.body[-1])]
    ast.fix_missing_locations(tree)
    return tree


def refuse_out_of_definer(fl, closure: Closure, node: ast.AST) -> None:
    """A closure with `nonlocal` names, called where they are not the current
    function's variables (a closure handed on, returned, or called by another
    nested function): refused, naming the construct and the rewrite."""
    if closure.captured is None and closure.definer is fl:
        return
    names = ", ".join(f"'{n}'" for n in closure.code.nonlocals)
    raise fl.src.error(
        node, f"{closure.code.name} writes {names} of the function that defines it (`nonlocal`), and is called "
        "where that function's variables cannot be written: it was passed to another function, returned, "
        "or is called by another nested function",
        "call it in the function that defines it, or pass the value in and return the new one: "
        "`def step(count, s): return count + 1, ...`, then `count, y = step(count, s)`")


def write_back(fl, closure: Closure, result, node: ast.AST):
    """After a call of `closure`: assign its nonlocal names' final values in
    the definer, and give the value it returned."""
    value, finals = result
    for name, final in zip(closure.code.nonlocals, finals, strict=True):
        target = ast.copy_location(ast.Name(name, ast.Store()), node)
        fl.statements.assign(target, final)
    return value
