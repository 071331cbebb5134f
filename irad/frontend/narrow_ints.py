"""numpy's narrow int dtypes in a lowered module: refused where irad would not
keep numpy's values.

Arrays of int8 ... uint64 are computed in element types of their own width
(irad/ir/types.py), so `+ - *` wrap there as numpy's do, and the frontend
emits the unsigned ops for uints (arrays.py). This check, run on every
lowered module, refuses at the source line what would still differ:

* a number of such a dtype (an element `x[0]`, a full reduction `np.max(x)`,
  a loop over a 1-d array): irad's numbers are i64, and on the Python backend
  Python ints, which do not wrap as numpy's uint8 does;
* an op with signed semantics on an unsigned type, or one whose operand types
  disagree: a frontend path that does not know the narrow dtypes.

Constants are numbers too, but they only fill or broadcast into arrays.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import VerifyException

from irad.base.errors import UnsupportedError
from irad.ir.locations import source_location
from irad.ir.types import NARROW_INTS, element_type, is_tensor, is_unsigned

# ops that read their operands as signed ints; on a uint the frontend emits the unsigned one
_SIGNED_OPS = frozenset({
    "arith.divsi", "arith.remsi", "arith.floordivsi", "arith.ceildivsi", "arith.extsi", "arith.sitofp",
    "arith.maxsi", "arith.minsi", "arith.shrsi", "math.absi", "arith.fptosi",
})
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
        if op.name in _SIGNED_OPS and any(is_unsigned(element_type(v.type)) for v in op.operands) or (
                isinstance(op, arith.CmpiOp) and op.predicate.value.data in _SIGNED_PREDICATES
                and is_unsigned(element_type(op.lhs.type))):
            _refuse(op, f"this operation on {dtype} values is not computed as numpy's unsigned {dtype}", _HINT)
        try:
            if not isinstance(op, arith.ConstantOp):  # xDSL's wants a signless type, which a uint constant is not
                op.verify_()
        except VerifyException:
            _refuse(op, f"this operation mixes dtype {dtype} with others in a way irad does not compute", _HINT)


_SIGNED_PREDICATES = frozenset({2, 3, 4, 5})  # slt, sle, sgt, sge


def _is_number(op: Operation) -> bool:
    return not isinstance(op, arith.ConstantOp) and any(
        _narrow_number(r.type) for r in op.results)


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
