"""Lowering of numpy arrays: operators, indexing, in-place writes and the
numpy functions irad knows (the table `NUMPY`).

A numpy array of static shape is a ranked tensor. Everything lowers to the
tensor IR of irad/ir/tensor.py, with broadcasting made explicit, so every op
has a simple adjoint. Shapes, axes and dtypes are known while lowering: they
are `Static` values (`x.shape` is a static tuple, `len(x)` a static int), and
arithmetic and comparisons of static ints are evaluated statically, so a rule
can decline on a shape (`if x.shape[0] < 8: return None`).

In-place writes (`y[i] = v`, `y[a:b] += v`, `y += v`) become value-semantic
tensor updates that rebind the variable and every name sharing its array
(irad/frontend/views.py follows numpy's aliases and views). Writing to an
argument, or to an array whose origin irad cannot trace (a call's result), is
an error, since the caller's array would change.
"""

from __future__ import annotations

import ast
import builtins
import difflib
import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from xdsl.dialects import arith, cf, tensor
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import IndexType, IntegerAttr, TensorType
from xdsl.ir import Attribute, SSAValue

from irad.base.errors import UnsupportedError
from irad.frontend import indexing, integers, library_refusals, masked_reads, numpy_scalars
from irad.frontend.float_division import floor_divide, int_floor_divide, int_remainder, remainder
from irad.frontend.call_aliases import CallAliases
from irad.frontend.control_state import Path
from irad.frontend.dict_keys import assign_key
from irad.frontend.emitter import Emitter
from irad.frontend.globals import is_hidden
from irad.frontend.held_ints import HeldInts, zero_divisor_of_ints
from irad.frontend.numpy_table import NUMPY, library_entries, numpy_function, numpy_name, numpy_signature, parameters
from irad.frontend.values import ListValue, MappingValue, Static, is_array, new_list
from irad.frontend import folding
from irad.frontend.folding import folded
from irad.frontend.views import Reshape, Slice, Transpose, Views
from irad.ir.types import (
    F32, F64, I1, I64, NARROW_INTS, describe, dtype_name, int_element, is_bool, is_float, is_int, is_narrow_int, is_uint,
    numpy_dtype, uint_mask,
)
from irad.ir import gather as G
from irad.ir import contraction
from irad.ir import tensor as T
from irad.ir.constants import ConstantTooLarge, refuse_large
from irad.ir.isa import isa

# What an array error without a more specific hint points to.
ARRAYS_HINT = "docs/arrays.md lists the numpy functions, shapes and indexing irad supports"

INDEX = IndexType()


@dataclass(frozen=True)
class BoundMethod:
    """`x.sum` and friends: a numpy function with the array as first argument."""

    fn: object
    array: SSAValue


# the discrete Fourier transform as real matrix products (docs/arrays.md, "Not supported")
FFT_REWRITE = ("the DFT's real and imaginary parts as matrix products: k = np.arange(n); "
               "angle = 2 * np.pi * np.outer(k, k) / n; re = np.cos(angle) @ x; im = -np.sin(angle) @ x "
               "(np.fft.fft(x) is re + 1j * im; its np.abs is np.hypot(re, im); rfft keeps the first n // 2 + 1 "
               "rows; ifft uses +np.sin and divides by n)")


def is_numpy_callable(obj) -> bool:
    """A function of the numpy namespace or of scipy (which irad handles or rejects
    by name), or a numpy scalar type irad converts with (np.float64(x))."""
    if library_entries(obj) is not None:
        return callable(obj) and not isinstance(obj, type)
    if isinstance(obj, np.ufunc):
        return True
    try:
        if obj in NUMPY:
            return True
    except TypeError:  # unhashable (a callable dataclass instance): not numpy's
        return False
    module = getattr(obj, "__module__", None) or ""
    return callable(obj) and not isinstance(obj, type) and module.split(".")[0] == "numpy"


_DTYPES: dict[object, Attribute] = {
    np.float64: F64, float: F64, np.float32: F32, np.int64: I64, int: I64,
    np.bool_: I1, bool: I1,
    **{dtype.type: element for element, dtype in NARROW_INTS.items()},  # int8 ... uint32
}


