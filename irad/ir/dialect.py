"""The ``irad`` dialect: requests for derivatives of functions.

Ops in the spirit of ``enzyme.autodiff`` ask for a derivative of a
``func.func`` at given operands; three for reverse mode::

    %g:2 = irad.grad @f(%x, %y) {wrt = [0, 1]} : (f64, f64) -> (f64, f64)
    %v, %gx = irad.value_and_grad @f(%x, %y) {wrt = [0]} : (f64, f64) -> (f64, f64)
    %dx = irad.vjp @h(%x, %n, %du, %dv) {wrt = [0]} : (f64, i64, f64, f64) -> f64

The differentiated value of ``irad.grad`` and ``irad.value_and_grad`` is the
callee's one float result, which must be a scalar; the callee may return
integers and booleans beside it (they get no cotangent). ``irad.vjp`` seeds
every float result with a cotangent of its own (its operands are the callee's
arguments, then those cotangents). ``wrt`` lists, in strictly increasing
order, the 0-based indices of the arguments to differentiate with respect to;
each gives one gradient (cotangent) result with that argument's type.
``irad.grad`` and ``irad.vjp`` return only those, ``irad.value_and_grad``
returns the callee's results first, then the gradients.

and ``irad.jvp`` for forward mode (see :class:`JvpOp`).

Reverse mode's generated code keeps the values its pullback needs from loops
and recursion on a *tape*, through five ops typed by their records (see
passes/ad/reverse_loops.py for what is recorded, passes/lower_tape.py for the memref
code ``irad-lower-tape`` turns them into)::

    %tape, %pos = irad.tape_create
    %tape2, %end = irad.tape_push %tape[%pos] %x, %n, %a : f64, i64, tensor<3xf64>
    %x2, %n2, %a2 = irad.tape_read %tape2[%end] : f64, i64, tensor<3xf64>
    %tape3 = irad.tape_reserve %tape2[%end] %slots
    %tape4, %end2 = irad.tape_push %tape3[%end] reserved %y : f64
    irad.tape_free %tape4

``irad.tape_reserve`` makes room for ``%slots`` more slots after a position
once (a loop whose trip count is known before it runs reserves room for all
its records); a push marked ``reserved`` is one that room was made for, so it
never grows the tape.

Differentiating that code again (reverse over reverse) gives each tape a
*shadow*: a tape of the same layout holding the cotangents of what is recorded,
as Enzyme gives memory a shadow. Its ops are the tape ops' adjoints
(passes/ad/derivatives/tape.py)::

    %s = irad.shadow_create
    %s2 = irad.shadow_add %s[%end] %dx, %dn, %da : f64, i64, tensor<3xf64>
    %dx2, %dn2, %da2 = irad.shadow_read %s2[%end] : f64, i64, tensor<3xf64>
    %s3 = irad.shadow_merge %s2, %other

The tape value is a ``memref<?xf64>`` and a position an ``index``, so code
that threads them (loop iter_args, ``scf.if`` results, call arguments) is
ordinary IR.

One op computes on arrays: ``irad.cumsum``, numpy's ``np.cumsum`` along one
axis, or its mirror image (``reverse``: each element the sum of itself and
those after it, the adjoint of the forward one; see :class:`CumsumOp`)::

    %y = irad.cumsum %x {axis = 1 : i64} : tensor<3x4xf64>
    %r = irad.cumsum %y {axis = 1 : i64, reverse} : tensor<3x4xf64>

and ``irad.linear_scan``, the recurrence h[k] = a[k] h[k-1] + b[k] of
np.cumprod and its derivatives (:class:`LinearScanOp`)::

    %h = irad.linear_scan %a, %b {axis = 0 : i64} : tensor<5xf64>

Generic form (``callee`` and ``wrt`` are properties)::

    %g = "irad.grad"(%x, %y) <{callee = @f, wrt = [0 : i64]}> : (f64, f64) -> f64

This module also provides :func:`make_context`, the xDSL context holding the
dialects irad works with.
"""

from __future__ import annotations

import importlib
from math import prod
from abc import ABC
from collections.abc import Callable, Sequence
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    FlatSymbolRefAttrConstr,
    Float32Type,
    Float64Type,
    I64,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    UnitAttr,
    f64,
    i64,
)
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import (
    MemoryAllocEffect,
    MemoryFreeEffect,
    MemoryReadEffect,
    MemoryWriteEffect,
    Pure,
    SymbolTable,
)
from xdsl.utils.exceptions import VerifyException

from irad.ir.types import is_differentiable, is_float

__all__ = [
    "IRAD",
    "DerivativeRequestOp",
    "GradOp",
    "JvpOp",
    "RequestOp",
    "TAPE",
    "TapeCreateOp",
    "TapeFreeOp",
    "TapePushOp",
    "TapeReadOp",
    "ShadowAddOp",
    "ShadowCreateOp",
    "ShadowMergeOp",
    "ShadowReadOp",
    "TapeReserveOp",
    "TAPE_BATCH",
    "TAPE_BATCHED",
    "record_slots",
    "set_tape_batch",
    "tape_batch",
    "ValueAndGradOp",
    "VjpOp",
    "VjpSplitOp",
    "VmapOp",
    "batched_type",
    "unbatched_type",
    "is_recordable_type",
    "make_context",
]


def _wrt_attr(wrt: Sequence[int]) -> ArrayAttr[IntegerAttr[I64]]:
    return ArrayAttr(IntegerAttr(index, i64) for index in wrt)


