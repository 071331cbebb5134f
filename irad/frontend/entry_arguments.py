"""The entry function's arguments: a call's arguments bound to its parameters
(`bind_arguments`, Python's refusals at the caller's line) and flattened into
the leaves and the tree the module is specialised for (`flatten_arguments`).
"""

from __future__ import annotations

import inspect
import numbers
import re
import types
from collections.abc import Callable

import numpy as np
from xdsl.ir import Attribute

from irad.base import pytrees
from irad.base.errors import UnsupportedError
from irad.base.pytrees import Node, tuple_tree
from irad.frontend import numpy_scalars
from irad.frontend.callable_entries import needs_entry, parameter_names, underlying_function
from irad.frontend.callables import static_argument
from irad.frontend.library import describe_callable
from irad.frontend.source import call_site, def_location, name_of
from irad.frontend.transformations import Transformation
from irad.ir.types import refusal, type_of_value


def as_signature(signature: Node | tuple[Attribute, ...]) -> Node:
    """The tree of a call's arguments; IR types alone mean one leaf per argument."""
    return signature if isinstance(signature, Node) else tuple_tree(signature)


def bind_arguments(fn, args: tuple, kwargs: dict) -> tuple:
    """All arguments of a call to the entry function, positionally, defaults
    filled in: one per positional parameter of `fn` (of the function a
    transformation differentiates; a partial's remaining ones, a method's
    without `self`), then those its `*args` takes. A call Python would refuse
    is an error at the caller's line naming what is wrong."""
    target = fn
    while isinstance(target, Transformation):  # the function it differentiates
        target = target.f
    code = getattr(target, "__code__", None) if isinstance(target, types.FunctionType) else None
    if code is not None and not kwargs and len(args) == code.co_argcount and not code.co_kwonlyargcount \
            and not code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
        return tuple(args)
    name = getattr(target, "__qualname__", None) or name_of(target)
    try:
        if not (code is not None or needs_entry(target)):  # np.sin, math.exp, ...: lowered as called
            raise ValueError(target)
        signature = inspect.signature(target)
    except (TypeError, ValueError):  # no signature Python can give: lowering reports what it cannot handle
        if kwargs:
            raise _call_error(target, f"{name}() is given the keyword argument '{next(iter(kwargs))}'",
                              "pass its arguments by position") from None
        return tuple(args)
    takes_any = any(p.kind == p.VAR_KEYWORD for p in signature.parameters.values())
    unexpected = [k for k in kwargs if k not in signature.parameters and not takes_any]
    try:
        if unexpected:  # Python names it first, before a missing argument
            raise TypeError(f"got an unexpected keyword argument '{unexpected[0]}'")
        bound = signature.bind(*args, **kwargs)
    except TypeError as exc:
        missing = re.fullmatch(r"missing a required argument: '(\w+)'", str(exc))
        param = signature.parameters.get(missing[1]) if missing else None
        if param is not None and param.kind == param.KEYWORD_ONLY:  # a keyword cannot pass it here
            short = getattr(underlying_function(target), '__name__', 'f')
            hint = (f"pass it by keyword, {short}(..., {param.name}=...), or (irad.vjp, irad.jvp, irad.vmap) "
                    f"bind it first: functools.partial({short}, {param.name}=...)")
        else:
            hint = f"call it as {name}{_shown(signature)}"
        raise _call_error(target, f"{name}() {_why(exc, signature, args)}", hint) from None
    positional = []  # (value, given by the call) per positional parameter
    out = []
    for param in signature.parameters.values():
        if param.kind in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
            given = param.name in bound.arguments
            positional.append((bound.arguments[param.name] if given else param.default, given))
        elif param.kind == param.VAR_POSITIONAL:
            out = list(bound.arguments.get(param.name, ()))
        elif param.name in bound.arguments:  # a keyword-only argument, or one **kwargs takes
            key = param.name if param.kind == param.KEYWORD_ONLY else next(iter(bound.arguments[param.name]))
            raise _call_error(
                target, f"{name}() is given the keyword argument '{key}', which only a keyword can pass: "
                "irad passes a transformation's arguments by position",
                f"bind it first: functools.partial({getattr(underlying_function(target), '__name__', 'f')}, "
                f"{key}=...), or make it a positional parameter",
            )
    # the defaults after the last argument the call gives are arguments too while
    # they are float arrays; from a number, a function or an object on, the
    # callee takes its own, known while lowering, as JAX leaves an unpassed default
    # a Python value (`def loss(p, x, n_heads=2)`: n_heads may set a shape;
    # `alpha=0.9`: int(math.ceil((1 - alpha) * n)) may)
    last = max((i + 1 for i, (_, given) in enumerate(positional) if given), default=0)
    n = last
    while n < len(positional) and is_array_default(positional[n][0]):
        n += 1
    return (*(value for value, _ in positional[:n]), *out)


