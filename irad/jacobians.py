"""Jacobians and Hessians: jacfwd (forward mode), jacrev (reverse mode), hessian.

The result has JAX's structure: the tree of f's outputs, each float output
replaced by the tree of the arguments in `argnums` (one argument's tree for an
int `argnums`, a tuple of them for a tuple), whose leaves are the blocks
d output / d argument leaf, of shape `output.shape + argument.shape` (a float
for two scalars). Int and bool argument leaves get None. With
`has_aux=True`, f returns `(out, aux)` and the call returns `(jacobian, aux)`.

One module computes every block, output leaf by argument leaf:

- jacfwd: one `irad.jvp` request per element of each float argument leaf in
  `argnums`, along a unit tangent;
- jacrev: one augmented primal, then one pullback call per element of each
  output leaf, with a unit cotangent;

so a Jacobian is IR too, and the transformations compose: an outer derivative
differentiates these requests and calls (`jacfwd(jacrev(f))`, and programs may
call them). An array block is assembled from the per-element sweeps with
tensor.concat and tensor.reshape. hessian(f) = jacfwd(grad(f)): forward over
reverse, the jvp pass applied to the gradient's IR.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import arith, func, tensor
from xdsl.dialects.builtin import FloatAttr, ModuleOp, StringAttr, TensorType
from xdsl.ir import Attribute, Block, SSAValue

from irad.api import grad
from irad.arguments import arguments, error_at, float_leaves, gradient_structure, name_of, normalise_argnums
from irad.backends import Backend, check_backend, compile_for
from irad.base import config
from irad.compiled import Compiled, cached, run_compiled
from irad.frontend.globals import HiddenGlobals
from irad.frontend.lowering import as_signature
from irad.frontend.pytrees import Node, Tree, leaf_types, tuple_tree, unflatten, with_leaf_types
from irad.ir import tensor as T
from irad.ir.builder import IRBuilder
from irad.ir.dialect import JvpOp
from irad.ir.types import describe, is_differentiable, is_tensor, shape_of
from irad.pipeline import (
    add_entry,
    cut_aux,
    entry_block,
    function_named,
    jvp_spec,
    lowered,
    reverse_sweeps,
    reversed_spec,
    run,
)


class _JacobianFunction:
    """The callable returned by jacfwd / jacrev."""

    def __init__(self, f: Callable, argnums, mode: str, backend: Backend | str = "python", has_aux: bool = False):
        self.f = f
        self.argnums = argnums
        self.mode = mode
        self.has_aux = has_aux
        self.backend = check_backend(backend)
        self.single = isinstance(argnums, numbers.Integral)
        self.__name__ = f"{mode}({name_of(f)})"

    def _irad_module(self, signature: Node) -> tuple[ModuleOp, str, HiddenGlobals, Tree]:
        nums = normalise_argnums(self.f, self.argnums, signature)
        return jacobian_module(self.f, signature, nums, self.mode, False, self.has_aux, self.single)

    def _compiled(self, signature: Node) -> tuple[Compiled, tuple]:
        """The compiled Jacobian, and the hidden arrays' values."""
        nums = normalise_argnums(self.f, self.argnums, signature)

        def build() -> Compiled:
            module, entry, hidden, results = jacobian_module(
                self.f, signature, nums, self.mode, True, self.has_aux, self.single, tape=self.backend.tape_form
            )
            return Compiled(module, compile_for(module, self.backend).function(entry), (), hidden, results)

        return cached((self.f, self.mode, nums, self.single, self.has_aux, signature, self.backend), build)

    def lower(self, *args, **kwargs) -> ModuleOp:
        """The differentiated, optimised module the backend runs for these argument types."""
        return self._compiled(arguments(self.f, args, kwargs)[1])[0].module

    def __call__(self, *args, **kwargs):
        leaves, signature = arguments(self.f, args, kwargs)
        compiled, hidden = self._compiled(signature)
        return unflatten(compiled.results, iter(run_compiled(compiled.run, (*leaves, *hidden))))


def _split(f, results: Tree, has_aux: bool) -> tuple[Tree, Tree | None]:
    if not has_aux:
        return results, None
    if not (isinstance(results, Node) and results.cls is tuple and len(results.children) == 2):
        raise error_at(
            f, f"with has_aux=True, {name_of(f)} must return a pair (output, aux), but returns "
            f"{describe(results) if not isinstance(results, Node) else repr(results)}"
        )
    return results.children[0], results.children[1]


