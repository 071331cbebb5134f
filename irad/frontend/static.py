"""Values known while lowering (modules, functions, shapes), shared by the
frontend's modules."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Static:
    """A Python object known at lowering time (a module, a function, a shape, ...)."""

    obj: object
