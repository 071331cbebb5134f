"""The Python API: lower, grad, value_and_grad, vjp.

Each transformation lowers the function for the example arguments' types,
runs `irad-differentiate`, `irad-lower-tape` and `irad-optimize`, and compiles
the result with the chosen backend ("python" by default, "native" or "iree"). Compiled code is cached
per function, argument signature, backend (and IREE target) and rule-table version, so a rule
edit forces a recompile, and per dtype and shape of the global arrays the
function reads: those are hidden arguments, read at each call and passed
after the function's own (irad/frontend/globals.py).
"""

from __future__ import annotations

import inspect
import numbers
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute

from irad.backends import Backend, check_backend, compile_for
from irad.compiled import (
    Compiled,
    cached,
    current,
    error_at,
    name_of,
    normalise_argnums,
    python_type,
    run_compiled,
    run_deeper,
    seed,
    variant,
)
from irad.frontend import bind_arguments, signature_of
from irad.frontend.globals import HiddenGlobals
from irad.ir.types import is_differentiable
from irad.pipeline import gradient_module, jvp_module, lowered, vjp_module
from irad.rules import default_table


def lower(f: Callable, *example_args, **example_kwargs) -> ModuleOp:
    """The primal module of `f`, specialised to the example arguments' types.
    Global arrays `f` reads are arguments after its own, named after them."""
    args = bind_arguments(f, example_args, example_kwargs)
    return lowered(f, signature_of(f, args))[0]


# ---- grad / value_and_grad ------------------------------------------------------
_NDARRAY = np.ndarray


class _GradFunction:
    """The callable returned by grad / value_and_grad."""

    def __init__(
        self, f: Callable, argnums, with_value: bool, checkpoint: bool = False, backend: Backend | str = "python"
    ):
        self.f = f
        self.argnums = argnums
        self.with_value = with_value
        self.checkpoint = checkpoint
        self.backend = check_backend(backend)
        self.single = isinstance(argnums, numbers.Integral)
        self.__name__ = f"{'value_and_grad' if with_value else 'grad'}({name_of(f)})"
        self.__doc__ = getattr(f, "__doc__", None)
        # Python argument types determine the IR signature, so this cheap key
        # finds compiled code (its variants, by global arrays) without lowering.
        self._by_python_types: dict[tuple, list[Compiled]] = {}
        self._table = default_table()  # one table for the process; edits bump its version
        code = getattr(f, "__code__", None)
        plain = code is not None and not code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
        self._arity = code.co_argcount if plain else -1  # called with exactly these: no binding

    def _compiled(self, args: Sequence) -> tuple[Compiled, tuple]:
        """The compiled gradient for these arguments, and the hidden arrays' values."""
        key = (tuple(map(python_type, args)), default_table().version)
        variants = self._by_python_types.get(key)
        found = current(variants) if variants else None  # the common case: compiled, no closure made
        if found is not None:
            return found
        return variant(self._by_python_types.setdefault(key, []), lambda: self._compile(args)[0])

    def _compile(self, args: Sequence) -> tuple[Compiled, tuple]:
        signature = signature_of(self.f, tuple(args))
        wrt = normalise_argnums(self.f, self.argnums, signature)
        kind = "value_and_grad" if self.with_value else "grad"

        def build() -> Compiled:
            module, entry, hidden = gradient_module(
                self.f, signature, wrt, self.with_value, self.checkpoint, tape=self.backend.tape_form
            )
            return Compiled(module, compile_for(module, self.backend).function(entry), hidden=hidden)

        return cached((self.f, kind, wrt, signature, self.checkpoint, self.backend), build)

    def _irad_module(self, signature: tuple[Attribute, ...]) -> tuple[ModuleOp, str, HiddenGlobals]:
        """A fresh module computing this gradient, for a program that calls it
        (and so differentiates it again: higher order); its entry takes the
        global arrays f reads after `signature`."""
        wrt = normalise_argnums(self.f, self.argnums, signature)
        return gradient_module(
            self.f, signature, wrt, self.with_value, self.checkpoint, inline=False
        )

    @property
    def returns_tuple(self) -> bool:
        """Whether calls return a tuple (even of one gradient), for jacobians of this."""
        return self.with_value or not self.single

    def lower(self, *args, **kwargs) -> ModuleOp:
        """The differentiated, optimised module the backend runs for these argument types."""
        return self._compiled(bind_arguments(self.f, args, kwargs))[0].module

    def __call__(self, *args, **kwargs):
        # The per-call path: one Python frame before the compiled code (this
        # is _compiled, python_type and run_compiled, inline).
        if kwargs or len(args) != self._arity:
            args = bind_arguments(self.f, args, kwargs)
        key = []
        for a in args:
            key.append((_NDARRAY, a.dtype, a.shape) if isinstance(a, _NDARRAY) else type(a))
        variants = self._by_python_types.get((tuple(key), self._table.version))
        compiled = variants[0] if variants and len(variants) == 1 and not variants[0].hidden.globals else None
        if compiled is not None:
            try:
                results = compiled.run(*args)
            except RecursionError:
                results = run_deeper(compiled.run, args)
        else:  # global arrays to read, or not compiled yet
            compiled, hidden = self._compiled(args)
            results = run_compiled(compiled.run, (*args, *hidden))
        grads = results[1:] if self.with_value else results
        grads = grads[0] if self.single else tuple(grads)
        return (results[0], grads) if self.with_value else grads