def is_data(value) -> bool:
    """A number, an array or a container of them: a default the entry takes as
    an argument; a keyword argument that is a run-time value (irad/keywords.py)."""
    try:
        pytrees.flatten(value, "", type_of_value)
    except pytrees.BadLeaf:
        return False
    return True


def is_array_default(value) -> bool:
    """Data with an array in it and no Python int or bool: a default the entry
    takes as a run-time argument (ints and bools set shapes, trip counts and
    branches; a float may compute one, as a Python value under JAX)."""
    if not is_data(value):
        return False
    leaves, _ = pytrees.flatten(value, "", type_of_value)
    return (not any(isinstance(leaf, (numbers.Integral, np.bool_)) for leaf in leaves)
            and any(isinstance(leaf, np.ndarray) for leaf in leaves))


def _call_error(fn, message: str, hint: str) -> UnsupportedError:
    """An error about a call of `fn` at the caller's line (the first frame outside irad)."""
    defined = def_location(underlying_function(fn) or fn)
    return UnsupportedError(
        f"{call_site()}{message}" + (f"\n  ({describe_callable(fn)} is defined at {defined[:-2]})" if defined else "")
        + f"\n  hint: {hint}"
    )


def _why(exc: TypeError, signature: inspect.Signature, args: tuple) -> str:
    """Python's words for a call `signature` refuses (inspect's, with counts)."""
    text = str(exc)
    if text == "too many positional arguments":
        takes = [p for p in signature.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        return f"takes {len(takes)} positional argument{'s' if len(takes) != 1 else ''} but {len(args)} were given"
    if text.startswith("missing a required argument: "):
        return "missing a required " + text[len("missing a required "):]
    return text


def _shown(signature: inspect.Signature) -> str:
    return str(signature.replace(return_annotation=inspect.Signature.empty))


def flatten_arguments(fn, args: tuple, where: Callable[[], str] | None = None,
                      static: frozenset[int] = frozenset()) -> tuple[list, Node]:
    """The leaves of example arguments (pytrees) and the tree of the call: what
    the function is specialised for. A value irad cannot take is an error
    naming the function, the argument and the path to the value, prefixed by
    `where()` (the caller's file:line). The arguments at the positions
    `static` are values known while lowering (callables.static_argument)."""
    leaves: list = []
    trees = []
    names = parameter_names(fn, len(args))
    for i, value in enumerate(args):
        if i in static:
            try:
                trees.append(static_argument(value))
            except TypeError:
                raise UnsupportedError(
                    f"{where() if where else ''}{describe_callable(fn)} cannot take argument {i} ('{names[i]}') "
                    f"as a static argument: it is {pytrees.describe_object(value)}, which is not hashable\n"
                    "  hint: pass a tuple for a list, a NamedTuple or frozen dataclass for a dict, or leave it "
                    "out of static_argnums and static_argnames"
                ) from None
            continue
        try:
            found, tree = pytrees.flatten(value, names[i], type_of_value)
        except pytrees.BadLeaf as bad:
            defined = def_location(fn)
            refused = refusal(bad.obj)  # a subclass or an int dtype: its own reason and rewrite
            raise UnsupportedError(
                f"{where() if where else ''}{describe_callable(fn)} cannot take argument {i} ('{names[i]}'): "
                + (f"{bad.path} is {refused[0]}" if refused else bad.describe())
                + (f"\n  {describe_callable(fn)} is defined at {defined[:-2]}" if defined else "")
                + f"\n  hint: {refused[1] if refused else 'irad takes ' + pytrees.ACCEPTED}"
            ) from None
        leaves += found
        trees.append(tree)
    kinds = tuple(numpy_scalars.of_argument(leaf) for leaf in leaves)
    return leaves, pytrees.Arguments(tuple, tuple(range(len(trees))), tuple(trees), kinds=kinds)


def signature_of(fn, args: tuple) -> Node:
    """The tree of example arguments, with an error naming a bad one."""
    return flatten_arguments(fn, args)[1]

