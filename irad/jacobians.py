"""Jacobians and Hessians: jacfwd (forward mode), jacrev (reverse mode), hessian.

Each builds one module whose entry returns the Jacobian's entries, row-major
(output by output, `argnums` by `argnums`):

- jacfwd: one `irad.jvp` request per argument in `argnums`, along a unit tangent;
- jacrev: one augmented primal, then one pullback call per float output, with
  a unit cotangent;
- hessian(f) = jacfwd(grad(f)): forward over reverse, the jvp pass applied to
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

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import FloatAttr, ModuleOp, StringAttr
from xdsl.ir import Attribute, Block, SSAValue

from irad.api import grad, jvp, vjp
from irad.compiled import Compiled, cached, error_at, name_of, normalise_argnums, run_compiled, variant
from irad.backends import check_backend, compile_for
from irad.ir.dialect import TAPE, JvpOp, TapeFreeOp
from irad.frontend import bind_arguments, signature_of
from irad.frontend.globals import HiddenGlobals
from irad.ir.types import describe, is_float, is_tensor
from irad.passes.differentiate import Differentiator
from irad.pipeline import add_entry, entry_block, function_named, jvp_spec, lowered, reversed_spec, run
from irad.rules import default_table


class _JacobianFunction:
    """The callable returned by jacfwd / jacrev."""

    def __init__(self, f: Callable, argnums, mode: str, backend: str = "python"):
        self.f = f
        self.argnums = argnums
        self.mode = mode
        self.backend = check_backend(backend)
        self.single = isinstance(argnums, numbers.Integral)
        self.__name__ = f"{mode}({name_of(f)})"
        # f's primal, by signature, then by the global arrays it reads: its result types
        self._primals: dict[tuple[Attribute, ...], list[Compiled]] = {}

    def _irad_module(self, signature: tuple[Attribute, ...]) -> tuple[ModuleOp, str, HiddenGlobals]:
        nums = normalise_argnums(self.f, self.argnums, signature)
        module, entry, _, hidden = jacobian_module(self.f, signature, nums, self.mode, inline=False)
        return module, entry, hidden

    def _compiled(self, args: Sequence) -> tuple[Compiled, tuple]:
        """The compiled Jacobian for these arguments, and the hidden arrays' values."""
        signature = signature_of(self.f, tuple(args))
        nums = normalise_argnums(self.f, self.argnums, signature)

        def build() -> Compiled:
            module, entry, outputs, hidden = jacobian_module(self.f, signature, nums, self.mode)
            return Compiled(module, compile_for(module, self.backend).function(entry), outputs, hidden)

        return cached((self.f, self.mode, nums, signature, self.backend), build)

    def lower(self, *args, **kwargs) -> ModuleOp:
        """The differentiated, optimised module for these argument types."""
        return self._compiled(bind_arguments(self.f, args, kwargs))[0].module

    def __call__(self, *args, **kwargs):
        args = bind_arguments(self.f, args, kwargs)
        signature = signature_of(self.f, tuple(args))
        nums = normalise_argnums(self.f, self.argnums, signature)
        if any(is_tensor(signature[a]) for a in nums) or self._array_outputs(signature):
            return self._array_jacobian(args, signature, nums)
        compiled, hidden = self._compiled(args)
        flat = run_compiled(compiled.run, (*args, *hidden))
        width = len(flat) // len(compiled.out_types)
        rows = [flat[i * width : (i + 1) * width] for i in range(len(compiled.out_types))]
        rows = [row[0] if self.single else tuple(row) for row in rows]
        returns_tuple = len(rows) > 1 or getattr(self.f, "returns_tuple", False)
        return tuple(rows) if returns_tuple else rows[0]

    # ---- arrays: one sweep per element, assembled with numpy --------------------
    def _array_outputs(self, signature) -> bool:
        """Does f return an array? Shapes are static, so f's result types say,
        once per signature and dtypes and shapes of the global arrays it reads."""

        def build() -> Compiled:
            module, name, hidden = lowered(self.f, signature)
            return Compiled(module, None, tuple(function_named(module, name).function_type.outputs.data), hidden)

        primal, _ = variant(self._primals.setdefault(signature, []), build)
        return any(is_tensor(t) for t in primal.out_types)

    def _array_jacobian(self, args, signature, nums):
        """J[output][argument] of shape output.shape + argument.shape, as JAX gives it."""
        per_arg = []
        if self.mode == "jacfwd":
            for a in nums:
                shape = np.shape(args[a])
                columns = []
                for k in range(int(np.prod(shape))):
                    direction = np.zeros(shape)
                    direction.flat[k] = 1.0
                    seed = [direction if shape else 1.0]
                    out, tangent = jvp(self.f, args, seed, argnums=a, backend=self.backend)
                    columns.append(tangent if isinstance(out, tuple) else (tangent,))
                outs = out if isinstance(out, tuple) else (out,)
                per_arg.append([
                    np.stack([np.asarray(c[o]) for c in columns], axis=-1).reshape(np.shape(outs[o]) + shape)
                    for o in range(len(outs))
                ])
            rows = [[per_arg[j][o] for j in range(len(nums))] for o in range(len(per_arg[0]))]
        else:
            out, pullback = vjp(self.f, *args, backend=self.backend)
            outs = out if isinstance(out, tuple) else (out,)
            rows = []
            for o, value in enumerate(outs):
                shape = np.shape(value)
                grads = []
                for k in range(int(np.prod(shape))):
                    seed = np.zeros(shape)
                    seed.flat[k] = 1.0
                    cts = [np.zeros(np.shape(v)) if isinstance(v, np.ndarray) else 0.0 for v in outs]
                    cts[o] = seed if shape else 1.0
                    grads.append(pullback(cts[0] if len(outs) == 1 else tuple(cts)))
                rows.append([
                    np.stack([np.asarray(g[a]) for g in grads]).reshape(shape + np.shape(args[a]))
                    for a in nums
                ])
        rows = [row[0] if self.single else tuple(row) for row in rows]
        return rows[0] if len(rows) == 1 and not getattr(self.f, "returns_tuple", False) else tuple(rows)


