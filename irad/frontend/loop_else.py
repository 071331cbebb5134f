"""`for ... else` and `while ... else`: the loop, then its `else` body where no
`break` of that loop ran, as Python runs them.

The loop is lowered as a loop without `else` whose `break`s also set a hidden
flag (`<broke N>`, a name no program can spell); after it, `if not <flag>:`
runs the `else` body. A flag known while lowering (a `break` under a condition
known then, or none) picks the body then; one known only at run time is an
`i1` the loop carries like any variable it assigns, so the `else` body runs
under a run-time `if`. `break`s of nested loops and of nested functions belong
to them and are left alone.
"""

from __future__ import annotations

import ast
import itertools

_FLAGS = itertools.count(1)


def without_else(stmt: ast.For | ast.While) -> tuple[str | None, list[ast.stmt]]:
    """The statements that run `stmt` as Python does, and the hidden flag they
    assign (None when the loop has no `break`). Built once per loop, so each
    lowering of it (a loop lowered until what it carries settles, a helper
    called twice) sees the same nodes."""
    cached = getattr(stmt, "_irad_without_else", None)
    if cached is None:
        cached = _rewrite(stmt)
        stmt._irad_without_else = cached
    return cached


def _rewrite(stmt: ast.For | ast.While) -> tuple[str | None, list[ast.stmt]]:
    loop = ast.copy_location(type(stmt)(**{f: getattr(stmt, f) for f in stmt._fields}), stmt)
    loop.orelse = []
    if not _breaks(stmt.body):
        return None, [loop, *stmt.orelse]  # nothing ends the loop early: the else body always runs
    flag = f"<broke {next(_FLAGS)}>"
    loop.body = _flagging_breaks(stmt.body, flag)
    before = ast.copy_location(ast.Assign([ast.Name(flag, ast.Store())], ast.Constant(False)), stmt)
    test = ast.UnaryOp(ast.Not(), ast.Name(flag, ast.Load()))
    after = ast.If(test, stmt.orelse, [])
    for node in ast.walk(before):
        ast.copy_location(node, stmt)
    for node in (after, *ast.walk(test)):
        ast.copy_location(node, stmt.orelse[0])  # errors in the else body point at it
    return flag, [before, loop, after]


def _breaks(body: list[ast.stmt]) -> bool:
    return any(isinstance(node, ast.Break) for node in _own_statements(body))


def _own_statements(body: list[ast.stmt]):
    """The statements of `body` whose `break` ends this loop (not nested loops' or functions')."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.For, ast.While)):
            yield from _own_statements(stmt.orelse)  # a break in a nested loop's else ends this loop
        elif not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                children = getattr(stmt, field, None) or []
                yield from _own_statements([c for c in children if isinstance(c, ast.stmt)])
                for child in children:
                    if not isinstance(child, ast.stmt) and hasattr(child, "body"):
                        yield from _own_statements(child.body)  # match cases, except handlers


def _flagging_breaks(body: list[ast.stmt], flag: str) -> list[ast.stmt]:
    """`body` with each `break` of this loop preceded by `<flag> = True` (new
    nodes where something changes; the user's nodes are not modified)."""
    out: list[ast.stmt] = []
    for stmt in body:
        if isinstance(stmt, ast.Break):
            set_flag = ast.Assign([ast.Name(flag, ast.Store())], ast.Constant(True))
            for node in ast.walk(set_flag):
                ast.copy_location(node, stmt)
            out += [set_flag, stmt]
            continue
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.append(stmt)
            continue
        changes = {}
        fields = ("orelse",) if isinstance(stmt, (ast.For, ast.While)) else ("body", "orelse", "finalbody")
        for field in fields:
            children = getattr(stmt, field, None)
            if children and _breaks(children):
                changes[field] = _flagging_breaks(children, flag)
        if isinstance(stmt, ast.Match) and any(_breaks(case.body) for case in stmt.cases):
            changes["cases"] = [ast.match_case(c.pattern, c.guard, _flagging_breaks(c.body, flag))
                                for c in stmt.cases]
        if changes:
            stmt = ast.copy_location(type(stmt)(**{f: changes.get(f, getattr(stmt, f)) for f in stmt._fields}), stmt)
        out.append(stmt)
    return out
