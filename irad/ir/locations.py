"""Where an op sits, for error messages: its Python source position and function."""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import FileLineColLoc
from xdsl.ir import Operation

from irad.errors import DifferentiationError


def location(op: Operation) -> str:
    """`file:line:col: @function: op.name`; the source position when the op has one."""
    fn = op.parent_op()
    while fn is not None and not isinstance(fn, func.FuncOp):
        fn = fn.parent_op()
    where = f"@{fn.sym_name.data}" if fn is not None else "<module>"
    source = source_location(op)
    return f"{source}: {where}: {op.name}" if source else f"{where}: {op.name}"


def find_function(functions: dict[str, func.FuncOp], name: str, use: Operation | None = None) -> func.FuncOp:
    """@name among `functions`, or an error located at the op that uses it."""
    fn = functions.get(name)
    if fn is None:
        where = f"{location(use)}: " if use is not None else ""
        raise DifferentiationError(
            f"{where}no function @{name} in the module\n"
            f"  hint: define @{name} (a declaration, if a rule covers it), or correct the name"
        )
    return fn


def source_location(op: Operation) -> str:
    """`file:line:col` of the Python source an op was lowered from, or ""."""
    loc = op.location
    if isinstance(loc, FileLineColLoc):
        return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
    return ""
