"""Python source of a function: its AST and file:line:col locations for errors."""

from __future__ import annotations

import __future__
import ast
import copy
import functools
import inspect
import linecache
import operator
import os
import re
import sys
import textwrap
import types
from collections import deque
from dataclasses import dataclass

from irad.base.errors import IradError, UnsupportedError

SUBSET_HINT = "irad lowers the Python subset described in docs/python-subset.md"


class NoSourceError(UnsupportedError):
    """The function has no Python source; the caller knows the location."""


@dataclass(frozen=True)
class FunctionSource:
    """The parsed definition of one Python function and where it lives."""

    fn: object
    tree: ast.FunctionDef
    filename: str
    first_line: int  # line of the tree's line 1 (a decorator or the `def`; 1 for a whole file)
    indent: int  # columns removed by dedenting (0 for a whole file)

    def line_col(self, node: ast.AST) -> tuple[int, int]:
        line = self.first_line + getattr(node, "lineno", 1) - 1
        return line, getattr(node, "col_offset", 0) + self.indent + 1

    def location(self, node: ast.AST) -> str:
        line, col = self.line_col(node)
        return f"{self.filename}:{line}:{col}"

    def error(self, node: ast.AST, what: str, hint: str = SUBSET_HINT) -> UnsupportedError:
        hint_line = f"\n  hint: {hint}" if hint else ""
        error = UnsupportedError(f"{self.location(node)}: {what}{hint_line}")
        error.function = self.fn  # whose code is at fault (a decorator's wrapper falls back on it)
        return error

    def with_tree(self, tree: ast.FunctionDef) -> FunctionSource:
        """The same file and function, another definition in it (a nested def, a lambda)."""
        return FunctionSource(self.fn, tree, self.filename, self.first_line, self.indent)


