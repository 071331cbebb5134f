"""numpy's narrow int dtypes in a lowered module: refused where irad would not
keep numpy's values.

Arrays of int8 ... uint64 are computed in element types of their own
(irad/ir/types.py): int8 in i8, which wraps as numpy's does, uint8 in i9,
whose `+ - *` the frontend masks to 8 bits (arrays.wrap). This check, run on
every lowered module, refuses at the source line what would still differ:

* a number of such a dtype (an element `x[0]`, a full reduction `np.max(x)`,
  a loop over a 1-d array): irad's numbers are i64, and on the Python backend
  Python ints, which do not wrap as numpy's uint8 does;
* a uint's `+ - *` (or a sum) whose result is not masked, or an op whose
  operand types disagree: a frontend path that does not know these dtypes.

Constants are numbers too, and so are bools and Python ints brought to an
array's dtype (checked to fit: arrays.int_to), but they only fill or
broadcast into arrays.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import VerifyException

from irad.base.errors import UnsupportedError
from irad.ir.locations import source_location
from irad.ir.types import I1, NARROW_INTS, element_type, is_tensor, is_uint

# ops whose uint results exceed the dtype (a uint8's 255 + 1 is 256 in its carrier, i9)
_WRAPPING = (arith.AddiOp, arith.SubiOp, arith.MuliOp)
# ops whose region computes elementwise or along axes on scalars of the arrays' dtype
_BODIES = frozenset({"linalg.generic", "linalg.reduce", "linalg.map"})
_HINT = "convert the array first: x.astype(np.int64) (or .astype(np.float64))"


def check(module: ModuleOp) -> None:
    """Raise an UnsupportedError at the first op that computes a narrow int
    dtype otherwise than numpy (see the module's docstring)."""
    for op in module.walk():
        types = [v.type for v in (*op.operands, *op.results)]
        narrow = [element_type(t) for t in types if element_type(t) in NARROW_INTS]
        if not narrow:
            continue
        dtype = NARROW_INTS[narrow[0]]
        if _is_number(op) and not _in_body(op):
            _refuse(op, f"a number of dtype {dtype} (an element or a full reduction of a {dtype} array): "
                    f"irad's numbers are int64, which do not wrap as numpy's {dtype} does",
                    "keep it an array (x[0:1], np.max(x, keepdims=True)), or " + _HINT)
        if isinstance(op, _WRAPPING) and is_uint(element_type(op.result.type)) and not _masked(op):
            _refuse(op, f"this operation on {dtype} values would not wrap as numpy's {dtype} does", _HINT)
        try:
            op.verify_()
        except VerifyException:
            _refuse(op, f"this operation mixes dtype {dtype} with others in a way irad does not compute", _HINT)


def _masked(op: Operation) -> bool:
    """Every use of `op`'s result (of the reduction's, for a combiner) masks it."""
    parent = op.parent_op()
    result = parent.results[0] if parent is not None and parent.name == "linalg.reduce" else op.result
    return all(isinstance(use.operation, arith.AndIOp) for use in result.uses)


def _is_number(op: Operation) -> bool:
    filling = isinstance(op, (arith.ConstantOp, arith.TruncIOp)) or (
        isinstance(op, arith.ExtUIOp) and op.input.type == I1)  # a bool's 0 or 1
    return not filling and any(_narrow_number(r.type) for r in op.results)


def _narrow_number(t: Attribute) -> bool:
    return not is_tensor(t) and t in NARROW_INTS


def _in_body(op: Operation) -> bool:
    parent = op.parent_op()
    return parent is not None and parent.name in _BODIES


def _refuse(op: Operation, what: str, hint: str) -> None:
    where, at = "", op
    while not where and at is not None:  # ops inside an elementwise body: the body's line
        where, at = source_location(at), at.parent_op()
    raise UnsupportedError(f"{where + ': ' if where else ''}{what}\n  hint: {hint}")