class ArrayLowering:
    """The numpy part of one FunctionLowering (`fl`), which owns env and errors."""

    def __init__(self, fl) -> None:
        self.fl = fl
        self.fresh: set[SSAValue] = set()  # arrays this function created: writable
        # values control flow merged from an argument (or global) array and others: (kind, its name, where)
        self.joined_arguments: dict[SSAValue, tuple[str, str, str]] = {}
        self.held_ints = HeldInts()  # values numpy keeps as ints that irad computes as floats
        self.views = Views(self)  # which names share an array, and through which views
        self.call_aliases = CallAliases(self.views)  # call results that may be the arrays given (call_aliases.py)

    @property
    def em(self):
        return self.fl.em

    def error(self, node, message: str, hint: str = ARRAYS_HINT):
        return self.fl.src.error(node, message, hint)

    def check(self, condition: SSAValue, node, message: str) -> None:
        """A check at run time (cf.assert): both backends raise RuntimeCheckError
        with the message when it fails."""
        self.em.op(cf.AssertOp(condition, f"{self.fl.src.location(node)}: {message}"))

    def record(self, fn, args, result, node, params=()):
        """irad's `result` of `fn(*args)` in numpy's dtypes, and what they say of
        ints held as floats (held_ints.py)."""
        return self.held_ints.record(fn, args, result, self.fl.src.location(node) if node is not None else "",
                                     lambda message, hint: self.error(node, message, hint),
                                     lambda v, elem: self.as_numpy_dtype(v, elem, node), params)

    def as_numpy_dtype(self, v: SSAValue, elem: Attribute, node) -> SSAValue:
        """`v`, a result irad computed in another dtype, in numpy's (element type
        `elem`). An int irad computed as a float is exact up to 2**53: beyond,
        its float has rounded (and past 2**63 converting it is undefined), so
        the program stops there at run time rather than return a rounded int."""
        if is_float(T.element(v)) and is_int(elem):
            em = self.em
            size = T.pointwise(em, lambda e, a: e.op(mathd.AbsFOp(a[0])), [v], T.element(v))
            if is_array(v):  # the largest (NaN, which is no int, fails the check too)
                size = T.reduce_all(em, size, arith.MaximumfOp)
            exact = em.op(arith.CmpfOp(size, em.const(float(integers.EXACT_IN_FLOAT), size.type), "ole"))
            self.check(exact, node, "numpy computes this int exactly, irad computed it as a float, exact up to "
                       "2**53 only, and it is beyond (convert the arguments to float first: x.astype(float))")
        converted = self.cast(v, elem)
        return self.new(converted) if is_array(converted) else converted  # numpy's own new array

    def new(self, v: SSAValue) -> SSAValue:
        """Mark a freshly created array (numpy would return a new array)."""
        self.fresh.add(v)
        return v

    def carried(self, results, *sources, where: str = "") -> None:
        """Values control flow merges (scf.if/for/while results, loop-carried block
        arguments) at `where` stay writable where every value they stand for was (a float
        array that is an int array on some path is refused where it is written:
        held_ints.py); one that may be an argument array is remembered, for the refusal."""
        self.call_aliases.carried(results, sources)
        for k, v in enumerate(results):
            values = [s[k] for s in sources if k < len(s)]
            if len(values) == len(sources) and all(u in self.fresh for u in values):
                self.fresh.add(v)
                continue
            for u in values:
                found = self.joined_arguments.get(u) or self.views.argument_at(u, where)
                if found is not None:
                    self.joined_arguments[v] = found
                    break

    # ---- static values ----------------------------------------------------
    def static(self, value, node, what: str):
        """A value known while lowering: Static objects, literal constants, tuples of them."""
        known, obj = _known(value)
        if not known:
            raise self.fl.runtime_error(node, f"{what} must be known while lowering (a constant or a shape)",
                                        ARRAYS_HINT, value)
        return _plain(obj)

    @staticmethod
    def is_static(value) -> bool:
        return _known(value)[0]

    @staticmethod
    def given(value) -> bool:
        """An argument other than None (an omitted optional one is Static(None))."""
        return not (value is None or (isinstance(value, Static) and value.obj is None))

    def static_axes(self, axis, rank: int, node) -> tuple[int, ...]:
        axis = self.static(axis, node, "the axis")
        if axis is None:
            return tuple(range(rank))
        axes = axis if isinstance(axis, tuple) else (axis,)
        out = []
        for a in axes:
            if not isinstance(a, int) or not -rank <= a < rank:
                raise self.error(node, f"axis {a} is out of bounds for an array of rank {rank}")
            out.append(a % rank)
        return tuple(sorted(set(out)))

    # ---- conversions --------------------------------------------------------
    def to_element(self, v: SSAValue, elem: Attribute) -> SSAValue:
        """Convert a number or array to element type `elem` (float)."""
        em = self.em
        if not is_array(v):
            if is_float(v.type) and v.type != elem and elem == F32:
                return em.op(arith.TruncFOp(v, F32))  # a Python float is weak, as in numpy
            return em.to_float(v, elem)
        src = T.element(v)
        if src == elem:
            return v
        if is_float(src):
            cast = arith.TruncFOp if elem == F32 else arith.ExtFOp
            return em.op(cast(v, TensorType(elem, T.shape(v))))
        return T.to_float(em, v, elem)

    def cast(self, v: SSAValue, elem: Attribute) -> SSAValue:
        """A number or array as element type `elem`, as numpy casts what is written
        into an array of that dtype (and astype converts): floats to ints toward
        zero, numbers to bools by `!= 0`. Piecewise constant: no derivative."""
        src = T.element(v)
        if is_float(elem) or src == elem:
            return self.to_element(v, elem) if is_float(elem) else v
        if is_bool(elem):
            return T.pointwise(self.em, lambda e, a: Emitter(e.block).to_bool(a[0]), [v], elem, "piecewise-constant")
        if is_float(src):
            return T.pointwise(self.em, lambda e, a: e.op(arith.FPToSIOp(a[0], elem)), [v], elem,
                               "piecewise-constant")
        if is_int(src) and is_int(elem):  # numpy wraps, as C converts: int8's -1 is uint8's 255
            width = elem.width.data
            cast = arith.TruncIOp if src.width.data > width else arith.ExtSIOp  # a uint's carrier is non-negative
            return self.wrap(T.pointwise(self.em, lambda e, a: e.op(cast(a[0], elem)), [v], elem))
        return self.int_to(v, elem, None) if is_array(v) else self.em.to_int(v)

    def result_element(self, values) -> Attribute:
        """numpy's result dtype for floats: arrays decide, f32 unless an f64 or an
        int64 array joins (numpy: int64 with float32 is float64; bool keeps float32)."""
        arrays = [T.element(v) for v in values if is_array(v)]
        # numpy: float32 with int8 ... uint16 stays float32, with wider ints is float64
        if F64 in arrays or (F32 in arrays and any(is_int(e) and numpy_dtype(e).itemsize > 2 for e in arrays)):
            return F64
        if F32 in arrays and any(isinstance(v, SSAValue) and numpy_scalars.is_float64(v) for v in values):
            return F64  # an np.float64 (or np.int64) number is not weak (NEP 50): x32 * np.float64(1.1)
        if F32 in arrays:
            return F32
        if arrays and not any(is_float(e) for e in arrays) and all(numpy_dtype(e).itemsize <= 2 for e in arrays) \
                and any(isinstance(v, SSAValue) and not is_array(v) and v.type == F32 for v in values):
            return F32  # an np.float32 number is not weak: with int8 ... uint16 or bool arrays, float32
        return F64

    def broadcast(self, node, *values: SSAValue) -> list[SSAValue]:
        dims = T.broadcast_shapes(*(T.shape(v) for v in values))
        if dims is None:
            shown = " and ".join(str(T.shape(v)) for v in values)
            raise self.error(node, f"shapes {shown} cannot be broadcast together")
        return [T.broadcast_to(self.em, v, dims) for v in values]

    def floats(self, node, *values: SSAValue) -> list[SSAValue]:
        """Bring operands to a common float dtype and a common shape."""
        elem = self.float_element(node, values)
        return self.broadcast(node, *(self.to_element(v, elem) for v in values))

    def float_element(self, node, values) -> Attribute:
        """result_element, for an operation that numpy computes in floats only
        where a float joins: of narrow int arrays alone (np.sqrt(uint8_array)
        is float16, uint8_array @ uint8_array uint8) it is refused."""
        narrow = [T.element(v) for v in values if is_narrow_int(T.element(v))]
        if narrow and not any(is_float(T.element(v)) for v in values):
            raise self.narrow_error(node, numpy_dtype(narrow[0]), "in floating point")
        return self.result_element(values)

    def accumulated(self, x: SSAValue, node) -> SSAValue:
        """An int array as numpy sums and multiplies it (np.sum, np.cumsum):
        int8 ... int32 in int64; uint8 ... uint32 would be uint64, refused."""
        if not is_narrow_int(T.element(x)):
            return x
        if is_uint(T.element(x)):
            raise self.error(node, f"the sum or product of a {numpy_dtype(T.element(x))} array is uint64 in numpy, "
                             "a dtype irad does not compute", "convert the array first: x.astype(np.int64)")
        return self.int_to(x, I64, node)

    def integers(self, node, *values: SSAValue) -> list[SSAValue]:
        """Bring int and bool operands to numpy's common int dtype (int64, or by
        NEP 50 a narrow one: `uint8_array - 128` stays uint8) and a common shape."""
        elem = self.int_result(node, values)
        return self.broadcast(node, *(self.int_to(v, elem, node) for v in values))

    def int_result(self, node, values) -> Attribute:
        """numpy's dtype of arithmetic on int and bool `values` (NEP 50): the
        arrays' and numpy numbers' dtypes decide, a Python int takes theirs."""
        if not any(is_narrow_int(T.element(v)) for v in values):
            return I64
        strong = []
        for v in values:
            if is_array(v) or is_bool(v.type):
                strong.append(numpy_dtype(T.element(v)))
            elif numpy_scalars.kind(v) == numpy_scalars.NUMPY:  # an np.int64 is not weak
                strong.append(np.dtype(np.int64))
            elif numpy_scalars.kind(v) != numpy_scalars.PYTHON:
                raise self.error(node, "an int that may be a numpy int64 or a Python int, with an array of "
                                 f"dtype {numpy_dtype(next(T.element(v) for v in values if is_narrow_int(T.element(v))))}: "
                                 "numpy's result dtype differs between the two (NEP 50)",
                                 "convert the array first: x.astype(np.int64)")
        return int_element(np.result_type(*strong))  # never uint64 (refused where it enters: types.py)

    def int_to(self, v: SSAValue, elem: Attribute, node) -> SSAValue:
        """An int or bool number or array as int element type `elem`, which
        holds all its values (int_result), except a Python int: it must fit, as
        numpy requires (`uint8_array + 300` raises OverflowError)."""
        src, em = T.element(v), self.em
        if src == elem:
            return v
        if is_bool(src):
            return T.pointwise(em, lambda e, a: e.op(arith.ExtUIOp(a[0], elem)), [v], elem)
        if is_array(v) or elem == I64:  # to a wider dtype (a uint's carrier holds its values as non-negative)
            return T.pointwise(em, lambda e, a: e.op(arith.ExtSIOp(a[0], elem)), [v], elem)
        dtype = numpy_dtype(elem)
        info = np.iinfo(dtype)
        c = integers.constant_int(v)
        if c is not None:
            if not info.min <= c <= info.max:
                raise self.error(node, f"Python integer {c} out of bounds for {dtype} (numpy raises OverflowError)",
                                 f"write a value in [{info.min}, {info.max}], or convert the array first: "
                                 "x.astype(np.int64)")
            return em.const(c, elem)
        outside = em.op(arith.OrIOp(em.op(arith.CmpiOp(v, em.const(int(info.min), I64), "slt")),
                                    em.op(arith.CmpiOp(v, em.const(int(info.max), I64), "sgt"))))
        em.op(cf.AssertOp(em.op(arith.XOrIOp(outside, em.const(1, I1))),
                          f"{self.fl.src.location(node)}: Python integer out of bounds for {dtype} "
                          "(numpy raises OverflowError)"))
        return em.op(arith.TruncIOp(v, elem))

    def wrap(self, v: SSAValue) -> SSAValue:
        """`v`, a result of `+ - *` (or a truncation), wrapped as numpy's uint
        dtype of its element type wraps: its carrier's bits above the dtype's
        masked off (irad/ir/types.py). Other dtypes wrap by themselves."""
        elem = T.element(v)
        if not is_uint(elem):
            return v
        mask = T.dense(self.em, uint_mask(elem), v.type) if is_array(v) else self.em.const(uint_mask(elem), elem)
        return self.em.op(arith.AndIOp(v, mask))

    def no_narrow_number(self, x: SSAValue, node) -> SSAValue:
        """`x`, of which a number is taken (an element, a full reduction), if
        its dtype is not a narrow int: a number of one would be an np.uint8,
        whose arithmetic wraps, where irad's numbers are int64."""
        dtype = numpy_dtype(T.element(x))
        if is_narrow_int(T.element(x)):
            raise self.error(node, f"a number of dtype {dtype} (an element or a full reduction of a {dtype} array): "
                             f"numpy's {dtype} numbers wrap in {dtype.itemsize * 8} bits, irad's numbers are int64",
                             "keep it an array (x[0:1], np.max(x, keepdims=True)), or convert the array first: "
                             "x.astype(np.int64)")
        return x

    def narrow_error(self, node, dtype: np.dtype, how: str):
        return self.error(node, f"an array of dtype {dtype} computed {how}: irad keeps numpy's {dtype} "
                          "arithmetic (+ - * // %, comparisons, bitwise, np.where/maximum/minimum/abs/clip, "
                          "np.sum/prod/max/min along axes) and conversions, not this operation",
                          "convert it first: x.astype(np.float64) or x.astype(np.int64)")

    # ---- operators ------------------------------------------------------------
    def binary(self, op: ast.operator, a: SSAValue, b: SSAValue, node) -> SSAValue:
        if isinstance(op, ast.MatMult):
            return self.matmul(a, b, node)
        if isinstance(op, ast.Pow):
            return self.power(a, b, node)
        if isinstance(op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
            return self.bitwise(op, a, b, node)
        floating = any(is_float(T.element(v)) for v in (a, b))
        if isinstance(op, ast.Div) and not floating:  # numpy: ints divide in float64
            a, b = (self.to_element(v, F64) if is_narrow_int(T.element(v)) else v for v in (a, b))
        if isinstance(op, (ast.Mod, ast.FloorDiv)):
            return self.division(isinstance(op, ast.Mod), a, b, node)
        if not floating and not isinstance(op, ast.Div):
            return self.int_arithmetic(op, a, b, node)
        classes = {ast.Add: arith.AddfOp, ast.Sub: arith.SubfOp, ast.Mult: arith.MulfOp, ast.Div: arith.DivfOp}
        cls = classes.get(type(op))
        if cls is None:
            raise self.error(node, f"the operator {type(op).__name__} on arrays is not supported")
        x, y = self.floats(node, a, b)
        if not all(is_array(v) for v in (x, y)):  # a 0-d array with a number is a number, as numpy's
            x, y = (T.extract_scalar(self.em, v) if is_array(v) else v for v in (x, y))
            return self.em.op(cls(x, y))
        return self.new(self.em.op(cls(x, y)))

    def division(self, modulo: bool, a: SSAValue, b: SSAValue, node) -> SSAValue:
        """`%` or `//` (np.remainder, np.floor_divide): of floats, or of int and
        bool arrays and numbers as numpy's int64 (float_division.py)."""
        if any(is_float(T.element(v)) for v in (a, b)):
            x, y = self.floats(node, a, b)
            result = (remainder if modulo else floor_divide)(self.em, x, y)
            return self.new(zero_divisor_of_ints(self.held_ints, self.em, x, y, result))
        x, y = self.integers(node, *(self.array(v, node) for v in (a, b)))
        return self.new((int_remainder if modulo else int_floor_divide)(self.em, x, y))  # of x's dtype

    def int_arithmetic(self, op: ast.operator, a: SSAValue, b: SSAValue, node) -> SSAValue:
        """+ - * on int and bool arrays: int64 arrays, as numpy computes them (wrapping)."""
        classes = {ast.Add: arith.AddiOp, ast.Sub: arith.SubiOp, ast.Mult: arith.MuliOp}
        if type(op) not in classes:
            raise self.error(node, f"the operator {type(op).__name__} on arrays is not supported")
        if all(is_bool(T.element(v)) for v in (a, b)):  # numpy: + is `or`, * is `and`, bools again
            if isinstance(op, ast.Sub):
                raise self.error(node, "`-` of two bool arrays is not supported (numpy: TypeError)",
                                 "use `^` for the logical xor, or convert one to int first (mask * 1)")
            x, y = self.broadcast(node, a, b)
            return self.new(self.em.op((arith.OrIOp if isinstance(op, ast.Add) else arith.AndIOp)(x, y)))
        x, y = self.integers(node, a, b)
        return self.new(self.wrap(self.em.op(classes[type(op)](x, y))))

    def _int_power_of_array(self, a: SSAValue, b: SSAValue, node) -> SSAValue:
        """int ** an int array: computed while lowering where both are known (numpy's
        values, wrapping, and its error for a negative exponent), else refused."""
        import irad.frontend.constant_arrays as constant_arrays  # (imports arrays.py)
        base, exponents = constant_arrays.evaluate(a), constant_arrays.evaluate(b)
        if base is None or exponents is None:
            raise self.error(node, "an int ** an int array known only at run time is not supported",
                             "convert to floats: float(a) ** k or a ** k.astype(float)")
        if is_bool(T.element(a)) or is_bool(T.element(b)):
            raise self.error(node, "a bool ** an int array (numpy gives int8)", "convert first: (mask * 1) ** k")
        if np.any(exponents < 0):
            raise self.error(node, "numpy's int ** negative int raises (integers to negative integer powers are "
                             "not allowed)", "convert to floats: a ** k.astype(float)")
        dtype = np.result_type(numpy_dtype(T.element(a)), numpy_dtype(T.element(b)))
        values = np.power(np.asarray(base, dtype=dtype), np.asarray(exponents, dtype=dtype))
        return self.new(T.dense(self.em, values, TensorType(int_element(values.dtype), values.shape)))

    def _int_power(self, a: SSAValue, n, node) -> SSAValue:
        """An int array ** an int: numpy's ints of `a`'s dtype, wrapping as its
        products do (squarings: the same bits, products modulo 2**64 associate)."""
        if is_bool(T.element(a)):
            raise self.error(node, "a bool array ** an int (numpy gives int8)", "convert first: (mask * 1) ** n")
        if not isinstance(n, (int, np.integer)) or isinstance(n, (bool, np.bool_)):
            raise self.error(node, "an int array ** an int known only at run time is not supported",
                             "convert the base to floats: a.astype(float) ** n (or write the products out)")
        if n < 0:
            raise self.error(node, "numpy's int ** negative int raises (integers to negative integer powers are "
                             "not allowed)", "convert the base to floats: a.astype(float) ** n")
        result, square = None, a
        while True:
            if n & 1:
                result = square if result is None else self.int_arithmetic(ast.Mult(), result, square, node)
            n >>= 1
            if not n:
                break
            square = self.int_arithmetic(ast.Mult(), square, square, node)
        if result is None:  # ** 0: ones
            return self.new(T.dense(self.em, 1, a.type) if is_array(a) else self.em.const(1, a.type))
        return result if result is not a else self.new(self.copy(a))

    def bitwise(self, op: ast.operator, a: SSAValue, b: SSAValue, node) -> SSAValue:
        """& | ^ on bool arrays (masks) or int arrays."""
        if any(is_float(T.element(v)) for v in (a, b)):
            raise self.error(node, "bitwise operators on float arrays are not defined (numpy: TypeError)")
        cls = {ast.BitAnd: arith.AndIOp, ast.BitOr: arith.OrIOp, ast.BitXor: arith.XOrIOp}[type(op)]
        if all(is_bool(T.element(v)) for v in (a, b)):
            x, y = self.broadcast(node, a, b)
        else:
            x, y = self.integers(node, a, b)
        return self.new(self.em.op(cls(x, y)))

    def refuse_bools(self, node, what: str, *values) -> None:
        """numpy adds bools inside `what` as `or` where irad would count them, and
        raises nothing (np.trapezoid): refused by name. Where numpy raises for
        bools (a subtraction inside np.ptp), held_ints refuses every such call."""
        if any(isinstance(v, SSAValue) and is_bool(T.element(v)) for v in values):
            raise self.error(node, f"{what} of bool values is not supported (numpy adds them as bools)",
                             "convert to numbers first: mask * 1.0, mask.astype(float)")

    def invert(self, x: SSAValue, node) -> SSAValue:
        """~mask: the logical not of a bool array."""
        if not is_bool(T.element(x)):
            raise self.error(node, "`~` is supported on bool arrays (masks) only")
        return self.new(self.em.op(arith.XOrIOp(x, T.dense(self.em, True, x.type))))

    def power(self, a: SSAValue, b: SSAValue, node) -> SSAValue:
        known, n = _known(b)
        if not any(is_float(T.element(v)) for v in (a, b)):
            if is_array(b):  # 2 ** k: numpy's int64 of known values, else refused
                return self._int_power_of_array(a, b, node)
            return self._int_power(a, n if known else None, node)
        if known and type(n) is int and abs(n) <= 8:  # x ** 2, x ** -1: multiplications
            (x,) = self.floats(node, a)
            result = None
            for _ in range(abs(n)):
                result = x if result is None else self.em.op(arith.MulfOp(result, x))
            one = T.dense(self.em, 1.0, x.type) if is_array(x) else self.em.const(1.0, x.type)
            if result is None:
                return self.new(one)
            return self.new(self.em.op(arith.DivfOp(one, result)) if n < 0 else result)
        x, y = self.floats(node, a, b)
        return self.new(self.em.op(mathd.PowFOp(x, y)))

    def negate(self, x: SSAValue, node) -> SSAValue:
        if is_int(T.element(x)):  # int64 wraps, as in numpy
            zero = T.dense(self.em, 0, x.type) if is_array(x) else self.em.const(0, x.type)
            return _fresh_array(self, self.wrap(self.em.op(arith.SubiOp(zero, x))))
        if is_bool(T.element(x)):
            raise self.error(node, "`-` of a bool array is not supported (numpy: TypeError)",
                             "use `~mask` for the logical not")
        (x,) = self.floats(node, x)
        return self.new(self.em.op(arith.NegfOp(x)))

    def compare(self, predicate: str, a: SSAValue, b: SSAValue, node) -> SSAValue:
        if not any(is_float(T.element(v)) for v in (a, b)):  # ints as ints: exact beyond 2**53
            x, y = self.integers(node, a, b)
            signed = _SIGNED_PREDICATES[predicate]  # a uint's carrier is non-negative: they are its unsigned ones
            return self.new(T.pointwise(self.em, lambda e, v: e.op(arith.CmpiOp(v[0], v[1], signed)), [x, y], I1,
                                        "piecewise-constant"))
        x, y = self.floats(node, a, b)
        return self.new(T.compare(self.em, predicate, x, y))

    def matmul(self, a: SSAValue, b: SSAValue, node) -> SSAValue:
        em = self.em
        if not is_array(a) or not is_array(b):
            x, y = self.floats(node, a, b)
            return self.new(em.op(arith.MulfOp(x, y)))
        elem = self.float_element(node, [a, b])
        a, b = self.to_element(a, elem), self.to_element(b, elem)
        sa, sb = T.shape(a), T.shape(b)
        if not sa or not sb:  # numpy refuses a 0-d operand too
            raise self.error(node, f"matmul of a 0-d array (shapes {sa} and {sb}): it needs at least one axis")
        if len(sa) > 2 or len(sb) > 2:
            return self.new(self.batched_matmul(a, b, node))
        if sa[-1] != sb[0]:
            raise self.error(node, f"matmul: shapes {sa} and {sb} are not aligned")
        if len(sa) == 1 and len(sb) == 1:
            return T.reduce_all(em, em.op(arith.MulfOp(a, b)))
        x = T.reshape(em, a, (1, sa[0])) if len(sa) == 1 else a
        y = T.reshape(em, b, (sb[0], 1)) if len(sb) == 1 else b
        out = T.matmul(em, x, y)
        dims = tuple(T.shape(out)[i] for i, keep in enumerate((len(sa) == 2, len(sb) == 2)) if keep)
        return self.new(T.reshape(em, out, dims))

    def batched_matmul(self, a: SSAValue, b: SSAValue, node) -> SSAValue:
        """matmul above rank 2: stacks of matrices whose batch axes broadcast,
        one contraction (einsum "...ik,...kj->...ij")."""
        em = self.em
        sa, sb = T.shape(a), T.shape(b)
        x = T.reshape(em, a, (1, *sa)) if len(sa) == 1 else a
        y = T.reshape(em, b, (*sb, 1)) if len(sb) == 1 else b
        (n, k), (k2, m) = T.shape(x)[-2:], T.shape(y)[-2:]
        batch = T.broadcast_shapes(T.shape(x)[:-2], T.shape(y)[:-2])
        if k != k2 or batch is None:
            raise self.error(node, f"matmul: shapes {sa} and {sb} are not aligned")
        x, y = T.broadcast_to(em, x, (*batch, n, k)), T.broadcast_to(em, y, (*batch, k, m))
        stack = contraction.LETTERS[26 : 26 + len(batch)]
        out = contraction.contract(em, [x, y], [stack + "ik", stack + "kj"], stack + "ij")
        dims = (*batch, *((n,) if len(sa) > 1 else ()), *((m,) if len(sb) > 1 else ()))
        return T.reshape(em, out, dims)

    # ---- attributes and methods -----------------------------------------------
    def attribute(self, x: SSAValue, name: str, node):
        dims = T.shape(x)
        if name == "shape":
            return Static(dims)
        if name == "ndim":
            return Static(len(dims))
        if name == "size":
            return Static(math.prod(dims))
        if name == "T":
            return self.transpose_view(x, tuple(reversed(range(len(dims)))))
        if name in _METHODS:
            return Static(BoundMethod(_METHODS[name], x))
        if name == "at":  # JAX's functional update
            raise self.error(node, "`x.at` is JAX's, and irad takes it only as a whole update",
                             "write x.at[i].set(v) (or .add, .multiply, .divide, .power, .min, .max, .get()) "
                             "in one expression, or numpy's y = x.copy(); y[i] = v")
        if name in _REMOVED_IN_NUMPY_2:  # numpy raises AttributeError too
            raise self.error(node, f"numpy 2 removed the array method `.{name}`", _REMOVED_IN_NUMPY_2[name])
        raise self.error(node, f"the array attribute or method `.{name}` is not supported",
                         "see docs/arrays.md for the supported numpy surface")

    # ---- calls ------------------------------------------------------------------
    def call_values(self, fn, args: list, kwargs: dict, node):
        """A call to a numpy function (or an array method, the array first) with argument values."""
        if any(isinstance(v, masked_reads.Selection) for v in (*args, *kwargs.values())):
            return masked_reads.call(self, fn, args, kwargs, node)
        entry = NUMPY.get(fn)
        if entry is None:
            name = numpy_name(fn)
            refused = library_refusals.refusal(name)
            if refused is not None:
                raise self.error(node, f"{name} is not supported: {refused[0]}", refused[1])
            if name.startswith(("numpy.fft.", "scipy.fft.", "scipy.fftpack.")):
                raise self.error(node, f"{name}: irad has no complex numbers (its arrays hold floats, ints or "
                                 "bools), and a Fourier transform's values are complex", FFT_REWRITE)
            if name.startswith("scipy.stats.") and type(fn).__name__.endswith("_gen"):  # norm(loc, scale)
                raise self.error(
                    node, f"freezing the distribution {name}(...) inside a program is not supported",
                    f"call its function with the parameters, {name}.logpdf(x, ...), or freeze it outside "
                    "the program as a global (its methods are then read as that function's calls)",
                )
            if name.split(".")[0] == "scipy":
                raise self.error(
                    node, f"the scipy function {name} is not supported by irad",
                    "docs/scipy.md lists the scipy functions irad lowers; write it with those "
                    "and numpy's, or compute it outside the differentiated function",
                )
            if name.startswith("numpy.random."):  # np.random.default_rng(seed), np.random.normal(...)
                raise self.error(
                    node, f"{name}: irad's programs draw no random numbers (a compiled program is a function "
                    "of its arguments, and a seed would be read once, while lowering)",
                    "draw them outside and pass them in: noise = np.random.default_rng(seed).normal(size=shape), "
                    "then loss(w, x, noise), as a JAX program takes its key's draws",
                )
            raise self.error(
                node, f"the numpy function {name} is not supported by irad",
                "docs/arrays.md lists the numpy functions irad lowers; write it with those in a "
                "function of your own (which @irad.rrule may give a derivative), or compute it "
                "outside the differentiated function",
            )
        handler, params = entry
        bound_args = self.bind(fn, params, args, kwargs, node)
        known = folding.known_call(fn, [_known(v) for v in args], {k: _known(v) for k, v in kwargs.items()})
        if known is not None:  # np.prod(x.shape), np.sqrt(n): numbers of known numbers stay known
            return known
        if self.fl.owner.has_rules(fn) and all(isinstance(v, SSAValue) for v in args) and not kwargs:
            # the pass must meet a call op to consult the rule table
            try:
                result = self.fl.calls.call(fn, list(args), node)
            except WrapperError as error:
                raise self.error(node, error.message, error.hint) from None
            return self.record(fn, bound_args, result, node, parameters(params))  # np.tensordot of bools is bools
        try:
            result = handler(self, node, *bound_args)
        except ConstantTooLarge as error:
            raise self.error(node, error.message, error.hint) from None
        result = self.record(fn, bound_args, result, node, parameters(params))
        numpy_scalars.mark_results(result, bound_args, numpy_scalars.PYTHON if fn == "ndarray.item" else numpy_scalars.NUMPY)
        return result

    def argument(self, node: ast.expr):
        """An argument: a value, a string, or a list/tuple literal of values (shapes, sequences)."""
        if isinstance(node, (ast.List, ast.Tuple)):
            return tuple(self.argument(e) for e in node.elts)
        if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, str)):
            return Static(node.value)  # None for an omitted value; modes: "constant", 'ij->ji', 'fro'
        return self.fl.expr(node)

    def bind(self, fn, params: tuple[str, ...], args, kwargs, node) -> list:
        """One value per parameter of the entry, bound as numpy binds the call: a
        positional argument is the parameter numpy has at its place; a
        parameter irad does not take is an error naming it, unless the call
        passes numpy's default for it."""
        spec = parameters(params)
        names = [p.name for p in spec]
        shown = _shown_name(fn)
        variadic = next((i for i, p in enumerate(spec) if p.variadic), None)
        numpy = numpy_signature(fn)
        if variadic is not None:  # f(*arrays, key=...): the positional arguments, as a tuple
            args = [*args[:variadic], tuple(args[variadic:])]
            numpy = None if numpy is None else replace(numpy, positional=())
        elif numpy is not None and numpy.variadic:
            numpy = replace(numpy, positional=())
        longest = max(len(names), len(numpy.positional) if numpy is not None else 0)
        if len(args) > longest:
            raise self.error(node, f"{shown} takes at most {longest} positional arguments ({len(args)} given)",
                             f"irad takes: {', '.join(names)}")
        values: dict = {}
        for i, v in enumerate(args):
            values[_place(i, names, numpy)] = v
        for k, v in kwargs.items():
            if k in values:
                raise self.error(node, f"{shown} got multiple values for the argument '{k}'")
            values[k] = v
        for k in list(values):
            if k in names:
                continue
            if numpy is not None and (k in numpy.named or k in numpy.positional):
                known, obj = _known(values[k])
                if known and numpy.is_default(k, obj):
                    del values[k]  # numpy's default: nothing to do
                    continue
                raise self.error(node, f"{shown}: irad does not support its argument '{k}'",
                                 f"irad takes: {', '.join(names)}; leave '{k}' out (or pass numpy's default)")
            near = difflib.get_close_matches(k, names, n=1)
            raise self.error(node, f"{shown} got an unexpected keyword argument '{k}'"
                             + (f" (did you mean '{near[0]}'?)" if near else ""),
                             f"its arguments: {', '.join(names)}")
        for p in spec:
            if p.required and p.name not in values:
                raise self.error(node, f"{shown} needs the argument '{p.name}'")
        return [values.get(p.name, Static(p.default)) for p in spec]

    def value(self, v, node) -> SSAValue:
        return self.fl.as_number(v, node)

    def array(self, v, node) -> SSAValue:
        """A numpy argument as an SSA value (a number or an array)."""
        if isinstance(v, Static) and type(v.obj) in (tuple, list):  # np.array(x.shape): a sequence known while lowering
            v = tuple(Static(item) for item in v.obj)
        if isinstance(v, tuple):
            return self.from_sequence(v, node)
        return self.value(v, node)

    def from_sequence(self, values: tuple, node) -> SSAValue:
        """np.array([...]) of numbers: a constant, or tensor.from_elements."""
        rows = getattr(values, "rows_of", None)  # a list of an array's rows (lists.py): that array
        if rows is not None:
            return self.new(_copy_op(self, rows))
        items = [self.array(v, node) for v in values]
        if any(is_array(v) for v in items):
            return self.stack_values(items, 0, node)
        elem = self.common_element(items)
        items = [self.convert(v, elem) for v in items]
        return self.new(self.em.op(tensor.FromElementsOp(*items)))

    def common_element(self, values) -> Attribute:
        """numpy's result dtype: float if any is, else int64 (or the arrays'
        narrow int dtypes' common one), bool if all are."""
        if any(is_float(T.element(v)) for v in values):
            return self.result_element(values)
        if all(is_bool(T.element(v)) for v in values):
            return I1
        arrays = [numpy_dtype(T.element(v)) for v in values if is_array(v)]
        return int_element(np.result_type(*arrays)) if any(is_narrow_int(T.element(v)) for v in values) else I64

    def convert(self, v: SSAValue, elem: Attribute) -> SSAValue:
        """A number or array to element type `elem` (float, int64 from int or bool, bool)."""
        if is_float(elem):
            return self.to_element(v, elem)
        if elem == T.element(v):
            return v
        if is_array(v):
            return self.int_to(v, elem, None)
        return self.em.to_int(v)

    def dtype(self, value, node, default: Attribute) -> Attribute:
        obj = self.static(value, node, "dtype")
        if obj is None:
            return default
        if isinstance(obj, str):  # 'float64', 'f8', 'int64', '?': numpy's own spelling of a dtype
            try:
                obj = np.dtype(obj)
            except TypeError:
                raise self.error(node, f"{obj!r} is not a numpy dtype",
                                 "use 'float64', 'float32', 'int64' or 'bool' (or np.float64, ...)") from None
        obj = getattr(obj, "type", obj) if isinstance(obj, np.dtype) else obj
        if obj not in _DTYPES:
            raise self.error(node, f"dtype {getattr(obj, '__name__', obj)!r} is not supported",
                             "use float64, float32, int64, bool, or int8 ... uint32")
        return _DTYPES[obj]

    def shape_arg(self, value, node) -> tuple[int, ...]:
        dims = self.static(value, node, "a shape")
        dims = dims if isinstance(dims, tuple) else (dims,)
        if not all(isinstance(d, int) and d >= 0 for d in dims):
            raise self.error(node, f"the shape {dims} must be non-negative ints")
        return dims

    # ---- reductions -----------------------------------------------------------------
    def reduction(self, x, axis, keepdims, node, combiner) -> SSAValue:
        x = self.array(x, node)
        if not is_array(x):
            return self.to_element(x, F64) if not is_float(x.type) else x
        if combiner in INT_COMBINERS:
            (x,) = self.integers(node, x)
            if combiner in _COUNTING.values():
                x = self.accumulated(x, node)
        else:
            (x,) = self.floats(node, x)
        dims = T.shape(x)
        axes = self.static_axes(axis, len(dims), node)
        if combiner in _NO_IDENTITY and math.prod(dims[a] for a in axes) == 0:
            which = _NO_IDENTITY[combiner]
            raise self.error(node, f"np.{which} over no elements (an array of shape {tuple(dims)}, axes {axes}): "
                             f"a reduction by {which} has no identity, numpy raises ValueError",
                             f"reduce a non-empty array (test `x.size` first), or write the value the empty "
                             f"case should have, e.g. `np.{which}(x) if x.size else 0.0`")
        keep = self.static(keepdims, node, "keepdims")
        if keep:
            reduced = T.reduce(self.em, x, axes, combiner)
            return self.new(T.reshape(self.em, reduced, [1 if i in axes else n for i, n in enumerate(dims)]))
        if len(axes) == len(dims):
            return T.reduce_all(self.em, self.no_narrow_number(x, node), combiner)
        return self.new(T.reduce(self.em, x, axes, combiner))

    def mean(self, x, axis, keepdims, node) -> SSAValue:
        x = self.array(x, node)
        if is_narrow_int(T.element(x)):  # numpy: the mean of ints is float64, summed in float64
            x = self.to_element(x, F64)
        total = self.reduction(x, axis, keepdims, node, arith.AddfOp)
        if not is_array(x):
            return total
        axes = self.static_axes(axis, len(T.shape(x)), node)
        count = math.prod(T.shape(x)[a] for a in axes)
        divisor = self.em.const(float(count), T.element(total))
        return self.binary(ast.Div(), total, divisor, node)

    # ---- shapes ----------------------------------------------------------------------
    def reshape_to(self, x: SSAValue, dims, node) -> SSAValue:
        dims = list(_plain(tuple(dims)))  # np.prod(x.shape[1:]) is numpy's int
        size = math.prod(T.shape(x))
        if dims.count(-1) == 1:
            known = math.prod(d for d in dims if d != -1)
            dims[dims.index(-1)] = size // known if known else 0
        if math.prod(dims) != size or any(d < 0 for d in dims):
            raise self.error(node, f"cannot reshape an array of shape {T.shape(x)} into {tuple(dims)}")
        return self.reshape_view(x, dims)

    def concat(self, items: list[SSAValue], axis: int, node) -> SSAValue:
        elem = self.common_element(items)
        items = [self.convert(v, elem) for v in items]
        ranks = {len(T.shape(v)) for v in items}
        if not all(is_array(v) for v in items) or len(ranks) != 1:
            raise self.error(node, "concatenate needs arrays of one rank")
        rank = ranks.pop()
        axis = self.static_axes(axis, rank, node)[0]
        dims = [T.shape(v) for v in items]
        if any(d[:axis] + d[axis + 1:] != dims[0][:axis] + dims[0][axis + 1:] for d in dims):
            raise self.error(node, f"concatenate: shapes {dims} differ outside axis {axis}")
        if len(items) == 1:
            return self.new(_copy_op(self, items[0]))  # numpy's concatenate copies
        out = list(dims[0])
        out[axis] = sum(d[axis] for d in dims)
        return self.new(self.em.op(tensor.ConcatOp(items, axis, TensorType(elem, out))))

    def stack_values(self, items: list[SSAValue], axis, node) -> SSAValue:
        elem = self.common_element(items)
        items = [self.convert(v, elem) for v in items]
        dims = {T.shape(v) for v in items}
        if len(dims) != 1:
            raise self.error(node, f"stack needs arrays of one shape, got {sorted(dims)}")
        dims = dims.pop()
        axis = self.static_axes(axis, len(dims) + 1, node)[0]
        expanded = [T.reshape(self.em, self.as_tensor(v), dims[:axis] + (1,) + dims[axis:]) for v in items]
        return self.concat(expanded, axis, node)

    def copy(self, x: SSAValue) -> SSAValue:
        """A new array equal to `x` (value semantics: the same value, a fresh SSA name)."""
        return _copy_op(self, x)

    def as_tensor(self, v: SSAValue) -> SSAValue:
        return v if is_array(v) else T.splat(self.em, v, (1,))

    # ---- indexing ---------------------------------------------------------------------
    def subscript(self, x: SSAValue, index_node: ast.expr, node) -> SSAValue:
        parts = indexing.parse(self, x, index_node, node, runtime_masks=True)
        if any(p.kind == "mask" for p in parts):  # x[m]: a selection, reduced later (masked_reads.py)
            return masked_reads.read(self, x, parts, node)
        return self.read(x, parts, node)

    def read(self, x: SSAValue, parts, node) -> SSAValue:
        """`x` at the parsed index (indexing.parse, no mask): a gather, an element or a view."""
        if indexing.has_arrays(parts):  # advanced indexing: a gather, a copy
            return indexing.read(self, x, parts, node)
        plan = self.index_plan(x, parts, node)
        if plan.element:
            return self.em.op(tensor.ExtractOp(self.no_narrow_number(x, node), plan.offsets, T.element(x)))
        step = _slice_step(plan)
        return self.views.derive(step.read(self.em, x), x, step)  # a basic index is a view

    def slice_view(self, x: SSAValue, axis: int, start: int, size: int, step: int = 1) -> SSAValue:
        """x[..., start : start + size * step : step, ...] on `axis`: a view, as numpy's basic slices."""
        dims = T.shape(x)
        if start == 0 and size == dims[axis] and step == 1:
            return x
        start = start if size else 0  # MLIR wants an offset inside the axis
        sizes = tuple(size if d == axis else n for d, n in enumerate(dims))
        step_ = Slice(tuple(start if d == axis else 0 for d in range(len(dims))), sizes,
                      tuple(step if d == axis else 1 for d in range(len(dims))), sizes)
        return self.views.derive(step_.read(self.em, x), x, step_)

    def take(self, x: SSAValue, idx: SSAValue, axis: int) -> SSAValue:
        """np.take(x, idx, axis) for an i64 array idx of positions in range: the
        gather along `axis` with idx spread over the other axes."""
        dims = T.shape(x)
        flat = T.reshape(self.em, idx, (math.prod(T.shape(idx)),))
        (k,) = T.shape(flat)
        spread_dims = [k if d == axis else n for d, n in enumerate(dims)]
        spread = T.broadcast_to(self.em, T.reshape(self.em, flat, [k if d == axis else 1 for d in range(len(dims))]),
                                spread_dims)
        taken = G.gather(self.em, x, spread, axis)
        return T.reshape(self.em, taken, (*dims[:axis], *T.shape(idx), *dims[axis + 1:]))

    def item_at(self, x: SSAValue, k) -> SSAValue:
        """x[k] for a k in range (an int, or an i64 value): row k, a view (an element for rank 1)."""
        dims = T.shape(x)
        offset = k if isinstance(k, int) else self.em.op(arith.IndexCastOp(k, INDEX))
        if len(dims) == 1:
            return self.em.op(tensor.ExtractOp(x, [self.index_value(offset)], T.element(x)))  # iteration checks
        rest = dims[1:]
        step = Slice((offset, *[0] * len(rest)), (1, *rest), (1,) * len(dims), tuple(rest))
        return self.views.derive(step.read(self.em, x), x, step)

    def transpose_view(self, x: SSAValue, perm) -> SSAValue:
        return self.views.derive(T.transpose(self.em, x, perm), x, Transpose(tuple(perm)))

    def reshape_view(self, x: SSAValue, dims) -> SSAValue:
        """numpy's reshape: a view where the layout allows, else a copy."""
        dims = tuple(dims)
        if not is_array(x):  # a number: a 0-d array first (tensor.reshape takes tensors)
            x = self.new(T.reshape(self.em, T.splat(self.em, x, (1,)), ()))
        result = T.reshape(self.em, x, dims)
        if self.views.reshape_is_view(x, dims):
            return self.views.derive(result, x, Reshape(dims, T.shape(x)))
        return self.new(_fresh(self, result, x))

    def update(self, name: str, current: SSAValue, result: SSAValue, node) -> None:
        """`name op= v` on an array: numpy writes the result into `name`'s array
        (np.add(y, v, out=y)), so its shape stays and its dtype casts."""
        self.refuse_write(name, node)
        if T.shape(result) != T.shape(current):
            raise self.error(node, f"the result of shape {T.shape(result)} cannot be written into "
                             f"'{name}' of shape {T.shape(current)} (numpy: non-broadcastable output)")
        kept = T.element(current)
        same_kind = is_int(kept) and is_int(T.element(result)) and np.can_cast(
            numpy_dtype(T.element(result)), numpy_dtype(kept), "same_kind")  # int8 += int64: wraps into int8
        if not is_float(kept) and T.element(result) != kept and not same_kind:  # numpy casts 'same_kind' only
            have, got = (dtype_name(t) for t in (kept, T.element(result)))
            raise self.error(node, f"in-place arithmetic on the {have} array '{name}' gives {got} here, "
                             f"which numpy does not cast back into {have} (UFuncTypeError)",
                             f"write {name} = {name} <op> ... (a new array), or convert first: "
                             f"{name} = {name}.astype(float)")
        self.views.write(name, self.cast(result, T.element(current)))

    def refuse_global_write(self, name: str, node) -> None:
        """`G[i] = v` or `G += v` on a global array: numpy would change the global."""
        if name not in self.fl.env and is_hidden(self.fl.global_value(name)):
            raise self.error(node, f"in-place write to the global array '{name}'",
                             f"copy it first: {name.lower()} = np.copy({name}) (irad reads global "
                             "arrays at each call, as hidden arguments, and never writes into them)")

    def refuse_write(self, name: str, node) -> None:
        self.refuse_global_write(name, node)
        refusal = self.views.refusal(name) or self.call_aliases.refusal(name, self.fl.env)
        if refusal is not None:
            raise self.error(node, *refusal)

    def assign_item(self, name: str, index_node: ast.expr, value, node) -> None:
        """`name[index] = value` as a value-semantic update of `name`'s array."""
        block = self.em.block
        last = block.last_op
        self._assign_item(name, index_node, value, node)
        written = block.ops if last is None else _after(last)
        self.held_ints.writes.update(dict.fromkeys(written, self.fl.src.location(node)))  # named in its refusal

    def _assign_item(self, name: str, index_node: ast.expr, value, node) -> None:
        self.refuse_global_write(name, node)
        y = self.fl.env.get(name)
        if isinstance(y, MappingValue) and y.cls is dict:  # d[k] = v: dict_keys.py
            return assign_key(self.fl, name, index_node, value, node)
        if not is_array(y):
            raise self.error(node, f"item assignment to '{name}', which is not an array")
        self.refuse_write(name, node)
        parts = indexing.parse(self, y, index_node, node, runtime_masks=True)
        self.views.write(name, self.written(y, parts, value, node))

    def written(self, y: SSAValue, parts, value, node) -> SSAValue:
        """`y` with `value` written at the parsed index (indexing.parse, run-time
        masks taken), as `y[index] = value` writes it: a new array."""
        v = self.cast(self.value(value, node), T.element(y))
        if any(part.kind == "mask" for part in parts):
            if len(parts) != 1:
                raise self.error(node, "a boolean mask computed at run time with other indices is not supported",
                                 "write y = np.where(mask, values, y) with a mask and values of y's shape")
            return indexing.masked_write(self, y, parts[0].value, v, node)
        if indexing.has_arrays(parts):  # a scatter
            return indexing.write(self, y, parts, v, node)
        plan = self.index_plan(y, parts, node)
        if plan.element:
            if is_array(v):
                raise self.error(node, "cannot assign an array to a single element")
            return self.em.op(tensor.InsertOp(v, y, plan.offsets))
        target = tuple(plan.result_dims)
        if T.broadcast_shapes(T.shape(v), target) != target:
            raise self.error(node, f"cannot assign a value of shape {T.shape(v)} to a slice of shape {target}")
        return _slice_step(plan).write(self.em, y, T.broadcast_to(self.em, v, target))

    def index_plan(self, x: SSAValue, parts, node) -> _IndexPlan:
        """The basic index (ints, slices, None) of parsed parts (indexing.parse)."""
        dims = T.shape(x)
        plan = _IndexPlan()
        axis = 0
        for part in parts:
            if part.kind == "new":
                plan.result_dims.append(1)
                continue
            n = dims[axis]
            if part.kind == "slice":
                offset, size, stride = self.slice_bounds(part.node, n, node)
                plan.offsets.append(offset)
                plan.sizes.append(size)
                plan.strides.append(stride)
                plan.result_dims.append(size)
            else:
                plan.offsets.append(self.int_index(part.value, n, part.node))
                plan.sizes.append(1)
                plan.strides.append(1)
            axis += 1
        for n in dims[axis:]:
            plan.offsets.append(0)
            plan.sizes.append(n)
            plan.strides.append(1)
            plan.result_dims.append(n)
        plan.element = len(plan.result_dims) == 0 and all(s == 1 for s in plan.strides)
        if plan.element:
            plan.offsets = [self.index_value(o) for o in plan.offsets]
        return plan

    def index_value(self, o) -> SSAValue:
        if isinstance(o, int):
            return self.em.op(arith.ConstantOp.from_int_and_width(o, INDEX))
        return o

    def int_index(self, value, n: int, node):
        """A static int (normalised) or a runtime index value (negatives wrap as in Python)."""
        known, i = _known(value)
        if known and type(i) is int:
            if not -n <= i < n:
                raise self.error(node, f"index {i} is out of bounds for an axis of size {n}")
            return i % n
        v = self.value(value, node)
        if not is_int(v.type):
            raise self.error(node, f"array indices must be ints, got {describe(v.type)}")
        em = self.em
        above = em.op(arith.CmpiOp(v, em.const(-n, I64), "sge"))
        below = em.op(arith.CmpiOp(v, em.const(n, I64), "slt"))
        self.check(em.op(arith.AndIOp(above, below)), node, f"index out of bounds for an axis of size {n}")
        negative = em.op(arith.CmpiOp(v, em.const(0, I64), "slt"))
        wrapped = em.op(arith.SelectOp(negative, em.op(arith.AddiOp(v, em.const(n, I64))), v))
        return em.op(arith.IndexCastOp(wrapped, INDEX))

    def slice_bounds(self, part: ast.Slice, n: int, node):
        """(offset, size, stride): static (any nonzero step), or a run-time start
        with a stop whose distance from it is known while lowering (`x[i:i + k]`,
        `x[j * k:(j + 1) * k]`)."""
        step = 1 if part.step is None else self.static(self.fl.expr(part.step), node, "a slice step")
        if not isinstance(step, int) or step == 0:
            raise self.error(node, "a slice step must be a nonzero int known while lowering")
        lower = None if part.lower is None else self.fl.expr(part.lower)
        upper = None if part.upper is None else self.fl.expr(part.upper)
        if self.is_static(lower) and self.is_static(upper):
            lo, hi = self.static(lower, node, ""), self.static(upper, node, "")
            start, stop, _ = slice(lo, hi, step).indices(n)
            size = len(range(start, stop, step))
            return (start if size else 0), size, step  # MLIR wants even an empty slice's offset in bounds
        start = self.value(lower, node) if lower is not None else None
        stop = self.value(upper, node) if upper is not None else None
        if start is None or stop is None or not is_int(start.type) or not is_int(stop.type):
            raise self.fl.runtime_error(node, "a slice with a run-time bound must give both bounds as ints, "
                                        "e.g. x[i:i + k]", "the shape of every array must be known while lowering",
                                        (start, stop))
        length = integers.difference(stop, start)
        if length is None or length < 0 or step != 1:
            raise self.fl.runtime_error(node, "a slice with a run-time start must have a length known while "
                                        "lowering and step 1, e.g. x[i:i + k] or x[j * k:(j + 1) * k]",
                                        "the shape of every array must be known while lowering", (start, stop))
        # numpy would shorten a slice running off the end; irad's shapes are static,
        # so such a start is an error at run time rather than a different slice
        em = self.em
        fits = em.op(arith.AndIOp(
            em.op(arith.CmpiOp(start, em.const(0, I64), "sge")),
            em.op(arith.CmpiOp(start, em.const(n - length, I64), "sle")),
        ))
        self.check(fits, node, f"a slice of {length} starting there does not fit an axis of size {n}")
        return em.op(arith.IndexCastOp(start, INDEX)), length, 1


