"""Expressions: names, constants, displays, attributes, subscripts, operators,
comparisons and conditional expressions, lowered to values of values.py's kinds.

`Expressions` is a collaborator of the FunctionLowering `fl` that holds it
(`fl.expressions`). `fl.expr` routes an expression node to it (calls go to
`fl.calls`, comprehensions to `fl.iteration`); its `expr_<Node>` methods lower
one node each. What the others use: `binary`, `compare`, `power`, `modulo`,
`static_condition`, `bool_rule` and `name`.

What it needs from `fl`: the source (`src`), the emitter (`em`), the path
(`env`, `control`), the function's values (`expr`, `as_number`,
`static_number`, `materialise`, `integer`, `is_number`, `kind_of`,
`tree_leaves`, `runtime_error`, `check`, `check_int_conversion`), its globals
(`lookup_global`, `local_names`, `_static_value`), and the other
collaborators: `arrays`, `calls`, `lists`, `iteration`.
"""

from __future__ import annotations

import ast
import dataclasses
import operator
import types
import numpy as np
from xdsl.dialects import arith, scf
from xdsl.dialects import math as mathd
from xdsl.ir import Block, Region, SSAValue
from irad.frontend.arrays import ARRAY_ATTRIBUTES, STATIC_OPERATORS, bound_method, known_value
from irad.frontend.callables import Closure, Keywords, Partial, rebuild
from irad.frontend.known_methods import format_string
from irad.ir import tensor as tensor_ops
from irad.frontend import containers, integers, joins, masked_reads, number_joins, numpy_scalars
from irad.frontend.masked_reads import Selection
from irad.frontend.emitter import Emitter, can_raise
from irad.frontend.float_division import floor_divide, remainder
from irad.frontend.numpy_shapes import index_concatenate
from irad.base import pytrees
from irad.base.pytrees import Tree
from irad.frontend.values import (
    ListValue, MappingValue, Method, NoValue, RecordValue, Static, Value, is_array, new_list,
)
from irad.ir.types import F64, I1, describe, is_bool, is_float, is_int, refusal
from irad.ir.isa import isa

# The largest literal integer exponent expanded into multiplications.
MAX_UNROLLED_POWER = 64

_UNBOUND = object()  # a name the function's variables do not hold

_FLOAT_FOLDS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}

_COMPARISONS = {
    ast.Lt: ("olt", "slt"),
    ast.LtE: ("ole", "sle"),
    ast.Gt: ("ogt", "sgt"),
    ast.GtE: ("oge", "sge"),
    ast.Eq: ("oeq", "eq"),
    ast.NotEq: ("une", "ne"),
}
_CMP_NAMES = {ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}
_OPERATOR_NAMES = {
    ast.MatMult: "`@`",
    ast.BitAnd: "`&`",
    ast.BitOr: "`|`",
    ast.BitXor: "`^`",
    ast.LShift: "`<<`",
    ast.RShift: "`>>`",
}
# numpy's ufunc of each arithmetic operator: what held_ints asks for the result's dtype
_BITWISE = {ast.BitAnd: arith.AndIOp, ast.BitOr: arith.OrIOp, ast.BitXor: arith.XOrIOp}
_UFUNCS = {
    ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply, ast.Div: np.true_divide,
    ast.FloorDiv: np.floor_divide, ast.Mod: np.remainder, ast.Pow: np.power, ast.MatMult: np.matmul,
}


