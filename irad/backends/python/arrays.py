"""The tensor part of the Python backend: tensor ops as vectorised numpy.

A tensor value at run time is a numpy array of its dtype (float32 stays
float32). Tensors have value semantics in the IR, so generated code never
writes into an array it did not just copy; constant arrays are read-only to
guarantee it. Every op is one numpy call: there are no per-element loops,
except for math.erf and math.erfc, which numpy has no ufunc for (math's
functions, element by element).

`ARRAY_OPS` maps an op name to an emitter returning the Python expression of
its result, like EXPRESSION_OPS in python.py, which consults this table for
any op with a tensor operand or result. `linalg.generic` (elementwise
comparisons, selects, casts) is translated op by op on whole arrays.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects import arith, scf, tensor
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    MemRefType,
    NoneAttr,
    Float32Type,
    Float64Type,
    IntegerType,
    i1,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue

from irad.ir import contraction
from irad.ir.types import NARROW_INTS, is_uint, uint_mask
from irad.ir.walk import operands
from irad.ir.constants import LARGE_SPLAT, is_splat_of, splat_element, splat_number
from irad.ir.gather import axis_of
from irad.ir.tensor import DYNAMIC, ELEMENTWISE_KINDS, KIND, REDUCTIONS

# ---- tensors on the tape (passes/lower_tape.py) ---------------------------------
# A subview of the tape (a Python list) is `(list, start)`; a static buffer is
# a numpy array. A tensor's record keeps the flat array itself in its first
# slot (the other slots it reserves stay unused), so pushing and reading it
# back is at most one array copy, not one Python float per element.
#
# A buffer that only carries one tensor onto the tape (materialized into, then
# copied to records) or off it (copied from a record, then read as a tensor) is
# never allocated: the record is the array itself. A push stores the
# tensor's own array when generated code made it (`_owned`), since generated
# code writes only into arrays nothing else reads (python/temporaries.py), and
# a copy otherwise: an argument's array may change before the pullback runs.
# The array is stored in its own shape when the tape's flattening reshape is
# all that stands between it and the tape (`pushed_as_is`). A pop reads the
# stored array (`_record`: flattened; `_record_as`, in the shape of the one
# reshape that reads it, which then makes nothing: `popped_as_is`); nothing
# writes into it.


def _record(stored: Any, size: int, dtype) -> np.ndarray:
    """A record read back, flat: its array, or zeros where a shadow tape
    (written by accumulation) still holds the 0.0 it was allocated with."""
    if isinstance(stored, np.ndarray):
        return stored if stored.ndim == 1 else stored.reshape(-1)
    return np.full(size, stored, dtype)


def _record_as(stored: Any, shape: tuple, dtype) -> np.ndarray:
    """A record read back in the shape of the one reshape that reads it (the
    stored array itself if it has that shape: `pushed_as_is`)."""
    if isinstance(stored, np.ndarray):
        return stored if stored.shape == shape else stored.reshape(shape)
    return np.full(shape, stored, dtype)


def _uses_as(buf, *roles: tuple[str, int]) -> bool:
    """Each use of `buf` is by an op named as in `roles` (the first exactly
    once), at that operand index, in buf's block."""
    first, *rest = roles
    uses = list(buf.uses)
    block = buf.owner.parent_block()
    return (
        sum((u.operation.name, u.index) == first for u in uses) == 1
        and all((u.operation.name, u.index) in roles and u.operation.parent_block() is block for u in uses)
    )


def _carries_push(buf) -> bool:
    return _uses_as(buf, ("bufferization.materialize_in_destination", 1), ("memref.copy", 0))


def _carries_pop(buf) -> bool:
    return _uses_as(buf, ("memref.copy", 1), ("bufferization.to_tensor", 0))


_VIEWS = frozenset({"tensor.extract_slice", "tensor.reshape", "linalg.transpose", "linalg.broadcast"})


def _owned(v, carried: frozenset = frozenset()) -> bool:
    """`v`'s array (or the one it views) was made by generated code: an
    allocating op's result or a read-only constant, not an argument's; or a
    value an `scf.for` carries (or returns) whose initial and yielded values
    are (no code writes into a carried array: `out=` takes the results of
    allocating ops only, and an array a loop fills in place is read by nothing
    else, `_stacked_in_place`)."""
    while isinstance(v.owner, Operation) and v.owner.name in _VIEWS:
        v = v.owner.operands[0]
    if isinstance(v, BlockArgument) and v.index > 0 and isinstance(v.block.parent_op(), scf.ForOp):
        loop, position = v.block.parent_op(), v.index - 1
    elif isinstance(v.owner, scf.ForOp):  # what the loop carried last
        loop, position = v.owner, v.index
    else:
        loop = None
    if loop is not None:
        key = (loop, position)
        if key in carried:  # around the loop again: the other values decide
            return True
        carried = carried | {key}
        yielded = loop.body.block.last_op.operands[position]
        return _owned(loop.operands[3 + position], carried) and _owned(yielded, carried)
    return isinstance(v.owner, Operation) and (allocates(v.owner) or v.owner.name in _MADE)


# Ops besides the allocating ones whose result generated code made: read-only
# constants, np.full (or the number itself), new arrays built element by element.
_MADE = frozenset({"arith.constant", "tensor.splat", "tensor.from_elements", "tensor.concat", "tensor.insert"})


def _subview(tr, op):
    (offset,) = [tr.value(v) for v in op.offsets]
    return f"({tr.value(op.source)}, {offset})"


def _copied_only(view) -> bool:
    """Is a tape view read by memref.copy alone? Those copies index the tape
    themselves (`_slot`), so the view is never made (`aliases`)."""
    return all(u.operation.name == "memref.copy" for u in view.uses)