@dataclass
class _IndexPlan:
    """How a basic index reads or writes: per axis of the source an offset (int
    or index value), a size and a stride; the result's shape (ints dropped,
    None added); whether it is one element."""

    offsets: list = field(default_factory=list)
    sizes: list = field(default_factory=list)
    strides: list = field(default_factory=list)
    result_dims: list = field(default_factory=list)
    element: bool = False


def _known(value) -> tuple[bool, object]:
    """(True, the Python value) when `value` is known while lowering; None is an omitted value."""
    if value is None or isinstance(value, (int, float)):
        return True, value
    if isinstance(value, Static):
        return True, value.obj
    if isinstance(value, tuple):
        parts = [_known(v) for v in value]
        return all(k for k, _ in parts), tuple(v for _, v in parts)
    if not isa(value, SSAValue) or isa(value.type, TensorType):
        return False, None
    owner = value.owner
    if isa(owner, arith.ConstantOp):
        raw = owner.value.value.data
        return True, bool(raw) if is_bool(value.type) else raw
    return folded(value)  # -1 is 0 - 1 in the IR, int(np.sqrt(9)) a few ops on constants


known_value = _known


def _plain(obj):
    """numpy's ints and bools as Python's, in tuples too: a shape, an axis or a
    count taken while lowering (`np.prod(x.shape[1:])` is an np.int64)."""
    if isinstance(obj, tuple):
        return tuple(_plain(v) for v in obj)
    return obj.item() if isinstance(obj, (np.integer, np.bool_)) else obj


