"""Callables other than functions handed to a transformation: `functools.partial`
objects, bound methods and objects with a Python `__call__`.

irad lowers Python functions from their source. For one of these callables it
makes a small entry function, `def loss(x, y): return partial(x, y)`, whose one
global is the callable (or, for a bound method, `method(self, x, y)` with
`self` and the method's function as globals). Its body calls the callable as a
call inside a program does (irad/frontend/calls.py), so a partial's arguments,
a method's `self` and an object's attributes are known while lowering, and the
arrays reached from them are hidden arguments read at each call, as global
arrays are (irad/frontend/globals.py). The entry's parameters are the
callable's positional parameters (`inspect.signature`: a partial's remaining
ones, a method's without `self`), so `argnums` counts them, as in JAX.
"""

from __future__ import annotations

import ast
import functools
import inspect
import types

from irad.frontend.keyword_calls import KeywordCall
from irad.frontend.numpy_table import library_entries
from irad.frontend.source import FunctionSource, name_of
from irad.frontend.transformations import Transformation

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def needs_entry(fn) -> bool:
    """A partial, a bound method, a KeywordCall or an object with a Python __call__ (not a class)."""
    if isinstance(fn, (functools.partial, types.MethodType, KeywordCall)):
        return True
    if isinstance(fn, (types.FunctionType, type, Transformation)):
        return False
    return isinstance(getattr(type(fn), "__call__", None), types.FunctionType)


def underlying_function(fn):
    """The Python function a callable runs in the end (for its name and `def`), or None."""
    for _ in range(32):  # partials of methods of objects ...: a few steps at most
        if isinstance(fn, types.FunctionType):
            return fn
        if isinstance(fn, functools.partial):
            fn = fn.func
        elif isinstance(fn, KeywordCall):
            fn = fn.fn
        elif isinstance(fn, types.MethodType):
            fn = fn.__func__
        elif isinstance(getattr(type(fn), "__call__", None), types.FunctionType):
            fn = type(fn).__call__
        else:
            return None
    return None


def positional_parameters(fn) -> list[inspect.Parameter] | None:
    """The parameters a call to `fn` binds positionally (a `*args` last), or
    None when Python does not say (a builtin without a signature)."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    return [p for p in parameters if p.kind in _POSITIONAL or p.kind == p.VAR_POSITIONAL]


def entry_function(fn, arity: int) -> tuple[types.FunctionType, FunctionSource]:
    """The entry function calling `fn` with `arity` arguments (see the
    module's docstring; the parameters after them take their defaults in `fn`)
    and its source."""
    params = [p for p in positional_parameters(fn) or [] if p.kind != p.VAR_POSITIONAL]
    names = [p.name for p in params[:arity]]
    taken = set(p.name for p in params)
    rest = "args"
    while rest in taken:
        rest += "_"
    written = names + ([f"*{rest}"] if arity > len(names) else [])
    taken.add(rest)

    def fresh(base: str) -> str:
        while base in taken:
            base += "_"
        taken.add(base)
        return base

    library = library_entries(fn)  # scipy.stats.norm.logcdf: its table entries registered first
    if isinstance(fn, KeywordCall):  # f(x, scale=scale): keyword-only arguments at the top level
        holder = fresh("function")
        namespace = {holder: fn.fn}
        call = fn.call_text(holder, written)
        name = getattr(fn.fn, "__qualname__", name_of(fn.fn))
    elif isinstance(fn, types.MethodType) and library is None:  # self known while lowering, its arrays read at each call
        owner, method = fresh("self"), fresh("method")
        namespace = {owner: fn.__self__, method: fn.__func__}
        call = f"{method}({', '.join([owner, *written])})"
        name = getattr(fn, "__qualname__", fn.__func__.__name__)
    else:
        holder = fresh("partial" if isinstance(fn, functools.partial) else "self")
        namespace = {holder: fn}
        call = f"{holder}({', '.join(written)})"
        inner = underlying_function(fn)
        inner_name = inner.__name__ if inner is not None else type(fn).__name__
        name = f"{inner_name}.partial" if isinstance(fn, functools.partial) \
            else getattr(fn, "__qualname__", type(fn).__qualname__)  # a library's method, or an object
    text = f"def entry({', '.join(written)}):\n    return {call}\n"
    tree = ast.parse(text).body[0]
    inner = underlying_function(fn)
    code = getattr(inner, "__code__", None)
    filename, line = (code.co_filename, code.co_firstlineno) if code is not None else ("<irad entry>", 1)
    for node in ast.walk(tree):  # errors about the entry name the `def` of the function it calls
        if "lineno" in node._attributes:
            node.lineno = node.end_lineno = 1
            node.col_offset = node.end_col_offset = 0
    exec(compile(ast.Module(body=[tree], type_ignores=[]), filename, "exec"), namespace)
    entry = namespace["entry"]
    entry.__name__ = entry.__qualname__ = name
    entry.__module__ = getattr(inner, "__module__", None)
    tree.name = name.replace(".", "_")
    return entry, FunctionSource(entry, tree, filename, line, 0)


__all__ = ["entry_function", "needs_entry", "positional_parameters", "underlying_function"]


def parameter_names(fn, n: int) -> list[str]:
    """The names of a function's first n parameters (of the function a
    derivative object differentiates; a partial's remaining ones, a method's
    without `self`), `arg<i>` where there is none."""
    while isinstance(fn, Transformation):  # the function it differentiates
        fn = fn.f
    code = getattr(fn, "__code__", None) if isinstance(fn, types.FunctionType) else None
    if code is not None:
        names = list(code.co_varnames[: code.co_argcount])
    else:
        params = positional_parameters(fn) or []
        names = [p.name for p in params if p.kind != p.VAR_POSITIONAL]
    return [names[i] if i < len(names) else f"arg{i}" for i in range(n)]
