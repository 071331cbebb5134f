"""Rule-table keys of Python callables: `module.qualname`, e.g. "math.sin"."""

from __future__ import annotations

import math

from irad import numerics

# Library functions irad implements in its own Python subset (lowered from source).
IMPLEMENTED_IN_PYTHON: dict[object, object] = {
    math.hypot: numerics.hypot,
    math.lgamma: numerics.lgamma,
    math.gamma: numerics.gamma,
}


def target_key(obj: object) -> str:
    """The rule-table name of a callable: `module.qualname`, e.g. "math.sin".

    A library function irad implements in Python is named after that
    implementation, which is what the frontend calls. Strings name IR-level
    targets (a function symbol) as they are.
    """
    if isinstance(obj, str):
        return obj
    obj = IMPLEMENTED_IN_PYTHON.get(obj, obj)
    module = getattr(obj, "__module__", None) or "builtins"
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or repr(obj)
    return f"{module}.{name}"