def _place(i: int, names: list[str], numpy) -> str:
    """The parameter positional argument `i` binds to: the one numpy has at that
    place (so `np.sum(x, 0, None)` passes dtype, not keepdims), or irad's own
    where it names numpy's differently (`np.matmul(a, b)` for numpy's x1, x2)."""
    ours = names[i] if i < len(names) else None
    if numpy is None or i >= len(numpy.positional):
        return ours
    theirs = numpy.positional[i]
    if theirs in names or ours is None or ours in numpy.named or ours in numpy.positional:
        return theirs
    return ours


def _shown_name(fn) -> str:
    """How messages name a numpy function: `np.sum`, `x.astype`."""
    if isinstance(fn, str):
        return "x." + fn.removeprefix("ndarray.")
    name = numpy_name(fn)
    return "np." + name.removeprefix("numpy.") if name.startswith("numpy.") else name

def _slice_step(plan: _IndexPlan) -> Slice:
    return Slice(tuple(plan.offsets), tuple(plan.sizes), tuple(plan.strides), tuple(plan.result_dims))


class _WrapperSource:
    """Errors inside a rule-table wrapper have no Python source to point at."""

    def location(self, node) -> str:
        return "a numpy function covered by the rule table"

    def error(self, node, message: str, hint: str = ARRAYS_HINT):
        return UnsupportedError(message + (f"\n  hint: {hint}" if hint else ""))


