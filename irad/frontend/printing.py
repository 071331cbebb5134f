"""`print(...)` in a program: its text known while lowering, its numbers at run time.

The statement becomes a call to a declaration carrying a template
(irad/ir/printing.py): strings, None, shapes and other values known while
lowering are text in the template; numbers and arrays are operands, shown as
Python would show them. The Python backend prints; the native backend drops the
call with one warning naming the line (irad/backends/native/compile.py).
"""

from __future__ import annotations

import ast

from xdsl.dialects import func
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr
from xdsl.ir import SSAValue

from irad.frontend.values import Static
from irad.ir import printing


def lower_print(fl, args: list, kwargs: dict, node: ast.AST) -> None:
    def text(name: str, default: str) -> str:
        value = kwargs.pop(name, Static(None))
        if not isinstance(value, Static) or not isinstance(value.obj, (str, type(None))):
            raise fl.src.error(node, f"print's {name}= must be a string known while lowering")
        return default if value.obj is None else value.obj

    sep, end = text("sep", " "), text("end", "\n")
    for name in ("file", "flush"):
        value = kwargs.pop(name, Static(None))
        if name == "file" and not (isinstance(value, Static) and value.obj is None):
            raise fl.src.error(node, "print(file=...) is not supported", "print to standard output")
    if kwargs:
        raise fl.src.error(node, f"print() got an unexpected keyword argument '{next(iter(kwargs))}'")
    parts: list = []
    operands: list[SSAValue] = []

    def add(value, use_repr: bool) -> None:
        if isinstance(value, SSAValue):
            operands.append(value)
            parts.append((len(operands) - 1, use_repr))
        elif isinstance(value, tuple):  # print shows a tuple's items as their repr
            parts.append("(")
            for i, item in enumerate(value):
                if i:
                    parts.append(", ")
                add(item, True)
            parts.append(",)" if len(value) == 1 else ")")
        elif isinstance(value, Static):
            parts.append(repr(value.obj) if use_repr else str(value.obj))
        else:
            raise fl.src.error(node, f"print of {fl.kind_of(value)} is not supported",
                               "print numbers, arrays, strings and tuples of them")

    for i, value in enumerate(args):
        if i:
            parts.append(sep)
        add(value, False)
    parts.append(end)
    where = fl.src.location(node)
    kinds = [printing.kind_of(v.type) for v in operands]
    name = fl.owner.print_declaration([v.type for v in operands], printing.template(parts, kinds, where))
    call = func.CallOp(name, operands, [])
    line, col = fl.src.line_col(node)
    call.location = FileLineColLoc(StringAttr(fl.src.filename), IntAttr(line), IntAttr(col))
    fl.em.op(call)
    return None
