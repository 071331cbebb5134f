"""Where an op sits, for error messages: its Python source position and function."""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import FileLineColLoc
from xdsl.ir import Operation

from irad.base.errors import DifferentiationError
from irad.ir.metadata import display_name


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


def recursion_message(fn: func.FuncOp) -> str:
    """What both backends say when calls of `fn` (a generated function: of its
    primal) nest deeper than the stack allows, located at the primal's `def`."""
    where = source_location(fn)
    return (
        f"{where + ': ' if where else ''}maximum recursion depth exceeded in {display_name(fn)}: its calls "
        "nest deeper than the stack allows\n  hint: check that the recursion reaches its base case "
        "for these arguments, or write it as a loop"
    )
