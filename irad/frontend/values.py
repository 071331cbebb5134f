"""What an expression lowers to: an SSA value, a tuple of values, or a Python
object known while lowering. Functions made inside a program (closures,
partials; irad/frontend/callables.py) and iterables (ranges, zip, enumerate,
reversed; irad/frontend/iteration.py) are values of their own kinds."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import SSAValue


@dataclass(frozen=True)
class Static:
    """A Python object known at lowering time (a module, a function, a flag, ...)."""

    obj: object


Value = SSAValue | tuple | Static | object | None
