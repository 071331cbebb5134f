"""numpy's dtypes for what irad computes in others, and ints held as floats.

irad lowers some of numpy in a dtype of its own: `np.sign(i)`, `i @ j`,
`np.trace(i)` of int arrays in float64, `m // m` of bools in int64, np.dot or
np.sort of masks in numbers; numpy gives int64, int8 and bool. `record`, called
where every numpy function and every arithmetic operator on arrays is lowered,
asks numpy the dtype of its result (calling it on small example arrays of the
arguments' exact dtypes, so no table of dtype rules is kept here) and has the
lowering convert irad's value to it there: an int computed in float is checked
exact at run time (arrays.as_numpy_dtype), a bool numpy computes of bools is
irad's count `!= 0` (numpy's `+` of bools is `or`, `*` is `and`: a sum of
products of 0s and 1s is not 0 exactly where numpy's bool is True), and a dtype
irad does not have (float16: np.sin of bools) or a bool of other values is
refused. Every numpy call's result has numpy's dtype from where it is made.

What stays is a join holding an int on one path as a float (`m = 1; for ...:
m = m * 0.5`): the value is the same (ints are exact in float64 up to 2**53),
and so is most of what is computed from it, but numpy casts what is written
into an int array to int (`a[0] = 0.7` stores 0, with a gradient of 0), and
irad's float array would keep 0.7. Silently wrong, so refused. Which values are
such ints is one analysis over the function's IR, `check`:

* sources: the floats a join made of an int (`mark`, from joins.py), and
  operators on numbers whose numpy dtype is an int where irad's is a float
  (`record`; numpy_scalars.py keeps Python's rules for numbers);
* rules: `record` also notes, for each call, whether numpy's result would be
  an int if its float inputs were ints (np.maximum, +, @, np.sum, np.sign:
  yes; np.mean, /, np.sin, `* 0.5`: no), and the analysis follows that,
  numpy's own answer deciding;
* IR ops outside such calls keep an int an int where Python and numpy do:
  `+ - *`, max, min, abs and choices beside other ints (int literals
  included), and moving data (extract, slices, reshapes, broadcasts, splats,
  arrays of numbers, inserts), through control flow (number_joins.Flow);
* calls: a function's `Summary` says which of its results are such ints, and
  which are when one of its float arguments is; a call's results follow it.
  The second part is a flow from the function's float parameters, which only
  a caller passing a maybe-int needs, and most programs hold no int at all: it
  is followed the first time a caller's flow asks (`Summary.from_arguments`),
  on the function's IR as `check` left it (the int literals' marks stay until
  `strip`), its callees' first.

A write (tensor.insert, insert_slice, a scatter) into a value the analysis
finds is refused, naming where the int came from. A `//` or `%` of arrays
whose operands the analysis finds are ints gets numpy's int answer for a zero
divisor, 0 (the float one is inf or nan): the lowering guards each with a
constant false mask for "both are ints" (`zero_divisor_of_ints`), which `check`
sets, or takes the guard out.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Sequence

import numpy as np
from xdsl.dialects import arith, func, math, tensor
from xdsl.dialects.builtin import StringAttr, TensorType
from xdsl.dialects.linalg.ops import BroadcastOp, GenericOp, TransposeOp
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import Rewriter

from irad.base.errors import UnsupportedError
from irad.frontend.emitter import INT_LITERAL
from irad.frontend.number_joins import MARK, Flow, flow_from
from irad.frontend.numpy_scalars import KIND as SCALAR_KIND
from irad.frontend.numpy_scalars import WIDTH as SCALAR_WIDTH
from irad.frontend.numpy_scalars import is_float64 as is_strong
from irad.frontend.numpy_table import Parameter, numpy_name
from irad.frontend.values import Kind, Static, value_kind
from irad.ir import tensor as T
from irad.ir.constants import float_constant
from irad.ir.isa import isa
from irad.ir.types import F32, F64, I1, int_element, is_bool, is_float, numpy_dtype
from irad.ir.walk import walk, walk_block

INT_MARK = "irad.int_join"  # on the float a join made of an int: the origin, for the message

HINT = ("make it a float where it is made (float(...), .astype(float), * 1.0, or start it as 1.0, "
        "not 1), or write into an int array (np.zeros(n, dtype=int))")


def mark(value: SSAValue, origin: str) -> None:
    """Mark the float (or float array) a join made of an int (array); `origin`
    is the message's start (`file:line:col: 'm' is an int on one path into this
    loop and a float on another`)."""
    value.owner.attributes[INT_MARK] = StringAttr(origin)


class HeldInts:
    """What `record` learned while one function was lowered (see the module doc)."""

    def __init__(self) -> None:
        self.sources: dict[SSAValue, str] = {}  # value -> where it became an int held as a float
        self.rules: dict[SSAValue, tuple[SSAValue, ...]] = {}  # an int iff these float inputs are
        self.floats: set[SSAValue] = set()  # a float in numpy whatever the inputs
        self.writes: dict[Operation, str] = {}  # the ops an item assignment made -> where it is
        # a call's result -> (the call's float arguments, its callee's summary, the
        # result's index): an int if one of these is and the summary says it follows them
        self.any_rules: dict[SSAValue, tuple[tuple[SSAValue, ...], Summary, int]] = {}
        self.divisions: dict[SSAValue, tuple[SSAValue, SSAValue]] = {}  # "both ints" mask -> `//` or `%`'s x, y

    def record(self, fn, args: Sequence, result, where: str, error, convert, params: Sequence[Parameter] = ()):
        """After `result = fn(*args)` was lowered (fn a numpy callable, a method
        name "ndarray.x", or a ufunc for an operator; `params` the parameters
        `args` bind, from the numpy table): `result` with each value in numpy's
        dtype (`convert(value, element)` converts), or a refusal where irad has
        no such dtype (`error(message, hint)` makes it); and what numpy's dtype
        says of each float result made of floats that may be ints held as
        floats (the module doc)."""
        leaves = [v for v in _leaves(result) if isa(v, SSAValue)]
        inputs = [v for v in _leaves(args) if isa(v, SSAValue)]
        # an operator on numbers (no parameters, no array) follows Python's or numpy's rules by the numbers'
        # kinds (numpy_scalars.py): Python's `True - False` is 1
        operator_on_numbers = not params and not any(isa(v.type, TensorType) for v in inputs)
        if not operator_on_numbers and not all(is_float(_element(v.type)) for v in inputs):
            refused = numpy_refusal(fn, args, params)
            if refused is not None:  # np.sign, np.positive of bools: numpy raises for any values
                raise error(f"{_name(fn)} of these dtypes raises in numpy ({refused})",
                            "convert first: mask * 1 or x.astype(float)")
        declared = _numpy_dtypes(fn, args, params, frozenset())
        if declared is not None and len(declared) != len(leaves):
            declared = None
        if declared is not None and not operator_on_numbers:
            converted = {}
            for v, dtype in zip(leaves, declared):
                element = _numpy_element(fn, v, dtype, inputs, error)
                if element is not None and element != _element(v.type):
                    converted[v] = convert(v, element)
            if converted:
                result = _replaced(result, converted)
                leaves = [converted.get(v, v) for v in leaves]
        candidates = tuple(v for v in inputs if is_float(_element(v.type)) and not _float_constant(v))
        if not (candidates or operator_on_numbers) or not any(is_float(_element(v.type)) for v in leaves):
            return result  # numpy's dtypes: no float that may be an int held as one
        as_ints = _numpy_dtypes(fn, args, params, frozenset(map(id, candidates))) if candidates else None
        for k, v in enumerate(leaves):
            if not is_float(_element(v.type)) or v in inputs:
                continue
            kind = declared[k].kind if declared is not None else None
            if kind in ("i", "u"):  # an operator on numbers (numpy_scalars.py keeps Python's rules)
                self.sources[v] = (f"{where}: {_name(fn)} of ints is an int in numpy, which irad computes "
                                   "as a float")
            elif as_ints and len(as_ints) == len(leaves) and as_ints[k].kind in ("i", "u"):
                self.rules[v] = candidates
            elif kind is not None:
                self.floats.add(v)
        return result


