"""The table of numpy functions irad lowers: one entry per function.

An entry maps a numpy callable (np.var, np.float64, ...) to its handler and
its parameter names: "?" marks an optional one, "?axis=-1" one with a default
other than None, "*arrays" one that takes the remaining positional arguments
(as a tuple; the parameters after it are keyword-only). A handler gets the ArrayLowering of the function being
lowered, the call's AST node and one value per parameter (a Static of the
default where the call omits it), and emits the
function's IR with the ops of irad/ir/tensor.py, whose derivatives are the
op registry's (passes/ad/derivatives/). The handlers live with their family:
arrays.py (arithmetic, reductions, creation, the first shape functions),
numpy_elementwise.py, numpy_statistics.py and numpy_shapes.py.

Each entry is also a rule-table target, `numpy.<name>` (irad/rules/keys.py):
`@irad.rrule(np.var)` replaces its derivative, `irad.opt_out` and
`irad.non_differentiable` apply to it like to any function, and
`numpy_functions()` lists them all. docs/arrays.md lists the same names; a test
checks the two agree.

Functions of other libraries that programs call like numpy's (scipy.special,
scipy.stats.norm) are entries too, registered with the same decorator by
modules that import the library. Those modules are loaded on demand: the first
time the frontend meets a function of the library (`library_entries`), so that
`import irad` does not import scipy. Every callable of such a library is
looked up here, and one without an entry is refused by its public name.
"""

from __future__ import annotations

import ast
import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from xdsl.dialects import func

from irad.rules.keys import IMPLEMENTED_IN_PYTHON, library_name, target_key

Handler = Callable[..., object]
_ENTRIES: dict[object, tuple[Handler, tuple[str, ...]]] = {}
# read only: every entry comes in through numpy_function, which refuses a second one
NUMPY: Mapping[object, tuple[Handler, tuple[str, ...]]] = MappingProxyType(_ENTRIES)


def numpy_function(*fns, params: tuple[str, ...]):
    """Register the decorated handler for each of `fns` (aliases share one handler);
    a handler made by a function registers as `numpy_function(np.sum, params=...)(handler)`."""

    def register(handler: Handler) -> Handler:
        for fn in dict.fromkeys(fns):  # some names are one object (np.mod is np.remainder)
            if fn in _ENTRIES:
                raise ValueError(f"two handlers for {numpy_name(fn)}")
            _ENTRIES[fn] = (handler, params)
        return handler

    return register


def call_library(al, fn, args: list, node):
    """An entry's call to a library function written in irad's subset (irad/special.py,
    irad/numerics.py), lowered from its source as a function of its own, so the
    rule table meets the call."""
    if node is not None:  # located at the program's call
        return al.fl.calls.call(fn, list(args), node)
    callee = al.fl.owner.function(fn, tuple(v.type for v in args))  # in a rule-table wrapper
    return al.em.results(func.CallOp(callee.sym_name.data, list(args), callee.function_type.outputs.data))[0]


@dataclass(frozen=True)
class Parameter:
    name: str
    required: bool
    default: object = None
    variadic: bool = False


def parameters(params: tuple[str, ...]) -> list[Parameter]:
    """The parameters an entry's names spell: "x", "?axis", "?axis=-1", "*arrays"."""
    out = []
    for p in params:
        if p.startswith("*"):
            out.append(Parameter(p[1:], False, (), variadic=True))
            continue
        name, _, default = p.lstrip("?").partition("=")
        out.append(Parameter(name, not p.startswith("?"), ast.literal_eval(default) if default else None))
    return out


def numpy_name(fn) -> str:
    if isinstance(fn, str):
        return fn
    public = library_name(fn)  # scipy.special.expit, not numpy.expit
    if public is not None:
        return public
    module = getattr(fn, "__module__", None) or "numpy"
    return f"{module}.{getattr(fn, '__name__', repr(fn))}"


# public module ("scipy.special") -> the function that registers its entries,
# until it has run
_ON_DEMAND: dict[str, Callable[[], None]] = {}


def on_demand(module: str, register: Callable[[], None]) -> None:
    """Have `register()` add the entries of `module`'s functions, the first time
    the frontend meets one of them."""
    _ON_DEMAND[module] = register


def load(module: str) -> None:
    """Register `module`'s entries now, if they are registered on demand and not yet."""
    register = _ON_DEMAND.pop(module, None)
    if register is not None:
        register()


def library_entries(fn) -> str | None:
    """The public name of `fn` if it belongs to a library whose every callable is
    looked up in the table (scipy), with the entries of its module registered;
    None for other callables."""
    public = library_name(fn)
    if public is not None:
        for module in [m for m in _ON_DEMAND if public.startswith(m + ".")]:
            load(module)
    return public


def numpy_functions(library: str = "numpy") -> list[str]:
    """The rule-table names (`numpy.var`, ...) of the functions of `library`
    ("numpy", or "scipy": `scipy.special.expit`, ...) the table holds."""
    for module in [m for m in _ON_DEMAND if m.split(".")[0] == library]:
        load(module)
    keys = [target_key(fn) for fn in NUMPY if not isinstance(fn, str)]
    keys += [numpy_name(fn) for fn in IMPLEMENTED_IN_PYTHON]  # np.cov: irad/numpy_python.py
    return sorted({key for key in keys if key.split(".")[0] == library})


# numpy's methods that have no numpy function (their signatures, as numpy documents them)
# (parameter names, the array first; numpy's defaults)
_METHOD_PARAMETERS = {
    "ndarray.astype": (("x", "dtype", "order", "casting", "subok", "copy"),
                       {"order": "K", "casting": "unsafe", "subok": True, "copy": True}),
    "ndarray.flatten": (("a", "order"), {"order": "C"}),
}
_NO_DEFAULT = inspect.Parameter.empty


@functools.cache
def numpy_signature(fn) -> NumpySignature | None:
    """numpy's own parameters of `fn` (None where Python cannot tell them): what
    a call may pass, for the messages about what irad does not take."""
    if isinstance(fn, str):
        if fn not in _METHOD_PARAMETERS:
            return None
        names, defaults = _METHOD_PARAMETERS[fn]
        return NumpySignature(names, names, defaults, False)
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    positional = tuple(p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    named = tuple(p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
    defaults = {p.name: p.default for p in params if p.default is not _NO_DEFAULT and _plain(p.default)}
    variadic = any(p.kind == p.VAR_POSITIONAL for p in params)
    return NumpySignature(positional, named, defaults, variadic)


def _plain(value) -> bool:
    """A default a call can spell (None, a number, a str), not numpy's <no value> marker."""
    return value is None or isinstance(value, (bool, int, float, str))


@dataclass(frozen=True)
class NumpySignature:
    positional: tuple[str, ...]  # the parameters a call may pass by position, in order
    named: tuple[str, ...]  # those it may pass by keyword
    defaults: dict  # name -> numpy's default, where it is a plain value
    variadic: bool  # it takes *args

    def is_default(self, name: str, value) -> bool:
        """Is `value` (known while lowering) numpy's default for `name`? Then
        passing it changes nothing, and irad can take it without supporting it."""
        if name not in self.defaults:
            return False
        default = self.defaults[name]
        return type(value) is type(default) and value == default if default is not None else value is None
