"""`print(...)` in IR: a call to a declaration that says what to print.

Each `print` statement of a program becomes

    func.func private @print(f64, tensor<3xf64>) attributes {irad.print = "<template>"}
    func.call @print(%x, %y) : (f64, tensor<3xf64>) -> ()

The template (JSON in a builtin string, so upstream MLIR reads the module) holds
the text known while lowering, where each operand goes, how it is shown (str or
repr, as print shows a tuple's items), its Python type, and the statement's
file:line:col. The call has no results, so the AD passes leave it in the primal
code (it runs once per run of the function, not in the pullback) and DCE keeps
it (a call may have effects). The Python backend prints it (`render`); a backend
that cannot print drops it (`print_calls` finds them).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import StringAttr, TensorType
from xdsl.ir import Attribute, Operation

from irad.ir.types import is_bool, is_float

PRINT = "irad.print"


def kind_of(t: Attribute) -> str:
    """How a value of type `t` is shown: as the Python (or numpy) value it is."""
    if isinstance(t, TensorType):
        return "array"
    if is_bool(t):
        return "bool"
    if is_float(t):
        return "float" if t.bitwidth == 64 else "float32"
    return "int"


def template(parts: Sequence, kinds: Sequence[str], where: str) -> str:
    """`parts`: strings (text) and (operand index, use_repr) pairs."""
    items = [p if isinstance(p, str) else {"value": p[0], "repr": p[1]} for p in parts]
    return json.dumps({"at": where, "parts": items, "kinds": list(kinds)})


def declaration(name: str, arg_types: Sequence[Attribute], text: str) -> func.FuncOp:
    op = func.FuncOp.external(name, list(arg_types), [])
    op.attributes[PRINT] = StringAttr(text)
    return op


def is_print(op: Operation) -> bool:
    return isinstance(op, func.FuncOp) and PRINT in op.attributes


def where(op: func.FuncOp) -> str:
    """file:line:col of the print statement a declaration stands for."""
    return json.loads(op.attributes[PRINT].data)["at"]


_CONVERT = {"float": float, "float32": np.float32, "int": int, "bool": bool, "array": np.asarray}


def render(text: str, values: Sequence) -> str:
    """What Python's print writes for the statement, given its operands' values."""
    spec = json.loads(text)
    kinds = spec["kinds"]
    out = []
    for part in spec["parts"]:
        if isinstance(part, str):
            out.append(part)
            continue
        value = _CONVERT[kinds[part["value"]]](values[part["value"]])
        out.append(repr(value) if part["repr"] else str(value))
    return "".join(out)


def printer(text: str):
    """A Python callable printing the statement (for the Python backend)."""

    def emit(*values) -> tuple:
        print(render(text, values), end="", flush=True)
        return ()

    return emit


def print_calls(module: Operation) -> list[tuple[func.CallOp, str]]:
    """The calls to print declarations in `module`, with their source locations."""
    declared = {op.sym_name.data: where(op) for op in module.walk() if is_print(op)}
    return [
        (op, declared[op.callee.root_reference.data])
        for op in module.walk()
        if isinstance(op, func.CallOp) and op.callee.root_reference.data in declared
    ]


__all__ = ["PRINT", "declaration", "is_print", "print_calls", "printer", "render", "template"]