def _check_float_outputs(f, out_tree: Tree) -> None:
    outputs = leaf_types(out_tree)
    if not outputs or not all(is_differentiable(t) for t in outputs):
        raise error_at(
            f,
            f"{name_of(f)} must return floats or float arrays for its Jacobian, but returns "
            f"{describe(out_tree) if not isinstance(out_tree, Node) else repr(out_tree) if outputs else 'nothing'}"
            + ("\n  hint: return int results as aux, with has_aux=True" if outputs else ""),
        )


def jacobian_structure(out_tree: Tree, aux_tree: Tree | None, signature: Node, nums, single: bool) -> Tree:
    """The tree of a Jacobian (JAX's nesting): out_tree with each leaf replaced by
    the gradient structure of the arguments `nums`; with aux, `(jacobian, aux)`."""
    inner = gradient_structure(signature, nums, single)

    def walk(t: Tree) -> Tree:
        if isinstance(t, Node):
            return Node(t.cls, t.keys, tuple(walk(c) for c in t.children))
        return inner

    tree = walk(out_tree)
    return tree if aux_tree is None else tuple_tree([tree, aux_tree])


def jacobian_module(
    f: Callable,
    signature: Node,
    argnums: tuple[int, ...],
    mode: str,
    inline: bool = True,
    has_aux: bool = False,
    single: bool = True,
    tape: str = "memref",
) -> tuple[ModuleOp, str, HiddenGlobals, Tree]:
    """The module whose public `@<f>.<mode>` returns the Jacobian's blocks,
    row-major (float output leaf by float argument leaf of `argnums`), then
    the aux values; the global arrays the entry takes after f's arguments; and
    the tree of the entry's results. (`inline=False` for a module to be
    differentiated again; `tape` is the tape's form, reversed_spec.)"""
    signature = as_signature(signature)
    module, name, hidden, results = lowered(f, signature)
    out_tree, aux_tree = _split(f, results, has_aux)
    _check_float_outputs(f, out_tree)
    arg_types = leaf_types(signature)
    wrt = float_leaves(signature, argnums)
    n_out = len(leaf_types(out_tree))
    primal = function_named(module, name)
    primal.sym_visibility = StringAttr("private")
    block = entry_block(primal, arg_types)
    if mode == "jacfwd":
        entries, aux = _forward_entries(name, block, wrt, primal.function_type.outputs.data, n_out)
    else:
        entries, aux = _reverse_entries(module, name, block, wrt, n_out, has_aux)
    block.add_op(func.ReturnOp(*entries, *aux))
    result_types = [v.type for v in (*entries, *aux)]
    entry = add_entry(module, primal, f"{name}.{mode}", block, result_types)
    run(module, jvp_spec(inline, tape) if mode == "jacfwd" else reversed_spec(inline, tape))
    tree = jacobian_structure(out_tree, aux_tree, signature, argnums, single)
    return module, entry.sym_name.data, hidden, with_leaf_types(tree, result_types)


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


def _block_type(rows: Attribute, cols: Attribute) -> Attribute:
    element = cols.element_type if is_tensor(cols) else cols
    return TensorType(element, [*shape_of(rows), *shape_of(cols)])


def _stacked(block: Block, parts: Sequence[SSAValue], rows: Attribute, cols: Attribute, axis: int) -> SSAValue:
    """The Jacobian block of shape rows.shape + cols.shape: the matrix
    [size(rows), size(cols)] whose rows (axis 0, each part of type `cols`) or
    columns (axis 1, each of type `rows`) are `parts`, reshaped. No parts (an
    empty array): the empty block."""
    if not parts:
        return _unit(block, _block_type(rows, cols), None)
    b = IRBuilder(block)
    piece = [1, _size(cols)] if axis == 0 else [_size(rows), 1]
    pieces = [T.reshape(b, p if is_tensor(p.type) else _as_tensor(b, p), piece) for p in parts]
    matrix_type = TensorType(T.element(pieces[0]), [_size(rows), _size(cols)])
    matrix = pieces[0] if len(pieces) == 1 else b.value(tensor.ConcatOp(pieces, axis, matrix_type))
    return T.reshape(b, matrix, [*shape_of(rows), *shape_of(cols)])


def _as_tensor(b: IRBuilder, scalar: SSAValue) -> SSAValue:
    return b.value(tensor.FromElementsOp(scalar, result_type=TensorType(scalar.type, [1])))