def def_location(fn) -> str:
    """`file:line:1: ` of a function's `def`, or "" for an object without code."""
    code = getattr(fn, "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}:1: " if code is not None else ""


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # irad/


def call_site() -> str:
    """`file:line: ` of the innermost frame outside irad: the user's call.
    (Generated call entries, named "<irad ...>", are irad's frames too:
    irad/backends/entry.py.)"""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not os.path.abspath(filename).startswith(_PACKAGE + os.sep) and not filename.startswith("<irad"):
            return f"{filename}:{frame.f_lineno}: "
        frame = frame.f_back
    return ""


def name_of(f) -> str:
    """A callable's name for messages: `loss`, `partial(loss)`, `Model object`."""
    if isinstance(f, functools.partial):
        return f"partial({name_of(f.func)})"
    name = getattr(f, "__name__", None)
    return name if isinstance(name, str) else f"{type(f).__name__} object"


def error_at(f, message: str) -> IradError:
    """An error about how `f` is called, located at the caller's line when it
    is known, else at f's `def`."""
    where = call_site()
    defined = def_location(f)
    if where and defined:
        first, _, rest = message.partition("\n")
        message = f"{first}\n  ({name_of(f)} is defined at {defined[:-2]})" + (f"\n{rest}" if rest else "")
    return IradError((where or defined) + message)


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


# filename -> (its lines as linecache holds them, its functions by first line,
# the source file inspect names): a program's functions come from a few files,
# parsed once each, where inspect.getsourcelines would tokenize every
# function's lines again.
_PARSED_FILES: dict[str, tuple[list[str], dict[int, ast.FunctionDef], str]] = {}


def _statements(module: ast.Module):
    """Every statement of a module, nested ones included, in ast.walk's order
    (breadth first). A `def` is a statement, so only statement lists are searched,
    not the expressions that make up most of a file's nodes."""
    todo = deque([module])
    while todo:
        node = todo.popleft()
        for field in _STATEMENT_LISTS:
            inner = getattr(node, field, None)
            if inner:
                for child in inner:
                    if isinstance(child, ast.stmt):
                        yield child
                    todo.append(child)


# the fields holding statements (match_case and excepthandler hold them in `body`)
_STATEMENT_LISTS = ("body", "orelse", "finalbody", "handlers", "cases")


def _from_parsed_file(fn) -> FunctionSource | None:
    """`fn`'s definition found in its file parsed whole, or None (no file, a file
    Python cannot parse, no `def` starting at the function's first line)."""
    code = fn.__code__
    filename = code.co_filename
    if filename.startswith("<"):
        return None
    linecache.checkcache(filename)
    lines = linecache.getlines(filename, fn.__globals__)
    if not lines:
        return None
    cached = _PARSED_FILES.get(filename)
    if cached is None or cached[0] is not lines:
        try:
            module = ast.parse("".join(lines))
        except (SyntaxError, ValueError):
            return None
        defs: dict[int, ast.FunctionDef] = {}
        for node in _statements(module):
            if isinstance(node, ast.FunctionDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                defs.setdefault(first, node)
        cached = _PARSED_FILES[filename] = (lines, defs, inspect.getsourcefile(code) or filename)
    node = cached[1].get(code.co_firstlineno)
    if node is None or node.name != code.co_name:
        return None
    check_unchanged(fn, node, cached[2])
    return FunctionSource(fn, node, cached[2], 1, 0)


# ---- the source must be the code's: a file edited after import is refused ----------
_FUTURE_FLAGS = functools.reduce(operator.or_, (getattr(__future__, f).compiler_flag for f in __future__.all_feature_names))
_MANGLED = re.compile(r"^_[A-Za-z0-9]\w*?(__\w*[^_]\w*)$")  # `_Cls__x`, name-mangled in a class
_UNCHANGED: dict[types.CodeType, tuple] = {}  # code -> (the node checked, does it compile to the code)


def check_unchanged(fn, node: ast.FunctionDef | ast.Lambda, filename: str, line_offset: int = 0) -> None:
    """Refuse `node` as `fn`'s source unless it compiles to `fn`'s code: when the
    file was edited after the module was imported, linecache holds the new text
    while the function runs the old code, and irad would differentiate code that
    Python does not run. Compared, for the function and the functions inside it:
    the constants, the names used and the lines of each statement, which do not
    depend on where the `def` is compiled (a closure's free variables are
    defined around it)."""
    code = fn.__code__
    checked = _UNCHANGED.get(code)
    if checked is None or checked[0] is not node:
        real = _fingerprint(code)
        same = _rewritten(real) or real == _fingerprint_of_source(code, node, line_offset)
        checked = _UNCHANGED[code] = (node, same)
    if not checked[1]:
        raise _changed(fn, filename)


def _rewritten(fingerprint: tuple) -> bool:
    """Was the code compiled from another AST than its file's (pytest rewrites
    the asserts of test modules, naming its variables `@py_...`)? Then the
    comparison cannot tell, and the source is taken."""
    name, names, consts, _ = fingerprint
    return any(n.startswith("@py") for n in names) or any(
        isinstance(c, tuple) and len(c) == 4 and isinstance(c[1], frozenset) and _rewritten(c) for c in consts)


def _changed(fn, filename: str) -> UnsupportedError:
    code = fn.__code__
    return UnsupportedError(
        f"{filename}:{code.co_firstlineno}:1: the source of {getattr(fn, '__qualname__', code.co_name)} in "
        f"{filename} changed after the function was defined (the file was edited after import): "
        "irad lowers a function from its source, and would differentiate code Python does not run\n"
        "  hint: reload the module (importlib.reload) or restart the interpreter"
    )


def _fingerprint_of_source(code: types.CodeType, node, line_offset: int):
    node = copy.deepcopy(node)
    if line_offset:
        ast.increment_lineno(node, line_offset)
    body = [ast.Assign(targets=[ast.Name(id=v, ctx=ast.Store())], value=ast.Constant(None))
            for v in code.co_freevars]
    if isinstance(node, ast.FunctionDef) and node.name not in code.co_freevars:
        body.insert(0, ast.Global(names=[node.name]))  # the `def` binds a global, as in its module
    body.append(node if isinstance(node, ast.stmt) else ast.Expr(node))
    fields = dict(name="_irad_around", args=ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[],
                                                          kw_defaults=[], kwarg=None, defaults=[]),
                  body=body, decorator_list=[], returns=None)
    if "type_params" in ast.FunctionDef._fields:
        fields["type_params"] = []
    around = ast.Module(body=[ast.FunctionDef(**fields, lineno=1, col_offset=0)], type_ignores=[])
    ast.fix_missing_locations(around)
    try:
        compiled = compile(around, code.co_filename, "exec", flags=code.co_flags & _FUTURE_FLAGS, dont_inherit=True)
    except (SyntaxError, ValueError, TypeError):
        return None
    outer = next(c for c in compiled.co_consts if isinstance(c, types.CodeType))
    inner = [c for c in outer.co_consts if isinstance(c, types.CodeType) and c.co_name == code.co_name]
    return _fingerprint(inner[0]) if len(inner) == 1 else None


def _fingerprint(code: types.CodeType) -> tuple:
    names = {_MANGLED.sub(r"\1", n) for n in (*code.co_names, *code.co_varnames, *code.co_freevars, *code.co_cellvars)}
    names.discard("__class__")  # the cell `super()` needs, made only inside a class body
    consts = tuple(_fingerprint(c) if isinstance(c, types.CodeType) else (type(c), repr(c)) for c in code.co_consts)
    lines = frozenset(line for _, _, line in code.co_lines() if line is not None)
    return code.co_name, frozenset(names), consts, lines


def lambda_as_def(node: ast.Lambda, name: str = "lambda") -> ast.FunctionDef:
    """`lambda args: expr` as `def name(args): return expr`, at the lambda's location."""
    ret = ast.copy_location(ast.Return(value=node.body), node.body)
    fields = dict(name=name, args=node.args, body=[ret], decorator_list=[], returns=None)
    if "type_params" in ast.FunctionDef._fields:
        fields["type_params"] = []
    return ast.copy_location(ast.FunctionDef(**fields), node)


def parse_function(fn) -> FunctionSource:
    """Parse `fn`'s source (a `def`, or a lambda made one). Fails with
    UnsupportedError when there is none.

    The source is read from `fn.__code__`, not `fn`: for a function a decorator
    wrapped (functools.wraps), `inspect` would give the wrapped function's."""
    name = getattr(fn, "__qualname__", repr(fn))
    if not isinstance(fn, types.FunctionType):
        raise UnsupportedError(
            f"cannot lower {name} ({type(fn).__name__}): irad lowers Python functions "
            "defined with `def` or `lambda`\n  hint: wrap the call in a `def` function"
        )
    found = _from_parsed_file(fn)
    if found is not None:
        return found
    code = fn.__code__
    try:
        lines, first_line = inspect.getsourcelines(code)
        filename = inspect.getsourcefile(code) or "<unknown>"
    except (OSError, TypeError) as exc:
        raise NoSourceError(
            f"cannot lower {name}: its Python source is not available ({exc})\n"
            "  hint: irad lowers functions from their source; define it in a file "
            "(not a REPL string or exec), or register a rule for it"
        ) from None
    if code.co_name == "<lambda>":
        return _parse_lambda(fn, filename)
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    indent = len(lines[0]) - len(lines[0].lstrip()) if lines else 0
    try:
        module = ast.parse(dedented)
    except SyntaxError as exc:
        raise UnsupportedError(
            f"{_code_location(fn) or f'{filename}:{first_line}:1: '}cannot parse the source "
            f"of {name} ({exc.msg})\n  hint: define the function with `def` at statement level"
        ) from None
    node = module.body[0] if module.body else None
    if isinstance(node, ast.FunctionDef) and node.name == code.co_name:
        check_unchanged(fn, node, filename, first_line - 1)
        return FunctionSource(fn, node, filename, first_line, indent)
    if not isinstance(node, ast.AsyncFunctionDef) or node.name != code.co_name:
        raise _changed(fn, filename)  # the lines at the code's first line are another statement now
    source = FunctionSource(fn, node, filename, first_line, indent)
    raise UnsupportedError(
        f"{source.location(node)}: {name} is an async function, which is not supported\n"
        "  hint: write it as a plain `def`"
    )


def _parse_lambda(fn, filename: str) -> FunctionSource:
    """A lambda's source: the lambda on its line of the file whose parameters
    match and, of several, the one at the columns its code object was compiled
    from (`co_positions`)."""
    code = fn.__code__
    name = fn.__qualname__
    try:
        tree = ast.parse("".join(linecache.getlines(filename)))
    except SyntaxError:
        tree = None
    params = list(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])
    found = [
        node for node in ast.walk(tree) if isinstance(node, ast.Lambda)
        and node.lineno == code.co_firstlineno
        and [a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs] == params
    ] if tree is not None else []
    if len(found) > 1:
        found = _by_positions(code, found)
    if len(found) != 1:
        if found:
            why = (f"{len(found)} lambdas with the parameters ({', '.join(params)}) on line "
                   f"{code.co_firstlineno}, and Python kept no column positions to tell them apart "
                   "(python -X no_debug_ranges or PYTHONNODEBUGRANGES)")
        else:
            why = "its source could not be found"
        raise UnsupportedError(
            f"{_code_location(fn)}cannot lower the lambda {name}: {why}\n"
            "  hint: write it as a `def`, or put each lambda on a line of its own"
        )
    check_unchanged(fn, found[0], filename)
    return FunctionSource(fn, lambda_as_def(found[0]), filename, 1, 0)


