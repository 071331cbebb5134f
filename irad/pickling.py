"""Pickling a transformation by what it is (irad/api.py's `TransformationFunction`
and `Pullback` reduce through here).

A module-level function pickles by reference and the receiver imports its
module. A function of a script's `__main__`, a lambda or a nested def may
travel by value instead (cloudpickle, which Dask and Ray use), and then its
code arrives without its source file (cloudpickle names it
`<dynamic-code>`), which irad lowers from. So the source of such functions
travels beside them: their file's lines, and each function's file by its
name and first line. The receiver gives the functions' code back its file
name and puts the lines in `linecache`, where irad's frontend reads them.

Compiled code is cached per function object, and a function that travels by
value arrives as a new object each time (each task of a `client.map`). So
such a function also carries who sent it (this process's token and the
function's id, the function kept alive here so that the id stays its own),
and the receiver keeps the first arrival of each: later ones find its
compiled code, with their globals (as they were when sent) copied into it.
"""

from __future__ import annotations

import linecache
import sys
import types
import uuid
from collections.abc import Callable

from irad.base.errors import UnsupportedError
from irad.rules import default_table
from irad.rules.keys import target_key

# A function's file, by the code's name and first line (both survive cloudpickle);
# the files' lines; the rule-table key of those with rules here; and the rules
# those files register for other functions (target, origin)
Sources = tuple[dict[tuple[str, int], str], dict[str, list[str]], dict[tuple[str, int], str], tuple]
_NO_SOURCES: Sources = ({}, {}, {}, ())
_TOKEN = uuid.uuid4().hex  # this process, as a sender
_SENT: dict[int, Callable] = {}  # the functions sent by value, by id: their ids stay theirs
_ARRIVED: dict[tuple[str, int], types.FunctionType] = {}  # (sender's token, id) -> the first arrival


def _may_travel_by_value(fn: types.FunctionType) -> bool:
    """Not found by its module and name in another process (cloudpickle's test)."""
    module = sys.modules.get(fn.__module__ or "")
    if module is None or fn.__module__ in ("__main__", "__mp_main__") or "<" in fn.__qualname__:
        return True
    return getattr(module, fn.__qualname__, None) is not fn


def _names(code: types.CodeType):
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _names(const)


def _reached(f) -> list[types.FunctionType]:
    """The Python functions `f` reaches through its globals and closure."""
    todo, seen = [f], {}
    while todo:
        fn = todo.pop()
        if not isinstance(fn, types.FunctionType) or id(fn) in seen:
            continue
        seen[id(fn)] = fn
        todo.extend(fn.__globals__.get(name) for name in _names(fn.__code__))
        todo.extend(cell.cell_contents for cell in fn.__closure__ or () if _filled(cell))
    return list(seen.values())


def _filled(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def sources(f: Callable) -> Sources:
    """The source of the functions `f` reaches that may travel by value, and
    which of them have rules here."""
    where, lines, ruled = {}, {}, {}
    table = default_table()
    for fn in _reached(f):
        filename = fn.__code__.co_filename
        if not _may_travel_by_value(fn) or filename.startswith("<"):
            continue
        text = linecache.getlines(filename, fn.__globals__)
        if text:
            lines[filename] = text
            where[_code_key(fn)] = filename
        key = target_key(fn)
        if table.has_entries(key):
            ruled[_code_key(fn)] = key
    if not (where or ruled):
        return _NO_SOURCES
    theirs = set(ruled.values())
    elsewhere = tuple((r.target, r.origin) for r in table.rules()
                      if r.origin.rsplit(":", 1)[0] in lines and r.target not in theirs)
    return where, lines, ruled, elsewhere


def _code_key(fn: types.FunctionType) -> tuple[str, int]:
    return fn.__code__.co_name, fn.__code__.co_firstlineno


def _located(code: types.CodeType, filename: str) -> types.CodeType:
    consts = tuple(_located(c, filename) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


def relocate(f: Callable, shipped: Sources) -> None:
    """Give the functions `f` reaches that arrived without their file their
    file name again, and that file's lines to linecache. A rule the sender
    has for one of them, and this process has not (it was registered in a
    script's main module, say), is an error: without it the gradient would
    silently differ."""
    where, lines, ruled, elsewhere = shipped
    if not (where or ruled):
        return
    table = default_table()
    by_value = False
    for fn in _reached(f):
        code = fn.__code__
        if not code.co_filename.startswith("<"):
            continue  # arrived by reference: its module's import registered its rules
        by_value = True
        key = ruled.get(_code_key(fn))
        if key is not None and not table.has_entries(key):
            raise UnsupportedError(
                f"{where.get(_code_key(fn), '<unknown>')}:{code.co_firstlineno}: {key} has a rule in the process "
                "that sent it, which does not travel with a function sent by value (cloudpickle: Dask, Ray)\n"
                f"  hint: define {code.co_name} and its rule in a module the workers can import; "
                "the rule then registers with that import"
            )
        filename = where.get(_code_key(fn))
        if filename is None:
            continue
        fn.__code__ = _located(code, filename)
        if filename not in linecache.cache or linecache.cache[filename][2] != lines[filename]:
            # mtime None: linecache.checkcache keeps the entry (the file may not exist here)
            linecache.cache[filename] = (sum(map(len, lines[filename])), None, lines[filename], filename)
    for target, origin in elsewhere if by_value else ():
        if origin not in {r.origin for r in table.rules(target)}:
            raise UnsupportedError(
                f"{origin}: the rule for {target} registered there, beside functions sent by value "
                "(cloudpickle: Dask, Ray), is not registered in this process\n"
                "  hint: register it in a module the workers import (the module of the functions it is for)"
            )


def sent(f: Callable) -> tuple[str, int] | None:
    """Who sends `f`, when it may travel by value."""
    if not (isinstance(f, types.FunctionType) and _may_travel_by_value(f)):
        return None
    _SENT[id(f)] = f
    return _TOKEN, id(f)


def arrived(f: Callable, sender: tuple[str, int] | None) -> Callable:
    """The function to use for `f`, sent by `sender`: the first arrival of
    the same function, its globals updated, if it came by value before."""
    if sender is None or not isinstance(f, types.FunctionType):
        return f
    if sender[0] == _TOKEN:  # back where it was sent from (Dask's client may load what it pickled)
        return _SENT.get(sender[1], f)
    first = _ARRIVED.setdefault(sender, f)
    if first is not f and first.__globals__ is not f.__globals__:
        first.__globals__.update(f.__globals__)
    return first


def remade(make: Callable, args: tuple, keywords: dict, shipped: Sources = _NO_SOURCES,
           sender: tuple[str, int] | None = None):
    """A pickled transformation, made again by its constructor."""
    relocate(args[0], shipped)
    return make(arrived(args[0], sender), *args[1:], **keywords)


def reduced(make: Callable, args: tuple, keywords: dict) -> tuple:
    """`__reduce__`'s value for the object `make(*args, **keywords)` makes,
    `args[0]` the function."""
    return remade, (make, args, keywords, sources(args[0]), sent(args[0]))


__all__ = ["Sources", "arrived", "reduced", "relocate", "remade", "sent", "sources"]