def _forward_entries(name, block: Block, wrt, outputs, n_out: int) -> tuple[list[SSAValue], list[SSAValue]]:
    """One jvp per element of each argument leaf in `wrt`: the blocks' columns;
    and the aux values."""
    float_outputs = [t for t in outputs if is_differentiable(t)]
    columns, primal = [], None
    for a in wrt:
        arg_type = block.args[a].type
        tangents = []
        for k in range(_size(arg_type)):
            one = _unit(block, arg_type, k)
            request = JvpOp(name, [*block.args, one], [a], [*outputs, *float_outputs])
            block.add_op(request)
            tangents.append(request.results[len(outputs) :])  # f's float results come first
            primal = request.results[: len(outputs)]
        columns.append([
            _stacked(block, [t[i] for t in tangents], outputs[i], arg_type, 1) if is_tensor(arg_type)
            else tangents[0][i]
            for i in range(n_out)
        ])
    if primal is None:  # no float argument element: the results alone
        call = func.CallOp(name, list(block.args), list(outputs))
        block.add_op(call)
        primal = call.results
    entries = [columns[j][i] for i in range(n_out) for j in range(len(wrt))]
    return entries, list(primal[n_out:])


def _reverse_entries(module, name, block: Block, wrt, n_out: int, has_aux: bool) -> tuple[list[SSAValue], list[SSAValue]]:
    """One pullback per element of each output leaf: the blocks' rows; and the aux values."""
    target = cut_aux(module, name, n_out) if has_aux else name
    outputs = function_named(module, target).function_type.outputs.data
    float_outputs = [t for t in outputs if is_differentiable(t)]  # f's outputs, then float aux (seeded 0)
    seeds, owner = [], []
    for i in range(n_out):
        for k in range(_size(outputs[i])):
            seeds.append([_unit(block, u, k if o == i else None) for o, u in enumerate(float_outputs)])
            owner.append(i)
    active = tuple(i in wrt for i in range(len(block.args)))
    values, sweeps = reverse_sweeps(module, target, block, active, seeds)
    ordered = sorted(wrt)
    entries = []
    for i in range(n_out):
        per_element = [sweep for sweep, o in zip(sweeps, owner) if o == i]
        for a in wrt:
            parts = [p[ordered.index(a)] for p in per_element]
            arg_type = block.args[a].type
            entries.append(_stacked(block, parts, outputs[i], arg_type, 0) if is_tensor(outputs[i]) else parts[0])
    return entries, values[n_out:]


def jacfwd(
    f: Callable, argnums: int | Sequence[int] = 0, *, has_aux: bool = False, backend: str | None = None,
    iree_target: str | None = None, iree_device: str | None = None,
) -> _JacobianFunction:
    """The Jacobian of `f` with respect to `argnums`, by forward mode. With
    has_aux=True, f returns `(out, aux)` and the call `(jacobian, aux)`.
    `backend` (and the IREE options) as for `irad.grad`."""
    backend = check_backend(backend or config.read("backend"), iree_target, iree_device)
    return _JacobianFunction(f, argnums, "jacfwd", backend, has_aux)


def jacrev(
    f: Callable, argnums: int | Sequence[int] = 0, *, has_aux: bool = False, backend: str | None = None,
    iree_target: str | None = None, iree_device: str | None = None,
) -> _JacobianFunction:
    """The Jacobian of `f` with respect to `argnums`, by reverse mode. With
    has_aux=True, f returns `(out, aux)` and the call `(jacobian, aux)`.
    `backend` (and the IREE options) as for `irad.grad`."""
    backend = check_backend(backend or config.read("backend"), iree_target, iree_device)
    return _JacobianFunction(f, argnums, "jacrev", backend, has_aux)


def hessian(
    f: Callable, argnums: int | Sequence[int] = 0, *, has_aux: bool = False, backend: str | None = None,
    iree_target: str | None = None, iree_device: str | None = None,
) -> _JacobianFunction:
    """The Hessian of `f` (which returns one float): jacfwd(grad(f)), forward
    over reverse. With has_aux=True, f returns `(value, aux)` and the call
    `(hessian, aux)`."""
    backend = check_backend(backend or config.read("backend"), iree_target, iree_device)
    return jacfwd(grad(f, argnums, has_aux=has_aux), argnums, has_aux=has_aux, backend=backend)


# Programs may apply these to functions: the frontend evaluates them while lowering.
jacfwd._irad_transform = jacrev._irad_transform = hessian._irad_transform = True

__all__ = ["hessian", "jacfwd", "jacobian_module", "jacrev"]
