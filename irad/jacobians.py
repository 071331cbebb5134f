"""Jacobians and Hessians: jacfwd (forward mode), jacrev (reverse mode), hessian.

The result has JAX's structure: the tree of f's outputs, each float output
replaced by the tree of the arguments in `argnums` (one argument's tree for an
int `argnums`, a tuple of them for a tuple), whose leaves are the blocks
d output / d argument leaf, of shape `output.shape + argument.shape` (a float
for two scalars). Int and bool argument leaves get None. With
`has_aux=True`, f returns `(out, aux)` and the call returns `(jacobian, aux)`.

For scalar leaves one module computes every entry, row-major (output leaf by
argument leaf):

- jacfwd: one `irad.jvp` request per argument leaf, along a unit tangent;
- jacrev: one augmented primal, then one pullback call per float output, with
  a unit cotangent;
- hessian(f) = jacfwd(grad(f)): forward over reverse, the jvp pass applied to
  the gradient's IR.

For array leaves the blocks are assembled with numpy from one compiled jvp
(jacfwd) per element of each argument leaf, or one forward pass and one
pullback (jacrev) per element of each output leaf. The objects are derivative
objects like `irad.grad(f)`, so they compose (`jacfwd(jacrev(f))`) and
programs may call them (on scalar leaves; the entries then come flat,
row-major).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import FloatAttr, ModuleOp, StringAttr
from xdsl.ir import Attribute, Block, SSAValue

from irad.api import grad, jvp_compiled, vjp_compiled
from irad.arguments import arguments, error_at, float_leaves, gradient_structure, name_of, normalise_argnums
from irad.backends import check_backend, compile_for
from irad.compiled import Compiled, cached, run_compiled, variant
from irad.frontend.globals import HiddenGlobals
from irad.frontend.lowering import as_signature
from irad.frontend.pytrees import Node, Tree, leaf_types, tuple_tree, unflatten, with_leaf_types
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

    def __init__(self, f: Callable, argnums, mode: str, backend: str = "python", has_aux: bool = False):
        self.f = f
        self.argnums = argnums
        self.mode = mode
        self.has_aux = has_aux
        self.backend = check_backend(backend)
        self.single = isinstance(argnums, numbers.Integral)
        self.__name__ = f"{mode}({name_of(f)})"
        # f's primal, by signature, then by the global arrays it reads: its result tree
        self._primals: dict[Node, list[Compiled]] = {}

    def _irad_module(self, signature: Node) -> tuple[ModuleOp, str, HiddenGlobals, Tree]:
        nums = normalise_argnums(self.f, self.argnums, signature)
        return jacobian_module(self.f, signature, nums, self.mode, False, self.has_aux, self.single)

    def _compiled(self, signature: Node, nums) -> tuple[Compiled, tuple]:
        """The compiled Jacobian of scalar leaves, and the hidden arrays' values."""

        def build() -> Compiled:
            module, entry, hidden, results = jacobian_module(
                self.f, signature, nums, self.mode, True, self.has_aux, self.single
            )
            return Compiled(module, compile_for(module, self.backend).function(entry), (), hidden, results)

        return cached((self.f, self.mode, nums, self.single, self.has_aux, signature, self.backend), build)

    def _plan(self, args, kwargs):
        leaves, signature = arguments(self.f, args, kwargs)
        nums = normalise_argnums(self.f, self.argnums, signature)
        out_tree, aux_tree = _split(self.f, self._results(signature), self.has_aux)
        _check_float_outputs(self.f, out_tree)
        types = leaf_types(signature)
        wrt = float_leaves(signature, nums)
        arrays = any(is_tensor(types[i]) for i in wrt) or any(is_tensor(t) for t in leaf_types(out_tree))
        return leaves, signature, nums, wrt, out_tree, aux_tree, arrays

    def lower(self, *args, **kwargs) -> ModuleOp:
        """The differentiated, optimised module for these argument types: for
        array leaves, the jvp (jacfwd) or vjp (jacrev) module run per element."""
        leaves, signature, nums, wrt, _, _, arrays = self._plan(args, kwargs)
        if not arrays:
            return self._compiled(signature, nums)[0].module
        if self.mode == "jacfwd":
            return jvp_compiled(self.f, signature, tuple(sorted(wrt)), self.backend)[0].module
        return vjp_compiled(self.f, signature, self.has_aux, self.backend)[0].module

    def __call__(self, *args, **kwargs):
        leaves, signature, nums, wrt, out_tree, aux_tree, arrays = self._plan(args, kwargs)
        if arrays:
            blocks, aux = self._array_blocks(leaves, signature, wrt, out_tree)
            tree = jacobian_structure(out_tree, aux_tree, signature, nums, self.single)
            return unflatten(tree, iter([*blocks, *aux]))
        compiled, hidden = self._compiled(signature, nums)
        return unflatten(compiled.results, iter(run_compiled(compiled.run, (*leaves, *hidden))))

    def _results(self, signature: Node) -> Tree:
        """The tree of f's results: lowered once per signature and per dtypes
        and shapes of the global arrays it reads."""

        def build() -> Compiled:
            module, _, hidden, results = lowered(self.f, signature)
            return Compiled(module, None, (), hidden, results)

        primal, _ = variant(self._primals.setdefault(signature, []), build)
        return primal.results

    # ---- arrays: one sweep per element, assembled with numpy --------------------
    def _array_blocks(self, leaves, signature: Node, wrt, out_tree: Tree) -> tuple[list, list]:
        """The blocks d out[o] / d arg[i] (shape out.shape + arg.shape), output
        leaf by argument leaf in `wrt` order; and the aux values."""
        types = leaf_types(signature)
        outs = leaf_types(out_tree)
        if self.mode == "jacfwd":
            order = tuple(sorted(wrt))
            compiled, hidden = jvp_compiled(self.f, signature, order, self.backend)
            n = len(compiled.out_types)
            zeros = {i: _zeros(types[i]) for i in order}
            columns, primal = {}, None
            for i in wrt:
                columns[i] = []
                for k in range(int(np.prod(shape_of(types[i])))):
                    seeds = [_unit(types[i], k) if j == i else zeros[j] for j in order]
                    results = run_compiled(compiled.run, (*leaves, *seeds, *hidden))
                    columns[i].append(results[n:])  # the tangents of f's float results
                    primal = results[:n]
            if primal is None:  # only empty arrays: f's results alone
                primal = run_compiled(compiled.run, (*leaves, *(zeros[j] for j in order), *hidden))[:n]
            blocks = [
                np.stack([np.asarray(t[o]) for t in columns[i]], axis=-1).reshape(shape_of(outs[o]) + shape_of(types[i]))
                if columns[i] else np.zeros(shape_of(outs[o]) + shape_of(types[i]))
                for o in range(len(outs)) for i in wrt
            ]
            return [_scalar(b) for b in blocks], list(primal[len(outs) :])
        compiled, hidden = vjp_compiled(self.f, signature, self.has_aux, self.backend)
        forward, backward = compiled.run
        results = run_compiled(forward, (*leaves, *hidden))
        n = len(compiled.out_types)
        residuals = results[n:]
        aux_types = [t for t in compiled.out_types[len(outs) :] if is_differentiable(t)]
        active = [i for i, t in enumerate(types) if is_differentiable(t)]
        blocks = []
        for o, t in enumerate(outs):
            rows = []
            for k in range(int(np.prod(shape_of(t)))):
                seeds = [_unit(u, k) if p == o else _zeros(u) for p, u in enumerate(outs)]
                rows.append(dict(zip(active, run_compiled(backward, (*residuals, *seeds, *map(_zeros, aux_types))))))
            for i in wrt:
                shape = shape_of(t) + shape_of(types[i])
                blocks.append(_scalar(np.stack([np.asarray(r[i]) for r in rows]).reshape(shape) if rows else np.zeros(shape)))
        return blocks, list(results[len(outs) : n])


