"""Jacobians and Hessians: jacfwd (forward mode), jacrev (reverse mode), hessian.

Each builds one module whose entry returns the Jacobian's entries, row-major
(output by output, `argnums` by `argnums`):

- jacfwd: one `irad.jvp` request per element of each argument in `argnums`,
  along a unit tangent;
- jacrev: one augmented primal, then one pullback call per element of each
  output, with a unit cotangent;

so a Jacobian is IR too, and the transformations compose: an outer derivative
differentiates these requests and calls. For arrays, entry J[i][a] is a tensor
of shape output_i.shape + argument_a.shape (as JAX gives it), assembled from
the per-element sweeps with tensor.concat and tensor.reshape.
hessian(f) = jacfwd(grad(f)): forward over reverse, the jvp pass applied to
the gradient's IR.

The results keep JAX's structure: for a function returning one float, a float
for an int `argnums` and a tuple for a tuple; for several float outputs, a
tuple of those, one per output. The objects are derivative objects like
`irad.grad(f)`, so they compose (`jacfwd(jacrev(f))`) and programs may call
them; inside a program the entries come flat, row-major.
"""

from __future__ import annotations

import numbers

import numpy as np
from collections.abc import Callable, Sequence

from xdsl.dialects import arith, func, tensor
from xdsl.dialects.builtin import FloatAttr, ModuleOp, StringAttr, TensorType
from xdsl.ir import Attribute, Block, SSAValue

from irad.api import grad
from irad.compiled import Compiled, cached, error_at, name_of, normalise_argnums, run_compiled
from irad.backends import Backend, check_backend, compile_for
from irad.ir.dialect import TAPE, JvpOp, TapeFreeOp
from irad.frontend import bind_arguments, signature_of
from irad.frontend.globals import HiddenGlobals
from irad.ir import tensor as T
from irad.ir.builder import IRBuilder
from irad.ir.types import describe, is_differentiable, is_tensor, shape_of
from irad.passes.differentiate import Differentiator
from irad.pipeline import add_entry, entry_block, function_named, jvp_spec, lowered, reversed_spec, run
from irad.rules import default_table


class _JacobianFunction:
    """The callable returned by jacfwd / jacrev."""

    def __init__(self, f: Callable, argnums, mode: str, backend: Backend):
        self.f = f
        self.argnums = argnums
        self.mode = mode
        self.backend = check_backend(backend)
        self.single = isinstance(argnums, numbers.Integral)
        self.__name__ = f"{mode}({name_of(f)})"

    def _irad_module(self, signature: tuple[Attribute, ...]) -> tuple[ModuleOp, str, HiddenGlobals]:
        nums = normalise_argnums(self.f, self.argnums, signature)
        module, entry, _, hidden = jacobian_module(self.f, signature, nums, self.mode, inline=False)
        return module, entry, hidden

    def _compiled(self, args: Sequence) -> tuple[Compiled, tuple]:
        """The compiled Jacobian for these arguments, and the hidden arrays' values."""
        signature = signature_of(self.f, tuple(args))
        nums = normalise_argnums(self.f, self.argnums, signature)

        def build() -> Compiled:
            module, entry, outputs, hidden = jacobian_module(
                self.f, signature, nums, self.mode, tape=self.backend.tape_form
            )
            return Compiled(module, compile_for(module, self.backend).function(entry), outputs, hidden)

        return cached((self.f, self.mode, nums, signature, self.backend), build)

    def lower(self, *args, **kwargs) -> ModuleOp:
        """The differentiated, optimised module for these argument types."""
        return self._compiled(bind_arguments(self.f, args, kwargs))[0].module

    def __call__(self, *args, **kwargs):
        args = bind_arguments(self.f, args, kwargs)
        compiled, hidden = self._compiled(args)
        flat = run_compiled(compiled.run, (*args, *hidden))
        width = len(flat) // len(compiled.out_types)
        rows = [flat[i * width : (i + 1) * width] for i in range(len(compiled.out_types))]
        rows = [row[0] if self.single else tuple(row) for row in rows]
        returns_tuple = len(rows) > 1 or getattr(self.f, "returns_tuple", False)
        return tuple(rows) if returns_tuple else rows[0]


def jacobian_module(
    f: Callable,
    signature: tuple[Attribute, ...],
    argnums: tuple[int, ...],
    mode: str,
    inline: bool = True,
    tape: str = "memref",
) -> tuple[ModuleOp, str, tuple[Attribute, ...], HiddenGlobals]:
    """The module whose public `@<f>.<mode>` returns the Jacobian's entries,
    row-major; also f's result types and the global arrays the entry takes
    after f's arguments. (`inline=False` for a module to be differentiated
    again.)"""
    module, name, hidden = lowered(f, signature)
    primal = function_named(module, name)
    primal.sym_visibility = StringAttr("private")
    outputs = tuple(primal.function_type.outputs.data)
    bad = [describe(t) for t in outputs if not is_differentiable(t)]
    if not outputs or bad:
        raise error_at(
            f,
            f"{name_of(f)} must return floats for its Jacobian, but returns "
            f"({', '.join(describe(t) for t in outputs) or 'nothing'})",
        )
    block = entry_block(primal, signature)
    build = _forward_entries if mode == "jacfwd" else _reverse_entries
    entries = build(module, name, block, argnums, outputs)
    block.add_op(func.ReturnOp(*entries))
    result_types = [v.type for v in entries]
    entry = add_entry(module, primal, f"{name}.{mode}", block, result_types)
    if mode == "jacfwd":
        run(module, jvp_spec(inline))
    else:
        run(module, reversed_spec(inline, tape))
    return module, entry.sym_name.data, outputs, hidden


