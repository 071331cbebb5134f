"""Names in IR: fresh symbol names, call renaming, and SSA value names."""

from __future__ import annotations

import re

from collections.abc import Container, Mapping

from xdsl.dialects import func
from xdsl.dialects.builtin import SymbolRefAttr
from xdsl.ir import Operation


_NUMBERED = re.compile(r"(_\d+)+$")


_INVALID = re.compile(r"[^A-Za-z0-9_$.-]+")


def value_name(name: str) -> str:
    """A name hint for an SSA value named after a Python variable.

    xDSL's printer numbers repeated hints `w`, `w_1`, `w_2`, and strips one
    `_<n>` from a hint, so a variable `w_2_4` (hint `w_2`) would print as a
    second `%w_2`: invalid IR. All trailing `_<n>` go, so hints never look
    numbered and the printer's numbering keeps names unique. An expression's
    text (`p["W"]`, a nested assignment's target) keeps its letters and digits."""
    name = _INVALID.sub("_", name).strip("_") or "v"
    if name[0].isdigit():
        name = "v" + name
    return _NUMBERED.sub("", name) or name


def functions_by_name(module: Operation) -> dict[str, func.FuncOp]:
    """The func.func ops directly in `module`, by symbol name."""
    return {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}


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