class RequestOp(IRDLOperation, ABC):
    """Shared definition of the ops asking for a derivative of ``callee``:
    operands, ``wrt``, the custom syntax and the checks of ``wrt``."""

    callee = prop_def(FlatSymbolRefAttrConstr)
    wrt = prop_def(ArrayAttr[IntegerAttr[I64]])
    # the callee's results from this index on are auxiliary (JAX's has_aux):
    # returned, never differentiated; absent: none are
    aux = opt_prop_def(IntegerAttr[I64])
    args = var_operand_def()
    res = var_result_def()

    def __init__(
        self,
        callee: str | SymbolRefAttr,
        args: Sequence[SSAValue],
        wrt: Sequence[int],
        result_types: Sequence[Attribute],
        aux: int | None = None,
    ):
        properties = {"callee": SymbolRefAttr.get(callee), "wrt": _wrt_attr(wrt)}
        if aux is not None:
            properties["aux"] = IntegerAttr(aux, i64)
        super().__init__(operands=[args], result_types=[result_types], properties=properties)

    # --- accessors -------------------------------------------------------

    @property
    def wrt_indices(self) -> tuple[int, ...]:
        """The 0-based operand indices to differentiate with respect to."""
        return tuple(attr.value.data for attr in self.wrt.data)

    def differentiated(self, outputs: Sequence[Attribute]) -> Sequence[Attribute]:
        """Of the callee's result types `outputs`, those differentiated: all
        but the auxiliary ones."""
        return outputs if self.aux is None else outputs[: self.aux.value.data]

    def _error(self, message: str) -> VerifyException:
        return VerifyException(f"'{self.name}' op {message}")

    def _verify_inputs(self, callee, operand_types: Sequence[Attribute]) -> None:
        inputs = callee.function_type.inputs.data
        if inputs != tuple(operand_types):
            raise self._error(
                f"operand types ({', '.join(map(str, operand_types))}) do not match the "
                f"inputs of @{self._callee_name()} ({', '.join(map(str, inputs))})"
            )

    def _callee_outputs(self) -> Sequence[Attribute]:
        callee = self._callee_function()
        return callee.function_type.outputs.data if callee is not None else ()

    def _callee_function(self):
        """The callee, when it is a func.func that can be found (detached ops
        and other callees are left alone)."""
        from xdsl.dialects.func import FuncOp

        try:
            callee = SymbolTable.lookup_symbol(self, self.callee)
        except ValueError:  # no enclosing symbol table
            return None
        return callee if isinstance(callee, FuncOp) else None

    # --- custom syntax ---------------------------------------------------

    @classmethod
    def parse(cls, parser: Parser) -> RequestOp:
        callee = parser.parse_symbol_name()
        args_pos = parser.pos
        args = parser.parse_op_args_list()

        dict_pos = parser.pos
        attributes = parser.parse_optional_attr_dict()
        if "callee" in attributes:
            parser.raise_error(
                f"'{cls.name}' takes its callee before the operands, "
                "not in the attribute dictionary",
                dict_pos,
            )
        wrt_attr = attributes.pop("wrt", None)
        if wrt_attr is None:
            parser.raise_error(
                f"'{cls.name}' expects an attribute dictionary with "
                "'wrt = [<operand indices>]'",
                dict_pos,
            )
        if not isinstance(wrt_attr, ArrayAttr) or not all(
            isinstance(index, IntegerAttr) for index in wrt_attr.data
        ):
            parser.raise_error(
                f"'{cls.name}' expects 'wrt' to be a list of integers, "
                f"got {wrt_attr}",
                dict_pos,
            )
        wrt = [index.value.data for index in wrt_attr.data]
        aux_attr = attributes.pop("aux", None)
        if aux_attr is not None and not isinstance(aux_attr, IntegerAttr):
            parser.raise_error(f"'{cls.name}' expects 'aux' to be an integer, got {aux_attr}", dict_pos)

        parser.parse_punctuation(":")
        function_type = parser.parse_function_type()
        operands = parser.resolve_operands(args, function_type.inputs.data, args_pos)

        aux = None if aux_attr is None else aux_attr.value.data
        op = cls(SymbolRefAttr(callee), operands, wrt, function_type.outputs.data, aux)
        op.attributes.update(attributes)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.callee)
        printer.print_operands(self.args)
        printer.print_string(" {wrt = [")
        # Bare integers: the generic printer would add `: i64` to each.
        printer.print_string(", ".join(str(index) for index in self.wrt_indices))
        printer.print_string("]")
        if self.aux is not None:
            printer.print_string(f", aux = {self.aux.value.data}")
        for name, attr in self.attributes.items():
            printer.print_string(", ")
            printer.print_identifier_or_string_literal(name)
            if not isinstance(attr, UnitAttr):  # unit attributes print bare
                printer.print_string(" = ")
                printer.print_attribute(attr)
        printer.print_string("} : ")
        printer.print_function_type(self.args.types, self.res.types)

    def _callee_name(self) -> str:
        return self.callee.root_reference.data

    def _verify_wrt(
        self, wrt: tuple[int, ...], operand_types: Sequence[Attribute]
    ) -> None:
        if not wrt:
            raise self._error("expects a non-empty 'wrt' list")
        for index in wrt:
            if not 0 <= index < len(operand_types):
                raise self._error(
                    f"'wrt' index {index} is out of range for "
                    f"{len(operand_types)} operand(s)"
                )
        if any(a >= b for a, b in zip(wrt, wrt[1:])):
            raise self._error(
                f"expects strictly increasing 'wrt' indices, got {list(wrt)}"
            )
        for index in wrt:
            if not is_differentiable(operand_types[index]):
                raise self._error(
                    f"cannot differentiate with respect to operand #{index} "
                    f"of type {operand_types[index]} (expected a float, or a "
                    "tensor or vector of floats)"
                )



