"""The Python API: lower, grad, value_and_grad, vjp.

Each transformation lowers the function for the example arguments' types,
runs `irad-differentiate` and `irad-optimize`, and compiles the result with
the chosen backend ("python" by default, or "native"). Compiled code is cached
per function, argument signature, backend and rule-table version, so a rule
edit forces a recompile.
"""

from __future__ import annotations

import functools
import numbers
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, StringAttr
from xdsl.ir import Attribute, Block, Region

from irad.backends import check_backend, compile_for
from irad.dialect import GradOp, JvpOp, ValueAndGradOp, make_context
from irad.errors import IradError
from irad.frontend import bind_arguments, lower_function, signature_of
from irad.frontend.source import def_location
from irad.frontend.types import describe, is_differentiable, is_float, is_tensor
from irad.gc_pause import gc_paused
from irad.passes.differentiate import Differentiator
from irad.passes.forward import ForwardDifferentiator
from irad.passes.optimize import DEFAULT_MAX_DEPTH, OptimizePass
from irad.passes.provenance import ENTRY, mark_generated
from irad.passes.symbol_dce import SymbolDCEPass
from irad.recursion import deep_recursion
from irad.rules import default_table


def lower(f: Callable, *example_args, **example_kwargs) -> ModuleOp:
    """The primal module of `f`, specialised to the example arguments' types."""
    args = bind_arguments(f, example_args, example_kwargs)
    module, _ = lower_function(f, signature_of(f, args), default_table())
    return module


# ---- building modules ---------------------------------------------------------
@functools.cache
def _context():
    return make_context()


# Verify every module the API builds (IRAD_VERIFY=1; the tests set it). Off by
# default: a whole-module verify is a tenth of compile time on large call trees.
VERIFY = os.environ.get("IRAD_VERIFY") == "1"


def _optimise(module: ModuleOp, inline: bool = True) -> None:
    """The standard pipeline. A module built to be differentiated again is not
    inlined: its calls (to rule targets above all) must meet the table again."""
    OptimizePass(max_depth=DEFAULT_MAX_DEPTH if inline else 0).apply(_context(), module)
    SymbolDCEPass().apply(_context(), module)
    if VERIFY:
        module.verify()


def _function(module: ModuleOp, name: str) -> func.FuncOp:
    return next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == name)


def _scalar_result_type(f, primal: func.FuncOp) -> Attribute:
    outputs = primal.function_type.outputs.data
    if len(outputs) != 1 or not is_float(outputs[0]):
        shown = ", ".join(describe(t) for t in outputs) or "nothing"
        hint = (
            "use irad.vjp for functions with several outputs"
            if len(outputs) > 1
            else "return a float (a gradient of an int, a bool or nothing is not defined)"
        )
        raise _error(
            f,
            f"{_name(f)} must return one float to take its gradient, but returns {shown}\n"
            f"  hint: {hint}",
        )
    return outputs[0]


def gradient_module(
    f: Callable,
    signature: tuple[Attribute, ...],
    wrt: tuple[int, ...],
    with_value: bool,
    checkpoint: bool = False,
    inline: bool = True,
) -> tuple[ModuleOp, str]:
    """The differentiated, optimised module and the name of its entry function.

    The entry, `@<f>.grad` or `@<f>.value_and_grad`, holds the request op that
    irad-differentiate replaces. It returns the gradients in `wrt` order (the
    request op itself takes increasing indices).
    """
    module, name = lower_function(f, signature, default_table())
    primal = _function(module, name)
    primal.sym_visibility = StringAttr("private")  # the entry below is the public one
    out_type = _scalar_result_type(f, primal)
    entry_name = f"{name}.{'value_and_grad' if with_value else 'grad'}"
    block = Block(arg_types=signature)
    for arg, primal_arg in zip(block.args, primal.body.block.args):
        arg.name_hint = primal_arg.name_hint
    ordered = sorted(wrt)
    values = [out_type] if with_value else []
    request_types = values + [signature[i] for i in ordered]
    request = (ValueAndGradOp if with_value else GradOp)(name, block.args, ordered, request_types)
    block.add_op(request)
    grads = {i: r for i, r in zip(ordered, request.results[len(values) :])}
    block.add_op(func.ReturnOp(*request.results[: len(values)], *(grads[i] for i in wrt)))
    entry_type = FunctionType.from_lists(signature, values + [signature[i] for i in wrt])
    entry = func.FuncOp(entry_name, entry_type, Region(block))
    mark_generated(entry, primal, ENTRY)
    module.body.block.add_op(entry)
    Differentiator(module, default_table(), checkpoint=checkpoint).rewrite_requests()
    _optimise(module, inline)
    return module, entry_name


