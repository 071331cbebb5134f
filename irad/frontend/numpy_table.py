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
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from irad.rules.keys import target_key

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
    module = getattr(fn, "__module__", None) or "numpy"
    return f"{module}.{getattr(fn, '__name__', repr(fn))}"


def numpy_functions() -> list[str]:
    """The rule-table names (`numpy.var`, ...) of the numpy functions irad lowers."""
    return sorted({target_key(fn) for fn in NUMPY if not isinstance(fn, str)})