def _slot(tr, view) -> str:
    """The tape slot a view of a record's start stands for: `tape[start]`."""
    op = view.owner
    if isinstance(op, Operation) and op.name == "memref.subview" and _copied_only(view):
        (offset,) = op.offsets
        return f"{tr.value(op.source)}[{tr.value(offset)}]"
    name = tr.value(view)
    return f"{name}[0][{name}[1]]"


def aliases(tr, op) -> str | None:
    """For an op whose result needs no line of its own, the name generated
    code reads it by (None: emit it). A record popped into a buffer is the
    tensor `to_tensor` makes of it; a buffer that carries one tensor onto the
    tape is the tensor's own array (`_owned`, already flat and of the tape's
    dtype); a tape view only copies read is never read by name."""
    if op.name == "bufferization.to_tensor" and _carries_pop(op.memref):
        return tr.value(op.memref)
    if op.name == "memref.subview" and _copied_only(op.results[0]):
        return ""
    return None


def _flat_f64(v) -> bool:
    t = v.type
    return isinstance(t, TensorType) and len(t.get_shape()) == 1 and isinstance(t.element_type, Float64Type)


def _f64_array(v) -> bool:
    t = v.type
    return isinstance(t, TensorType) and isinstance(t.element_type, Float64Type)


def pushed_as_is(op) -> bool:
    """Is `op` a tensor.reshape that only flattens an f64 array for the tape?
    The record is then that array (or its copy) in its own shape, and the
    reshape makes nothing (the pop reshapes, `emit_copy`)."""
    return (
        op.name == "tensor.reshape"
        and _f64_array(op.operands[0])
        and all(
            use.operation.name == "bufferization.materialize_in_destination" and use.index == 0
            and _carries_push(use.operation.operands[1])
            for use in op.results[0].uses
        )
    )


def _reshaped_pop(buf) -> Operation | None:
    """The tensor.reshape that is the one use of the tensor a popped record's
    buffer becomes, if it is (irad-lower-tape reshapes a record back to its
    tensor's shape)."""
    (tensor_of,) = [use.operation for use in buf.uses if use.operation.name == "bufferization.to_tensor"]
    reshape = tensor_of.results[0].get_user_of_unique_use()
    if reshape is None or reshape.name != "tensor.reshape" or as_number(reshape):
        return None
    return reshape


def popped_as_is(op) -> bool:
    """Is `op` the reshape a pop reads its record in (`_record_as`)? It makes nothing."""
    if op.name != "tensor.reshape":
        return False
    source = op.operands[0]
    return (
        isinstance(source.owner, Operation)
        and source.owner.name == "bufferization.to_tensor"
        and _carries_pop(source.owner.operands[0])
        and _reshaped_pop(source.owner.operands[0]) is op
    )


def emit_copy(tr, op) -> None:
    source, dest = op.operands
    if is_tape_view(dest.type):  # into a record of the tape
        tr.line(f"{_slot(tr, dest)} = {tr.value(source)}")  # an array never written again
    elif _carries_pop(dest):
        t = dest.type
        # a record may be stored in its tensor's own shape (`pushed_as_is`): read in the
        # shape its one reshape gives it, or flat
        reshape = _reshaped_pop(dest)
        shape = t.get_shape()[0] if reshape is None else tuple(reshape.results[0].type.get_shape())
        read = "_record" if reshape is None else "_record_as"
        tr.line(f"{tr.value(dest)} = {read}({_slot(tr, source)}, {shape!r}, {dtype_name(t)})")
    else:
        tr.line(f"{tr.value(dest)}[:] = {_slot(tr, source)}")


def emit_materialize(tr, op) -> None:
    """A tensor into a buffer (irad-lower-tape's push, before its copy onto the tape)."""
    source, dest = tr.operands(op)
    if _carries_push(op.operands[1]):
        pushed = op.operands[0]
        as_is = isinstance(pushed.owner, Operation) and pushed_as_is(pushed.owner)
        if as_is:
            pushed = pushed.owner.operands[0]  # the array before the tape's flattening
        if _owned(pushed) and (as_is or _flat_f64(pushed)):
            tr.alias(op.operands[1], source)  # the array itself: f64 already (flat, or flattened by the pop)
            return
        array = "np.asarray" if _owned(pushed) else "np.array"  # np.array copies
        flat = "" if as_is else ".reshape(-1)"
        tr.line(f"{dest} = {array}({source}, dtype={dtype_name(op.operands[1].type)}){flat}")
    else:
        tr.line(f"{dest}[:] = np.ravel({source})")


def emit_static_alloc(tr, op) -> None:
    t = op.results[0].type
    buf = tr.define(op.results[0])
    if not (_carries_push(op.results[0]) or _carries_pop(op.results[0])):
        tr.line(f"{buf} = np.empty({tuple(t.get_shape())!r}, dtype={dtype_name(t)})")


def float_literal(value: float) -> str:
    """Python source for a float, inf and nan included (shared with python.py)."""
    if math.isnan(value):  # its sign is seen by copysign and np.signbit, and kept by + and *
        return "-float('nan')" if math.copysign(1.0, value) < 0 else "float('nan')"
    if math.isinf(value):
        return "float('inf')" if value > 0 else "-float('inf')"
    return repr(value)


def is_tape_view(t: Attribute) -> bool:
    return isinstance(t, MemRefType) and not isinstance(t.layout, NoneAttr) and t.has_static_shape()


def is_buffer(t: Attribute) -> bool:
    return isinstance(t, MemRefType) and isinstance(t.layout, NoneAttr) and t.has_static_shape()


TAPE_EXPRESSIONS: dict[str, Callable] = {
    "memref.subview": _subview,
    "bufferization.to_tensor": lambda tr, op: tr.value(op.memref),
}


