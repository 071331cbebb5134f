"""Python source of a function: its AST and file:line:col locations for errors."""

from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import dataclass

from irad.errors import UnsupportedError


@dataclass(frozen=True)
class FunctionSource:
    """The parsed definition of one Python function and where it lives."""

    fn: object
    tree: ast.FunctionDef
    filename: str
    first_line: int  # line of the `def` in the file
    indent: int  # columns removed by dedenting

    def location(self, node: ast.AST) -> str:
        line = self.first_line + getattr(node, "lineno", 1) - 1
        col = getattr(node, "col_offset", 0) + self.indent + 1
        return f"{self.filename}:{line}:{col}"

    def error(self, node: ast.AST, what: str, hint: str = "") -> UnsupportedError:
        message = f"{self.location(node)}: {what}"
        if hint:
            message += f"\n  hint: {hint}"
        return UnsupportedError(message)


def parse_function(fn) -> FunctionSource:
    """Parse `fn`'s source. Fails with UnsupportedError when there is none."""
    name = getattr(fn, "__qualname__", repr(fn))
    try:
        lines, first_line = inspect.getsourcelines(fn)
        filename = inspect.getsourcefile(fn) or "<unknown>"
    except (OSError, TypeError) as exc:
        raise UnsupportedError(
            f"cannot lower {name}: its Python source is not available ({exc})\n"
            "  hint: irad lowers functions from their source; define it in a file "
            "(not a REPL string), or register a rule for it"
        ) from None
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    indent = len(lines[0]) - len(lines[0].lstrip()) if lines else 0
    try:
        module = ast.parse(dedented)
    except SyntaxError as exc:  # e.g. a lambda inside a larger expression
        raise UnsupportedError(
            f"{filename}:{first_line}: cannot parse the source of {name} ({exc.msg})\n"
            "  hint: define the function with `def` at statement level"
        ) from None
    defs = [n for n in module.body if isinstance(n, ast.FunctionDef)]
    if not defs:
        raise UnsupportedError(
            f"{filename}:{first_line}: {name} is not a `def` function "
            "(lambdas and async functions are not supported)\n"
            "  hint: write it as a plain `def`"
        )
    return FunctionSource(fn, defs[0], filename, first_line, indent)