class Expressions:
    """Lowers the expressions of one function (see the module docstring)."""

    def __init__(self, fl) -> None:
        self.fl = fl

    def expr_Constant(self, node: ast.Constant) -> Value:
        if isinstance(node.value, (bool, int, float)):
            return self.fl.materialise(node.value, node)
        if isinstance(node.value, str) or node.value is None or node.value is Ellipsis:
            return Static(node.value)  # known while lowering: a dict key, print's text, a None default
        raise self.fl.src.error(
            node,
            f"the constant {node.value!r} is not supported",
            "only numeric constants (float, int, bool), strings and None are supported",
        )

    def name(self, node: ast.Name) -> Value:
        return self.expr_Name(node)

    def expr_Name(self, node: ast.Name) -> Value:
        value = self.fl.env.get(node.id, _UNBOUND)
        if isinstance(value, NoValue):
            raise self.fl.src.error(node, f"'{node.id}' has no value here: {value.why}", value.hint)
        if value is not _UNBOUND:
            return value
        if node.id in self.fl.local_names:  # Python's scoping: a local never reads a global
            raise self.fl.src.error(
                node, f"'{node.id}' has no value here: {self.fl.src.tree.name} assigns it, "
                "but not before this line on every path (Python would raise UnboundLocalError)",
                "assign it before it is read",
            )
        origin = self.fl.lookup_global(node.id)
        if origin is None:
            raise self.fl.src.error(node, f"name '{node.id}' is not defined")
        try:
            obj = origin.read()
        except LookupError:
            raise self.fl.src.error(node, f"name '{node.id}' is not defined") from None
        return self.fl._static_value(Static(obj, origin), node)

    def _number_attribute(self, base, node: ast.Attribute) -> Value:
        """An attribute of a run-time number: numpy's scalars (np.float64, what
        `scipy.stats.t.logpdf(0.3, 4.0)` or `np.sum(x)` gives) have the array
        methods and attributes (`.sum()`, `.item()`, `.shape`); Python's numbers do not."""
        kind = numpy_scalars.kind(base) if isa(base, SSAValue) else None
        if kind in (numpy_scalars.NUMPY, numpy_scalars.EITHER) and node.attr in ARRAY_ATTRIBUTES:
            if kind == numpy_scalars.EITHER:
                raise self.fl.src.error(
                    node, f"`.{node.attr}` of a number that is numpy's scalar on one path and a Python number on "
                    "another (Python's have no array methods)", "make it numpy's on every path: np.float64(v)")
            return self.fl.arrays.attribute(base, node.attr, node)
        if kind == numpy_scalars.PYTHON and node.attr in ARRAY_ATTRIBUTES:
            raise self.fl.src.error(
                node, f"'{'float' if is_float(base.type) else 'int'}' object has no attribute '{node.attr}' "
                "(a Python number, where numpy's scalar would have it)", "call numpy's function: np.sum(v), ...")
        raise self.fl.src.error(node, f"attribute access `.{node.attr}` on a runtime value is not supported")

    def expr_Attribute(self, node: ast.Attribute) -> Value:
        base = self.fl.expr(node.value)
        if isinstance(base, Keywords):  # kwargs.get("a", 0.0), kwargs.items(): a function's **kwargs is a dict
            base = MappingValue(dict, base.items)
        if is_array(base):
            return self.fl.arrays.attribute(base, node.attr, node)
        if isinstance(base, Selection):  # x[m].mean, x[m].shape
            method = bound_method(node.attr, base)
            return method if method is not None else masked_reads.attribute(self.fl.arrays, base, node.attr, node)
        if isinstance(base, (RecordValue, MappingValue)) and base.cls is not dict:
            return self._field(base, node)
        if isinstance(base, MappingValue):  # d.items(), d.get(k)
            return containers.dict_attribute(self.fl, base, node)
        if isinstance(base, tuple):
            return self.fl.lists.sequence_attribute(base, node)  # xs.append (lists.py)
        if not isinstance(base, Static):
            return self._number_attribute(base, node)
        self.fl.lists.refuse_known_list_change(base, node)  # GLOBAL_LIST.append(v) (lists.py)
        if type(base.obj) is dict and node.attr in ("items", "keys", "values", "get") \
                and all(isinstance(k, str) for k in base.obj):  # SHAPES.items(), a global dict: its items guarded
            return containers.dict_attribute(self.fl, containers.make_dict(self.fl, [base], {}, node), node)
        if not hasattr(base.obj, node.attr):
            raise self.fl.src.error(node, f"{self.fl.kind_of(base)} has no attribute '{node.attr}'")
        origin = base.origin.attribute(node.attr) if base.origin is not None else None
        return self.fl._static_value(Static(getattr(base.obj, node.attr), origin), node)

    def _field(self, record, node: ast.Attribute) -> Value:
        """`state.v`: a field of a NamedTuple or dataclass value."""
        fields = record.cls._fields if isinstance(record, RecordValue) else record.keys()
        if node.attr in fields:
            return record.field(node.attr) if isinstance(record, RecordValue) else record.get(node.attr)
        if node.attr == "_replace" and isinstance(record, RecordValue):  # a NamedTuple's: dataclasses.replace's meaning
            return Partial(Static(dataclasses.replace), (record,))
        method = getattr(record.cls, node.attr, None)
        if isinstance(method, types.FunctionType):  # model.forward: called with the value as self
            return Method(method, record)
        raise self.fl.src.error(
            node,
            f"`.{node.attr}` of a {record.cls.__name__} value: irad reads its fields "
            f"({', '.join(fields)}) and calls its methods inside a program, not other attributes",
            "read the fields you need, or compute the attribute from them",
        )

    def expr_Tuple(self, node: ast.Tuple) -> Value:
        return tuple(self._elements(node.elts))

    def expr_List(self, node: ast.List) -> Value:
        return new_list(self._elements(node.elts))

    def _elements(self, elts: list[ast.expr]) -> list[Value]:
        """The items of a tuple or list display: numbers known while lowering
        become constants, containers and other known objects stay as they are."""
        values = []
        for elt in elts:
            if isinstance(elt, ast.Starred):
                values.extend(self.fl.iteration.items_of(self.fl.expr(elt.value), elt))  # *t
                continue
            value = self.fl.expr(elt)
            if isinstance(value, Static) and self.fl.is_number(value.obj):
                value = self.fl.static_number(value, elt)
            values.append(value)
        return values

    def expr_Dict(self, node: ast.Dict) -> Value:
        """`{"W": w, "b": b}`: a dict with keys known while lowering (str)."""
        items = {}
        for key_node, item in zip(node.keys, node.values):
            if key_node is None:
                raise self.fl.src.error(item, "`**` in a dict display is not supported", "write each key")
            items[self._key(key_node, "a dict key")] = self._elements([item])[0]
        return MappingValue(dict, tuple(items.items()))

    def expr_JoinedStr(self, node: ast.JoinedStr) -> Value:
        return format_string(self.fl, node)  # known_methods.py

    def _key(self, node: ast.expr, what: str) -> str:
        key = self.fl.expr(node)
        if not (isinstance(key, Static) and isinstance(key.obj, str)):
            raise self.fl.src.error(
                node, f"{what} must be a str known while lowering, got {self.fl.kind_of(key)}",
                "use constant str keys: irad's dicts have a fixed structure",
            )
        return key.obj

    def expr_Subscript(self, node: ast.Subscript) -> Value:
        base = self.fl.expr(node.value)
        if isinstance(base, Static) and isinstance(base.obj, np.ndarray):  # P["b"][0], P a global dict
            base = self.fl.static_number(base, node.value)
        if is_array(base):
            return self.fl.arrays.subscript(base, node.slice, node)
        if isinstance(base, Selection):
            raise base.refusal(self.fl.arrays, node, "indexing a selection")
        if isinstance(base, Keywords):  # kwargs["a"]: a function's **kwargs is a dict
            base = MappingValue(dict, base.items)
        if isinstance(base, MappingValue) and base.cls is dict:
            key = self._key(node.slice, "a dict index")
            if key not in base.keys():
                raise self.fl.src.error(
                    node, f"the dict has no key {key!r} (its keys: {', '.join(map(repr, base.keys()))})",
                    "irad's dicts have the keys they were built (or passed) with",
                )
            return base.get(key)
        if isinstance(base, Static) and isinstance(base.obj, (tuple, list, dict)):  # x.shape[0], a global
            return self._static_item(base, node)
        if isinstance(base, Static) and any(base.obj is c for c in (np.r_, np.c_)):
            return index_concatenate(self.fl.arrays, base.obj, node.slice, node)
        if not isinstance(base, tuple):
            raise self.fl.src.error(node, f"indexing into {self.fl.kind_of(base)} is not supported")
        return self.fl.lists.sequence_item(base, node.slice, node)  # lists.py

    def _static_item(self, base: Static, node: ast.Subscript) -> Value:
        """An item of a tuple, list or dict known while lowering (a shape, a
        global); an array found there is a hidden argument."""
        index = self._sequence_index(node) if not isinstance(base.obj, dict) else self._key(node.slice, "a dict index")
        if isinstance(index, SSAValue):  # x.shape[i], an item of a global tuple at a run-time i
            items = [Static(o, base.origin and base.origin.item(k)) for k, o in enumerate(base.obj)]
            return containers.item_at(self.fl, ListValue(items) if isinstance(base.obj, list) else tuple(items), index, node)
        try:
            item = base.obj[index]
        except (IndexError, KeyError):
            raise self.fl.src.error(node, f"index {index!r} is not in {self.fl.kind_of(base)}") from None
        return Static(item, base.origin and base.origin.item(index))

    def _sequence_index(self, node: ast.Subscript) -> int | slice | SSAValue:
        """The index of a tuple or list: an int or slice known while lowering, or
        an int known only at run time (an SSA value)."""
        index = _static_index(node.slice)
        if index is not None:
            return index
        if isinstance(node.slice, ast.Slice):  # t[1:n] with n known while lowering (a shape, len)
            parts = [None if p is None else known_value(self.fl.expr(p)) for p in
                     (node.slice.lower, node.slice.upper, node.slice.step)]
            if any(p is not None and (not p[0] or type(p[1]) is not int) for p in parts):
                raise self.fl.src.error(node, "a slice of a tuple or list needs int bounds known while lowering",
                                        "slice with constants or shapes")
            return slice(*(None if p is None else p[1] for p in parts))
        value = self.fl.expr(node.slice)
        known, index = known_value(value)
        if not known:
            return self.fl.as_number(value, node.slice)
        if type(index) not in (int, bool):
            raise self.fl.src.error(node, f"tuple and list indices must be integers or slices, got {self.fl.kind_of(value)}")
        return int(index)

    def expr_UnaryOp(self, node: ast.UnaryOp) -> Value:
        operand = self.fl.expr(node.operand)
        if isinstance(operand, Selection) and not isinstance(node.op, ast.Not):  # -x[m], ~x[m]
            return masked_reads.elementwise(self.fl.arrays, node, lambda x: self._unary_array(node, x), [operand])
        if isinstance(node.op, ast.Not) and isinstance(operand, Static):
            return Static(not operand.obj)
        if isinstance(node.op, ast.Not) and isinstance(operand, (tuple, MappingValue)):  # `not xs`: its length
            return Static(not self.static_condition(operand))
        if isinstance(node.op, (ast.USub, ast.UAdd)) and _static_int(operand) is not None:
            n = _static_int(operand)
            return self.fl.integer(-n if isinstance(node.op, ast.USub) else n, node)
        return self._unary_array(node, self.fl.as_number(operand, node.operand))

    def _unary_array(self, node: ast.UnaryOp, x: SSAValue) -> Value:
        if isinstance(node.op, (ast.UAdd, ast.USub)) and not is_array(x):
            self.bool_rule("+x" if isinstance(node.op, ast.UAdd) else "-x", [x], node)
        if isinstance(node.op, ast.UAdd):
            return self.fl.em.to_int(x) if is_bool(x.type) else x
        if isinstance(node.op, ast.USub):
            if is_array(x):
                return self.fl.arrays.negate(x, node)
            if is_float(x.type):
                return self.fl.em.op(arith.NegfOp(x))
            x = self.fl.em.to_int(x)
            folded = integers.constant_int(x)
            if folded is not None:
                return self.fl.integer(-folded, node)
            return integers.CheckedIntegers(self.fl.em, self.fl.src.location(node)).negate(x)
        if isinstance(node.op, ast.Not):
            known = self.static_condition(x)
            if known is not None:  # `not flag` of a bool known while lowering stays known: a branch on it is static
                return numpy_scalars.mark(self.fl.em.const(not known, I1), numpy_scalars.PYTHON)
            b = self.fl.em.to_bool(x)
            return numpy_scalars.mark(self.fl.em.op(arith.XOrIOp(b, self.fl.em.const(1, I1))), numpy_scalars.PYTHON)
        if is_array(x):
            return self.fl.arrays.invert(x, node)
        raise self.fl.src.error(node, "the bitwise operator `~` is not supported")

    def expr_BinOp(self, node: ast.BinOp) -> Value:
        left = self.fl.expr(node.left)
        if isinstance(left, Selection):  # x[m] ** 2, x[m] - y[m], c * x[m] (masked_reads.py)
            return self._selection_binary(node, left, self.fl.expr(node.right))
        if isinstance(node.op, ast.Pow) and _literal_int(node.right) is not None and not is_array(left):
            return self.power(self.fl.as_number(left, node.left), node.right, node, None)
        right = self.fl.expr(node.right)
        if isinstance(right, Selection):
            return self._selection_binary(node, left, right)
        static = _static_arithmetic(node.op, left, right)
        if static is not None:  # shapes: x.shape[0] * 2 is known while lowering
            return static
        sequence = self.fl.lists.sequence_binary(node.op, left, right, node)  # xs + ys, xs * n (lists.py)
        if sequence is not None:
            return sequence
        return self.binary(node.op, self.fl.as_number(left, node.left), node.right, node, right)

    def _selection_binary(self, node: ast.BinOp, left: Value, right: Value) -> Value:
        def apply(a, b):
            return self.binary(node.op, self.fl.as_number(a, node.left), node.right, node, b)
        if isinstance(node.op, ast.MatMult):  # x[rows] @ w: row by row
            return masked_reads.rows_times(self.fl.arrays, node, apply, left, right)
        return masked_reads.elementwise(self.fl.arrays, node, apply, [left, right])

    def binary(
        self, op: ast.operator, left: SSAValue, right_node: ast.expr, node, right: Value = None
    ) -> SSAValue:
        if not isinstance(left, SSAValue):
            raise self.fl.src.error(node, f"arithmetic on {self.fl.kind_of(left)} is not supported")
        if isinstance(op, ast.Pow) and not is_array(left) and _literal_int(right_node) is not None:
            return self.power(left, right_node, node, None)
        if right is None:
            right = self.fl.expr(right_node)
        right = self.fl.as_number(right, right_node)
        result = self._binary(op, left, right, right_node, node)
        if type(op) in _UFUNCS:  # what numpy's dtype of the result says (held_ints.py)
            result = self.fl.arrays.record(_UFUNCS[type(op)], (left, right), result, node)
        return result

    def _binary(self, op: ast.operator, left: SSAValue, right: SSAValue, right_node: ast.expr, node) -> SSAValue:
        if is_array(left) or is_array(right):
            if any(is_array(v) and tensor_ops.shape(v) for v in (left, right)):
                return self.fl.arrays.binary(op, left, right, node)
            # 0-d arrays and numbers (np.squeeze of a (1, 1) array): numpy's result is a number
            left, right = (tensor_ops.extract_scalar(self.fl.em, v) if is_array(v) else v for v in (left, right))
        if isinstance(op, ast.Pow):
            return self.power(left, right_node, node, right)
        em = self.fl.em
        if isinstance(op, (ast.Add, ast.Sub, ast.Mult)):
            symbol = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*"}[type(op)]
            if self.bool_rule(symbol, [left, right], node) == numpy_scalars.NUMPY:  # `or`, `and`
                combined = em.op((arith.OrIOp if symbol == "+" else arith.AndIOp)(left, right))
                return numpy_scalars.mark(combined, numpy_scalars.NUMPY)
        if isinstance(op, (ast.BitAnd, ast.BitOr, ast.BitXor)) and is_bool(left.type) and is_bool(right.type):
            return em.op(_BITWISE[type(op)](left, right))  # numpy's `or` of bools (Python's too)
        if isinstance(op, ast.Div):  # true division: floats keep their precision
            if is_float(left.type) or is_float(right.type):
                a, b = em.unify(left, right)
            else:
                a, b = em.to_float(left), em.to_float(right)
            folded = _fold_floats(op, a, b)
            return em.const(folded, a.type) if folded is not None else numpy_scalars.round_float32(em, em.div(a, b))
        a, b = em.unify(left, right)
        floating = is_float(a.type)
        if floating:
            folded = _fold_floats(op, a, b)
            if folded is not None:  # constants: 1.0 + len(x) is known while lowering
                return em.const(folded, a.type)
        else:
            folded = integers.fold(op, a, b)
            if folded is not None:  # exact, as Python computes it; numpy's if an operand is
                kinds = {numpy_scalars.kind(a), numpy_scalars.kind(b)}
                result = self.fl.integer(folded, node)
                if kinds != {numpy_scalars.PYTHON} and isa(result, SSAValue):
                    numpy_scalars.mark(result, numpy_scalars.NUMPY if numpy_scalars.NUMPY in kinds
                                       else numpy_scalars.EITHER)
                return result
            checked = integers.CheckedIntegers(em, self.fl.src.location(node))
        if floating and isinstance(op, (ast.Add, ast.Sub, ast.Mult)):  # an np.float32's in float32
            return numpy_scalars.round_float32(em, {ast.Add: em.add, ast.Sub: em.sub, ast.Mult: em.mul}[type(op)](a, b))
        if isinstance(op, ast.Add):
            return checked.add(a, b)
        if isinstance(op, ast.Sub):
            return checked.sub(a, b)
        if isinstance(op, ast.Mult):
            return checked.mul(a, b)
        if isinstance(op, (ast.FloorDiv, ast.Mod)):
            symbol = "//" if isinstance(op, ast.FloorDiv) else "%"
            if floating:  # through fmod, as CPython computes them (float_division.py)
                if not (isinstance(b.owner, arith.ConstantOp) and b.owner.value.value.data != 0.0):
                    self.fl.check(
                        em.op(arith.CmpfOp(b, em.const(0.0, b.type), "une")), node,
                        f"float {'floor division' if symbol == '//' else 'modulo'} by zero",
                    )
                return (floor_divide if symbol == "//" else remainder)(em, a, b)
            if integers.constant_int(b) in (None, 0):  # MLIR leaves x // 0 undefined
                self.fl.check(
                    em.op(arith.CmpiOp(b, em.const(0, b.type), "ne")), node,
                    "integer division or modulo by zero",
                )
            if isinstance(op, ast.FloorDiv):
                return integers.CheckedIntegers(em, self.fl.src.location(node)).floor_divide(a, b)
            return self.modulo(a, b)
        raise self.fl.src.error(node, f"the operator {_OPERATOR_NAMES.get(type(op), type(op).__name__)} is not supported")

    def bool_rule(self, symbol: str, operands, node) -> str | None:
        """Whose rule `symbol` of bools follows, numpy's or Python's
        (numpy_scalars.py); an error where irad cannot match numpy."""
        try:
            return numpy_scalars.bool_rule(symbol, operands)
        except numpy_scalars.Refusal as refusal:
            raise self.fl.src.error(node, refusal.message, refusal.hint) from None

    def modulo(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """Python's `%` on ints: the result has the sign of the divisor."""
        em = self.fl.em
        zero = em.const(0, a.type)
        if integers.constant_int(b) in (None, -1):  # x % -1 is 0; remsi(INT64_MIN, -1) traps (SIGFPE)
            one = em.const(1, b.type)
            b = em.op(arith.SelectOp(em.op(arith.CmpiOp(b, em.const(-1, b.type), "eq")), one, b))
        r = em.op(arith.RemSIOp(a, b))
        nonzero = em.op(arith.CmpiOp(r, zero, "ne"))
        signs_differ = em.op(
            arith.CmpiOp(em.op(arith.XOrIOp(r, b)), zero, "slt")
        )
        fix = em.op(arith.AndIOp(nonzero, signs_differ))
        return em.op(arith.SelectOp(fix, em.op(arith.AddiOp(r, b)), r))

    def power(
        self, base: SSAValue, exponent_node: ast.expr, node, exponent: SSAValue | None
    ) -> SSAValue:
        em = self.fl.em
        n = _literal_int(exponent_node)
        if n is None:  # an int known while lowering (`2 ** k` in a loop lowered per index) is as good
            exponent = self.fl.number(exponent_node) if exponent is None else exponent
            n = integers.constant_int(exponent)
        if n is not None and n < 0 and not is_float(base.type) and numpy_scalars.kind(base) != numpy_scalars.PYTHON:
            raise self.fl.src.error(
                node, "numpy's int ** negative int raises (integers to negative integer powers are not "
                "allowed), and irad cannot tell this int from a Python int here" if numpy_scalars.kind(base) !=
                numpy_scalars.NUMPY else "numpy's int ** negative int raises (integers to negative integer "
                "powers are not allowed)", "write float(base) ** n, or base ** float(n)")
        if n is not None and abs(n) <= MAX_UNROLLED_POWER:
            base = em.to_int(base) if is_bool(base.type) else base
            if n < 0 and not is_float(base.type):
                base = em.to_float(base)
            if is_float(base.type):  # an np.float32 base: each product in float32, as numpy's square
                result = _power_by_squaring(
                    em, base, abs(n), lambda a, b: numpy_scalars.round_float32(em, em.op(arith.MulfOp(a, b))))
            elif integers.constant_int(base) is not None:  # exact, as Python computes it
                return self.fl.integer(integers.constant_int(base) ** n, node)
            else:
                checked = integers.CheckedIntegers(em, self.fl.src.location(node))
                result = _power_by_squaring(em, base, n, checked.mul)
            if n < 0:
                return numpy_scalars.round_float32(em, em.op(arith.DivfOp(em.const(1.0, base.type), result)))
            return result
        if exponent is None:
            exponent = self.fl.number(exponent_node)
        if not is_float(base.type) and not is_float(exponent.type):
            raise self.fl.src.error(
                node,
                "int ** int with a runtime exponent is not supported",
                "write float(base) ** n",
            )
        a, b = em.unify(em.to_float(base), em.to_float(exponent))
        return numpy_scalars.round_float32(em, em.op(mathd.PowFOp(a, b)))

    def expr_Compare(self, node: ast.Compare) -> Value:
        left = self.fl.expr(node.left)
        rights = [self.fl.expr(c) for c in node.comparators]
        known = [_static_compare(op, a, b) for op, a, b in zip(node.ops, [left, *rights], rights)]
        if all(k is not None for k in known):  # decided while lowering: x.shape[0] < 8, axis is None
            result = known[0].obj  # Python's `a < b < c`: (a < b) and (b < c), a numpy bool kept
            for k in known[1:]:
                if not result:
                    break
                result = k.obj
            return Static(result)
        if len(node.ops) == 1 and any(isinstance(v, Selection) for v in (left, rights[0])):  # x[m] > 0
            return masked_reads.elementwise(self.fl.arrays, node, lambda a, b: self.compare(
                node.ops[0], self.fl.as_number(a, node.left), self.fl.as_number(b, node.comparators[0]), node),
                [left, rights[0]])
        if len(node.ops) == 1:
            static = _static_arithmetic(node.ops[0], left, rights[0])
            if static is not None:
                return static
            return self.compare(
                node.ops[0], self.fl.as_number(left, node.left), self.fl.as_number(rights[0], node.comparators[0]), node
            )
        left = self.fl.as_number(left, node.left)
        result = None
        for op, right, right_node in zip(node.ops, rights, node.comparators):
            right = self.fl.as_number(right, right_node)
            cmp = self.compare(op, left, right, node)
            result = cmp if result is None else self.fl.em.op(arith.AndIOp(result, cmp))
            left = right
        return result

    def static_condition(self, value: Value) -> bool | None:
        """The truth of a condition known while lowering (a Static, a constant), or None."""
        if isinstance(value, Static):
            return bool(value.obj)
        if isinstance(value, tuple):  # `if xs:` a container's length is known while lowering
            return len(value) > 0
        if isinstance(value, MappingValue):
            return len(value.items) > 0
        if isinstance(value, SSAValue) and not is_array(value):
            known, obj = known_value(value)
            return bool(obj) if known else None
        return None

    def compare(self, op: ast.cmpop, left: SSAValue, right: SSAValue, node) -> SSAValue:
        predicates = _COMPARISONS.get(type(op))
        if predicates is None:
            raise self.fl.src.error(node, f"the comparison `{_CMP_NAMES.get(type(op), type(op).__name__)}` is not supported")
        if is_array(left) or is_array(right):
            return self.fl.arrays.compare(predicates[0], left, right, node)
        exact = self._int_float_comparison(predicates, left, right, node)
        if exact is not None:
            return exact
        a, b = self.fl.em.unify(left, right)
        if is_float(a.type):
            return self.fl.em.op(arith.CmpfOp(a, b, predicates[0]))
        return self.fl.em.op(arith.CmpiOp(a, b, predicates[1]))

    def _int_float_comparison(self, predicates, left: SSAValue, right: SSAValue, node) -> SSAValue | None:
        """An int compared with a float. Python compares them exactly; numpy (an
        np.int64 or np.float64 among them) after rounding the int to float, as
        irad's default path does. Where irad cannot tell which (a parameter of
        a function irad calls), the exact answer is checked to be numpy's too."""
        if is_int(left.type) == is_int(right.type) or not (is_float(left.type) or is_float(right.type)):
            return None
        n = integers.constant_int(left if is_int(left.type) else right)
        if n is not None and abs(n) <= integers.EXACT_IN_FLOAT:  # the float of n is n
            return None
        kinds = {numpy_scalars.kind(left), numpy_scalars.kind(right)}
        if numpy_scalars.NUMPY in kinds:
            return None
        exact = integers.compare_with_float(self.fl.em, predicates, left, right)
        if kinds != {numpy_scalars.PYTHON}:
            a, b = self.fl.em.unify(left, right)
            rounded = self.fl.em.op(arith.CmpfOp(a, b, predicates[0]))
            self.fl.check(self.fl.em.op(arith.CmpiOp(exact, rounded, "eq")), node,
                          "an int beyond 2**53 compared with a float: Python compares them exactly and numpy "
                          "after rounding the int to float, and irad cannot tell here whether they are "
                          "Python's numbers or numpy's (hint: compare float(n) with x for numpy's answer)")
        return exact

    def expr_BoolOp(self, node: ast.BoolOp) -> Value:
        """Python's `and` and `or`: the operands are evaluated from the left until
        one decides (a falsy one for `and`, a truthy one for `or`), and the value
        is that operand itself, or the last (`k or "default"` is a str, `y is not
        None and y.shape[0] > 1` never reads None's shape). Operands known only at
        run time that are bools are combined by `andi`/`ori`; run-time numbers
        choose by selects (`x or 1.0` is `x if x != 0 else 1.0`), where every
        operand that may be the value has one type."""
        is_and = isinstance(node.op, ast.And)
        runtime: list[tuple[SSAValue, ast.expr]] = []
        going_on = None  # where the run-time operands so far did not decide (an i1), if any
        for i, sub in enumerate(node.values):
            value = self._operand_after(sub, going_on, node)
            known = self.static_condition(value)
            if known is None:
                runtime.append((self.fl.as_number(value, sub), sub))
                going_on = self._going_on(going_on, runtime[-1][0], is_and)
                continue
            decides, last = known != is_and, i == len(node.values) - 1
            if not (decides or last):
                continue  # Python goes on to the next operand
            if not runtime:
                return value  # the operand itself, as Python gives it
            if not all(is_bool(v.type) for v, _ in runtime):  # `x or 1.0`: the operand that decides
                return self._chosen_operand(is_and, runtime, value, sub, node)
            if not (isinstance(value, SSAValue) and is_bool(value.type)
                    or isinstance(value, Static) and isinstance(value.obj, (bool, np.bool_))):
                # `m or 1`: True where m is, else 1: Python's value is a bool or an int
                raise self.fl.src.error(
                    node, f"`{'and' if is_and else 'or'}` of a bool known only at run time and "
                    f"{self.fl.kind_of(value)}: its value would be one or the other",
                    "write a conditional expression: a if cond else b",
                )
            if decides:  # (run-time bools) and False is False; ... or True is True
                self._bool_operands(runtime)
                return numpy_scalars.mark(self.fl.em.const(known, I1), numpy_scalars.PYTHON)
            # (run-time bools) and True is their `and`
        if not all(is_bool(v.type) for v, _ in runtime):
            (last, sub), runtime = runtime[-1], runtime[:-1]
            return self._chosen_operand(is_and, runtime, last, sub, node)
        values = self._bool_operands(runtime)
        op_class = arith.AndIOp if is_and else arith.OrIOp
        result = values[0]
        for v in values[1:]:
            result = self.fl.em.op(op_class(result, v))
        kinds = [numpy_scalars.kind(v) for v in values]  # `a and b` is one of them
        return numpy_scalars.mark(result, kinds[0] if len(set(kinds)) == 1 else numpy_scalars.EITHER)

    def _going_on(self, going_on: SSAValue | None, value: SSAValue, is_and: bool) -> SSAValue | None:
        """Where Python evaluates the next operand: every run-time operand so far
        truthy (`and`) or falsy (`or`). None for an array (whose truth is an error)."""
        if is_array(value):
            return None
        truth = self.fl.em.to_bool(value)
        if not is_and:
            truth = self.fl.em.op(arith.XOrIOp(truth, self.fl.em.const(1, I1)))
        return truth if going_on is None else self.fl.em.op(arith.AndIOp(going_on, truth))

    def _operand_after(self, sub: ast.expr, going_on: SSAValue | None, node: ast.BoolOp) -> Value:
        """An operand of `and`/`or` after run-time ones: Python evaluates it only
        where they did not decide (`going_on`). Code that may raise (an index's
        bounds, a helper's checks: `i < n and x[i] > 0`) runs under an scf.if on
        `going_on`; other code runs in line, its value unused where it is not."""
        if going_on is None:
            return self.fl.expr(sub)
        outer, block = self.fl.em, Block()
        self.fl.em = Emitter(block)
        try:
            value = self.fl.expr(sub)
        finally:
            self.fl.em = outer
        if not can_raise(block):
            for op in list(block.ops):
                op.detach()
                outer.insert(op)
            return value
        leaves = [value] if isinstance(value, SSAValue) else [] if isinstance(value, Static) else None
        if leaves is None or any(is_array(v) for v in leaves):
            raise self.fl.src.error(sub, f"this operand of `{'and' if isinstance(node.op, ast.And) else 'or'}` may "
                                    "raise, and is not a number or a bool: Python evaluates it only where the "
                                    "operands before it do not decide", "evaluate it in an `if` statement")
        block.add_op(scf.YieldOp(*leaves))
        skipped = Block()
        skip = Emitter(skipped)
        skip.op(scf.YieldOp(*[skip.const(0, v.type) for v in leaves]))
        results = outer.results(scf.IfOp(going_on, [v.type for v in leaves], Region(block), Region(skipped)))
        if not leaves:
            return value  # known while lowering: the checks run where Python's would
        return numpy_scalars.mark(results[0], numpy_scalars.kind(value))

    def _chosen_operand(self, is_and: bool, runtime: list, last: Value, last_node: ast.expr, node) -> SSAValue:
        """`a or b or c` on numbers known only at run time: a if a != 0, else b if
        b != 0, else c (`and` keeps the first falsy one, else the last) as
        `arith.select`s; every one of them must have one type, since the value is
        one of them."""
        word = "and" if is_and else "or"
        self._bool_operands(runtime)
        choices = [v for v, _ in runtime]
        if isinstance(last, Static) and isinstance(last.obj, (int, float, np.number, np.bool_)):
            last = self.fl.as_number(last, last_node)
        types = {describe(v.type) for v in choices} | {describe(last.type) if isinstance(last, SSAValue)
                                                       and not is_array(last) else self.fl.kind_of(last)}
        if len(types) > 1:
            a, b = ast.unparse(node.values[0]), ast.unparse(node.values[-1])
            test = f"({a})" if isinstance(node.values[0], (ast.Compare, ast.BoolOp)) else a
            test = test if is_bool(choices[0].type) else f"{test} != 0"
            choose = f"{b} if {test} else 0" if is_and else f"{a} if {test} else {b}"
            raise self.fl.src.error(
                node, f"`{word}` of {' and '.join(sorted(types))} known only at run time: its value is one "
                f"operand or another, of different types",
                f"give the operands one type, or choose explicitly: `{choose}` (np.where for arrays)",
            )
        result = last
        for v in reversed(choices):
            truth = self.fl.em.to_bool(v)
            result = self.fl.em.op(arith.SelectOp(truth, result, v) if is_and else arith.SelectOp(truth, v, result))
        kinds = {numpy_scalars.kind(v) for v in [*choices, last]}
        return numpy_scalars.mark(result, kinds.pop() if len(kinds) == 1 else numpy_scalars.EITHER)

    def _bool_operands(self, operands: list) -> list[SSAValue]:
        for v, sub in operands:
            if is_array(v):
                raise self.fl.src.error(sub, "the truth value of an array is ambiguous",
                                        "use np.all(...) or np.any(...), or `&` / `|` elementwise")
        return [v for v, _ in operands]

    def expr_NamedExpr(self, node: ast.NamedExpr) -> Value:
        """`(y := value)`: binds y as `y = value` does, and is the value. Only where
        the statement's own code runs: evaluated only on some paths (an operand of
        `and`/`or` after the first, an arm of a conditional expression, both known
        only at run time, or a `while` condition, which runs once per iteration), the
        name would be bound on those paths only."""
        if self.fl.em is not self.fl.statement_em:
            raise self.fl.src.error(
                node, f"an assignment expression (`{node.target.id} := ...`) evaluated only on some paths "
                "(after a run-time `and`/`or` operand, in an arm of a run-time conditional expression) "
                "or in a `while` condition is not supported",
                f"assign it in a statement of its own (`{node.target.id} = ...`) before the expression; "
                f"in a `while` condition, loop `while True:` with `{node.target.id} = ...` and "
                "`if not <condition>: break` first in the body",
            )
        value = self.fl.expr(node.value)
        self.fl.statements.assign(node.target, value, node)
        return value

    def expr_IfExp(self, node: ast.IfExp) -> Value:
        test = self.fl.expr(node.test)
        known = self.static_condition(test)
        if known is not None:  # decided while lowering: only the arm taken is lowered
            return self.fl.expr(node.body if known else node.orelse)
        test = self.fl.as_number(test, node.test)
        if is_array(test):
            raise self.fl.src.error(
                node.test, "the truth value of an array is ambiguous",
                "use np.where(cond, a, b) for an elementwise choice",
            )
        cond = self.fl.em.to_bool(test)
        (then_block, then_leaves, tree), (else_block, else_leaves, else_tree) = (
            self._branch(node.body), self._branch(node.orelse)
        )
        if pytrees.structure(tree) != pytrees.structure(else_tree):
            raise self.fl.src.error(
                node, "the two values of this conditional expression are containers of different structures",
                "give both the same keys, fields and lengths",
            )
        joined = [joins.join_types(a.type, b.type) for a, b in zip(then_leaves, else_leaves)]
        for a, b, t in zip(then_leaves, else_leaves, joined):
            if t is None:
                raise self.fl.src.error(
                    node,
                    "the two values of this conditional expression have no common type: "
                    f"{joins.mismatch(a.type, b.type)}",
                    "irad's array shapes are static: give both the same shape",
                )
            flag = a if is_bool(a.type) else b  # a numpy bool's join is numpy_scalars' JOINED_BOOL
            if (is_bool(a.type) != is_bool(b.type) and not (is_array(a) or is_array(b))
                    and numpy_scalars.kind(flag) == numpy_scalars.PYTHON):  # `x if c else False`
                raise self.fl.src.error(
                    node, f"the two values of this conditional expression are a bool and {describe(t)}: Python's "
                    "value is one or the other, of different types, and irad's types are static",
                    "give both one type: `x if c else 0.0` for a number, `(x != 0) if c else False` for a bool",
                )
        where = number_joins.joined(self.fl.src.location(node), "its value", "this conditional expression")
        then_block.add_op(scf.YieldOp(*(joins.convert(Emitter(then_block), v, t, where) for v, t in zip(then_leaves, joined))))
        else_block.add_op(scf.YieldOp(*(joins.convert(Emitter(else_block), v, t, where) for v, t in zip(else_leaves, joined))))
        results = self.fl.em.results(scf.IfOp(cond, joined, Region(then_block), Region(else_block)))
        return rebuild(tree, iter(results))

    def _branch(self, node: ast.expr) -> tuple[Block, list[SSAValue], Tree]:
        """Lower one arm of a conditional expression into its own block (lazily
        run): its leaves (a number, an array or a container of them) and tree."""
        outer = self.fl.em
        block = Block()
        self.fl.em = Emitter(block)
        try:
            value = self.fl.expr(node)
            found = self.fl.tree_leaves(value, node)
            # the expression's value is a copy: a list in it that the program holds no longer changes
            self.fl.lists.freeze_lists(value, f"the conditional expression at {self.fl.src.location(node)} may give "
                                     "a copy of it (in Python, the list itself)")
            if found is None or found[1] == pytrees.NONE:
                raise self.fl.src.error(node, f"expected a number here, got {self.fl.kind_of(value)}")
        finally:
            self.fl.em = outer
        return block, *found


def _static_int(value: Value) -> int | None:
    if isinstance(value, Static) and type(value.obj) is int:
        return value.obj
    if isinstance(value, SSAValue):
        return integers.constant_int(value)
    return None


def _static_arithmetic(op, left: Value, right: Value) -> Static | None:
    """int op int evaluated while lowering when one side is static (a shape)."""
    if not (isinstance(left, Static) or isinstance(right, Static)):
        return None
    a, b = _static_int(left), _static_int(right)
    fn = STATIC_OPERATORS.get(type(op))
    if a is None or b is None or fn is None:
        return None
    return Static(fn(a, b))


def _fold_floats(op: ast.operator, a: SSAValue, b: SSAValue) -> float | None:
    """`a op b` for two f64 constants, as Python computes it (IEEE double);
    None otherwise, and for a division by zero (IEEE's inf, not Python's error)."""
    fn = _FLOAT_FOLDS.get(type(op))
    if fn is None or a.type != F64 or b.type != F64:
        return None
    (known_a, x), (known_b, y) = known_value(a), known_value(b)
    if not (known_a and known_b) or (isinstance(op, ast.Div) and y == 0):
        return None
    return fn(float(x), float(y))


def _static_compare(op: ast.cmpop, left: Value, right: Value) -> Static | None:
    """A comparison decided while lowering: of two known values, `is` against a
    known object (a run-time number or a lambda is never None), `in` a known tuple."""
    if isinstance(op, (ast.In, ast.NotIn)) and containers.contains(left, right) is not None:  # k in d
        found = containers.contains(left, right).obj
        return Static(found == isinstance(op, ast.In))
    if isinstance(op, (ast.Is, ast.IsNot)):
        if isinstance(left, Static) and isinstance(right, Static):
            same = left.obj is right.obj
        elif isinstance(left, Static) or isinstance(right, Static):
            other = right if isinstance(left, Static) else left
            if not isinstance(other, (SSAValue, tuple, Closure)):
                return None
            same = False  # a function defined in the program is no object made before it (None)
        else:
            return None
        return Static(same if isinstance(op, ast.Is) else not same)
    if is_array(left) or is_array(right):
        return None
    (known_a, a), (known_b, b) = known_value(left), known_value(right)
    if not (known_a and known_b):
        return None
    try:
        if isinstance(op, (ast.In, ast.NotIn)):
            return Static((a in b) == isinstance(op, ast.In))
        fn = STATIC_OPERATORS.get(type(op))
        if fn is None:
            return None
        truth = bool(fn(a, b))  # a comparison of numpy's numbers is numpy's bool (its `+` is `or`)
        return Static(np.bool_(truth) if _numpy_number(left) or _numpy_number(right) else truth)
    except (TypeError, ValueError):  # objects Python cannot compare (or whose truth is ambiguous)
        return None


def _numpy_number(value: Value) -> bool:
    """A number known while lowering that is numpy's: a numpy scalar (or 0-d
    array), or a constant made of one (numpy_scalars.py)."""
    if isinstance(value, Static):
        return isinstance(value.obj, np.generic) or (isinstance(value.obj, np.ndarray) and value.obj.ndim == 0)
    return isinstance(value, SSAValue) and numpy_scalars.kind(value) == numpy_scalars.NUMPY


def _power_by_squaring(em: Emitter, base: SSAValue, n: int, mul) -> SSAValue:
    result = None
    square = base
    while n:
        if n & 1:
            result = square if result is None else mul(result, square)
        n >>= 1
        if n:
            square = mul(square, square)
    return result if result is not None else em.const(1, base.type)


def _literal_int(node: ast.expr) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
    ):
        return -node.operand.value
    return None


def _static_index(node: ast.expr):
    n = _literal_int(node)
    if n is not None:
        return n
    if isinstance(node, ast.Slice):
        parts = [node.lower, node.upper, node.step]
        values = [None if p is None else _literal_int(p) for p in parts]
        if all(p is None or v is not None for p, v in zip(parts, values)):
            return slice(*values)
    return None