def _numpy_element(fn, v: SSAValue, dtype: np.dtype, inputs: Sequence[SSAValue], error):
    """irad's element type for numpy's `dtype` of `fn`'s result `v` (irad's
    value); a refusal where irad has no such dtype.

    A bool numpy computes of bools (`+` is `or`, `*` `and`, np.dot, np.sort,
    np.diag) irad may compute as ints or floats, 0 and 1 added and multiplied:
    numpy's bool is True exactly where that number is not 0 (a sum of products
    of 0s and 1s, exact in float too). Of other inputs (constant numbers
    aside: axes) it need not be, and the call is refused."""
    element = _element(v.type)
    if dtype.kind == "b" and not is_bool(element) and not all(
            is_bool(_element(u.type)) or _constant_number(u) is not None for u in inputs):  # an axis is no value
        raise error(f"{_name(fn)} of these values is a bool in numpy, which irad computes as a number here",
                    "convert to float first (x * 1.0, x.astype(float)), or use | & ~ on masks")
    wanted = None
    if dtype.kind == "f":
        wanted = {np.dtype(np.float64): F64, np.dtype(np.float32): F32}.get(dtype)
    elif dtype.kind in ("i", "u", "b"):
        try:
            wanted = int_element(dtype)
        except KeyError:  # uint64
            pass
    if wanted is None:
        raise error(f"{_name(fn)} of these dtypes is {dtype} in numpy, a dtype irad does not have",
                    "convert the arguments first: x.astype(np.float64) (or * 1.0)")
    return wanted