def _zeros(t: Attribute):
    return np.zeros(shape_of(t)) if is_tensor(t) else 0.0


def _unit(t: Attribute, k: int):
    """The k-th unit vector of a value of type t (1.0 for a scalar)."""
    if not is_tensor(t):
        return 1.0
    unit = np.zeros(shape_of(t))
    unit.flat[k] = 1.0
    return unit


def _scalar(block: np.ndarray):
    return float(block) if block.ndim == 0 else block


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
) -> tuple[ModuleOp, str, HiddenGlobals, Tree]:
    """The module whose public `@<f>.<mode>` returns the Jacobian's entries,
    row-major (float output leaf by float argument leaf of `argnums`), then
    the aux values; the global arrays the entry takes after f's arguments; and
    the tree of the entry's results. Scalar leaves only. (`inline=False` for a
    module to be differentiated again.)"""
    signature = as_signature(signature)
    module, name, hidden, results = lowered(f, signature)
    out_tree, aux_tree = _split(f, results, has_aux)
    _check_float_outputs(f, out_tree)
    arg_types = leaf_types(signature)
    wrt = float_leaves(signature, argnums)
    outputs = leaf_types(out_tree)
    if any(is_tensor(t) for t in outputs) or any(is_tensor(arg_types[i]) for i in wrt):
        raise error_at(
            f, f"{mode} of {name_of(f)} inside a program (or under another transformation) takes "
            "float scalars; its arguments or results here are arrays\n"
            "  hint: call it from Python, where array Jacobians are assembled with numpy"
        )
    primal = function_named(module, name)
    primal.sym_visibility = StringAttr("private")
    block = entry_block(primal, arg_types)
    if mode == "jacfwd":
        entries, aux = _forward_entries(name, block, wrt, primal.function_type.outputs.data, len(outputs))
    else:
        entries, aux = _reverse_entries(module, name, block, wrt, len(outputs), has_aux)
    block.add_op(func.ReturnOp(*entries, *aux))
    result_types = [v.type for v in (*entries, *aux)]
    entry = add_entry(module, primal, f"{name}.{mode}", block, result_types)
    run(module, jvp_spec(inline) if mode == "jacfwd" else reversed_spec(inline))
    tree = jacobian_structure(out_tree, aux_tree, signature, argnums, single)
    return module, entry.sym_name.data, hidden, with_leaf_types(tree, result_types)


