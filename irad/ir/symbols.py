"""Moving functions between modules: fresh symbol names and call renaming."""

from __future__ import annotations

from collections.abc import Container, Mapping

from xdsl.dialects import func
from xdsl.dialects.builtin import SymbolRefAttr
from xdsl.ir import Operation


def fresh_symbol(base: str, taken: Container[str]) -> str:
    """`base`, or `base_1`, `base_2`, ... : the first name not in `taken`."""
    name, n = base, 0
    while name in taken:
        n += 1
        name = f"{base}_{n}"
    return name


def rename_callees(op: Operation, symbols: Mapping[str, str]) -> None:
    """Point every func.call inside `op` (and `op` itself) at its new name."""
    for inner in op.walk():
        if isinstance(inner, func.CallOp):
            new = symbols.get(inner.callee.root_reference.data)
            if new is not None:
                inner.properties["callee"] = SymbolRefAttr(new)