def _replaced(result, converted: dict):
    """`result` (a value, or tuples and lists of them) with the values in `converted` replaced."""
    if isinstance(result, (tuple, list)):
        items = [_replaced(v, converted) for v in result]
        return type(result)._make(items) if hasattr(type(result), "_make") else type(result)(items)
    return converted.get(result, result) if isa(result, SSAValue) else result


class Summary:
    """What a function's callers need: its results that are ints numpy holds as
    ints (index -> where from, `results`), and those that are when a float
    argument is (`from_arguments`, followed when first asked: the module doc)."""

    def __init__(self, results: dict[int, str], block, held: HeldInts) -> None:
        self.results = results
        self._pending: tuple | None = (block, held)  # what the flow from the parameters reads
        self._from_arguments: frozenset[int] = frozenset()

    @property
    def from_arguments(self) -> frozenset[int]:
        if self._pending is not None:
            self.settle()
        return self._from_arguments

    def settle(self) -> None:
        """Follow the flow from the parameters of this function and of the callees
        it reaches, callees first: each flow then finds its calls' summaries
        settled (a loop, not recursion: call chains are thousands deep). The
        frontend settles a function's summary before it erases the function."""
        stack = [self]
        while stack:
            summary = stack[-1]
            if summary._pending is None:
                stack.pop()
                continue
            block, held = summary._pending
            waiting = [s for _, s, _ in held.any_rules.values() if s._pending is not None]
            if waiting:
                stack.extend(waiting)
                continue
            parameters = {a: "" for a in block.args if is_float(_element(a.type))}
            if parameters:
                summary._from_arguments = frozenset(_returned(block, flow_from(block, parameters, _Step(held))))
            summary._pending = None
            stack.pop()


def zero_divisor_of_ints(held: HeldInts, b, x: SSAValue, y: SSAValue, result: SSAValue) -> SSAValue:
    """`result`, x // y or x % y of float arrays, with 0 where y is 0 if x and y
    turn out ints held as floats (numpy's int answer; `check` decides)."""
    if not isa(result.type, TensorType):
        return result
    ints = T.dense(b, False, TensorType(I1, result.type.get_shape()))  # "x and y are ints": set by check

    def int_by_zero(e, args: Sequence[SSAValue]) -> SSAValue:
        zero = e.op(arith.CmpfOp(args[0], e.op(float_constant(0.0, args[0].type)), "oeq"))
        return e.op(arith.AndIOp(zero, args[1]))

    mask = T.pointwise(b, int_by_zero, [y, ints], I1, "piecewise-constant")
    zeros = T.dense(b, 0.0, result.type)
    guarded = T.select(b, mask, zeros, result)
    held.divisions[ints] = (x, y, result, guarded)
    return guarded


def _settle_divisions(held: HeldInts, flow: Flow | None) -> None:
    """Set each division's "both ints" mask where the flow finds x and y ints;
    take the guard out of the others (floats: nothing to pay for)."""
    for ints, (x, y, result, guarded) in held.divisions.items():
        at = ints.owner
        if at.parent is None:
            continue  # lowered, then dropped (an arm lowered again)
        if flow is not None and any(flow.maybe_number(v, at) for v in (x, y)) and \
                all(flow.maybe_number(v, at) or _int_like(v) for v in (x, y)):
            Rewriter.replace_op(at, arith.ConstantOp(T.dense_attr(True, ints.type)))
            continue
        guarded.replace_all_uses_with(result)
        for table in (held.sources, held.rules):  # what `record` said of the division's result
            if guarded in table:
                table[result] = table.pop(guarded)
        if guarded in held.floats:
            held.floats.add(result)
        select, mask = guarded.owner, guarded.owner.inputs[0].owner
        for op in (select, select.outputs[0].owner, select.inputs[1].owner, mask, mask.outputs[0].owner, at):
            op.detach()
            op.erase()


