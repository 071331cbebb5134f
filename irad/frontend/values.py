"""What an expression lowers to: an SSA value, a tuple of values, or a Python
object known while lowering. Functions made inside a program (closures,
partials; irad/frontend/callables.py) and iterables (ranges, zip, enumerate,
reversed; irad/frontend/iteration.py) are values of their own kinds."""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from irad.ir.isa import isa


@dataclass(frozen=True)
class Static:
    """A Python object known at lowering time (a module, a function, a flag, ...).
    `origin` says where it lives when it was read from outside the function (a
    `globals.Global`): an array read from there becomes a hidden argument."""

    obj: object
    origin: object = field(default=None, compare=False)


@dataclass(frozen=True, eq=False)
class NoValue:
    """What a local variable holds where Python's would have a value irad does not
    give it (assigned on one path of a branch only, paths whose values irad cannot
    join, created inside an `scf.for` loop): reading it is the error, with why."""

    why: str  # "it is assigned on only one path of the branch at f.py:3:5"
    hint: str


Value = SSAValue | tuple | Static | object | None


def is_array(v) -> bool:
    """A numpy array computed at run time: an SSA value of tensor type."""
    return isa(v, SSAValue) and isa(v.type, TensorType)
