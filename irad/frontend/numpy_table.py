"""The table of numpy functions irad lowers: one entry per function.

An entry maps a numpy callable (np.var, np.float64, ...) to its handler and
its parameter names: "?" marks an optional one, "?axis=-1" one with a default
other than None, "*arrays" one that takes the remaining positional arguments
(as a tuple; the parameters after it are keyword-only). A handler gets the ArrayLowering of the function being
lowered, the call's AST node and one value per parameter (a Static of the
default where the call omits it), and emits the
function's IR with the ops of irad/ir/tensor.py, whose derivatives are the
op registry's (passes/derivatives/). The handlers live with their family:
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
from collections.abc import Callable
from dataclasses import dataclass

from irad.rules.keys import library_name, target_key

Handler = Callable[..., object]
NUMPY: dict[object, tuple[Handler, tuple[str, ...]]] = {}


def numpy_function(*fns, params: tuple[str, ...]):
    """Register the decorated handler for each of `fns` (aliases share one handler)."""

    def register(handler: Handler) -> Handler:
        for fn in dict.fromkeys(fns):  # some names are one object (np.mod is np.remainder)
            if fn in NUMPY:
                raise ValueError(f"two handlers for {numpy_name(fn)}")
            NUMPY[fn] = (handler, params)
        return handler

    return register


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
    keys = (target_key(fn) for fn in NUMPY if not isinstance(fn, str))
    return sorted({key for key in keys if key.split(".")[0] == library})