def vjp_module(
    f: Callable, signature: tuple[Attribute, ...]
) -> tuple[ModuleOp, str, str, tuple[Attribute, ...]]:
    """The module with the public augmented primal and pullback of `f`, and f's result types."""
    module, name = lower_function(f, signature, default_table())
    out_types = tuple(_function(module, name).function_type.outputs.data)
    active = tuple(is_differentiable(t) for t in signature)
    generated = Differentiator(module, default_table()).reverse(name, active)
    for op in module.ops:
        if isinstance(op, func.FuncOp):
            public = op.sym_name.data in (generated.augmented, generated.pullback)
            op.sym_visibility = None if public else StringAttr("private")
    _optimise(module)
    return module, generated.augmented, generated.pullback, out_types


def jvp_module(
    f: Callable, signature: tuple[Attribute, ...], wrt: tuple[int, ...]
) -> tuple[ModuleOp, str, tuple[Attribute, ...]]:
    """The module whose public `@<f>.jvp` takes f's arguments, then one tangent
    per `wrt` index (increasing), and returns f's results, then their tangents."""
    module, name = lower_function(f, signature, default_table())
    primal = _function(module, name)
    primal.sym_visibility = StringAttr("private")
    outputs = primal.function_type.outputs.data
    block = Block(arg_types=[*signature, *(signature[i] for i in wrt)])
    for arg, primal_arg in zip(block.args, primal.body.block.args):
        arg.name_hint = primal_arg.name_hint
    result_types = [*outputs, *(t for t in outputs if is_differentiable(t))]
    request = JvpOp(name, block.args, wrt, result_types)
    block.add_ops([request, func.ReturnOp(*request.results)])
    entry = func.FuncOp(f"{name}.jvp", FunctionType.from_lists(block.arg_types, result_types), Region(block))
    mark_generated(entry, primal, ENTRY)
    module.body.block.add_op(entry)
    ForwardDifferentiator(module, default_table()).rewrite_requests()
    _optimise(module)
    return module, entry.sym_name.data, tuple(outputs)


# ---- compiled-code cache --------------------------------------------------------
@dataclass(frozen=True)
class _Compiled:
    module: ModuleOp
    run: Callable
    out_types: tuple[Attribute, ...] = ()


_CACHE: dict[tuple, _Compiled] = {}


def _cached(key: tuple, build: Callable[[], _Compiled]) -> _Compiled:
    key = (*key, default_table().version)
    compiled = _CACHE.get(key)
    if compiled is None:
        with gc_paused():
            compiled = _CACHE[key] = build()
    return compiled


def _name(f) -> str:
    return getattr(f, "__name__", repr(f))


def _error(f, message: str) -> IradError:
    """An error about how `f` is called, located at its `def`."""
    return IradError(def_location(f) + message)


def _normalise_argnums(f, argnums, signature) -> tuple[int, ...]:
    single = isinstance(argnums, numbers.Integral) and not isinstance(argnums, bool)
    if single:
        nums = (argnums,)
    elif isinstance(argnums, Sequence) and not isinstance(argnums, str):
        nums = tuple(argnums)
    else:
        raise _error(f, f"argnums must be an int or a tuple of ints, got {argnums!r}")
    if not nums:
        raise _error(f, f"argnums of {_name(f)} is empty")
    out = []
    for n in nums:
        if isinstance(n, bool) or not isinstance(n, numbers.Integral):
            raise _error(f, f"argnums must be an int or a tuple of ints, got {argnums!r}")
        if not -len(signature) <= n < len(signature):
            raise _error(
                f,
                f"argnums {argnums!r} is out of range for {_name(f)}, "
                f"which was called with {len(signature)} arguments"
            )
        n = int(n) % len(signature)
        if not is_differentiable(signature[n]):
            raise _error(
                f,
                f"cannot differentiate {_name(f)} with respect to argument {n}: "
                f"it is {describe(signature[n])}, not a float\n"
                "  hint: pass a float, or leave it out of argnums"
            )
        out.append(n)
    if len(set(out)) != len(out):
        raise _error(f, f"argnums {argnums!r} repeats an argument")
    return tuple(out)


def _python_type(value) -> object:
    """What decides an argument's IR type: its Python type; for an array also
    its dtype and shape (a function is specialised per static shape)."""
    if isinstance(value, np.ndarray):
        return (np.ndarray, value.dtype.str, value.shape)
    return type(value)