class DerivativeRequestOp(RequestOp, ABC):
    """The reverse-mode requests. Subclasses only differ in whether the
    callee's results precede the gradients (see :attr:`RETURNS_VALUES`)."""

    RETURNS_VALUES: ClassVar[bool]
    """Whether the callee's results come before the gradients."""

    @property
    def value_results(self) -> Sequence[SSAValue]:
        """The callee's results (empty for ``irad.grad``)."""
        return self.res[: len(self.res) - len(self.wrt.data)]

    @property
    def gradient_results(self) -> Sequence[SSAValue]:
        """One gradient per ``wrt`` entry, in ``wrt`` order."""
        return self.res[len(self.res) - len(self.wrt.data) :]

    # --- verification ----------------------------------------------------

    def verify_(self) -> None:
        wrt = self.wrt_indices
        operand_types = self.args.types
        self._verify_wrt(wrt, operand_types)

        n_values = len(self.res) - len(wrt)
        if self.RETURNS_VALUES and n_values < 1:
            raise self._error(
                f"expects the callee's results followed by {len(wrt)} "
                f"gradient(s), but has {len(self.res)} result(s)"
            )
        if not self.RETURNS_VALUES and n_values != 0:
            raise self._error(
                f"expects one result per 'wrt' entry ({len(wrt)}), "
                f"but has {len(self.res)}"
            )

        for position, (index, grad_type) in enumerate(
            zip(wrt, self.gradient_results.types)
        ):
            if grad_type != operand_types[index]:
                raise self._error(
                    f"gradient result #{n_values + position} has type {grad_type}, "
                    f"but it is the gradient of operand #{index} of type "
                    f"{operand_types[index]}"
                )

        value_types = self.value_results.types
        if self.aux is not None and not 1 <= self.aux.value.data <= len(value_types or self._callee_outputs()):
            raise self._error(f"'aux' must index one of the callee's results after the first, got {self.aux.value.data}")
        if value_types:
            self._verify_seeded(self.differentiated(value_types), "the callee")
        self._verify_against_callee(operand_types, value_types)

    def _verify_seeded(self, result_types: Sequence[Attribute], what: str) -> None:
        """The callee's results hold exactly one float, a scalar (or a 0-d tensor,
        numpy's np.squeeze of a (1, 1) array): the one seeded."""
        floats = [(i, t) for i, t in enumerate(result_types) if is_differentiable(t)]
        shown = ", ".join(map(str, result_types)) or "nothing"
        if len(floats) > 1:
            raise self._error(
                f"differentiates the one float result of {what}, but it returns "
                f"{len(floats)} floats ({shown}); use 'irad.vjp' to give each a cotangent"
            )
        if not floats or not _scalar_float(floats[0][1]):
            raise self._error(
                f"differentiates the float result of {what}, which must be one scalar "
                f"float or 0-d float tensor (beside any integers and booleans), but it returns ({shown})"
                + ("; use 'irad.vjp' to seed a tensor result" if floats else "")
            )

    def _verify_against_callee(
        self, operand_types: Sequence[Attribute], value_types: Sequence[Attribute]
    ) -> None:
        """Check the signature against the callee, when it is a func.func that
        can be found; detached ops and other callees are left alone."""
        callee = self._callee_function()
        if callee is None:
            return
        self._verify_inputs(callee, operand_types)
        callee_outputs = callee.function_type.outputs.data
        name = self._callee_name()
        self._verify_seeded(self.differentiated(callee_outputs), f"@{name}")
        if self.RETURNS_VALUES and callee_outputs != tuple(value_types):
            raise self._error(
                f"value results ({', '.join(map(str, value_types))}) do not "
                f"match the results of @{name} "
                f"({', '.join(map(str, callee_outputs))})"
            )


@irdl_op_definition
class GradOp(DerivativeRequestOp):
    """Gradient of ``callee``'s scalar result with respect to the ``wrt``
    operands; one result per ``wrt`` entry."""

    name = "irad.grad"
    RETURNS_VALUES: ClassVar[bool] = False


@irdl_op_definition
class ValueAndGradOp(DerivativeRequestOp):
    """Like :class:`GradOp`, but returns the callee's results first."""

    name = "irad.value_and_grad"
    RETURNS_VALUES: ClassVar[bool] = True