def _forward_entries(name, block: Block, wrt, outputs, n_out: int) -> tuple[list[SSAValue], list[SSAValue]]:
    """One jvp per argument leaf; column j holds the tangents of every output."""
    tangents_start = len(outputs)
    columns, primal = [], None
    float_positions = [k for k, t in enumerate(outputs) if is_differentiable(t)]
    for a in wrt:
        one = arith.ConstantOp(FloatAttr(1.0, block.args[a].type))
        request = JvpOp(name, [*block.args, one.result], [a], [*outputs, *(outputs[k] for k in float_positions)])
        block.add_ops([one, request])
        columns.append(request.results[tangents_start:])
        primal = request.results[:tangents_start]
    if primal is None:  # no float argument leaf: the results alone
        call = func.CallOp(name, list(block.args), list(outputs))
        block.add_op(call)
        primal = call.results
    entries = [columns[j][i] for i in range(n_out) for j in range(len(wrt))]
    return entries, list(primal[n_out:])


def _reverse_entries(module, name, block: Block, wrt, n_out: int, has_aux: bool) -> tuple[list[SSAValue], list[SSAValue]]:
    """One pullback per output leaf; row i holds the cotangents of every argument leaf."""
    target = cut_aux(module, name, n_out) if has_aux else name
    outputs = function_named(module, target).function_type.outputs.data
    n_float = len([t for t in outputs if is_differentiable(t)])
    seeds = [[1.0 if k == i else 0.0 for k in range(n_float)] for i in range(n_out)]
    active = tuple(i in wrt for i in range(len(block.args)))
    values, sweeps = reverse_sweeps(module, target, block, active, seeds)
    ordered = sorted(wrt)
    entries = [sweep[ordered.index(a)] for sweep in sweeps for a in wrt]
    return entries, values[n_out:]


def jacfwd(
    f: Callable, argnums: int | Sequence[int] = 0, *, has_aux: bool = False, backend: str = "python"
) -> _JacobianFunction:
    """The Jacobian of `f` with respect to `argnums`, by forward mode."""
    return _JacobianFunction(f, argnums, "jacfwd", backend, has_aux)


def jacrev(
    f: Callable, argnums: int | Sequence[int] = 0, *, has_aux: bool = False, backend: str = "python"
) -> _JacobianFunction:
    """The Jacobian of `f` with respect to `argnums`, by reverse mode. With
    has_aux=True, f returns `(out, aux)` and the call `(jacobian, aux)`."""
    return _JacobianFunction(f, argnums, "jacrev", backend, has_aux)


def hessian(
    f: Callable, argnums: int | Sequence[int] = 0, *, has_aux: bool = False, backend: str = "python"
) -> _JacobianFunction:
    """The Hessian of `f` (which returns one float): jacfwd(grad(f)), forward
    over reverse. With has_aux=True, f returns `(value, aux)` and the call
    `(hessian, aux)`."""
    return jacfwd(grad(f, argnums, has_aux=has_aux), argnums, has_aux=has_aux, backend=backend)


# Programs may apply these to functions: the frontend evaluates them while lowering.
jacfwd._irad_transform = jacrev._irad_transform = hessian._irad_transform = True

__all__ = ["hessian", "jacfwd", "jacobian_module", "jacrev"]