def _run(fn: Callable, args: Sequence):
    """Run compiled code; generated functions call each other as Python
    functions, so a deep call chain may need a higher recursion limit."""
    try:
        return fn(*args)
    except RecursionError:
        with deep_recursion():
            return fn(*args)


# ---- grad / value_and_grad ------------------------------------------------------
class _GradFunction:
    """The callable returned by grad / value_and_grad."""

    def __init__(
        self, f: Callable, argnums, with_value: bool, checkpoint: bool = False, backend: str = "python"
    ):
        self.f = f
        self.argnums = argnums
        self.with_value = with_value
        self.checkpoint = checkpoint
        self.backend = check_backend(backend)
        self.single = isinstance(argnums, numbers.Integral)
        self.__name__ = f"{'value_and_grad' if with_value else 'grad'}({_name(f)})"
        self.__doc__ = getattr(f, "__doc__", None)
        # Python argument types determine the IR signature, so this cheap key
        # finds compiled code without lowering anything.
        self._by_python_types: dict[tuple, _Compiled] = {}

    def _compiled(self, args: Sequence) -> _Compiled:
        key = (tuple(map(_python_type, args)), default_table().version)
        compiled = self._by_python_types.get(key)
        if compiled is None:
            compiled = self._by_python_types[key] = self._compile(args)
        return compiled

    def _compile(self, args: Sequence) -> _Compiled:
        signature = signature_of(self.f, tuple(args))
        wrt = _normalise_argnums(self.f, self.argnums, signature)
        kind = "value_and_grad" if self.with_value else "grad"

        def build() -> _Compiled:
            module, entry = gradient_module(
                self.f, signature, wrt, self.with_value, self.checkpoint
            )
            return _Compiled(module, compile_for(module, self.backend).function(entry))

        return _cached((self.f, kind, wrt, signature, self.checkpoint, self.backend), build)

    def _irad_module(self, signature: tuple[Attribute, ...]) -> tuple[ModuleOp, str]:
        """A fresh module computing this gradient, for a program that calls it
        (and so differentiates it again: higher order)."""
        wrt = _normalise_argnums(self.f, self.argnums, signature)
        return gradient_module(
            self.f, signature, wrt, self.with_value, self.checkpoint, inline=False
        )

    @property
    def returns_tuple(self) -> bool:
        """Whether calls return a tuple (even of one gradient), for jacobians of this."""
        return self.with_value or not self.single

    def lower(self, *args, **kwargs) -> ModuleOp:
        """The differentiated, optimised module the backend runs for these argument types."""
        return self._compiled(bind_arguments(self.f, args, kwargs)).module

    def __call__(self, *args, **kwargs):
        args = bind_arguments(self.f, args, kwargs)
        results = _run(self._compiled(args).run, args)
        grads = results[1:] if self.with_value else results
        grads = grads[0] if self.single else tuple(grads)
        return (results[0], grads) if self.with_value else grads


def grad(
    f: Callable, argnums: int | Sequence[int] = 0, *, checkpoint: bool = False, backend: str = "python"
) -> _GradFunction:
    """The gradient of `f` (which returns one float) with respect to `argnums`.

    An int `argnums` gives one gradient; a tuple gives a tuple, as in jax.grad.
    `checkpoint=True` makes loops store only each iteration's inputs and
    recompute the body in the reverse sweep (less memory, more time; see
    docs/control-flow.md). `backend="native"` runs machine code compiled by
    upstream MLIR 22 and llvmlite (see docs/backends.md).
    """
    return _GradFunction(f, argnums, with_value=False, checkpoint=checkpoint, backend=backend)


def value_and_grad(
    f: Callable, argnums: int | Sequence[int] = 0, *, checkpoint: bool = False, backend: str = "python"
) -> _GradFunction:
    """Like `grad`, returning `(f(*args), gradient)`."""
    return _GradFunction(f, argnums, with_value=True, checkpoint=checkpoint, backend=backend)


# Programs may apply these to functions: the frontend evaluates them while lowering.
grad._irad_transform = value_and_grad._irad_transform = True