@irdl_op_definition
class VjpOp(RequestOp):
    """Reverse mode with given cotangents: one cotangent per ``wrt`` argument of
    the callee, for the cotangents given for its float results::

        %dx = irad.vjp @h(%x, %n, %du, %dv) {wrt = [0]} : (f64, i64, f64, f64) -> f64

    The operands are the callee's arguments followed by one cotangent per float
    result (a float, or a tensor of floats, of that result's type; integer and
    boolean results get none).
    """

    name = "irad.vjp"

    def verify_(self) -> None:
        wrt = self.wrt_indices
        types = self.args.types
        if len(self.res) != len(wrt):
            raise self._error(
                f"expects one cotangent result per 'wrt' entry ({len(wrt)}), but has {len(self.res)}"
            )
        callee = self._callee_function()
        n = len(callee.function_type.inputs.data) if callee is not None else len(types)
        if n > len(types):
            raise self._error(
                f"expects the {n} argument(s) of @{self._callee_name()}, then the cotangents, "
                f"but has {len(types)} operand(s)"
            )
        self._verify_wrt(wrt, types[:n])
        for position, (index, result_type) in enumerate(zip(wrt, self.res.types)):
            if result_type != types[index]:
                raise self._error(
                    f"result #{position} has type {result_type}, but it is the cotangent of "
                    f"argument #{index} of type {types[index]}"
                )
        if callee is None:
            return
        self._verify_inputs(callee, types[:n])
        name = self._callee_name()
        outputs = callee.function_type.outputs.data
        expected = tuple(t for t in self.differentiated(outputs) if is_differentiable(t))
        if tuple(types[n:]) != expected:
            raise self._error(
                f"expects after the arguments of @{name} one cotangent per float result "
                f"({', '.join(map(str, expected)) or 'none'}: @{name} returns "
                f"({', '.join(map(str, outputs)) or 'nothing'})), but has "
                f"({', '.join(map(str, types[n:])) or 'none'})"
            )
        if not expected:
            raise self._error(f"@{name} returns no float result, so it has nothing to differentiate")

    def split(self, num_inputs: int) -> tuple[Sequence[SSAValue], Sequence[SSAValue]]:
        """(the callee's arguments, the cotangents), for a callee of `num_inputs` inputs."""
        return self.args[:num_inputs], self.args[num_inputs:]


@irdl_op_definition
class JvpOp(RequestOp):
    """Forward mode: the callee's results, then one tangent per float result,
    along the tangents given for the ``wrt`` operands::

        %y, %ty = irad.jvp @f(%x, %n, %tx) {wrt = [0]} : (f64, i64, f64) -> (f64, f64)

    The operands are the callee's arguments followed by one tangent per
    ``wrt`` entry, of that argument's type.
    """

    name = "irad.jvp"

    @property
    def primal_args(self) -> Sequence[SSAValue]:
        return self.args[: len(self.args) - len(self.wrt.data)]

    @property
    def tangent_args(self) -> Sequence[SSAValue]:
        return self.args[len(self.args) - len(self.wrt.data) :]

    def verify_(self) -> None:
        wrt = self.wrt_indices
        n = len(self.args) - len(wrt)
        if n < 0:
            raise self._error(f"expects the callee's arguments, then {len(wrt)} tangent(s)")
        primal_types = self.args.types[:n]
        self._verify_wrt(wrt, primal_types)
        for index, tangent in zip(wrt, self.tangent_args):
            if tangent.type != primal_types[index]:
                raise self._error(
                    f"the tangent of operand #{index} has type {tangent.type}, "
                    f"expected {primal_types[index]}"
                )
        callee = self._callee_function()
        if callee is None:
            return
        self._verify_inputs(callee, primal_types)
        outputs = callee.function_type.outputs.data
        name = self._callee_name()
        expected = (*outputs, *(t for t in outputs if is_differentiable(t)))
        if tuple(self.res.types) != expected:
            raise self._error(
                f"expects the results of @{name}, then one tangent per float result: "
                f"({', '.join(map(str, expected))}), but has "
                f"({', '.join(map(str, self.res.types))})"
            )


@irdl_op_definition
class VjpSplitOp(IRDLOperation):
    """Reverse mode in split form, for a caller that runs the two halves at
    different times (`irad.vjp` in Python): a module-level request that the
    pass replaces by two public functions, `augmented` (the callee's arguments
    -> its results, then the residuals) and `pullback` (the residuals, then one
    cotangent per differentiated float result -> one cotangent per ``wrt``
    argument)::

        "irad.vjp_split"() <{callee = @f, wrt = [0], augmented = "f.vjp.forward",
                             pullback = "f.vjp.backward"}> : () -> ()

    The residuals' types are known only once the callee is differentiated,
    hence a request for functions rather than an op with results.
    """

    name = "irad.vjp_split"

    callee = prop_def(FlatSymbolRefAttrConstr)
    wrt = prop_def(ArrayAttr[IntegerAttr[I64]])
    aux = opt_prop_def(IntegerAttr[I64])
    augmented = prop_def(StringAttr)
    pullback = prop_def(StringAttr)

    def __init__(self, callee: str, wrt: Sequence[int], augmented: str, pullback: str, aux: int | None = None):
        properties = {
            "callee": SymbolRefAttr(callee), "wrt": _wrt_attr(wrt),
            "augmented": StringAttr(augmented), "pullback": StringAttr(pullback),
        }
        if aux is not None:
            properties["aux"] = IntegerAttr(aux, i64)
        super().__init__(properties=properties)

    wrt_indices = RequestOp.wrt_indices
    differentiated = RequestOp.differentiated

    def verify_(self) -> None:
        wrt = self.wrt_indices
        if not wrt or any(a >= b for a, b in zip(wrt, wrt[1:])):
            raise VerifyException(f"'{self.name}' op expects a non-empty, strictly increasing 'wrt', got {list(wrt)}")
        if self.augmented.data == self.pullback.data:
            raise VerifyException(f"'{self.name}' op needs two names for its two functions")


def batched_type(type_: Attribute, axis: int | None, size: int) -> Attribute:
    """`type_` with an axis of `size` inserted at `axis` (None: `type_`): a
    scalar becomes a vector, a tensor gains a dimension."""
    if axis is None:
        return type_
    if isinstance(type_, TensorType):
        shape = list(type_.get_shape())
        shape.insert(axis, size)
        return TensorType(type_.element_type, shape)
    return TensorType(type_, [size])