def check(block, held: HeldInts) -> Summary:
    """Refuse a write into an array numpy holds as ints that irad holds as
    floats (see the module doc); drop the joins' int marks. `block` ends in its
    function's return: what it returns is summarised for the callers."""
    sources = dict(held.sources)
    for op in walk_block(block):
        if INT_MARK in op.attributes:
            sources[op.results[0]] = op.attributes[INT_MARK].data
            del op.attributes[INT_MARK]
    results: dict[int, str] = {}
    flow = None
    if sources:
        flow = flow_from(block, sources, _Step(held))
        for op in walk_block(block):
            dest = _written(op)
            if dest is not None and flow.maybe_number(dest, op):
                where = held.writes.get(op)
                what = f"{where}: a write into an array" if where else f"a write ({op.name}) into an array"
                raise UnsupportedError(
                    f"{what} that numpy holds as ints (so it would cast what is written to int) and irad as "
                    f"floats: {flow.maybe[dest]}\n  hint: {HINT}")
        results = _returned(block, flow)
    _settle_divisions(held, flow)
    return Summary(results, block, held)


def _returned(block, flow: Flow) -> dict[int, str]:
    end = block.last_op
    if not isinstance(end, func.ReturnOp):
        return {}
    return {k: flow.maybe[v] for k, v in enumerate(end.operands) if flow.maybe_number(v, end)}


def call_results(held: HeldInts, summary: Summary | None, args: Sequence[SSAValue], results: Sequence[SSAValue],
                 where: str, callee: str) -> None:
    """A call's results as its callee's summary says: ints held as floats, or
    so when one of its float arguments is."""
    if summary is None:
        return
    for k, origin in summary.results.items():
        held.sources[results[k]] = f"{where}: {callee} returns an int in numpy, which irad computes as a float ({origin})"
    floats = tuple(a for a in args if is_float(_element(a.type)))
    if floats:
        for k, r in enumerate(results):
            if k not in summary.results:
                held.any_rules[r] = (floats, summary, k)


# ---- the analysis' steps ---------------------------------------------------------------
_ARITH = (arith.AddfOp, arith.SubfOp, arith.MulfOp, arith.NegfOp, arith.MaximumfOp, arith.MinimumfOp,
          arith.MaxnumfOp, arith.MinnumfOp, arith.SelectOp, math.AbsFOp)
_DATA = (tensor.SplatOp, tensor.FromElementsOp, tensor.ExtractOp, tensor.ExtractSliceOp, tensor.InsertOp,
         tensor.InsertSliceOp, tensor.ReshapeOp, tensor.CollapseShapeOp, tensor.ExpandShapeOp, tensor.ConcatOp,
         BroadcastOp, TransposeOp)
_FOLLOWED = _ARITH + _DATA  # asked of every op the flow steps through: one tuple


class _Step:
    """The (result, source) pairs an op makes maybe an int held as a float."""

    def __init__(self, held: HeldInts):
        self.held = held

    def __call__(self, flow: Flow, op: Operation):
        held = self.held
        for r in op.results:
            call = held.any_rules.get(r)
            if call is not None:
                args, summary, k = call
                carried = [v for v in args if flow.maybe_number(v, op)]
                if carried and k in summary.from_arguments:  # the callee's flow, only now
                    yield r, carried[0]
            if r in held.rules:
                inputs = held.rules[r]
                carried = [v for v in inputs if flow.maybe_number(v, op)]
                if carried and all(flow.maybe_number(v, op) or _int_like(v) for v in inputs):
                    yield r, carried[0]
        if not isa(op, _FOLLOWED) or any(r in held.rules or r in held.floats for r in op.results):
            return
        values = [v for v in op.operands if is_float(_element(v.type))]
        carried = [v for v in values if flow.maybe_number(v, op)]
        if carried and all(flow.maybe_number(v, op) or _int_like(v) for v in values):
            for r in op.results:
                yield r, carried[0]