def grad(
    f: Callable,
    argnums: int | Sequence[int] = 0,
    *,
    checkpoint: bool = False,
    backend: str = "python",
    iree_target: str | None = None,
    iree_device: str | None = None,
) -> _GradFunction:
    """The gradient of `f` (which returns one float) with respect to `argnums`.

    An int `argnums` gives one gradient; a tuple gives a tuple, as in jax.grad.
    `checkpoint=True` makes loops store only each iteration's inputs and
    recompute the body in the reverse sweep (less memory, more time; see
    docs/control-flow.md). `backend="native"` runs machine code compiled by
    upstream MLIR 22 and llvmlite, `backend="iree"` code compiled by IREE for
    `iree_target` ("llvm-cpu" by default, or "cuda", "rocm", "vulkan-spirv")
    run on `iree_device` (see docs/backends.md). Global arrays `f`
    reads are read at each call and never differentiated (see
    docs/python-subset.md).
    """
    backend = check_backend(backend, iree_target, iree_device)
    return _GradFunction(f, argnums, with_value=False, checkpoint=checkpoint, backend=backend)


def value_and_grad(
    f: Callable,
    argnums: int | Sequence[int] = 0,
    *,
    checkpoint: bool = False,
    backend: str = "python",
    iree_target: str | None = None,
    iree_device: str | None = None,
) -> _GradFunction:
    """Like `grad`, returning `(f(*args), gradient)`."""
    backend = check_backend(backend, iree_target, iree_device)
    return _GradFunction(f, argnums, with_value=True, checkpoint=checkpoint, backend=backend)


# Programs may apply these to functions: the frontend evaluates them while lowering.
grad._irad_transform = value_and_grad._irad_transform = True