def has_tensor(op: Operation) -> bool:
    # the exact type: isinstance against xDSL's attribute classes (ABCs) is slow,
    # and the backend asks this of every op (so: loops, no generator)
    for values in (operands(op), op.results):
        for v in values:
            if type(v.type) is TensorType:
                return True
    return False


def dtype_name(t: Attribute) -> str:
    elem = t.element_type if isinstance(t, (TensorType, MemRefType)) else t
    if isinstance(elem, Float64Type):
        return "np.float64"
    if isinstance(elem, Float32Type):
        return "np.float32"
    if isinstance(elem, IntegerType) and elem.width.data == 1:
        return "np.bool_"
    narrow = NARROW_INTS.get(elem)  # int8 ... uint64: arrays of their width, wrapping as numpy's
    return f"np.{narrow.name}" if narrow is not None else "np.int64"


def int_value(value, elem: Attribute):
    """A constant's value as numpy's uint dtype of `elem` holds it: its carrier's
    bits below the top one (irad/ir/types.py; numpy 2 refuses a negative
    value in a uint array); other values as they are."""
    if isinstance(value, int) and not isinstance(value, bool) and is_uint(elem):
        return value & uint_mask(elem)
    return value


def int_literal(value: int | str, elem: Attribute, expression: str = "") -> str:
    """An int of type `elem` (a constant, or the variable named `value` whose
    truncation to `elem` is `expression`): a numpy scalar of a narrow dtype
    (np.int8(2)), so that numpy computes with it in that dtype even where it
    meets no array (np.where(c, 1, 2) would be int64); else a Python int."""
    narrow = NARROW_INTS.get(elem)
    if isinstance(value, str):  # a uint's carrier holds the dtype's bits, non-negative
        value = f"{value} & {hex(uint_mask(elem))}" if is_uint(elem) else expression
    else:
        value = int_value(value, elem)
    return f"np.{narrow.name}({value})" if narrow is not None else repr(value)


def is_supported_tensor(t: Attribute) -> bool:
    return isinstance(t, TensorType) and all(d >= 0 for d in t.get_shape())


def argument_conversion(t: TensorType, param: str) -> str:
    """The expression that makes argument `param` an array of t's dtype (itself if it is one)."""
    return f"np.asarray({param}, dtype={dtype_name(t)})"