def _written(op: Operation) -> SSAValue | None:
    """The array an op writes into (a copy of it with some elements replaced)."""
    if isa(op, (tensor.InsertOp, tensor.InsertSliceOp)):
        return op.dest
    if isa(op, GenericOp) and "irad.kind" in op.attributes and \
            op.attributes["irad.kind"].data in ("scatter", "scatter-add"):
        return op.outputs[0]
    return None


def _element(t):
    return t.element_type if isa(t, TensorType) else t


def _int_like(v: SSAValue) -> bool:
    """An int made a float (a conversion, an int literal's constant, arrays of
    them), or an empty tensor (no value yet)."""
    owner = v.owner
    if not isinstance(owner, Operation):
        return False
    if isinstance(owner, (arith.SIToFPOp, arith.UIToFPOp, tensor.EmptyOp)) or INT_LITERAL in owner.attributes:
        return True
    if isinstance(owner, tensor.SplatOp):
        return _int_like(owner.input)
    if isinstance(owner, GenericOp):  # an int array converted (irad/ir/tensor.to_float)
        body = list(owner.body.block.ops)
        return len(body) == 2 and isinstance(body[0], (arith.SIToFPOp, arith.UIToFPOp))
    return False


def _float_constant(v: SSAValue) -> bool:
    """A float literal (not an int literal widened): a float in numpy whatever else is."""
    owner = v.owner
    return isa(owner, arith.ConstantOp) and INT_LITERAL not in owner.attributes


# ---- numpy's own dtype, from example values ------------------------------------------------
_EXAMPLE_SIZE = 4096  # arrays up to this many elements keep their shape in the examples
_DTYPES: dict[object, tuple[np.dtype, ...] | str | None] = {}
_UNASKED = object()


def _numpy_dtypes(fn, args: Sequence, params: Sequence[Parameter], as_int: frozenset) -> tuple[np.dtype, ...] | None:
    """numpy's dtypes of the results of `fn(*args)` on examples (`_numpy_outcome`), or None."""
    dtypes = _numpy_outcome(fn, args, params, as_int)
    return None if isinstance(dtypes, _Refused) else dtypes


def _numpy_outcome(fn, args: Sequence, params: Sequence[Parameter], as_int: frozenset):
    """The dtypes of numpy's results of `fn(*args)`, the SSA values in `args`
    given by example values of their types (those
    whose id is in `as_int` as int64 instead); None where numpy cannot say
    (the call needs values an example does not have)."""
    try:
        key = (fn, tuple(_key(v, as_int) for v in args))
        known = _DTYPES.get(key, _UNASKED)  # one hash of the key (its types hash in Python)
    except TypeError:  # an unhashable static argument: asked, not remembered
        key, known = None, _UNASKED
    if known is not _UNASKED:
        return known
    values = [v for v in _leaves(args) if isinstance(v, SSAValue)]
    small = sum(_size(v.type) for v in values) <= _EXAMPLE_SIZE
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            positional, keywords = _bound(fn, args, params, [_example(v, as_int, small) for v in args])
            if isinstance(fn, str):  # "ndarray.astype": the method of the first argument
                out = getattr(positional[0], fn.split(".", 1)[1])(*positional[1:], **keywords)
            else:
                out = fn(*positional, **keywords)
        dtypes = tuple(np.asarray(leaf).dtype for leaf in _leaves(out))
    except TypeError as error:  # numpy refusing these dtypes (np.sign of bools): whatever the values
        message = str(error)
        dtypes = _Refused(message) if "ufunc" in message or "boolean" in message else None
    except Exception:  # noqa: BLE001 - numpy refusing an example's values: no answer
        dtypes = None
    if key is not None:
        _DTYPES[key] = dtypes
    return dtypes


class _Refused(str):
    """What numpy raised (a TypeError) calling a function on example values of the
    arguments' dtypes: it refuses those dtypes, not these values."""


def numpy_refusal(fn, args: Sequence, params: Sequence[Parameter] = ()) -> str | None:
    """numpy's TypeError for `fn(*args)` with example values of the arguments'
    dtypes (np.sign, np.positive of bools; np.ptp's subtraction), or None."""
    dtypes = _numpy_outcome(fn, args, params, frozenset())
    return str(dtypes) if isinstance(dtypes, _Refused) else None