def jacobian_module(
    f: Callable,
    signature: tuple[Attribute, ...],
    argnums: tuple[int, ...],
    mode: str,
    inline: bool = True,
) -> tuple[ModuleOp, str, tuple[Attribute, ...], HiddenGlobals]:
    """The module whose public `@<f>.<mode>` returns the Jacobian's entries,
    row-major; also f's result types and the global arrays the entry takes
    after f's arguments. (`inline=False` for a module to be differentiated
    again.)"""
    module, name, hidden = lowered(f, signature)
    primal = function_named(module, name)
    primal.sym_visibility = StringAttr("private")
    outputs = tuple(primal.function_type.outputs.data)
    bad = [describe(t) for t in outputs if not is_float(t)]
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
        run(module, reversed_spec(inline))
    return module, entry.sym_name.data, outputs, hidden


def _unit(block: Block, type_: Attribute, value: float) -> SSAValue:
    op = arith.ConstantOp(FloatAttr(value, type_))
    block.add_op(op)
    return op.result


def _forward_entries(module, name, block, argnums, outputs) -> list[SSAValue]:
    """One jvp per argument; column j holds the tangents of every output."""
    n = len(outputs)
    columns = []
    for a in argnums:
        one = _unit(block, block.args[a].type, 1.0)
        request = JvpOp(name, [*block.args, one], [a], [*outputs, *outputs])
        block.add_op(request)
        columns.append(request.results[n:])
    return [columns[j][i] for i in range(n) for j in range(len(argnums))]


def _reverse_entries(module, name, block, argnums, outputs) -> list[SSAValue]:
    """One pullback per output; row i holds the cotangents of every argument."""
    active = tuple(i in argnums for i in range(len(block.args)))
    generated = Differentiator(module, default_table()).reverse(name, active)
    augmented = func.CallOp(generated.augmented, list(block.args), [*outputs, *generated.residual_types])
    block.add_op(augmented)
    residuals = augmented.results[len(outputs) :]
    ordered = sorted(argnums)
    grad_types = [block.args[i].type for i in ordered]
    rows = []
    for i, t in enumerate(outputs):
        seeds = [_unit(block, u, 1.0 if k == i else 0.0) for k, u in enumerate(outputs)]
        pullback = func.CallOp(generated.pullback, [*residuals, *seeds], grad_types)
        block.add_op(pullback)
        rows.append([pullback.results[ordered.index(a)] for a in argnums])
    for tape in (r for r in residuals if r.type == TAPE):
        block.add_op(TapeFreeOp(tape))  # the last pullback has run
    return [v for row in rows for v in row]


def jacfwd(f: Callable, argnums: int | Sequence[int] = 0, *, backend: str = "python") -> _JacobianFunction:
    """The Jacobian of `f` with respect to `argnums`, by forward mode."""
    return _JacobianFunction(f, argnums, "jacfwd", backend)


def jacrev(f: Callable, argnums: int | Sequence[int] = 0, *, backend: str = "python") -> _JacobianFunction:
    """The Jacobian of `f` with respect to `argnums`, by reverse mode."""
    return _JacobianFunction(f, argnums, "jacrev", backend)


def hessian(f: Callable, argnums: int | Sequence[int] = 0, *, backend: str = "python") -> _JacobianFunction:
    """The Hessian of `f` (which returns one float): jacfwd(grad(f)), forward
    over reverse."""
    return jacfwd(grad(f, argnums), argnums, backend=backend)


# Programs may apply these to functions: the frontend evaluates them while lowering.
jacfwd._irad_transform = jacrev._irad_transform = hessian._irad_transform = True

__all__ = ["hessian", "jacfwd", "jacobian_module", "jacrev"]
