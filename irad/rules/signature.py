"""Rule signatures: which argument types an entry accepts.

Users write `types=` in Python terms (float, int, bool, None for any, an example
numpy array, or an IR type); `Signature.of` turns that into sets of IR types,
and the table matches call sites' IR argument types against them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import Float32Type, Float64Type, IntegerType
from xdsl.ir import Attribute

from irad.ir.types import type_of_value

# Python types name sets of IR types in signatures.
_PYTHON_TYPES: dict[type, frozenset[Attribute]] = {
    float: frozenset({Float64Type(), Float32Type()}),
    int: frozenset({IntegerType(64)}),
    bool: frozenset({IntegerType(1)}),
}


@dataclass(frozen=True)
class Signature:
    """Argument constraints: None accepts anything, else a set of IR types.

    `params is None` accepts every argument list.
    """

    params: tuple[frozenset[Attribute] | None, ...] | None = None

    @staticmethod
    def of(types: Sequence | None) -> Signature:
        """From `types=` as users write it: per argument None, a Python type
        (float, int, bool), an IR type, or a tuple of those."""
        if types is None:
            return Signature()
        if isinstance(types, (str, bytes)) or not isinstance(types, Sequence):
            raise TypeError(f"types must be a tuple with one entry per argument, got {types!r}")
        return Signature(tuple(_constraint(t) for t in types))

    def matches(self, arg_types: Sequence[Attribute]) -> bool:
        if self.params is None:
            return True
        return len(self.params) == len(arg_types) and all(
            c is None or t in c for c, t in zip(self.params, arg_types)
        )

    def covered_by(self, other: Signature) -> bool:
        """Every argument list this accepts, `other` accepts too."""
        if other.params is None:
            return True
        if self.params is None or len(self.params) != len(other.params):
            return False
        return all(o is None or (s is not None and s <= o) for s, o in zip(self.params, other.params))

    def describe(self) -> str:
        if self.params is None:
            return "any arguments"
        return "(" + ", ".join(_describe_constraint(c) for c in self.params) + ")"


def _constraint(t) -> frozenset[Attribute] | None:
    if t is None:
        return None
    if isinstance(t, tuple):
        parts = [_constraint(x) for x in t]
        return None if any(p is None for p in parts) else frozenset().union(*parts)
    if isinstance(t, type) and t in _PYTHON_TYPES:
        return _PYTHON_TYPES[t]
    if isinstance(t, Attribute):
        return frozenset({t})
    if isinstance(t, np.ndarray):  # an example array names its dtype and shape
        if type_of_value(t) is not None:
            return frozenset({type_of_value(t)})
    raise TypeError(
        f"cannot use {t!r} in a rule signature: use float, int, bool, None (any), "
        "an example numpy array, or an IR type such as xdsl's f64"
    )


def _describe_constraint(c: frozenset[Attribute] | None) -> str:
    if c is None:
        return "any"
    for name, types in _PYTHON_TYPES.items():
        if c == types:
            return name.__name__
    return " | ".join(sorted(map(str, c)))
