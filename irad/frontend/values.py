"""What an expression lowers to: an SSA value, a tuple of them, or a Python
object known while lowering."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import SSAValue


@dataclass(frozen=True)
class Static:
    """A Python object known at lowering time (a module, a function, a flag, ...)."""

    obj: object


Value = SSAValue | tuple | Static | None
