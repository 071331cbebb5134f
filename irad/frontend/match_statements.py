"""`match` statements as the `if`/`elif` chain they mean.

    match mode:                      <match N> = mode
        case "l1" | "abs":           if <match N> == "l1" or <match N> == "abs":
            r = np.abs(x)                r = np.abs(x)
        case 0 as k if k < n:        elif <match N> == 0:
            ...                          k = <match N>
                                         if k < n: ...
                                         else: <the cases after it>
        case other:                  else:
            r = other                    other = <match N>; r = other

The subject is evaluated once, into a hidden name (`<match N>`, a name no
program can spell). Patterns irad lowers: literals and dotted constants
(compared with `==`), None/True/False (`is`), `|` of those, `_`, a capture
name and `<pattern> as name`; a guard may read what the pattern captured
(Python binds it before testing the guard, and keeps it when the guard fails).
A subject known while lowering (a str or int argument, a constant) picks its
case while lowering; one known only at run time gives run-time `if`s. Sequence,
mapping and class patterns are refused with the `if` rewrite.
"""

from __future__ import annotations

import ast
import itertools

_SUBJECTS = itertools.count(1)


def as_if_chain(fl, stmt: ast.Match) -> tuple[str, list[ast.stmt]]:
    """The hidden subject name and the statements that run `stmt` as Python
    does; built once per statement (a loop body lowered again meets the same nodes)."""
    cached = getattr(stmt, "_irad_if_chain", None)
    if cached is None:
        cached = _chain(fl, stmt)
        stmt._irad_if_chain = cached
    return cached


def _chain(fl, stmt: ast.Match) -> tuple[str, list[ast.stmt]]:
    subject = f"<match {next(_SUBJECTS)}>"
    rest: list[ast.stmt] = []
    for case in reversed(stmt.cases):
        test, names = _test(fl, case.pattern, subject)
        binds = [_located(ast.Assign([ast.Name(n, ast.Store())], ast.Name(subject, ast.Load())), case.pattern)
                 for n in names]
        body = case.body
        if case.guard is not None:
            body = [_located(ast.If(case.guard, case.body, rest), case.guard)]
        body = [*binds, *body]
        rest = body if test is None else [_located(ast.If(test, body, rest), case.pattern)]
    first = _located(ast.Assign([ast.Name(subject, ast.Store())], stmt.subject), stmt.subject)
    return subject, [first, *rest]


def _test(fl, pattern: ast.pattern, subject: str) -> tuple[ast.expr | None, list[str]]:
    """The condition `pattern` matches under (None: always) and the names it binds."""
    read = ast.Name(subject, ast.Load())
    if isinstance(pattern, ast.MatchValue):
        return _located(ast.Compare(read, [ast.Eq()], [pattern.value]), pattern), []
    if isinstance(pattern, ast.MatchSingleton):
        return _located(ast.Compare(read, [ast.Is()], [ast.Constant(pattern.value)]), pattern), []
    if isinstance(pattern, ast.MatchAs):
        if pattern.pattern is None:
            return None, [pattern.name] if pattern.name else []  # `_` or a capture: always matches
        test, names = _test(fl, pattern.pattern, subject)
        return test, [*names, pattern.name]
    if isinstance(pattern, ast.MatchOr):
        tests = []
        for alternative in pattern.patterns:
            test, names = _test(fl, alternative, subject)
            if names:
                raise fl.src.error(alternative, "a `|` pattern that binds names is not supported",
                                   "bind the whole alternative instead: `case 1 | 2 as k:`")
            if test is None:
                return None, []
            tests.append(test)
        return _located(ast.BoolOp(ast.Or(), tests), pattern), []
    kind = {ast.MatchSequence: "a sequence pattern", ast.MatchMapping: "a mapping pattern",
            ast.MatchClass: "a class pattern", ast.MatchStar: "a starred pattern"}.get(type(pattern), "this pattern")
    raise fl.src.error(pattern, f"{kind} in a `match` statement is not supported",
                       "match literals, `|` of literals, `_` and capture names; write the test as an "
                       "`if`/`elif` chain (`if len(t) == 2: a, b = t`, `if isinstance(v, float):`)")


def _located(node: ast.AST, where: ast.AST) -> ast.AST:
    """`node` and the nodes it made placed at `where` (the user's nodes keep their places)."""
    for sub in ast.walk(node):
        if not hasattr(sub, "lineno"):
            ast.copy_location(sub, where)
    return node