def unbatched_type(type_: Attribute, axis: int | None) -> Attribute:
    """`type_` without its axis `axis` (a vector's element type for a 1-d tensor)."""
    if axis is None or not isinstance(type_, TensorType):
        return type_
    shape = list(type_.get_shape())
    del shape[axis]
    return TensorType(type_.element_type, shape) if shape else type_.element_type


def _axes_attr(axes: Sequence[int | None]) -> ArrayAttr:
    return ArrayAttr(UnitAttr() if a is None else IntegerAttr(a, i64) for a in axes)


def _axes(attr: ArrayAttr) -> tuple[int | None, ...]:
    return tuple(None if isinstance(a, UnitAttr) else a.value.data for a in attr.data)


@irdl_op_definition
class VmapOp(IRDLOperation):
    """The callee mapped over an axis of `axis_size` (JAX's vmap): operand i
    is the callee's argument i with an axis inserted at `in_axes[i]` (`none`:
    the same for every element of the batch); result j the callee's result j
    stacked along `out_axes[j]` (`none`: one value, the same for all)::

        %r = irad.vmap @f(%xs, %w) {in_axes = [0, none], out_axes = [0], axis_size = 8}
               : (tensor<8x3xf64>, tensor<3xf64>) -> tensor<8xf64>

    The irad-vmap pass replaces it by a call to a generated batched function.
    """

    name = "irad.vmap"

    callee = prop_def(FlatSymbolRefAttrConstr)
    in_axes = prop_def(ArrayAttr)
    out_axes = prop_def(ArrayAttr)
    axis_size = prop_def(IntegerAttr[I64])
    args = var_operand_def()
    res = var_result_def()

    def __init__(self, callee: str | SymbolRefAttr, args: Sequence[SSAValue], in_axes: Sequence[int | None],
                 out_axes: Sequence[int | None], axis_size: int, result_types: Sequence[Attribute]):
        properties = {
            "callee": SymbolRefAttr.get(callee) if isinstance(callee, str) else callee,
            "in_axes": _axes_attr(in_axes), "out_axes": _axes_attr(out_axes),
            "axis_size": IntegerAttr(axis_size, i64),
        }
        super().__init__(operands=[args], result_types=[result_types], properties=properties)

    @property
    def in_axis_list(self) -> tuple[int | None, ...]:
        return _axes(self.in_axes)

    @property
    def out_axis_list(self) -> tuple[int | None, ...]:
        return _axes(self.out_axes)

    @property
    def size(self) -> int:
        return self.axis_size.value.data

    def _error(self, message: str) -> VerifyException:
        return VerifyException(f"'{self.name}' op {message}")

    def verify_(self) -> None:
        if any(not isinstance(a, (UnitAttr, IntegerAttr)) for a in (*self.in_axes.data, *self.out_axes.data)):
            raise self._error("expects 'in_axes' and 'out_axes' to hold integers or 'none'")
        in_axes, out_axes, size = self.in_axis_list, self.out_axis_list, self.size
        if size < 0:
            raise self._error(f"expects a non-negative 'axis_size', got {size}")
        if len(in_axes) != len(self.args):
            raise self._error(f"expects one 'in_axes' entry per operand ({len(self.args)}), got {len(in_axes)}")
        if len(out_axes) != len(self.res):
            raise self._error(f"expects one 'out_axes' entry per result ({len(self.res)}), got {len(out_axes)}")
        for what, values, axes in (("operand", self.args, in_axes), ("result", self.res, out_axes)):
            for i, (v, axis) in enumerate(zip(values, axes)):
                if axis is None:
                    continue
                shape = v.type.get_shape() if isinstance(v.type, TensorType) else ()
                if not 0 <= axis < len(shape):
                    raise self._error(f"{what} #{i} of type {v.type} has no axis {axis}")
                if shape[axis] != size:
                    raise self._error(
                        f"{what} #{i} of type {v.type} has {shape[axis]} elements along axis {axis}, "
                        f"not 'axis_size' = {size}"
                    )
        callee = self._callee_function()
        if callee is None:
            return
        inputs, outputs = callee.function_type.inputs.data, callee.function_type.outputs.data
        name = self.callee.root_reference.data
        expected_in = tuple(batched_type(t, a, size) for t, a in zip(inputs, in_axes))
        if len(inputs) != len(self.args) or expected_in != tuple(self.args.types):
            raise self._error(
                f"operand types ({', '.join(map(str, self.args.types))}) are not the inputs of @{name} "
                f"({', '.join(map(str, inputs))}) batched along 'in_axes'"
            )
        expected_out = tuple(batched_type(t, a, size) for t, a in zip(outputs, out_axes))
        if len(outputs) != len(self.res) or expected_out != tuple(self.res.types):
            raise self._error(
                f"result types ({', '.join(map(str, self.res.types))}) are not the results of @{name} "
                f"({', '.join(map(str, outputs))}) batched along 'out_axes'"
            )

    _callee_function = RequestOp._callee_function

    @classmethod
    def parse(cls, parser: Parser) -> VmapOp:
        callee = parser.parse_symbol_name()
        args_pos = parser.pos
        args = parser.parse_op_args_list()
        parser.parse_punctuation("{")
        fields: dict[str, object] = {}
        while True:
            key_pos = parser.pos
            key = parser.parse_identifier()
            parser.parse_punctuation("=")
            if key in ("in_axes", "out_axes"):
                fields[key] = parser.parse_comma_separated_list(
                    parser.Delimiter.SQUARE,
                    lambda: None if parser.parse_optional_keyword("none") else parser.parse_integer(),
                )
            elif key == "axis_size":
                fields[key] = parser.parse_integer(allow_negative=False)
            else:
                parser.raise_error(f"'{cls.name}' takes in_axes, out_axes and axis_size, not {key!r}", key_pos)
            if parser.parse_optional_punctuation(",") is None:
                break
        parser.parse_punctuation("}")
        missing = [k for k in ("in_axes", "out_axes", "axis_size") if k not in fields]
        if missing:
            parser.raise_error(f"'{cls.name}' expects {', '.join(missing)}", args_pos)
        attributes = parser.parse_optional_attr_dict()  # discardable ones (irad.unrollable)
        parser.parse_punctuation(":")
        function_type = parser.parse_function_type()
        operands = parser.resolve_operands(args, function_type.inputs.data, args_pos)
        op = cls(SymbolRefAttr(callee), operands, fields["in_axes"], fields["out_axes"], fields["axis_size"],
                 function_type.outputs.data)
        op.attributes.update(attributes)
        return op

    def print(self, printer: Printer) -> None:
        def axes(values: Sequence[int | None]) -> str:
            return "[" + ", ".join("none" if a is None else str(a) for a in values) + "]"

        printer.print_string(" ")
        printer.print_attribute(self.callee)
        printer.print_operands(self.args)
        printer.print_string(
            f" {{in_axes = {axes(self.in_axis_list)}, out_axes = {axes(self.out_axis_list)}, "
            f"axis_size = {self.size}}}"
        )
        if self.attributes:
            printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_function_type(self.args.types, self.res.types)


