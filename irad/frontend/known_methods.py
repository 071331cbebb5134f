"""Methods of values known while lowering, run while lowering:
`k.endswith("W")`, `name.upper()`, `"{}_{}".format(a, b)` on a str a program
got from a dict's keys or a constant; and f-strings of such values
(`params[f"W{i}"]` in a loop over a tuple or a comprehension).

A program's strs (dict keys, modes) are known while lowering, as are their
methods' arguments, so the call is made then and its result is again known
while lowering, as Python computes it. Only methods of immutable values
returning immutable values are run (a str's split gives a list: refused).
"""

from __future__ import annotations

import ast
import types

from irad.frontend.arrays import known_value
from irad.frontend.values import Static

_OWNERS = (str, bytes, int, float, bool, tuple, frozenset)
_RESULTS = (str, bytes, int, float, bool, tuple, frozenset, type(None))


def known_method(obj) -> bool:
    """Is `obj` a method of an immutable value (a bound built-in method)?"""
    return isinstance(obj, types.BuiltinMethodType) and type(getattr(obj, "__self__", None)) in _OWNERS


def call_known_method(src, obj, args: list, kwargs: dict, node) -> Static | None:
    """The result of `obj(*args, **kwargs)`, known while lowering, when every
    argument is known then (else None: the caller refuses the call)."""
    if not all(isinstance(a, Static) for a in [*args, *kwargs.values()]):
        return None
    try:
        result = obj(*(a.obj for a in args), **{k: v.obj for k, v in kwargs.items()})
    except Exception as exc:  # as Python raises it, at the call
        raise src.error(node, f"{type(obj.__self__).__name__}.{obj.__name__} raised {type(exc).__name__}: {exc}") from None
    if not isinstance(result, _RESULTS):
        raise src.error(
            node, f"{type(obj.__self__).__name__}.{obj.__name__} returns a {type(result).__name__}, which irad "
            "does not keep as a value known while lowering",
            "compute it outside the program and pass the result as a tuple, or write its items as constants",
        )
    return Static(result)


def format_string(fl, node: ast.JoinedStr, message: bool = False) -> Static:
    """An f-string whose values are known while lowering, lowered by the
    FunctionLowering `fl`, as Python formats it (conversions `!r`, format specs
    `:.3f`, nested ones `:>{w}`). With `message` (a raise's or an assert's text,
    made while lowering), any value known then is formatted, and a part known
    only at run time keeps its source text, `{loss:.3f}`, where Python would
    show the value."""
    return Static(_formatted(fl, node, message)[0])


_CONVERSIONS = {ord("s"): str, ord("r"): repr, ord("a"): ascii}


def _formatted(fl, node: ast.JoinedStr, message: bool) -> tuple[str, bool]:
    """The f-string's text, and whether all of it was known (else its run-time parts are source text)."""
    parts, known_all = [], True
    for part in node.values:
        if isinstance(part, ast.Constant):
            parts.append(part.value)
            continue
        value = fl.expr(part.value)
        known, obj = known_value(value)
        if not message and (not known or not isinstance(obj, (str, int, float, bool, type(None)))):
            raise fl.src.error(
                node, f"an f-string formats values known while lowering (strs, ints), not run-time values "
                f"(`{ast.unparse(part.value)}` is {fl.kind_of(value)})",
                "print a run-time value as an argument of its own, `print(\"loss:\", loss)` (the Python "
                "backend prints it as str() does); for a name or a key, loop over a tuple of keys, or over "
                "range(n) with n known while lowering (a constant, a shape, len(...), a static argument), "
                "so the value is known",
            )
        spec, spec_known = _formatted(fl, part.format_spec, message) if part.format_spec is not None else ("", True)
        if known and spec_known:
            try:
                parts.append(format(_CONVERSIONS.get(part.conversion, lambda v: v)(obj), spec))
            except (TypeError, ValueError) as error:  # Python raises while making the string
                raise fl.src.error(node, f"formatting `{ast.unparse(part.value)}` in an f-string raises "
                                   f"{type(error).__name__}: {error}") from None
            continue
        known_all = False  # the part's source: `{s!r:>{w}}`
        conversion = "" if part.conversion == -1 else "!" + chr(part.conversion)
        parts.append("{" + ast.unparse(part.value) + conversion + (":" + spec if part.format_spec else "") + "}")
    return "".join(parts), known_all