class _WrapperLowering:
    """The part of FunctionLowering ArrayLowering uses, for a wrapper's body."""

    def __init__(self, owner, em) -> None:
        self.owner, self.em, self.src = owner, em, _WrapperSource()
        self.path = Path()  # views.Views reads the path's array sharing
        self.env = self.path.env

    def as_number(self, value, node):
        return value

    def runtime_error(self, node, message: str, hint: str, values) -> UnsupportedError:
        return self.src.error(node, message, hint)  # its arguments are run-time values: WrapperError says so


def lower_wrapper_body(owner, fn, em, args) -> SSAValue:
    """The body of the function a rule-covered numpy call becomes: the op itself,
    so the pass meets a call op where it consults the table (as for math.sin)."""
    handler, params = NUMPY[fn]
    padded = list(args) + [Static(p.default) for p in parameters(params)[len(args):]]
    try:
        return handler(ArrayLowering(_WrapperLowering(owner, em)), None, *padded)
    except UnsupportedError as error:
        # the call's arguments are run-time values here, which a shape or an axis cannot be
        raise WrapperError(
            f"the rule table has an entry for {numpy_name(fn)}, so this call becomes a call the "
            f"table covers, with its positional arguments as run-time values; but "
            f"{str(error).split(chr(10))[0]}",
            "pass such arguments by keyword (a call with keywords is always differentiated "
            "through its IR), or remove the table's entry",
        ) from None