# ---- vjp --------------------------------------------------------------------------
def vjp(f: Callable, *primals, backend: str = "python"):
    """`(out, pullback)`: `pullback(cotangent)` returns one cotangent per primal.

    The cotangent has the structure of `out`: a number, or a tuple of numbers
    for tuple outputs (cotangents of int outputs are ignored). Non-float
    primals get None. `backend` is "python" or "native", as for `grad`.
    """
    check_backend(backend)
    primals = bind_arguments(f, primals, {})
    signature = signature_of(f, primals)
    active = tuple(is_differentiable(t) for t in signature)

    def build() -> _Compiled:
        module, augmented, pullback, out_types = vjp_module(f, signature)
        compiled = compile_for(module, backend)
        pair = (compiled.function(augmented), compiled.function(pullback))
        return _Compiled(module, pair, out_types)

    compiled = _cached((f, "vjp", signature, backend), build)
    forward, backward = compiled.run
    out_types = compiled.out_types
    results = _run(forward, primals)
    outputs, residuals = results[: len(out_types)], results[len(out_types) :]
    single = len(out_types) == 1

    def pullback(cotangent):
        cts = (cotangent,) if single else cotangent
        if not isinstance(cts, (tuple, list)) or len(cts) != len(out_types):
            shape = "one number" if single else f"a tuple of {len(out_types)} numbers"
            raise _error(f, f"the pullback of {_name(f)} takes {shape}, got {cotangent!r}")
        float_cts = []
        for i, (ct, t) in enumerate(zip(cts, out_types)):
            if not is_differentiable(t):
                continue
            float_cts.append(_seed(f, "cotangent", i, ct, t))
        grads = iter(_run(backward, (*residuals, *float_cts)))
        return tuple(next(grads) if a else None for a in active)

    return (outputs[0] if single else tuple(outputs)), pullback


# ---- jvp --------------------------------------------------------------------------
def jvp(f: Callable, primals: Sequence, tangents: Sequence, argnums=None, *, backend: str = "python"):
    """`(f(*primals), tangent_out)`: forward mode along `tangents`.

    Without `argnums`, `tangents` has one entry per primal (None for an int or
    bool). With `argnums`, one tangent per entry of `argnums`. `tangent_out`
    has the structure of the output, with None for int or bool results.
    `backend` is "python" or "native", as for `grad`.
    """
    check_backend(backend)
    for what, given_values in (("primals", primals), ("tangents", tangents)):
        if not isinstance(given_values, (tuple, list)):
            raise _error(
                f, f"jvp of {_name(f)} takes its {what} as a tuple, got {given_values!r}\n"
                f"  hint: irad.jvp(f, (x,), (dx,))"
            )
    primals = bind_arguments(f, tuple(primals), {})
    signature = signature_of(f, primals)
    tangents = tuple(tangents)
    if argnums is None:
        if len(tangents) != len(primals):
            raise _error(
                f, f"jvp of {_name(f)} takes one tangent per primal ({len(primals)}), "
                f"got {len(tangents)}\n  hint: None for int or bool arguments"
            )
        given = {i: t for i, t in enumerate(tangents) if is_differentiable(signature[i])}
        for i, t in enumerate(tangents):
            if i not in given and t is not None:
                raise _error(f, f"argument {i} of {_name(f)} is not a float: its tangent must be None")
    else:
        nums = _normalise_argnums(f, argnums, signature)
        if len(tangents) != len(nums):
            raise _error(f, f"jvp of {_name(f)} takes one tangent per argnum ({len(nums)}), got {len(tangents)}")
        given = dict(zip(nums, tangents))
    given = {i: _seed(f, "the tangent of argument", i, t, signature[i]) for i, t in given.items()}
    wrt = tuple(sorted(given))

    def build() -> _Compiled:
        module, entry, out_types = jvp_module(f, signature, wrt)
        return _Compiled(module, compile_for(module, backend).function(entry), out_types)

    compiled = _cached((f, "jvp", wrt, signature, backend), build)
    results = _run(compiled.run, (*primals, *(given[i] for i in wrt)))
    n = len(compiled.out_types)
    outputs, tangent_results = results[:n], iter(results[n:])
    tangent_out = tuple(
        next(tangent_results) if is_differentiable(t) else None for t in compiled.out_types
    )
    if n == 1:
        return outputs[0], tangent_out[0]
    return tuple(outputs), tangent_out


def _seed(f, what: str, i: int, value, t: Attribute):
    """A cotangent or tangent the caller passes for a value of type `t`: a real
    number for a float, a real array of its shape for an array."""
    if is_tensor(t):
        shape = tuple(t.get_shape())
        array = np.asarray(value)
        if array.shape != shape or array.dtype.kind not in "fiu":
            raise _error(f, f"{what} {i} of {_name(f)} must be a real array of shape {shape}, got {value!r}")
        return array
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise _error(f, f"{what} {i} of {_name(f)} must be a real number, got {value!r}")
    return float(value)


__all__ = ["grad", "gradient_module", "jvp", "jvp_module", "lower", "value_and_grad", "vjp", "vjp_module"]