def _unit(block: Block, type_: Attribute, hot: int | None) -> SSAValue:
    """A constant of `type_` that is 1 at flat index `hot` and 0 elsewhere (all 0: None)."""
    values = np.zeros(_size(type_))
    if hot is not None:
        values[hot] = 1.0
    if is_tensor(type_):
        op = arith.ConstantOp(T.dense_attr(values, type_))
    else:
        op = arith.ConstantOp(FloatAttr(float(values[0]), type_))
    block.add_op(op)
    return op.result


def _size(type_: Attribute) -> int:
    return int(np.prod(shape_of(type_)))


def _stacked(block: Block, parts: Sequence[SSAValue], rows: Attribute, cols: Attribute, axis: int) -> SSAValue:
    """The Jacobian entry of shape rows.shape + cols.shape: the matrix
    [size(rows), size(cols)] whose rows (axis 0, each part of type `cols`) or
    columns (axis 1, each of type `rows`) are `parts`, reshaped."""
    b = IRBuilder(block)
    piece = [1, _size(cols)] if axis == 0 else [_size(rows), 1]
    pieces = [T.reshape(b, p if is_tensor(p.type) else _as_tensor(b, p), piece) for p in parts]
    matrix_type = TensorType(T.element(pieces[0]), [_size(rows), _size(cols)])
    matrix = pieces[0] if len(pieces) == 1 else b.value(tensor.ConcatOp(pieces, axis, matrix_type))
    return T.reshape(b, matrix, [*shape_of(rows), *shape_of(cols)])


def _as_tensor(b: IRBuilder, scalar: SSAValue) -> SSAValue:
    return b.value(tensor.FromElementsOp(scalar, result_type=TensorType(scalar.type, [1])))


def _forward_entries(module, name, block, argnums, outputs) -> list[SSAValue]:
    """One jvp per element of each argument: J[i][a]'s columns."""
    n = len(outputs)
    columns = []
    for a in argnums:
        arg_type = block.args[a].type
        tangents = []
        for k in range(_size(arg_type)):
            one = _unit(block, arg_type, k)
            request = JvpOp(name, [*block.args, one], [a], [*outputs, *outputs])
            block.add_op(request)
            tangents.append(request.results[n:])
        columns.append([
            _stacked(block, [t[i] for t in tangents], outputs[i], arg_type, 1) if is_tensor(arg_type)
            else tangents[0][i]
            for i in range(n)
        ])
    return [columns[j][i] for i in range(n) for j in range(len(argnums))]


def _reverse_entries(module, name, block, argnums, outputs) -> list[SSAValue]:
    """One pullback per element of each output: J[i][a]'s rows."""
    active = tuple(i in argnums for i in range(len(block.args)))
    generated = Differentiator(module, default_table()).reverse(name, active)
    augmented = func.CallOp(generated.augmented, list(block.args), [*outputs, *generated.residual_types])
    block.add_op(augmented)
    residuals = augmented.results[len(outputs) :]
    ordered = sorted(argnums)
    grad_types = [block.args[i].type for i in ordered]
    rows = []
    for i, out_type in enumerate(outputs):
        per_element = []
        for k in range(_size(out_type)):
            seeds = [_unit(block, u, k if o == i else None) for o, u in enumerate(outputs)]
            pullback = func.CallOp(generated.pullback, [*residuals, *seeds], grad_types)
            block.add_op(pullback)
            per_element.append(pullback.results)
        rows.append([
            _stacked(block, [p[ordered.index(a)] for p in per_element], out_type, block.args[a].type, 0)
            if is_tensor(out_type) else per_element[0][ordered.index(a)]
            for a in argnums
        ])
    for tape in (r for r in residuals if r.type == TAPE):
        block.add_op(TapeFreeOp(tape))  # the last pullback has run
    return [v for row in rows for v in row]


def jacfwd(
    f: Callable, argnums: int | Sequence[int] = 0, *, backend: str = "python",
    iree_target: str | None = None, iree_device: str | None = None,
) -> _JacobianFunction:
    """The Jacobian of `f` with respect to `argnums`, by forward mode.
    `backend` (and the IREE options) as for `irad.grad`."""
    return _JacobianFunction(f, argnums, "jacfwd", check_backend(backend, iree_target, iree_device))


def jacrev(
    f: Callable, argnums: int | Sequence[int] = 0, *, backend: str = "python",
    iree_target: str | None = None, iree_device: str | None = None,
) -> _JacobianFunction:
    """The Jacobian of `f` with respect to `argnums`, by reverse mode."""
    return _JacobianFunction(f, argnums, "jacrev", check_backend(backend, iree_target, iree_device))


def hessian(
    f: Callable, argnums: int | Sequence[int] = 0, *, backend: str = "python",
    iree_target: str | None = None, iree_device: str | None = None,
) -> _JacobianFunction:
    """The Hessian of `f` (which returns one float): jacfwd(grad(f)), forward
    over reverse."""
    return jacfwd(grad(f, argnums), argnums, backend=check_backend(backend, iree_target, iree_device))


# Programs may apply these to functions: the frontend evaluates them while lowering.
jacfwd._irad_transform = jacrev._irad_transform = hessian._irad_transform = True

__all__ = ["hessian", "jacfwd", "jacobian_module", "jacrev"]
