"""Python source of a function: its AST and file:line:col locations for errors."""

from __future__ import annotations

import ast
import inspect
import textwrap
import types
from dataclasses import dataclass

from irad.errors import UnsupportedError

SUBSET_HINT = "irad lowers the Python subset described in docs/python-subset.md"


class NoSourceError(UnsupportedError):
    """The function has no Python source; the caller knows the location."""


@dataclass(frozen=True)
class FunctionSource:
    """The parsed definition of one Python function and where it lives."""

    fn: object
    tree: ast.FunctionDef
    filename: str
    first_line: int  # line of the first source line (a decorator or the `def`)
    indent: int  # columns removed by dedenting

    def line_col(self, node: ast.AST) -> tuple[int, int]:
        line = self.first_line + getattr(node, "lineno", 1) - 1
        return line, getattr(node, "col_offset", 0) + self.indent + 1

    def location(self, node: ast.AST) -> str:
        line, col = self.line_col(node)
        return f"{self.filename}:{line}:{col}"

    def error(self, node: ast.AST, what: str, hint: str = SUBSET_HINT) -> UnsupportedError:
        hint_line = f"\n  hint: {hint}" if hint else ""
        return UnsupportedError(f"{self.location(node)}: {what}{hint_line}")


def def_location(fn) -> str:
    """`file:line:1: ` of a function's `def`, or "" for an object without code."""
    code = getattr(fn, "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}:1: " if code is not None else ""


def _code_location(fn) -> str:
    """file:line:col of a function's code object, for functions without usable source."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return ""
    col = 1
    for _, _, start_col, _ in code.co_positions():
        if start_col is not None:
            col = start_col + 1
            break
    return f"{code.co_filename}:{code.co_firstlineno}:{col}: "


def parse_function(fn) -> FunctionSource:
    """Parse `fn`'s source. Fails with UnsupportedError when there is none."""
    name = getattr(fn, "__qualname__", repr(fn))
    if not isinstance(fn, types.FunctionType):
        raise UnsupportedError(
            f"cannot lower {name} ({type(fn).__name__}): irad lowers Python functions "
            "defined with `def`\n  hint: wrap the call in a `def` function"
        )
    if hasattr(fn, "__wrapped__"):
        raise UnsupportedError(
            f"{_code_location(fn)}{name} wraps another function (a decorator with "
            "functools.wraps); irad would see the wrapped body, not what the wrapper does\n"
            "  hint: differentiate the undecorated function, or apply the decorator's "
            "effect inside the function"
        )
    try:
        lines, first_line = inspect.getsourcelines(fn)
        filename = inspect.getsourcefile(fn) or "<unknown>"
    except (OSError, TypeError) as exc:
        raise NoSourceError(
            f"cannot lower {name}: its Python source is not available ({exc})\n"
            "  hint: irad lowers functions from their source; define it in a file "
            "(not a REPL string or exec), or register a rule for it"
        ) from None
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    indent = len(lines[0]) - len(lines[0].lstrip()) if lines else 0
    try:
        module = ast.parse(dedented)
    except SyntaxError as exc:  # e.g. a lambda inside a larger expression
        raise UnsupportedError(
            f"{_code_location(fn) or f'{filename}:{first_line}:1: '}cannot parse the source "
            f"of {name} ({exc.msg})\n  hint: define the function with `def` at statement level"
        ) from None
    node = module.body[0] if module.body else None
    if isinstance(node, ast.FunctionDef) and node.name == fn.__code__.co_name:
        return FunctionSource(fn, node, filename, first_line, indent)
    source = FunctionSource(fn, node, filename, first_line, indent)
    what = "an async function" if isinstance(node, ast.AsyncFunctionDef) else "a lambda"
    where = source.location(node) if isinstance(node, ast.AsyncFunctionDef) else _code_location(fn)[:-2]
    raise UnsupportedError(
        f"{where}: {name} is {what}, which is not supported\n  hint: write it as a plain `def`"
    )