# ---- the tape ---------------------------------------------------------------

TAPE = MemRefType(f64, [DYNAMIC_INDEX])
"""The type of a tape value (its memory once irad-lower-tape has run)."""

TAPE_COPY = "irad.tape_copy"
"""A discardable unit attribute irad-lower-tape puts on the `scf.for` that copies a
tape into its grown buffer (`dest[k] = source[k]` for k in its range, nothing
else), so that a backend may run it as one slice copy without matching its shape."""


TAPE_BATCH = "irad.batch"
"""On a tape op of a batched tape (irad-vmap of a derivative through a loop):
the batch size B. Positions stay those of one element; every slot of such a
tape is B slots of its memory, so a record that varies along the batch holds
each element's values and one that does not holds them once."""

TAPE_BATCHED = "irad.batched"
"""On a push or read of a batched tape: which of its values carry the batch
(each a tensor with the batch as its leading axis)."""


def tape_batch(op) -> tuple[int, tuple[bool, ...]]:
    """The batch size of a tape op's tape (1: one element's tape) and which
    of its record's values carry the batch."""
    size = op.attributes.get(TAPE_BATCH)
    if size is None:
        return 1, ()
    flags = op.attributes.get(TAPE_BATCHED)
    return size.value.data, tuple(bool(f.value.data) for f in flags.data) if flags is not None else ()


def set_tape_batch(op, size: int, flags: Sequence[bool] | None = None) -> None:
    op.attributes[TAPE_BATCH] = IntegerAttr(size, i64)
    if flags is not None:
        op.attributes[TAPE_BATCHED] = ArrayAttr(IntegerAttr(int(f), IntegerType(1)) for f in flags)


def is_recordable_type(type_: Attribute) -> bool:
    """Whether a value of this type can be part of a tape record: a number
    (f64, f32, iN, index) or a tensor of numbers of static shape."""
    if isinstance(type_, TensorType):
        return type_.has_static_shape() and is_recordable_type(type_.element_type)
    return isinstance(type_, Float64Type | Float32Type | IntegerType | IndexType)


def record_slots(types: Sequence[Attribute]) -> int:
    """The f64 slots a record of these types takes on the tape: one per number,
    two for an integer wider than an f64's 53-bit significand (its high and low
    32 bits, so it comes back exact), one per element of a tensor."""
    return sum(
        prod(t.get_shape()) if isinstance(t, TensorType)
        else 2 if isinstance(t, IntegerType) and t.width.data > 53
        else 1
        for t in types
    )


def _verify_record(op: IRDLOperation, types: Sequence[Attribute]) -> None:
    if not types:
        raise VerifyException(f"'{op.name}' op expects a non-empty record")
    for position, type_ in enumerate(types):
        if not is_recordable_type(type_):
            raise VerifyException(
                f"'{op.name}' op cannot record value #{position} of type {type_} "
                "(expected f64, f32, an integer, index, or a tensor of them of static shape)"
            )


@irdl_op_definition
class TapeCreateOp(IRDLOperation):
    """A fresh, empty tape and the position of its first record."""

    name = "irad.tape_create"
    tape = result_def(TAPE)
    pos = result_def(IndexType)
    traits = traits_def(MemoryAllocEffect())
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__(result_types=[TAPE, IndexType()])


@irdl_op_definition
class TapePushOp(IRDLOperation):
    """Append one record, the ``values``, at position ``pos``; returns the
    tape (a new one when it had to grow) and the position after the record.
    With ``reserved``, an ``irad.tape_reserve`` has made room for the record:
    the push writes it and never grows the tape."""

    name = "irad.tape_push"
    tape = operand_def(TAPE)
    pos = operand_def(IndexType)
    values = var_operand_def()
    reserved = opt_prop_def(UnitAttr)
    new_tape = result_def(TAPE)
    end = result_def(IndexType)
    # reads and frees the old tape when it grows; never dead, never merged
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect(), MemoryAllocEffect(), MemoryFreeEffect())
    assembly_format = (
        "$tape `[` $pos `]` (`reserved` $reserved^)? $values attr-dict `:` type($values)"
    )

    def __init__(
        self, tape: SSAValue, pos: SSAValue, values: Sequence[SSAValue], reserved: bool = False
    ):
        super().__init__(
            operands=[tape, pos, values],
            result_types=[TAPE, IndexType()],
            properties={"reserved": UnitAttr()} if reserved else {},
        )

    def verify_(self) -> None:
        _verify_record(self, self.values.types)


