"""Declarations of library primitives (irad/linalg.py): functions irad calls
rather than lowers.

A call to a primitive is a `func.call` to a private declaration whose result
types the primitive's shape function gives, and whose `irad.python` attribute
names the Python function: the Python backend runs it, the native backend
implements it (irad/backends/native/linalg.py). The rule table holds its
derivatives under its name (`irad.linalg.solve`).
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import StringAttr, TensorType
from xdsl.ir import Attribute

from irad.base.errors import UnsupportedError
from irad.frontend.library import describe_callable, python_reference
from irad.ir.types import I1, describe, is_float
from irad.linalg import BOOL, FLOAT


def declaration(fn, name: str, arg_types: tuple[Attribute, ...]) -> func.FuncOp:
    elements = {t.element_type for t in arg_types if isinstance(t, TensorType)}
    if len(elements) != 1 or not all(isinstance(t, TensorType) for t in arg_types) or not is_float(
        next(iter(elements))
    ):
        shown = ", ".join(describe(t) for t in arg_types)
        raise UnsupportedError(
            f"{describe_callable(fn)} takes float arrays of one dtype, got ({shown})"
        )
    (elem,) = elements
    try:
        results = fn.irad_results(*(tuple(t.get_shape()) for t in arg_types))
    except (IndexError, ValueError, TypeError):
        shown = ", ".join(describe(t) for t in arg_types)
        raise UnsupportedError(f"{describe_callable(fn)} cannot take arrays of types ({shown})") from None
    types = []
    for shape, kind in results:
        scalar = elem if kind == FLOAT else I1
        assert kind in (FLOAT, BOOL)
        types.append(TensorType(scalar, list(shape)) if shape else scalar)
    op = func.FuncOp.external(name, list(arg_types), types)
    op.attributes["irad.python"] = StringAttr(python_reference(fn))
    return op