class WrapperError(UnsupportedError):
    """A numpy call the rule table covers whose wrapper cannot be lowered; the
    call site (ArrayLowering.call) adds its location."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(f"{message}\n  hint: {hint}")
        self.message, self.hint = message, hint


# ---- the numpy table (numpy_table.py): arithmetic, reductions, creation, shapes ----
_UNARY = {
    np.sin: mathd.SinOp, np.cos: mathd.CosOp, np.tan: mathd.TanOp, np.exp: mathd.ExpOp,
    np.log: mathd.LogOp, np.log1p: mathd.Log1pOp, np.expm1: mathd.ExpM1Op,
    np.sqrt: mathd.SqrtOp, np.tanh: mathd.TanhOp, np.abs: mathd.AbsFOp,
    np.sinh: mathd.SinhOp, np.cosh: mathd.CoshOp, np.arctan: mathd.AtanOp,
    np.log2: mathd.Log2Op, np.log10: mathd.Log10Op,
}


def _unary(op_class):
    def handler(al: ArrayLowering, node, x):
        x = al.array(x, node)
        if op_class is mathd.AbsFOp and not is_float(T.element(x)):  # numpy's abs of ints wraps at INT64_MIN
            if is_bool(T.element(x)):
                return x
            if is_uint(T.element(x)):
                return al.new(al.copy(x))
            return _fresh_array(al, T.pointwise(al.em, _int_abs, [x], T.element(x), "piecewise-constant"))
        (x,) = al.floats(node, x)
        result = al.em.op(op_class(x))
        return al.new(result) if is_array(result) else result

    return handler


# other names of the same functions (one object each in numpy: one entry)
_ALIASES = {np.abs: (np.absolute,), np.divide: (np.true_divide,)}
for _fn, _cls in _UNARY.items():
    numpy_function(_fn, *_ALIASES.get(_fn, ()), params=("x",))(_unary(_cls))


def _binary(op_class):
    def handler(al: ArrayLowering, node, a, b):
        a, b = al.array(a, node), al.array(b, node)
        if op_class in _INT_BINARY and not any(is_float(T.element(v)) for v in (a, b)):
            return _int_binary(al, node, op_class, a, b)
        x, y = al.floats(node, a, b)
        result = al.em.op(op_class(x, y))
        return al.new(result) if is_array(result) else result

    return handler


for _fn, _cls in {
    np.add: arith.AddfOp, np.subtract: arith.SubfOp, np.multiply: arith.MulfOp,
    np.divide: arith.DivfOp, np.maximum: arith.MaximumfOp, np.minimum: arith.MinimumfOp,
    np.power: mathd.PowFOp, np.arctan2: mathd.Atan2Op,
}.items():
    numpy_function(_fn, *_ALIASES.get(_fn, ()), params=("x1", "x2"))(_binary(_cls))


_SIGNED_PREDICATES = {"olt": "slt", "ole": "sle", "ogt": "sgt", "oge": "sge", "oeq": "eq", "une": "ne"}


# numpy's functions of int and bool arrays computed as numpy does, in int64 (in
# float, values beyond 2**53 would round) or, of two bool arrays, as bools
_INT_BINARY = {
    arith.AddfOp: ast.Add(), arith.SubfOp: ast.Sub(), arith.MulfOp: ast.Mult(), mathd.PowFOp: ast.Pow(),
    arith.MaximumfOp: ("sgt", arith.OrIOp), arith.MinimumfOp: ("slt", arith.AndIOp),
}


def _int_binary(al: ArrayLowering, node, op_class, a: SSAValue, b: SSAValue) -> SSAValue:
    kind = _INT_BINARY[op_class]
    if isinstance(kind, ast.operator):  # np.add: as `+` (bools: or)
        return al.binary(kind, a, b, node)
    beyond, bool_op = kind
    if all(is_bool(T.element(v)) for v in (a, b)):  # np.maximum of bools: or
        x, y = al.broadcast(node, a, b)
        return _fresh_array(al, al.em.op(bool_op(x, y)))
    x, y = al.integers(node, a, b)

    elem = T.element(x)

    def pick(e, args: Sequence[SSAValue]) -> SSAValue:
        return e.op(arith.SelectOp(e.op(arith.CmpiOp(args[0], args[1], beyond)), args[0], args[1]))

    return _fresh_array(al, T.pointwise(al.em, pick, [x, y], elem, "piecewise-constant"))


def _within_dtype(al: ArrayLowering, bound: SSAValue, elem: Attribute) -> SSAValue:
    """A Python int bound of np.clip on a narrow int array, brought into its
    dtype's range, as numpy 2 does (np.clip(uint8_array, -5, 300) is valid)."""
    c = integers.constant_int(bound)
    if c is None or not is_narrow_int(elem) or numpy_scalars.kind(bound) != numpy_scalars.PYTHON:
        return bound
    info = np.iinfo(numpy_dtype(elem))
    return al.em.const(min(max(c, int(info.min)), int(info.max)), I64)


def _int_abs(e, args: Sequence[SSAValue]) -> SSAValue:
    """numpy's abs of a signed int: -x below 0, wrapping at its minimum (INT64_MIN) as numpy's does."""
    x = args[0]
    zero = e.op(arith.ConstantOp(IntegerAttr(0, x.type), x.type))
    return e.op(arith.SelectOp(e.op(arith.CmpiOp(x, zero, "slt")), e.op(arith.SubiOp(zero, x)), x))


def _fresh_array(al: ArrayLowering, result: SSAValue) -> SSAValue:
    return al.new(result) if is_array(result) else result