@irdl_op_definition
class TapeReadOp(IRDLOperation):
    """The values of the record that ends at position ``end`` (the tape is
    not changed: a reversed loop steps back through its records by the start
    position each record holds)."""

    name = "irad.tape_read"
    tape = operand_def(TAPE)
    end = operand_def(IndexType)
    values = var_result_def()
    traits = traits_def(MemoryReadEffect())
    assembly_format = "$tape `[` $end `]` attr-dict `:` type($values)"

    def __init__(self, tape: SSAValue, end: SSAValue, types: Sequence[Attribute]):
        super().__init__(operands=[tape, end], result_types=[types])

    def verify_(self) -> None:
        _verify_record(self, self.values.types)


@irdl_op_definition
class TapeReserveOp(IRDLOperation):
    """The tape, with room for ``slots`` more f64 slots after position ``pos``
    (a new tape when it had to grow; the first ``pos`` slots are kept)."""

    name = "irad.tape_reserve"
    tape = operand_def(TAPE)
    pos = operand_def(IndexType)
    slots = operand_def(IndexType)
    new_tape = result_def(TAPE)
    # reads and frees the old tape when it grows
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect(), MemoryAllocEffect(), MemoryFreeEffect())
    assembly_format = "$tape `[` $pos `]` $slots attr-dict"

    def __init__(self, tape: SSAValue, pos: SSAValue, slots: SSAValue):
        super().__init__(operands=[tape, pos, slots], result_types=[TAPE])


@irdl_op_definition
class TapeFreeOp(IRDLOperation):
    """Release a tape once its last reader has run."""

    name = "irad.tape_free"
    tape = operand_def(TAPE)
    traits = traits_def(MemoryFreeEffect())
    assembly_format = "$tape attr-dict"

    def __init__(self, tape: SSAValue):
        super().__init__(operands=[tape])


# ---- shadow tapes: the cotangents of what a tape records ---------------------------
# A shadow holds, at each slot of its tape's records, the cotangent accumulated
# for the value stored there; slots it has not grown to yet hold zero. The ops
# update a shadow in place and return it (a new one when it had to grow), so
# each shadow value is used once, as a tape is.


@irdl_op_definition
class ShadowCreateOp(IRDLOperation):
    """A fresh shadow tape: every slot's cotangent is zero."""

    name = "irad.shadow_create"
    shadow = result_def(TAPE)
    traits = traits_def(MemoryAllocEffect())
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__(result_types=[TAPE])


@irdl_op_definition
class ShadowAddOp(IRDLOperation):
    """Add ``values`` to the cotangents of the record that ends at ``end`` (the
    adjoint of a tape_read of that record). Integer, index and boolean fields
    carry no cotangent: their operands are ignored."""

    name = "irad.shadow_add"
    shadow = operand_def(TAPE)
    end = operand_def(IndexType)
    values = var_operand_def()
    new_shadow = result_def(TAPE)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect(), MemoryAllocEffect(), MemoryFreeEffect())
    assembly_format = "$shadow `[` $end `]` $values attr-dict `:` type($values)"

    def __init__(self, shadow: SSAValue, end: SSAValue, values: Sequence[SSAValue]):
        super().__init__(operands=[shadow, end, values], result_types=[TAPE])

    def verify_(self) -> None:
        _verify_record(self, self.values.types)


@irdl_op_definition
class ShadowReadOp(IRDLOperation):
    """The cotangents of the record that ends at ``end`` (the adjoint of the
    tape_push that wrote it); zero for integer, index and boolean fields."""

    name = "irad.shadow_read"
    shadow = operand_def(TAPE)
    end = operand_def(IndexType)
    values = var_result_def()
    traits = traits_def(MemoryReadEffect())
    assembly_format = "$shadow `[` $end `]` attr-dict `:` type($values)"

    def __init__(self, shadow: SSAValue, end: SSAValue, types: Sequence[Attribute]):
        super().__init__(operands=[shadow, end], result_types=[types])

    def verify_(self) -> None:
        _verify_record(self, self.values.types)


@irdl_op_definition
class ShadowMergeOp(IRDLOperation):
    """``into`` plus ``other``, slot by slot (two cotangents of one tape, as
    when a pullback's tape is read both in place and by a callee); ``other``
    is freed."""

    name = "irad.shadow_merge"
    into = operand_def(TAPE)
    other = operand_def(TAPE)
    merged = result_def(TAPE)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect(), MemoryAllocEffect(), MemoryFreeEffect())
    assembly_format = "$into `,` $other attr-dict"

    def __init__(self, into: SSAValue, other: SSAValue):
        super().__init__(operands=[into, other], result_types=[TAPE])