def _bound(fn, args: Sequence, params: Sequence[Parameter], examples: Sequence) -> tuple[list, dict]:
    """The call's examples as numpy takes them: positionally up to the first
    argument the call omits, by name after it (`np.clip(a, max=2)`), and by
    name where numpy's parameter is keyword-only (np.linalg.tensordot's axes)."""
    if not params:
        return list(examples), {}
    positional, keywords = [], {}
    skipped = False
    by_name = _keyword_only(fn)
    for p, value, example in zip(params, args, examples):
        if not p.required and isinstance(value, Static) and value.obj is None:
            skipped = True  # omitted: the arguments after it go by name
        elif p.variadic:
            positional.extend(example)
        elif skipped or p.name in by_name:
            keywords[p.name] = example
        else:
            positional.append(example)
    return positional, keywords


def _keyword_only(fn) -> frozenset[str]:
    """The names of `fn`'s keyword-only parameters (none where Python cannot tell)."""
    try:
        return _KEYWORD_ONLY[fn]
    except (KeyError, TypeError):
        pass
    try:
        names = frozenset(p.name for p in inspect.signature(fn).parameters.values() if p.kind is p.KEYWORD_ONLY)
    except (TypeError, ValueError):  # a ufunc, a method name: none
        names = frozenset()
    try:
        _KEYWORD_ONLY[fn] = names
    except TypeError:
        pass
    return names


_KEYWORD_ONLY: dict = {}


def _dtype(t, as_int: bool):
    return np.int64 if as_int else numpy_dtype(_element(t))


def _shape(t, small: bool) -> tuple[int, ...]:
    dims = tuple(t.get_shape()) if isinstance(t, TensorType) else ()
    return dims if small else tuple(min(d, 2) for d in dims)


def _size(t) -> int:
    return int(np.prod(t.get_shape())) if isinstance(t, TensorType) else 1


def _example(value, as_int: frozenset, small: bool):
    """numpy's stand-in for an argument (a values.py value): an array or number of
    its type for a RUNTIME value, the object itself for a KNOWN one."""
    kind = value_kind(value)
    if kind is Kind.TREE and isinstance(value, tuple):
        return type(value)(_example(v, as_int, small) for v in value)
    if isinstance(value, Static):
        return value.obj
    if kind is Kind.RUNTIME:
        dtype = _dtype(value.type, id(value) in as_int)
        if isinstance(value.type, TensorType):
            return np.ones(_shape(value.type, small), dtype=dtype)
        constant = _constant_number(value)
        number = 1 if constant is None or id(value) in as_int else constant  # np.tensordot(a, b, 2): the axes count
        if is_strong(value):  # an np.float64 or np.int64 is not weak (NEP 50): int8_array + np.int64(1) is int64
            return np.dtype(dtype).type(number)
        if constant is not None and id(value) not in as_int:
            return constant
        return {np.float32: np.float32(1.0), np.bool_: True, np.int64: 1}.get(np.dtype(dtype).type, 1.0)
    return value


def _constant_number(value: SSAValue):
    """The int or bool an arith.constant number holds (an int argument written as a
    literal: numpy's example call needs its value), else None."""
    if isinstance(value.owner, arith.ConstantOp) and not isinstance(value.type, TensorType) and not is_float(value.type):
        data = value.owner.value.value.data
        return bool(data) if is_bool(value.type) else int(data)
    return None


def _key(value, as_int: frozenset):
    """What the examples of `value` (a values.py value) are made of: each SSA
    value's type, and whether it is taken as an int (the examples' dtypes and
    shapes follow)."""
    kind = value_kind(value)
    if kind is Kind.TREE and isinstance(value, tuple):
        return tuple(_key(v, as_int) for v in value)
    if isinstance(value, Static):
        return ("static", value.obj)
    if kind is Kind.RUNTIME:
        return (value.type, id(value) in as_int, _constant_number(value), is_strong(value))
    return ("other", value)


def _leaves(value) -> list:
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


def _name(fn) -> str:
    if isinstance(fn, np.ufunc):
        return f"numpy.{fn.__name__}"
    return numpy_name(fn)


def strip(module: Operation) -> None:
    """Drop the marks, once the module is lowered: the int literals' that
    `Summary.from_arguments` reads, and those of functions lowered without
    `check` (wrappers, rules)."""
    for op in walk(module):
        attributes = op.attributes
        if attributes:  # most ops have none
            for key in (MARK, INT_MARK, INT_LITERAL, SCALAR_KIND, SCALAR_WIDTH):
                attributes.pop(key, None)