@numpy_function(np.negative, params=("x",))
def _negative(al, node, x):
    return al.negate(al.array(x, node), node)


@numpy_function(np.square, params=("x",))
def _square(al, node, x):
    x = al.array(x, node)
    if is_bool(T.element(x)):
        raise al.error(node, "np.square of a bool array is an int8 array in numpy, a dtype irad does not have",
                       "write x * x (a bool array, numpy's `and`) or x.astype(int) ** 2")
    if is_int(T.element(x)):
        return al.binary(ast.Mult(), x, x, node)  # int64, wrapping as numpy's
    (x,) = al.floats(node, x)
    result = al.em.op(arith.MulfOp(x, x))
    return al.new(result) if is_array(result) else result


@numpy_function(np.sign, params=("x",))
def _sign(al, node, x):
    (x,) = al.floats(node, al.array(x, node))
    result = T.sign(al.em, x)
    return al.new(result) if is_array(result) else result


@numpy_function(np.where, params=("condition", "x", "y"))
def _where(al, node, cond, x, y):
    cond = al.array(cond, node)
    if not is_bool(T.element(cond)):
        raise al.error(node, "the condition of np.where must be a bool array (a comparison)")
    x, y = al.array(x, node), al.array(y, node)
    if not all(is_bool(T.element(v)) for v in (x, y)):  # two bools stay bools, as in numpy
        # ints stay int64 (exact beyond 2**53); with a float, numpy's float dtype
        x, y = (al.floats if any(is_float(T.element(v)) for v in (x, y)) else al.integers)(node, x, y)
    cond, x, y = al.broadcast(node, cond, x, y)
    return al.new(T.select(al.em, cond, x, y))


@numpy_function(np.clip, params=("a", "?a_min", "?a_max", "?min", "?max"))
def _clip(al, node, a, lo, hi, lo_keyword, hi_keyword):
    lo = lo_keyword if _omitted(lo) else lo
    hi = hi_keyword if _omitted(hi) else hi
    if _omitted(lo) and _omitted(hi):
        raise al.error(node, "clip needs a lower or an upper bound")
    x = al.array(a, node)
    bounds = [al.array(v, node) for v in (lo, hi) if not _omitted(v)]
    if is_int(T.element(x)) and not any(is_float(T.element(v)) for v in bounds):  # numpy: int64, exact
        for bound, op_class in ((lo, arith.MaximumfOp), (hi, arith.MinimumfOp)):
            if not _omitted(bound):
                x = _int_binary(al, node, op_class, x, _within_dtype(al, al.array(bound, node), T.element(x)))
        return x
    if not _omitted(lo):
        x, lo_ = al.floats(node, x, al.array(lo, node))
        x = al.em.op(arith.MaximumfOp(x, lo_))
    if not _omitted(hi):
        x, hi_ = al.floats(node, x, al.array(hi, node))
        x = al.em.op(arith.MinimumfOp(x, hi_))
    return al.new(x) if is_array(x) else x


def _omitted(value) -> bool:
    return isinstance(value, Static) and value.obj is None


def _reduction(combiner, identity=None):
    def handler(al, node, a, axis, keepdims, where=Static(None)):
        if al.given(where):  # numpy: the elements where `where` is False count as the identity
            shape = T.shape(al.array(a, node)) if is_array(al.array(a, node)) else ()
            a = al.call_values(np.where, [where, a, Static(identity)], {}, node)
            if (T.shape(a) if is_array(a) else ()) != shape:
                raise al.error(node, f"where= of this shape does not broadcast to the array's {shape}")
        x = al.array(a, node)
        if is_array(x) and (is_int(T.element(x)) or (is_bool(T.element(x)) and combiner in _COUNTING)):
            # numpy keeps an int array's sum, product, max and min int64 (a bool
            # array's sum and product too), wrapping: reduced in int64, exact
            # beyond 2**53 where float would round
            return al.reduction(x, axis, keepdims, node, _COUNTING.get(combiner) or _INT_COMBINERS[combiner])
        return al.reduction(x, axis, keepdims, node, combiner)

    return handler


_COUNTING = {arith.AddfOp: arith.AddiOp, arith.MulfOp: arith.MuliOp}
_INT_COMBINERS = {arith.MaximumfOp: arith.MaxSIOp, arith.MinimumfOp: arith.MinSIOp}
INT_COMBINERS = frozenset((*_COUNTING.values(), *_INT_COMBINERS.values()))
# the reductions numpy refuses over no elements, by the name numpy gives them
_NO_IDENTITY = {arith.MaximumfOp: "max", arith.MinimumfOp: "min", arith.MaxSIOp: "max", arith.MinSIOp: "min"}


numpy_function(np.sum, params=("a", "?axis", "?keepdims", "?where"))(_reduction(arith.AddfOp, 0))
numpy_function(np.prod, params=("a", "?axis", "?keepdims", "?where"))(_reduction(arith.MulfOp, 1))
numpy_function(np.max, np.amax, params=("a", "?axis", "?keepdims"))(_reduction(arith.MaximumfOp))
numpy_function(np.min, np.amin, params=("a", "?axis", "?keepdims"))(_reduction(arith.MinimumfOp))


@numpy_function(np.mean, params=("a", "?axis", "?keepdims"))
def _mean(al, node, a, axis, keepdims):
    return al.mean(a, axis, keepdims, node)


@numpy_function(np.matmul, params=("a", "b"))
def _matmul(al, node, a, b):
    return al.matmul(al.array(a, node), al.array(b, node), node)


@numpy_function(np.outer, params=("a", "b"))
def _outer(al, node, a, b):
    a, b = al.array(a, node), al.array(b, node)
    a = T.reshape(al.em, al.as_tensor(a), (math.prod(T.shape(al.as_tensor(a))), 1))
    b = T.reshape(al.em, al.as_tensor(b), (1, math.prod(T.shape(al.as_tensor(b)))))
    return al.binary(ast.Mult(), a, b, node)


@numpy_function(np.transpose, params=("a", "?axes"))
def _transpose(al, node, a, axes):
    a = al.array(a, node)
    rank = len(T.shape(a))
    perm = al.static(axes, node, "axes")
    perm = tuple(reversed(range(rank))) if perm is None else tuple(p % rank for p in perm)
    if sorted(perm) != list(range(rank)):
        raise al.error(node, f"axes {perm} are not a permutation of the array's axes")
    return al.transpose_view(a, perm)


@numpy_function(np.reshape, params=("a", "shape"))
def _reshape(al, node, a, shape):
    dims = al.static(shape, node, "a shape")  # may hold one -1
    return al.reshape_to(al.array(a, node), dims if isinstance(dims, tuple) else (dims,), node)


@numpy_function(np.ravel, params=("a", "?order"))
def _ravel(al, node, a, order):
    a = _in_order(al, al.array(a, node), order, node, "np.ravel")
    return al.reshape_view(a, (math.prod(T.shape(a)),))


def _in_order(al, a, order, node, who: str):
    """`a` read in `order`: 'C' as it is; 'F' (the first index fastest) its transpose,
    a view, so ravel's result is a view exactly where numpy's is (`m.T.ravel('F')`)."""
    order = al.static(order, node, "the order") if al.given(order) else "C"
    if order not in ("C", "F"):
        raise al.error(node, f"{who}(..., order={order!r}) is not supported: 'A' and 'K' follow the memory "
                       "layout numpy happens to hold", "pass order='C' or order='F'")
    if order == "F" and is_array(a) and len(T.shape(a)) > 1:
        return al.call_values(np.transpose, [a], {}, node)
    return a


@numpy_function(np.squeeze, params=("a", "?axis"))
def _squeeze(al, node, a, axis):
    a = al.array(a, node)
    dims = T.shape(a)
    if al.static(axis, node, "axis") is None:
        axes = [i for i, n in enumerate(dims) if n == 1]
    else:
        axes = al.static_axes(axis, len(dims), node)
        if any(dims[i] != 1 for i in axes):
            raise al.error(node, "cannot squeeze an axis whose size is not 1")
    return al.reshape_view(a, [n for i, n in enumerate(dims) if i not in axes])


@numpy_function(np.expand_dims, params=("a", "axis"))
def _expand_dims(al, node, a, axis):
    a = al.array(a, node)
    dims = list(T.shape(a))
    axis = al.static_axes(axis, len(dims) + 1, node)[0]
    return al.reshape_view(a, dims[:axis] + [1] + dims[axis:])


@numpy_function(np.concatenate, params=("arrays", "?axis"))
def _concatenate(al, node, arrays, axis):
    if not isinstance(arrays, tuple):
        raise al.error(node, "np.concatenate takes a list or tuple of arrays")
    axis = 0 if al.static(axis, node, "axis") is None else axis
    return al.concat([al.array(v, node) for v in arrays], axis, node)


@numpy_function(np.stack, params=("arrays", "?axis"))
def _stack(al, node, arrays, axis):
    if not isinstance(arrays, tuple):
        raise al.error(node, "np.stack takes a list or tuple of arrays")
    axis = 0 if al.static(axis, node, "axis") is None else al.static(axis, node, "axis")
    if axis == 0 and getattr(arrays, "rows_of", None) is not None:  # a list of an array's rows (lists.py)
        return al.new(_copy_op(al, arrays.rows_of))
    return al.stack_values([al.array(v, node) for v in arrays], axis, node)


def _array_of(copy: bool):
    def handler(al, node, obj, dtype):
        source = al.array(obj, node)
        elem = al.dtype(dtype, node, T.element(source))
        x = al.to_element(source, elem) if is_float(elem) else source
        if not is_array(x):  # a 0-d array, which has the array methods: numpy's scalar kind (a new value to mark)
            return _fresh_number(al.em, x) if x is source else x
        if x is source and not isinstance(obj, tuple):
            # np.asarray(an array) is that array; np.array copies it
            return al.new(_copy_op(al, x)) if copy else x
        return al.new(x)

    return handler


def _fresh_number(em, v: SSAValue) -> SSAValue:
    """`v` as a new value (v + -0.0 is v for every float, -0.0 included; v | 0 for ints and bools)."""
    if is_float(T.element(v)):
        return em.explicit_float(v, v.type)
    return em.op(arith.OrIOp(v, em.const(0, v.type)))


numpy_function(np.array, params=("object", "?dtype"))(_array_of(copy=True))
numpy_function(np.asarray, params=("a", "?dtype"))(_array_of(copy=False))


@numpy_function(np.copy, params=("a",))
def _copy(al, node, a):
    # value semantics: a copy is the same value, marked as a fresh (writable) array;
    # the backend never mutates arrays in place
    x = al.array(a, node)
    if not is_array(x):
        return x
    return al.new(_copy_op(al, x))


def _fresh(al, result: SSAValue, source: SSAValue) -> SSAValue:
    """`result` (a reshape of `source`), copied if it is a value that already
    existed (`source` itself, or what `source` was reshaped from): a copy must be
    a new value, or the names holding the old one would share it."""
    owner = source.owner
    if result is source or (isinstance(owner, tensor.ReshapeOp) and result is owner.source):
        return _copy_op(al, result)
    return result