class ScanOp(IRDLOperation, ABC):
    """An op along one axis of tensors of one type (``axis``, ``reverse``),
    written ``%y = irad.<op> %x, ... {axis = 0 : i64, reverse} : type``."""

    axis = prop_def(IntegerAttr[I64])
    reverse = opt_prop_def(UnitAttr)
    output = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, operands: Sequence[SSAValue], axis: int, reverse: bool = False):
        properties = {"axis": IntegerAttr(axis, i64)}
        if reverse:
            properties["reverse"] = UnitAttr()
        super().__init__(operands=list(operands), result_types=[operands[0].type], properties=properties)

    @classmethod
    def parse(cls, parser: Parser) -> ScanOp:
        operands = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_unresolved_operand)
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        type_ = parser.parse_type()
        operands = parser.resolve_operands(operands, [type_] * len(operands), parser.pos)
        axis = attributes.pop("axis", None)
        if not isinstance(axis, IntegerAttr):
            parser.raise_error(f"{cls.name} needs an integer attribute `axis`")
        reverse = attributes.pop("reverse", None)
        op = cls(*operands, axis.value.data, reverse is not None)
        op.attributes.update(attributes)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.operands, printer.print_operand)
        extra = {"axis": self.axis, **({"reverse": UnitAttr()} if self.reverse else {}), **self.attributes}
        printer.print_op_attributes(extra)
        printer.print_string(" : ")
        printer.print_attribute(self.output.type)

    @property
    def axis_value(self) -> int:
        return self.axis.value.data

    def verify_(self) -> None:
        t = self.output.type
        for v in self.operands:
            if v.type != t:
                raise VerifyException(f"{self.name}: the operand type {v.type} is not the result's {t}")
        if not 0 <= self.axis_value < len(t.get_shape()):
            raise VerifyException(f"{self.name}: axis {self.axis_value} is not an axis of {t}")
        if not isinstance(t.element_type, (IntegerType, Float32Type, Float64Type)):
            raise VerifyException(f"{self.name}: elements of {t.element_type} are neither integers nor floats")


@irdl_op_definition
class CumsumOp(ScanOp):
    """The inclusive cumulative sum of a tensor along ``axis``, front to back
    as np.cumsum (in this order, so floats round as numpy's sequential sum
    does), or back to front with ``reverse``. The backends compute it in one
    pass (irad/ir/scan.py); its adjoint is the same op with ``reverse``
    flipped (passes/ad/derivatives/tensor.py)."""

    name = "irad.cumsum"
    input = operand_def(TensorType)

    def __init__(self, x: SSAValue, axis: int, reverse: bool = False):
        super().__init__([x], axis, reverse)


@irdl_op_definition
class LinearScanOp(ScanOp):
    """The first-order linear recurrence h[k] = a[k] h[k-1] + b[k] along
    ``axis`` (h before the first element is 0, so h[0] = b[0] and a[0] is not
    read), or h[k] = a[k] h[k+1] + b[k] back to front with ``reverse``:
    np.cumprod (a = x, b = x's first element) and its derivatives, in one
    pass, products only (no division: exact where an element is 0)."""

    name = "irad.linear_scan"
    a = operand_def(TensorType)
    b = operand_def(TensorType)

    def __init__(self, a: SSAValue, b: SSAValue, axis: int, reverse: bool = False):
        super().__init__([a, b], axis, reverse)


IRAD = Dialect(
    "irad",
    [
        GradOp, ValueAndGradOp, VjpOp, VjpSplitOp, JvpOp, VmapOp, TapeCreateOp, TapePushOp, TapeReadOp, TapeReserveOp, TapeFreeOp,
        ShadowCreateOp, ShadowAddOp, ShadowReadOp, ShadowMergeOp, CumsumOp, LinearScanOp,
    ],
    [],
)


# name -> (module, Dialect object): the dialects irad's IR uses, imported on first use.
_DIALECTS = {
    "builtin": ("xdsl.dialects.builtin", "Builtin"),
    "func": ("xdsl.dialects.func", "Func"),
    # xDSL's, plus the MLIR 22 ops it lacks (irad/ir/mlir_ops.py)
    "arith": ("irad.ir.mlir_ops", "ARITH"),
    "math": ("irad.ir.mlir_ops", "MATH"),
    "scf": ("xdsl.dialects.scf", "Scf"),
    "cf": ("xdsl.dialects.cf", "Cf"),
    "tensor": ("xdsl.dialects.tensor", "Tensor"),
    "linalg": ("xdsl.dialects.linalg", "Linalg"),
}


def _loader(module: str, attribute: str) -> Callable[[], Dialect]:
    return lambda: getattr(importlib.import_module(module), attribute)


def make_context(*, allow_unregistered: bool = False) -> Context:
    """An xDSL context knowing the dialects irad uses (builtin, func, arith
    (with arith.remf), math, scf, cf (runtime checks), tensor, linalg, irad).

    Dialects are registered, not loaded: each is imported the first time one
    of its ops or attributes is parsed or looked up, so the whole set of xDSL
    dialects is never imported.
    """
    ctx = Context(allow_unregistered=allow_unregistered)
    for name, (module, attribute) in _DIALECTS.items():
        ctx.register_dialect(name, _loader(module, attribute))
    ctx.register_dialect("irad", lambda: IRAD)
    load_missing_ops(ctx)
    return ctx


def load_missing_ops(ctx: Context) -> None:
    """Add the upstream ops xDSL 0.75 lacks (irad/ir/arith.py) to `ctx`."""
    from irad.ir.arith import RemFOp

    if ctx.get_optional_op(RemFOp.name) is None:
        ctx.load_op(RemFOp)


def _scalar_float(t: Attribute) -> bool:
    """A float, or a 0-d float tensor (a shape-() result, which JAX's grad takes too)."""
    return is_float(t) or (isinstance(t, TensorType) and not t.get_shape() and is_float(t.element_type))