def _compiled_alike(node: ast.Lambda, code) -> bool:
    """Does the lambda `node`, compiled alone, give `code`'s instructions and constants?"""
    expression = ast.Expression(body=node)
    try:
        compiled = compile(ast.fix_missing_locations(expression), code.co_filename, "eval")
    except (SyntaxError, ValueError):
        return False
    inner = next((c for c in compiled.co_consts if isinstance(c, type(code))), None)
    return inner is not None and (inner.co_code, inner.co_consts, inner.co_names) == \
        (code.co_code, code.co_consts, code.co_names)


def _by_positions(code, lambdas: list[ast.Lambda]) -> list[ast.Lambda]:
    """Of lambdas on one line, those whose body holds every source position
    of `code`'s instructions; of several (a lambda inside another), the one
    whose body they span exactly. All of them when Python kept no columns."""
    spans = [(l1, c1, l2, c2) for l1, l2, c1, c2 in code.co_positions()
             if None not in (l1, l2, c1, c2) and (c1, c2) != (0, 0)]  # (0, 0): the code's entry
    if not spans:  # no columns: the lambdas whose code compiles to the same instructions
        same = [n for n in lambdas if _compiled_alike(n, code)]
        return same or lambdas
    first = min((l1, c1) for l1, c1, _, _ in spans)
    last = max((l2, c2) for _, _, l2, c2 in spans)

    def body(node: ast.Lambda) -> tuple[tuple[int, int], tuple[int, int]]:
        return (node.body.lineno, node.body.col_offset), (node.body.end_lineno, node.body.end_col_offset)

    inside = [n for n in lambdas if body(n)[0] <= first and last <= body(n)[1]]
    exact = [n for n in inside if body(n) == (first, last)]
    return exact if len(exact) == 1 else inside