# ---- vjp --------------------------------------------------------------------------
def vjp(
    f: Callable, *primals, backend: str = "python", iree_target: str | None = None, iree_device: str | None = None
):
    """`(out, pullback)`: `pullback(cotangent)` returns one cotangent per primal.

    The cotangent has the structure of `out`: a number, or a tuple of numbers
    for tuple outputs (cotangents of int outputs are ignored). Non-float
    primals get None. `backend` (and the IREE options) as for `grad`.
    """
    backend = check_backend(backend, iree_target, iree_device)
    primals = bind_arguments(f, primals, {})
    signature = signature_of(f, primals)
    active = tuple(is_differentiable(t) for t in signature)

    def build() -> Compiled:
        module, augmented, pullback, out_types, hidden = vjp_module(f, signature, backend.tape_form)
        compiled = compile_for(module, backend)
        pair = (compiled.function(augmented), compiled.function(pullback))
        return Compiled(module, pair, out_types, hidden)

    compiled, hidden = cached((f, "vjp", signature, backend), build)
    forward, backward = compiled.run
    out_types = compiled.out_types
    # the residuals the pullback gets hold what the global arrays were now
    results = run_compiled(forward, (*primals, *hidden))
    outputs, residuals = results[: len(out_types)], results[len(out_types) :]
    single = len(out_types) == 1

    def pullback(cotangent):
        cts = (cotangent,) if single else cotangent
        if not isinstance(cts, (tuple, list)) or len(cts) != len(out_types):
            shape = "one number" if single else f"a tuple of {len(out_types)} numbers"
            raise error_at(f, f"the pullback of {name_of(f)} takes {shape}, got {cotangent!r}")
        float_cts = []
        for i, (ct, t) in enumerate(zip(cts, out_types)):
            if not is_differentiable(t):
                continue
            float_cts.append(seed(f, "cotangent", i, ct, t))
        grads = iter(run_compiled(backward, (*residuals, *float_cts)))
        return tuple(next(grads) if a else None for a in active)

    return (outputs[0] if single else tuple(outputs)), pullback


# ---- jvp --------------------------------------------------------------------------
def jvp(
    f: Callable,
    primals: Sequence,
    tangents: Sequence,
    argnums=None,
    *,
    backend: str = "python",
    iree_target: str | None = None,
    iree_device: str | None = None,
):
    """`(f(*primals), tangent_out)`: forward mode along `tangents`.

    Without `argnums`, `tangents` has one entry per primal (None for an int or
    bool). With `argnums`, one tangent per entry of `argnums`. `tangent_out`
    has the structure of the output, with None for int or bool results.
    `backend` (and the IREE options) as for `grad`.
    """
    backend = check_backend(backend, iree_target, iree_device)
    for what, given_values in (("primals", primals), ("tangents", tangents)):
        if not isinstance(given_values, (tuple, list)):
            raise error_at(
                f, f"jvp of {name_of(f)} takes its {what} as a tuple, got {given_values!r}\n"
                f"  hint: irad.jvp(f, (x,), (dx,))"
            )
    primals = bind_arguments(f, tuple(primals), {})
    signature = signature_of(f, primals)
    tangents = tuple(tangents)
    if argnums is None:
        if len(tangents) != len(primals):
            raise error_at(
                f, f"jvp of {name_of(f)} takes one tangent per primal ({len(primals)}), "
                f"got {len(tangents)}\n  hint: None for int or bool arguments"
            )
        given = {i: t for i, t in enumerate(tangents) if is_differentiable(signature[i])}
        for i, t in enumerate(tangents):
            if i not in given and t is not None:
                raise error_at(f, f"argument {i} of {name_of(f)} is not a float: its tangent must be None")
    else:
        nums = normalise_argnums(f, argnums, signature)
        if len(tangents) != len(nums):
            raise error_at(f, f"jvp of {name_of(f)} takes one tangent per argnum ({len(nums)}), got {len(tangents)}")
        given = dict(zip(nums, tangents))
    given = {i: seed(f, "the tangent of argument", i, t, signature[i]) for i, t in given.items()}
    wrt = tuple(sorted(given))

    def build() -> Compiled:
        module, entry, out_types, hidden = jvp_module(f, signature, wrt)
        return Compiled(module, compile_for(module, backend).function(entry), out_types, hidden)

    compiled, hidden = cached((f, "jvp", wrt, signature, backend), build)
    results = run_compiled(compiled.run, (*primals, *(given[i] for i in wrt), *hidden))
    n = len(compiled.out_types)
    outputs, tangent_results = results[:n], iter(results[n:])
    tangent_out = tuple(
        next(tangent_results) if is_differentiable(t) else None for t in compiled.out_types
    )
    if n == 1:
        return outputs[0], tangent_out[0]
    return tuple(outputs), tangent_out


__all__ = ["grad", "jvp", "lower", "value_and_grad", "vjp"]