def _after(op):
    """The ops after `op` in its block."""
    while op.next_op is not None:
        op = op.next_op
        yield op


def _copy_op(al, x):
    """A new SSA value equal to x: x inserted whole into a tensor.empty."""
    empty = al.em.op(tensor.EmptyOp([], x.type))
    return al.em.op(tensor.InsertSliceOp.get(x, empty, list(T.shape(x))))


def _filled(al, node, dims, value: SSAValue | float, elem: Attribute) -> SSAValue:
    if isinstance(value, (int, float)):
        return al.new(T.dense(al.em, value, TensorType(elem, dims)))
    v = (al.to_element(value, elem) if is_float(elem) else al.em.to_bool(value) if is_bool(elem)
         else al.em.to_int(value))  # np.full(3, True) is bools
    if is_narrow_int(elem):  # np.full(3, 7, dtype=np.uint8): the fill must fit, as numpy requires
        if not is_int(v.type):
            raise al.error(node, f"a float fill of a {numpy_dtype(elem)} array (numpy's conversion outside the "
                           "dtype's range is undefined)", "fill with an int")
        v = al.int_to(v, elem, node)
    return al.new(T.splat(al.em, v, dims))


@numpy_function(np.zeros, params=("shape", "?dtype"))
def _zeros(al, node, shape, dtype):
    return _filled(al, node, al.shape_arg(shape, node), 0.0, al.dtype(dtype, node, F64))


@numpy_function(np.ones, params=("shape", "?dtype"))
def _ones(al, node, shape, dtype):
    return _filled(al, node, al.shape_arg(shape, node), 1.0, al.dtype(dtype, node, F64))


@numpy_function(np.full, params=("shape", "fill_value", "?dtype"))
def _full(al, node, shape, value, dtype):
    v = al.value(value, node)
    default = F64 if is_float(v.type) else v.type
    return _filled(al, node, al.shape_arg(shape, node), v, al.dtype(dtype, node, default))


def _like(fill):
    def handler(al, node, a, dtype):
        a = al.array(a, node)
        return _filled(al, node, T.shape(a), fill, al.dtype(dtype, node, T.element(a)))

    return handler


numpy_function(np.zeros_like, params=("a", "?dtype"))(_like(0.0))
numpy_function(np.ones_like, params=("a", "?dtype"))(_like(1.0))


@numpy_function(np.full_like, params=("a", "fill_value", "?dtype"))
def _full_like(al, node, a, value, dtype):
    a = al.array(a, node)
    return _filled(al, node, T.shape(a), al.value(value, node), al.dtype(dtype, node, T.element(a)))


@numpy_function(np.arange, params=("start", "?stop", "?step", "?dtype"))
def _arange(al, node, start, stop, step, dtype):
    bounds = [al.static(v, node, "arange's bounds") for v in (start, stop, step)]
    bounds = [b for b in bounds if b is not None]
    start, stop, step = (0, bounds[0], 1) if len(bounds) == 1 else (*bounds, 1)[:3]
    if step:  # numpy refuses a step of 0
        count = max(0, math.ceil((stop - start) / step))
        refuse_large(count, (count,))
    values = np.arange(*bounds)
    default = F64 if values.dtype.kind == "f" else I64
    elem = al.dtype(dtype, node, default)
    return al.new(T.dense(al.em, values, TensorType(elem, values.shape)))


def _band(predicate: str):
    """np.eye (1 on the k-th diagonal) and np.tri (1 on and below it)."""
    def handler(al, node, n, m, k, dtype):
        n, m, k = al.static(n, node, "N"), al.static(m, node, "M"), al.static(k, node, "k")
        return al.new(T.band(al.em, n, n if m is None else m, k, al.dtype(dtype, node, F64), predicate))
    return handler


numpy_function(np.eye, params=("N", "?M", "?k=0", "?dtype"))(_band("oeq"))
numpy_function(np.tri, params=("N", "?M", "?k=0", "?dtype"))(_band("oge"))


@numpy_function("ndarray.astype", params=("x", "dtype"))  # a method without a numpy function
def _astype_handler(al, node, x, dtype):
    x = al.array(x, node)
    elem = al.dtype(dtype, node, T.element(x))
    if is_float(T.element(x)) and is_narrow_int(elem):
        raise al.error(node, f"a float array to dtype {numpy_dtype(elem)}: numpy's conversion of floats outside "
                       f"{numpy_dtype(elem)}'s range is undefined", "convert to int64 first: x.astype(np.int64)")
    converted = al.cast(x, elem)  # to ints toward zero, as numpy
    if not is_array(x):
        return converted
    return al.new(converted if converted is not x else _copy_op(al, x))  # astype copies


@numpy_function("ndarray.flatten", params=("a", "?order"))
def _flatten(al, node, a, order):
    x = _in_order(al, al.array(a, node), order, node, "x.flatten")
    if not is_array(x):
        return x
    return al.new(_fresh(al, T.reshape(al.em, x, (math.prod(T.shape(x)),)), x))  # flatten copies


@numpy_function("ndarray.item", params=("a", "?index"))
def _item(al, node, a, index):
    """x.item() of a one-element array, x.item(i) with a flat index: a Python number."""
    x = al.array(a, node)
    if not is_array(x):
        return x
    size = math.prod(T.shape(x))
    if _omitted(index):
        if size != 1:
            raise al.error(node, f"x.item() needs an array of size 1 (this one has {size})",
                           "pass a flat index: x.item(i)")
        index = 0
    offset = al.int_index(index, size, node)
    x = al.no_narrow_number(x, node)
    value = al.em.op(tensor.ExtractOp(T.reshape(al.em, x, (size,)), [al.index_value(offset)], T.element(x)))
    return al.to_element(value, F64) if is_float(value.type) else value  # a Python float


_REMOVED_IN_NUMPY_2 = {"ptp": "call np.ptp(x, axis=...)", "itemset": "assign the item: x[i] = v",
                       "newbyteorder": "irad's arrays are native-endian; drop it"}
_TOLIST_LIMIT = 10_000  # elements: each becomes a number of its own in the program


@numpy_function("ndarray.tolist", params=("a",))
def _tolist(al, node, a):
    """x.tolist(): nested lists of Python numbers (floats, ints, bools), as numpy gives;
    a number for a 0-d array."""
    x = al.array(a, node)
    if not is_array(x) or not T.shape(x):
        return _item(al, node, x, Static(None))
    shape = T.shape(x)
    if math.prod(shape) > _TOLIST_LIMIT:
        raise al.error(node, f"x.tolist() of {math.prod(shape)} elements is not supported (at most {_TOLIST_LIMIT})",
                       "keep it an array: index it, or loop over it (for v in x)")
    items = [_item(al, node, x, Static(i)) for i in range(math.prod(shape))]
    for length in reversed(shape[1:]):  # the innermost lists first
        items = [new_list(tuple(items[k:k + length])) for k in range(0, len(items), length)]
    return new_list(tuple(items))


# methods of arrays: name -> the numpy function they call with the array first
_METHODS = {
    "sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod,
    "dot": np.dot, "transpose": np.transpose, "ravel": np.ravel, "squeeze": np.squeeze,
    "copy": np.copy, "clip": np.clip, "reshape": np.reshape, "var": np.var, "std": np.std,
    "astype": "ndarray.astype", "flatten": "ndarray.flatten", "item": "ndarray.item",
    "swapaxes": np.swapaxes, "cumsum": np.cumsum, "cumprod": np.cumprod, "argmax": np.argmax, "argmin": np.argmin,
    "any": np.any, "all": np.all, "round": np.round, "trace": np.trace, "diagonal": np.diagonal,
    "repeat": np.repeat, "take": np.take, "tolist": "ndarray.tolist",
}  # not x.sort(): numpy's sorts in place and returns None
# what numpy's scalars have of an array's surface (np.float64(2.0).sum(), .shape)
ARRAY_ATTRIBUTES = frozenset({*_METHODS, "shape", "ndim", "size", "T"})


def array_method(al: ArrayLowering, method: BoundMethod, args: list, kwargs: dict, node):
    """x.sum(axis=0), x.var(ddof=1), ...: the numpy function with the array first;
    x.reshape and x.transpose also take their shape or axes spread out
    (x.reshape(2, 3), x.transpose(1, 0, 2)), as numpy's methods do."""
    fn, x = method.fn, method.array
    if isinstance(x, masked_reads.Selection):  # x[m].sum(), x[m].astype(float)
        return masked_reads.call(al, fn, [x, *args], kwargs, node)
    if fn is np.reshape:
        _method_keywords(al, "reshape", kwargs, {"order": "C", "copy": None}, ("shape",), node)
        if "shape" in kwargs and args:
            raise al.error(node, "x.reshape got the shape twice (positionally and as shape=)")
        args = args or [kwargs["shape"]]
        dims = al.static(args[0] if len(args) == 1 else tuple(args), node, "a shape")
        return al.reshape_to(x, dims if isinstance(dims, tuple) else (dims,), node)
    if fn is np.transpose:
        _method_keywords(al, "transpose", kwargs, {}, (), node)
        axes = args[0] if len(args) == 1 else tuple(args) if args else Static(None)
        return al.call_values(np.transpose, [x, axes], {}, node)
    return al.call_values(fn, [x, *args], kwargs, node)


def _method_keywords(al: ArrayLowering, name: str, kwargs: dict, defaults: dict, taken: tuple, node) -> None:
    """Keyword arguments of a method irad binds itself: those it takes, and
    numpy's others only with their default values."""
    for k, v in kwargs.items():
        if k in taken:
            continue
        known, obj = _known(v)
        if k in defaults and known and (obj is None if defaults[k] is None else obj == defaults[k]):
            continue
        what = (f"x.{name}: irad does not support its argument '{k}'" if k in defaults
                else f"x.{name} got an unexpected keyword argument '{k}'")
        raise al.error(node, what, f"irad takes: {', '.join(taken) or 'no keyword arguments'}")


def builtin_on_array(al: ArrayLowering, fn, args, node):
    """Python builtins applied to arrays: len, abs; None if `fn` is not one of them."""
    if len(args) == 1 and isinstance(args[0], masked_reads.Selection):  # len(x[m]): the mask's count
        if fn is builtins.len:
            return masked_reads.count(al, args[0], node)
        if fn is builtins.abs:
            return al.call_values(np.absolute, [args[0]], {}, node)
    if fn is builtins.len and len(args) == 1 and is_array(args[0]):
        return Static(T.shape(args[0])[0])
    if fn is builtins.abs and len(args) == 1 and is_array(args[0]):  # numpy's abs: np.absolute
        return al.call_values(np.absolute, [args[0]], {}, node)
    return None


STATIC_OPERATORS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
    ast.Eq: operator.eq, ast.NotEq: operator.ne,
}


def bound_method(name: str, receiver) -> Static | None:
    """`receiver.name` for an array method (x.sum), bound; None for other names."""
    return Static(BoundMethod(_METHODS[name], receiver)) if name in _METHODS else None


__all__ = ["ArrayLowering", "BoundMethod", "array_method", "is_array", "is_numpy_callable"]