def _frozen(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def _insert(dest: np.ndarray, index: tuple, value: Any) -> np.ndarray:
    """A copy of `dest` with `dest[index] = value` (tensor.insert / insert_slice)."""
    out = np.array(dest)
    out[index] = value
    return out


def _scatter_along_axis(dest, idx, values, axis: int, accumulate: bool):
    """A copy of dest with values added (np.add.at) or written at idx along axis."""
    out = np.array(dest)
    positions = list(np.indices(idx.shape, sparse=True))
    positions[axis] = idx
    if accumulate:
        np.add.at(out, tuple(positions), values)
    else:
        out[tuple(positions)] = values
    return out


def _libm_elementwise(fn):
    """A libm function numpy has no ufunc for (math.erf, math.erfc), on an array:
    computed in float64 by Python's math, rounded to the array's dtype."""
    each = np.frompyfunc(fn, 1, 1)

    def apply(x):
        x = np.asarray(x)
        return np.asarray(each(x), dtype=np.float64).astype(x.dtype)

    return apply


def owned(x: Any) -> Any:
    """A result handed to the user: a fresh writable array, never a view or a constant."""
    return np.array(x) if isinstance(x, np.ndarray) else x


def fresh(v) -> bool:
    """`v`'s array is already what `owned` makes: an array of rank >= 1 that an
    allocating op made (python/temporaries.py writes only into such arrays
    when nothing else reads them) and that only this one use sees."""
    owner = v.owner
    return (
        isinstance(owner, Operation)
        and allocates(owner)
        and len(v.type.get_shape()) > 0
        and sum(1 for _ in v.uses) == 1
    )


def _carried(h: np.ndarray, products: np.ndarray, carry: np.ndarray) -> np.ndarray:
    """h + products * carry, but h where the carry is 0 and a block's product
    overflowed: the recurrence never forms that product, so no inf * 0 = NaN."""
    moved = h + products * carry
    if not np.issubdtype(h.dtype, np.floating):
        return moved
    return np.where((carry == 0) & ~np.isfinite(products), h, moved).astype(h.dtype, copy=False)


def linear_scan(a: np.ndarray, b: np.ndarray, axis: int, reverse: bool) -> np.ndarray:
    """h[k] = a[k] h[k-1] + b[k] along the axis (irad.linear_scan), with about
    2 sqrt(n) numpy steps: the axis in blocks, each block's recurrence from 0
    run position by position for all blocks at once, then the blocks' ends
    chained in order, then each block's carry times the products of its a
    added in (`_carried`)."""
    a, b = np.moveaxis(a, axis, 0), np.moveaxis(b, axis, 0)
    if reverse:
        a, b = a[::-1], b[::-1]
    n, rest = b.shape[0], b.shape[1:]
    if n == 0:
        return np.moveaxis(b.copy(), 0, axis)
    size = math.isqrt(n)
    blocks = -(-n // size)
    padding = [(0, blocks * size - n)] + [(0, 0)] * len(rest)
    a = np.pad(a, padding, constant_values=1).reshape(blocks, size, *rest)
    h = np.pad(b, padding).reshape(blocks, size, *rest)
    products = a.copy()
    with np.errstate(over="ignore", invalid="ignore"):
        for k in range(1, size):
            h[:, k] += a[:, k] * h[:, k - 1]
            products[:, k] *= products[:, k - 1]
        carry = np.zeros_like(h[0, 0])
        carries = np.empty_like(h[:, 0])
        for q in range(blocks):
            carries[q] = carry
            carry = _carried(h[q, -1], products[q, -1], carry)
        h = _carried(h, products, carries[:, None])
    h = h.reshape(blocks * size, *rest)[:n]
    if reverse:
        h = h[::-1]
    return np.ascontiguousarray(np.moveaxis(h, 0, axis))


NAMESPACE: dict[str, Any] = {
    "np": np,
    "_frozen": _frozen,
    "_owned": owned,
    "_record": _record,
    "_record_as": _record_as,
    "_insert": _insert,
    "_scatter_along": _scatter_along_axis,
    "_linear_scan": linear_scan,
    "_erf_array": _libm_elementwise(math.erf),
    "_erfc_array": _libm_elementwise(math.erfc),
    # np.dot and np.vdot without numpy's `__array_function__` dispatcher, a Python
    # frame per call (generated code passes them plain arrays alone)
    "_dot": getattr(np.dot, "_implementation", np.dot),
    "_vdot": getattr(np.vdot, "_implementation", np.vdot),
}


def constant_initializer(attr: DenseIntOrFPElementsAttr, t: TensorType) -> str:
    dims = tuple(t.get_shape())
    dtype = dtype_name(t)
    one = splat_element(attr)
    if one is not None:
        one = int_value(one, t.element_type)
        return f"_frozen({_filled(float_literal(one) if isinstance(one, float) else repr(one), dims, dtype)})"
    values = [int_value(v, t.element_type) for v in attr.get_values()]
    items = ", ".join(float_literal(v) if isinstance(v, float) else repr(v) for v in values)
    return f"_frozen(np.array([{items}], dtype={dtype}).reshape({dims!r}))"


# ---- emitters ---------------------------------------------------------------
Emitter = Callable[[Any, Operation], str]


def _call(fn: str) -> Emitter:
    return lambda tr, op: f"{fn}({', '.join(tr.operands(op))})"


def _infix(symbol: str) -> Emitter:
    def emit(tr, op):
        a, b = tr.operands(op)
        return f"({a} {symbol} {b})"

    return emit


def _constant(tr, op):
    if as_number(op):
        return number_expression(tr, op)
    return tr.constant(constant_initializer(op.value, op.result.type))


def _astype(tr, op):
    (x,) = tr.operands(op)
    return f"{x}.astype({dtype_name(op.results[0].type)})"


def _splat(tr, op):
    t = op.result.type
    if as_number(op):
        return number_expression(tr, op)
    return _filled(tr.value(op.input), tuple(t.get_shape()), dtype_name(t))


def _filled(fill: str, dims: tuple, dtype: str) -> str:
    """An array of `dims` every element of which is `fill`: above LARGE_SPLAT
    elements a read-only view of the one number (nothing writes into a splat
    or a constant: `allocates`)."""
    if math.prod(dims) > LARGE_SPLAT:
        return f"np.broadcast_to(np.array({fill}, dtype={dtype}), {dims!r})"
    return f"np.full({dims!r}, {fill}, dtype={dtype})"


def _reshape(tr, op):
    if as_number(op):
        return number_expression(tr, op)
    return f"{tr.value(op.source)}.reshape({tuple(op.result.type.get_shape())!r})"


def _scalar(op: Operation, expr: str) -> str:
    t = op.results[0].type
    if isinstance(t, IntegerType):
        return f"bool({expr})" if t.width.data == 1 else f"int({expr})"
    return f"_f64({expr})"  # a Python float (np.float64 in the IEEE namespace)


def _index_tuple(tr, indices) -> str:
    return "(" + "".join(f"{tr.value(i)}, " for i in indices) + ")"


def _extract(tr, op):
    return _scalar(op, f"{tr.value(op.tensor)}[{_index_tuple(tr, op.indices)}]")


def _insert_element(tr, op):
    if not op.indices and as_number(op):
        return number_expression(tr, op)
    if not op.indices:  # the whole of a rank-0 tensor: a 0-d array of the number
        return f"np.array({tr.value(op.scalar)}, dtype={dtype_name(op.dest.type)})"
    return f"_insert({tr.value(op.dest)}, {_index_tuple(tr, op.indices)}, {tr.value(op.scalar)})"


def slices(tr, op) -> str:
    """The numpy index of an extract_slice/insert_slice: `a:b, c:d:2, `; whole
    trailing axes left out (numpy indexes `x[i:i + 1]` faster than `x[i:i + 1, 0:32]`)."""
    dynamic = iter(op.offsets)
    parts = []
    offsets, sizes, strides = op.static_offsets.get_values(), op.static_sizes.get_values(), op.static_strides.get_values()
    shape = (op.dest if op.name == "tensor.insert_slice" else op.source).type.get_shape()
    axes = len(offsets)
    while axes > 1 and offsets[axes - 1] == 0 and strides[axes - 1] == 1 and sizes[axes - 1] == shape[axes - 1]:
        axes -= 1
    for offset, size, stride in zip(offsets[:axes], sizes[:axes], strides[:axes]):
        # one past the last element, in the direction of the stride
        span = ((size - 1) * stride + (1 if stride > 0 else -1)) if size else 0
        if offset == DYNAMIC:
            start = tr.value(next(dynamic))
            stop = f"{start} + {span}"
        else:
            start, stop = str(offset), str(offset + span)
            if offset + span < 0:  # a negative stride that ends at the first element
                stop = ""
        parts.append(f"{start}:{stop}" + (f":{stride}" if stride != 1 else ""))
    return "".join(p + ", " for p in parts)


def _extract_slice(tr, op):
    return f"{tr.value(op.source)}[{slices(tr, op)}]"  # a view: never written to


def _stacked_in_place(op) -> bool:
    """Does insert_slice `op` fill a slot of a buffer an `scf.for` carries and
    nothing else sees (irad-sink-accumulations' stacks)? Its dest is an
    iter_arg read by `op` alone, whose result is only yielded as that
    iter_arg's next value, starting from a `tensor.empty` used by the loop
    alone: then one array goes round the loop, written in place."""
    dest = op.dest
    if not isinstance(dest, BlockArgument) or dest.index == 0 or not isinstance(dest.block.parent_op(), scf.ForOp):
        return False
    loop, position = dest.block.parent_op(), dest.index - 1
    init = loop.operands[3 + position]
    uses = list(op.results[0].uses)
    return (
        all(use.operation is op for use in dest.uses)
        and len(uses) == 1
        and uses[0].operation is dest.block.last_op
        and uses[0].index == position
        and isinstance(init.owner, tensor.EmptyOp)
        and all(use.operation is loop for use in init.uses)
    )


def _empty(tr, op):
    """An init that ops overwrite (None), or a buffer an scf.for fills (`_stacked_in_place`)."""
    if any(isinstance(use.operation, scf.ForOp) for use in op.results[0].uses):
        t = op.results[0].type
        return f"np.empty({tuple(t.get_shape())!r}, dtype={dtype_name(t)})"
    return "None"


def slice_source(tr, op) -> str:
    """An insert_slice's source with the slot's shape (reshaped only if it has another)."""
    sizes = tuple(op.static_sizes.get_values())
    if tuple(op.source.type.get_shape()) == sizes:
        return tr.value(op.source)
    return f"{tr.value(op.source)}.reshape({sizes!r})"


def _insert_slice(tr, op):
    dest = op.dest
    if _stacked_in_place(op):
        tr.line(f"{tr.value(dest)}[{slices(tr, op)}] = {slice_source(tr, op)}")
        return tr.value(dest)
    if isinstance(dest.owner, tensor.EmptyOp) and tuple(op.static_sizes.get_values()) == tuple(
        dest.type.get_shape()
    ):
        return f"{tr.value(op.source)}.reshape({tuple(dest.type.get_shape())!r})"  # a whole copy
    if isinstance(dest.owner, tensor.EmptyOp):
        raise tr.error(op, "a partial insert_slice into tensor.empty is not supported")
    return f"_insert({tr.value(dest)}, np.s_[{slices(tr, op)}], {slice_source(tr, op)})"


def _concat(tr, op):
    return f"np.concatenate(({''.join(v + ', ' for v in tr.operands(op))}), axis={op.dim.value.data})"


def _cumsum(tr, op):
    """np.cumsum along the axis; reversed, on the axis read backwards (views)."""
    (x,) = tr.operands(op)
    axis = op.axis_value
    if op.reverse is None:
        return f"np.cumsum({x}, axis={axis})"
    back = ":, " * axis + "::-1"
    return f"np.cumsum({x}[{back}], axis={axis})[{back}]"


def _linear_scan(tr, op):
    a, b = tr.operands(op)
    return f"_linear_scan({a}, {b}, {op.axis_value}, {op.reverse is not None})"


def _from_elements(tr, op):
    t = op.result.type
    return f"np.array([{', '.join(tr.operands(op))}], dtype={dtype_name(t)}).reshape({tuple(t.get_shape())!r})"


# Up to this many elements, a broadcast is copied (`ndarray.repeat`, in C)
# rather than viewed (`np.broadcast_to`, several Python frames, microseconds).
SMALL_BROADCAST = 4096


def _broadcast(tr, op):
    if as_number(op):
        return number_expression(tr, op)
    out = tuple(op.results[0].type.get_shape())
    added = set(op.dimensions.get_values())
    expanded = tuple(1 if d in added else n for d, n in enumerate(out))
    source = f"{tr.value(op.input)}.reshape({expanded!r})"
    if implicitly_broadcast(op):
        return source  # numpy broadcasts it in its user
    if math.prod(out) <= SMALL_BROADCAST:
        return source + "".join(f".repeat({n}, axis={d})" for d, n in enumerate(out) if expanded[d] != n)
    return f"np.broadcast_to({source}, {out!r})"


_REDUCE_FUNCTIONS = {
    arith.AddfOp: "np.add",
    arith.MulfOp: "np.multiply",
    arith.MaximumfOp: "np.maximum",
    arith.MinimumfOp: "np.minimum",
    arith.AddiOp: "np.add",
    arith.MuliOp: "np.multiply",
    arith.MaxSIOp: "np.maximum",
    arith.MinSIOp: "np.minimum",
}


def sum_expression(tr, x, axes: tuple[int, ...]) -> str:
    """The sum of tensor value `x` over `axes`, as the cheapest numpy call.

    A float sum over leading or trailing axes, not all of them, is a matrix-vector
    product with a vector of ones (`np.dot`, BLAS's gemv): numpy's own reduction
    along an axis that is not the innermost one, or along a short innermost one,
    is several times slower (20 µs against 1.5 µs for the rows of a 1000×3
    array). It adds in BLAS's order, as the products and fused sums this backend
    emits already do (python/temporaries.py). Anything else is `np.add.reduce`,
    what `x.sum()` calls."""
    t = x.type
    shape = tuple(t.get_shape())
    rank = len(shape)
    name = tr.value(x)
    k = len(axes)
    if isinstance(t.element_type, (Float64Type, Float32Type)) and 0 < k < rank:
        dtype = dtype_name(t)
        if axes == tuple(range(k)):  # leading axes: ones @ x
            n, m, kept = math.prod(shape[:k]), math.prod(shape[k:]), shape[k:]
            ones = tr.constant(f"_frozen(np.ones({n}, dtype={dtype}))")
            matrix = name if rank == 2 else f"{name}.reshape({(n, m)!r})"
            result = f"_dot({ones}, {matrix})"
        elif axes == tuple(range(rank - k, rank)):  # trailing axes: x @ ones
            m, n, kept = math.prod(shape[: rank - k]), math.prod(shape[rank - k :]), shape[: rank - k]
            ones = tr.constant(f"_frozen(np.ones({n}, dtype={dtype}))")
            matrix = name if rank == 2 else f"{name}.reshape({(m, n)!r})"
            result = f"_dot({matrix}, {ones})"
        else:
            kept = None
        if kept is not None:
            return result if len(kept) == 1 else f"{result}.reshape({kept!r})"
    return f"np.add.reduce({name}, axis={axes!r})"


def _reduce(tr, op):
    combiner = type(next(iter(op.regions[0].block.ops)))
    if combiner not in _REDUCE_FUNCTIONS:
        raise tr.error(op, f"reduction by {combiner.name} is not supported")
    combine_fn = _REDUCE_FUNCTIONS[combiner]
    axes = tuple(op.dimensions.get_values())
    if combiner is arith.AddfOp:
        reduced = sum_expression(tr, op.operands[0], axes)
    else:
        reduced = f"{combine_fn}.reduce({tr.value(op.operands[0])}, axis={axes!r})"
    init = op.operands[1]
    if is_splat_of(init, REDUCTIONS.get(combiner)):
        return reduced  # a full reduction gives a numpy scalar, which serves as a 0-d array
    return f"{combine_fn}({tr.value(init)}, {reduced})"


def _transpose(tr, op):
    return f"{tr.value(op.operands[0])}.transpose({tuple(op.permutation.get_values())!r})"


def _matmul(tr, op):
    a, b, init = tr.operands(op)
    if is_splat_of(op.operands[2], 0.0):
        return f"({a} @ {b})"
    return f"({init} + {a} @ {b})"


# Ops inside an elementwise linalg.generic, on whole arrays.
_CMP = {"oeq": "==", "ogt": ">", "oge": ">=", "olt": "<", "ole": "<=", "une": "!=",
        "eq": "==", "ne": "!=", "slt": "<", "sle": "<=", "sgt": ">", "sge": ">="}
# unordered / ordered: whether either operand is NaN (np.isnan)
_CMP_NAN = {"uno": "(np.isnan({0}) | np.isnan({1}))", "ord": "~(np.isnan({0}) | np.isnan({1}))"}
_CONVERSIONS = frozenset({"arith.uitofp", "arith.sitofp", "arith.fptosi", "arith.extf", "arith.truncf",
                          "arith.extui", "arith.extsi", "arith.trunci", "arith.index_cast"})
_BITWISE = {"arith.andi": "&", "arith.ori": "|", "arith.xori": "^"}
# int divisions (their divisors are never 0, nor -1 for floordivsi: float_division.py);
# remsi is C's remainder, with the dividend's sign: np.fmod
_INT_DIVISIONS = {"arith.floordivsi": "np.floor_divide", "arith.remsi": "np.fmod"}
# batched loop counters and trip counts (irad-vmap's masked loops); abs of a batched int
_INT_EXTREMA = {"arith.maxsi": "np.maximum", "arith.minsi": "np.minimum"}
_INT_UNARY = {"math.absi": "np.abs"}


class _BodyValues:
    """The values of a linalg.generic body as whole arrays, for ARRAY_OPS' emitters."""

    def __init__(self, tr, values: dict) -> None:
        self.tr, self.values = tr, values

    def value(self, v) -> str:
        # values from outside the body (a constant hoisted out of it) are plain values
        return self.values[v] if v in self.values else self.tr.value(v)

    def operands(self, op) -> list[str]:
        return [self.value(v) for v in op.operands]


def _body_expression(tr, op, inner, body: _BodyValues) -> str:
    args = body.operands(inner)
    name = inner.name
    if name == "arith.constant":
        data = inner.value.value.data
        if isinstance(data, float):
            return float_literal(data)
        if inner.result.type == i1:  # a bool: its bits read as a signed int (true: -1) would be an int to numpy
            return repr(data != 0)
        return int_literal(data, inner.result.type)
    if name == "arith.cmpf":
        predicate = arith.CMPF_COMPARISON_OPERATIONS[inner.predicate.value.data]
        if predicate in _CMP_NAN:
            return _CMP_NAN[predicate].format(*args)
        return f"({args[0]} {_CMP[predicate]} {args[1]})"
    if name == "arith.cmpi":
        predicate = arith.CMPI_COMPARISON_OPERATIONS[inner.predicate.value.data]
        return f"({args[0]} {_CMP[predicate]} {args[1]})"
    if name == "arith.select":
        return f"np.where({args[0]}, {args[1]}, {args[2]})"
    if name in _CONVERSIONS:
        # (fptosi: a tape's int tensor read back): numpy's casts truncate alike
        return f"np.asarray({args[0]}).astype({dtype_name(inner.results[0].type)})"
    if name in _BITWISE:
        return f"({args[0]} {_BITWISE[name]} {args[1]})"
    if name in _INT_DIVISIONS:
        return f"{_INT_DIVISIONS[name]}({args[0]}, {args[1]})"
    if name in _INT_EXTREMA:
        return f"{_INT_EXTREMA[name]}({args[0]}, {args[1]})"
    if name in _INT_UNARY:
        return f"{_INT_UNARY[name]}({args[0]})"
    if name == "arith.ceildivsi":  # the floor, plus one where inexact (never negates: INT64_MIN stays in range)
        return f"(np.floor_divide({args[0]}, {args[1]}) + (np.remainder({args[0]}, {args[1]}) != 0))"
    if name in ARRAY_OPS and (name.startswith("math.") or name in _ELEMENTWISE_BINARY or name == "arith.negf"):
        return ARRAY_OPS[name](body, inner)
    raise tr.error(op, f"the op {name} inside linalg.generic is not supported")


def _gather_along(tr, op):
    idx, x, _ = tr.operands(op)
    return f"np.take_along_axis({x}, {idx}, {axis_of(op)})"


def _scatter_along(accumulate: bool):
    def emit(tr, op):
        idx, values, dest = tr.operands(op)
        return f"_scatter_along({dest}, {idx}, {values}, {axis_of(op)}, {accumulate})"

    return emit


def _rank_along(tr, op):
    (x, _, _) = tr.operands(op)
    axis = axis_of(op)
    # argsort puts NaN last and keeps ties in order with kind="stable"
    order = f"np.argsort({x}, axis={axis}, kind='stable')"
    return f"np.argsort({order}, axis={axis}, kind='stable')"


def _contraction(tr, op):
    """A stack of matrix products summing two terms or more as np.matmul
    (BLAS; np.einsum loops over the stack, 4-20x slower at 256 products of
    32x8 by 8x32), an outer product or any other contraction as np.einsum
    (2-4x faster than np.matmul with one term), output letters no input has
    broadcast afterwards."""
    ins, out = contraction.subscripts(op)
    form = contraction.matmul_form(op)
    if form is not None and contraction.summed_size(op) > 1:
        left, right, t_left, t_right = form
        operands = [tr.value(op.inputs[i]) + (".swapaxes(-1, -2)" if t else "")
                    for i, t in ((left, t_left), (right, t_right))]
        result = f"np.matmul({operands[0]}, {operands[1]})"
        if not is_splat_of(op.outputs[0], 0.0):
            result = f"({tr.value(op.outputs[0])} + {result})"
        return result
    present = "".join(c for c in out if any(c in s for s in ins))
    result = f"np.einsum({','.join(ins) + '->' + present!r}, {', '.join(tr.value(v) for v in op.inputs)})"
    dims = tuple(op.results[0].type.get_shape())
    if present != out:
        expanded = tuple(n if c in present else 1 for c, n in zip(out, dims))
        result = f"np.broadcast_to({result}.reshape({expanded!r}), {dims!r})"
    if contraction.sums(op) and not is_splat_of(op.outputs[0], 0.0):
        result = f"({tr.value(op.outputs[0])} + {result})"
    return result


# linalg.generic kinds (irad/ir/tensor.py GENERIC_KINDS) that are not elementwise
_GENERIC_FORMS = {
    "gather": _gather_along,
    "scatter-add": _scatter_along(True),
    "scatter": _scatter_along(False),
    "rank": _rank_along,
    "contraction": _contraction,
}


def _generic(tr, op):
    kind = op.attributes.get(KIND)
    if isinstance(kind, StringAttr) and kind.data in _GENERIC_FORMS:
        return _GENERIC_FORMS[kind.data](tr, op)
    body = op.regions[0].block
    values: dict = {arg: tr.value(v) for arg, v in zip(body.args, op.inputs)}
    scope = _BodyValues(tr, values)
    result = None
    for inner in body.ops:
        if inner.name == "linalg.yield":
            result = scope.value(inner.operands[0])
            break
        local = tr.fresh_local()
        tr.line(f"{local} = {_body_expression(tr, op, inner, scope)}")
        values[inner.results[0]] = local
    if _has_full_operand(op, op.inputs):
        return result
    return f"np.broadcast_to({result}, {tuple(op.results[0].type.get_shape())!r})"


# ---- implicit broadcasting ------------------------------------------------------
# np.broadcast_to costs microseconds. A broadcast (or splat) whose every user is
# an elementwise op that gets its full result shape from numpy's own
# broadcasting, even if all its broadcast operands stay unexpanded, is left
# unexpanded: `x.reshape(...)` with size-1 axes, or the number itself.
_ELEMENTWISE_BINARY = frozenset(
    {"arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.remf", "arith.maximumf",
     "arith.minimumf", "arith.maxnumf", "arith.minnumf", "arith.addi", "arith.subi", "arith.muli"}
)


def _is_elementwise(op: Operation) -> bool:
    name = op.name
    if name == "linalg.generic":
        kind = op.attributes.get(KIND)
        return not isinstance(kind, StringAttr) or kind.data in ELEMENTWISE_KINDS
    return name in _ELEMENTWISE_BINARY or (
        name.startswith("math.") and len(op.operands) == 2
    )


def smallest_shape(v) -> tuple[int, ...]:
    """The shape `v` has at run time if every broadcast stays unexpanded (a
    tensor made of one number: the number itself)."""
    owner = v.owner
    if splat_number(v) is not None:
        return ()
    if isinstance(owner, Operation) and owner.name == "linalg.broadcast":
        added = set(owner.dimensions.get_values())
        return tuple(1 if d in added else n for d, n in enumerate(v.type.get_shape()))
    return tuple(v.type.get_shape()) if isinstance(v.type, TensorType) else ()


def _has_full_operand(user: Operation, inputs) -> bool:
    """numpy's broadcasting of `inputs` gives `user`'s result shape."""
    shapes = [smallest_shape(v) for v in inputs]
    return np.broadcast_shapes(*shapes) == tuple(user.results[0].type.get_shape())


def as_number(op: Operation) -> bool:
    """`op` makes a tensor of one number (`splat_number`) that generated code can
    hold as the number itself: every user broadcasts it by numpy's rules (an
    elementwise op whose other operands give the result's shape), or reshapes
    or broadcasts it into a tensor held as the number too."""
    if splat_number(op.results[0]) is None:
        return False
    for use in op.results[0].uses:
        user = use.operation
        if user.name in ("linalg.broadcast", "tensor.reshape") and use.index == 0 and as_number(user):
            continue
        if not _is_elementwise(user):
            return False
        inputs = user.inputs if user.name == "linalg.generic" else user.operands
        if all(splat_number(v) is not None for v in inputs):
            return False  # numbers alone would make a Python number where a tensor is due
        if not _has_full_operand(user, inputs):
            return False
    return True


def number_expression(tr, op: Operation) -> str:
    """The number an `as_number` op's tensor is held as."""
    number = splat_number(op.results[0])
    if isinstance(number, SSAValue):
        text = tr.value(number)
    elif op.results[0].type.element_type == i1:  # a bool, not the int 0 or -1: np.where(m, a, False) stays bool
        text = repr(bool(number))
    else:
        text = float_literal(number) if isinstance(number, float) else repr(number)
    if isinstance(op.results[0].type.element_type, Float32Type):
        return f"np.float32({text})"  # keeps float32 arithmetic float32
    return text


def implicitly_broadcast(op: Operation) -> bool:
    for use in op.results[0].uses:
        user = use.operation
        if not _is_elementwise(user):
            return False
        inputs = user.inputs if user.name == "linalg.generic" else user.operands
        if not _has_full_operand(user, inputs):
            return False
    return True


MATH_UFUNCS = {
    "sin": "np.sin", "cos": "np.cos", "tan": "np.tan", "exp": "np.exp", "log": "np.log",
    "log1p": "np.log1p", "expm1": "np.expm1", "sqrt": "np.sqrt", "tanh": "np.tanh",
    "sinh": "np.sinh", "cosh": "np.cosh", "atan": "np.arctan", "asin": "np.arcsin",
    "acos": "np.arccos", "log2": "np.log2", "log10": "np.log10", "absf": "np.abs",
    "powf": "np.power", "atan2": "np.arctan2", "copysign": "np.copysign", "exp2": "np.exp2",
    "asinh": "np.arcsinh", "cbrt": "np.cbrt", "acosh": "np.arccosh", "atanh": "np.arctanh",
    "isfinite": "np.isfinite", "isinf": "np.isinf", "isnan": "np.isnan",
    "floor": "np.floor", "ceil": "np.ceil", "trunc": "np.trunc", "roundeven": "np.rint",
}


def _fpowi(tr, op):
    x, n = tr.operands(op)
    return f"np.power({x}, {n}.astype({x}.dtype))"  # float32 stays float32


def _isnormal(tr, op):
    (x,) = tr.operands(op)
    return f"(np.isfinite({x}) & (np.abs({x}) >= np.finfo({x}.dtype).tiny))"

# Elementwise float ops and the numpy ufunc ARRAY_OPS computes each with.
UFUNCS: dict[str, str] = {
    "arith.addf": "np.add",
    "arith.subf": "np.subtract",
    "arith.mulf": "np.multiply",
    "arith.divf": "np.divide",
    "arith.negf": "np.negative",
    "arith.remf": "np.fmod",
    "arith.maximumf": "np.maximum",
    "arith.minimumf": "np.minimum",
    "arith.maxnumf": "np.fmax",
    "arith.minnumf": "np.fmin",
    **{f"math.{name}": fn for name, fn in MATH_UFUNCS.items() if name not in ("isfinite", "isinf", "isnan")},
}


def allocates(op: Operation) -> bool:
    """`op`'s emitted expression always makes a new array (a numpy scalar if
    rank 0), never a view of an operand."""
    if op.name == "linalg.reduce":
        return bool(op.dimensions.get_values())  # x.sum(axis=()) is left to numpy
    if op.name == "tensor.insert":
        return bool(op.indices)  # `_insert` copies; the whole of a rank-0 tensor is a number
    if op.name == "tensor.insert_slice":
        return not isinstance(op.dest.owner, tensor.EmptyOp)  # into tensor.empty: a reshape, a view
    return op.name in UFUNCS or op.name == "linalg.matmul"


ARRAY_OPS: dict[str, Emitter] = {
    "arith.constant": _constant,
    "arith.addf": _infix("+"),
    "arith.subf": _infix("-"),
    "arith.mulf": _infix("*"),
    "arith.divf": _infix("/"),
    "arith.remf": _call("np.fmod"),
    # int64 arrays wrap around on overflow, as numpy's do
    "arith.addi": _infix("+"),
    "arith.subi": _infix("-"),
    "arith.muli": _infix("*"),
    "arith.andi": _infix("&"),
    "arith.ori": _infix("|"),
    "arith.xori": _infix("^"),
    "arith.negf": lambda tr, op: f"(-{tr.value(op.operands[0])})",
    "arith.maximumf": _call("np.maximum"),
    "arith.minimumf": _call("np.minimum"),
    # maxnum/minnum ignore a NaN operand, as np.fmax/np.fmin do
    "arith.maxnumf": _call("np.fmax"),
    "arith.minnumf": _call("np.fmin"),
    "math.rsqrt": lambda tr, op: f"(1.0 / np.sqrt({tr.value(op.operands[0])}))",
    # MLIR 22.1's clampf (irad/ir/mlir_ops.py)
    "math.clampf": lambda tr, op: "np.maximum(np.minimum({}, {}), {})".format(*tr.operands(op)),
    "math.fpowi": _fpowi,
    "math.isnormal": _isnormal,
    "math.erf": _call("_erf_array"),
    "math.erfc": _call("_erfc_array"),
    "arith.extf": _astype,
    "arith.truncf": _astype,
    **{f"math.{name}": _call(fn) for name, fn in MATH_UFUNCS.items()},
    "tensor.empty": _empty,
    "tensor.splat": _splat,
    "tensor.reshape": _reshape,
    "tensor.extract": _extract,
    "tensor.insert": _insert_element,
    "tensor.extract_slice": _extract_slice,
    "tensor.insert_slice": _insert_slice,
    "tensor.concat": _concat,
    "tensor.from_elements": _from_elements,
    "irad.cumsum": _cumsum,
    "irad.linear_scan": _linear_scan,
    "linalg.broadcast": _broadcast,
    "linalg.reduce": _reduce,
    "linalg.transpose": _transpose,
    "linalg.matmul": _matmul,
    "linalg.generic": _generic,
}
