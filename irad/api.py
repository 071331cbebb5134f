"""The Python API: lower, grad, value_and_grad, vjp.

Each transformation lowers the function for the example arguments' types,
runs `irad-differentiate` and `irad-optimize`, and compiles the result with
the default (Python) backend. Compiled code is cached per function, argument
signature and rule-table version, so a rule edit forces a recompile.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, StringAttr
from xdsl.ir import Attribute, Block, Region

from irad.backends.python import compile_module
from irad.dialect import GradOp, ValueAndGradOp, make_context
from irad.errors import IradError, UnsupportedError
from irad.frontend import lower_function, signature_of
from irad.frontend.types import describe, is_float
from irad.passes.differentiate import Differentiator
from irad.passes.optimize import OptimizePass
from irad.passes.symbol_dce import SymbolDCEPass
from irad.rules import default_table


def lower(f: Callable, *example_args) -> ModuleOp:
    """The primal module of `f`, specialised to the example arguments' types."""
    module, _ = lower_function(f, signature_of(f, example_args))
    return module


def _normalise_argnums(f, argnums, signature) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not nums:
        raise IradError(f"argnums of {f.__name__} is empty")
    out = []
    for n in nums:
        if not isinstance(n, int) or not -len(signature) <= n < len(signature):
            raise IradError(
                f"argnums {argnums!r} is out of range for {f.__name__}, "
                f"which was called with {len(signature)} arguments"
            )
        n %= len(signature)
        if not is_float(signature[n]):
            raise IradError(
                f"cannot differentiate {f.__name__} with respect to argument {n}: "
                f"it is {describe(signature[n])}, not a float\n"
                "  hint: pass a float, or leave it out of argnums"
            )
        out.append(n)
    if len(set(out)) != len(out):
        raise IradError(f"argnums {argnums!r} repeats an argument")
    return tuple(out)


@functools.cache
def _context():
    return make_context()


def _optimise(module: ModuleOp) -> None:
    OptimizePass().apply(_context(), module)
    SymbolDCEPass().apply(_context(), module)
    module.verify()


def _make_private(module: ModuleOp, name: str) -> None:
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == name:
            op.sym_visibility = StringAttr("private")


def _entry_result_type(f, module: ModuleOp, name: str) -> Attribute:
    fn = module.body.block.ops
    outputs = next(op for op in fn if isinstance(op, func.FuncOp) and op.sym_name.data == name)
    outputs = outputs.function_type.outputs.data
    if len(outputs) != 1 or not is_float(outputs[0]):
        shown = ", ".join(describe(t) for t in outputs) or "nothing"
        raise IradError(
            f"{f.__name__} must return one float to take its gradient, but returns {shown}\n"
            "  hint: use irad.vjp for functions with several outputs"
        )
    return outputs[0]


def gradient_module(
    f: Callable, signature: tuple[Attribute, ...], wrt: tuple[int, ...], with_value: bool
) -> tuple[ModuleOp, str]:
    """The differentiated, optimised module and the name of its entry function."""
    module, name = lower_function(f, signature)
    _make_private(module, name)  # the request wrapper below is the public entry
    out_type = _entry_result_type(f, module, name)
    kind = "value_and_grad" if with_value else "grad"
    entry_name = f"{name}.{kind}"
    block = Block(arg_types=signature)
    result_types = ([out_type] if with_value else []) + [signature[i] for i in wrt]
    request = (ValueAndGradOp if with_value else GradOp)(name, block.args, wrt, result_types)
    block.add_op(request)
    block.add_op(func.ReturnOp(*request.results))
    module.body.block.add_op(
        func.FuncOp(entry_name, FunctionType.from_lists(signature, result_types), Region(block))
    )
    Differentiator(module, default_table()).rewrite_requests()
    _optimise(module)
    return module, entry_name


@dataclass
class _Compiled:
    module: ModuleOp
    run: Callable


_CACHE: dict[tuple, _Compiled] = {}


def _cached(key: tuple, build: Callable[[], _Compiled]) -> _Compiled:
    key = (*key, default_table().version)
    compiled = _CACHE.get(key)
    if compiled is None:
        compiled = _CACHE[key] = build()
    return compiled


class _GradFunction:
    """The callable returned by grad / value_and_grad."""

    def __init__(self, f: Callable, argnums, with_value: bool):
        self.f = f
        self.argnums = argnums
        self.with_value = with_value
        self.__name__ = f"{'value_and_grad' if with_value else 'grad'}({getattr(f, '__name__', f)})"
        self.__doc__ = getattr(f, "__doc__", None)

    def _compiled(self, args: Sequence) -> tuple[_Compiled, tuple[int, ...]]:
        signature = signature_of(self.f, tuple(args))
        wrt = _normalise_argnums(self.f, self.argnums, signature)

        def build() -> _Compiled:
            # the request op wants increasing indices; results come back in argnums order
            ordered = tuple(sorted(wrt))
            module, entry = gradient_module(self.f, signature, ordered, self.with_value)
            run = compile_module(module).function(entry)
            offset = 1 if self.with_value else 0
            picks = list(range(offset)) + [offset + ordered.index(i) for i in wrt]
            return _Compiled(module, lambda *args: [run(*args)[k] for k in picks])

        key = (self.f, "value_and_grad" if self.with_value else "grad", wrt, signature)
        return _cached(key, build), wrt

    def lower(self, *args) -> ModuleOp:
        """The differentiated, optimised module the backend runs for these argument types."""
        return self._compiled(args)[0].module

    def __call__(self, *args):
        compiled, _ = self._compiled(args)
        results = compiled.run(*args)
        if self.with_value:
            value, grads = results[0], results[1:]
        else:
            grads = results
        grads = grads[0] if isinstance(self.argnums, int) else tuple(grads)
        return (value, grads) if self.with_value else grads


def grad(f: Callable, argnums: int | Sequence[int] = 0) -> _GradFunction:
    """The gradient of `f` (which returns one float) with respect to `argnums`.

    An int `argnums` gives one gradient; a tuple gives a tuple, as in jax.grad.
    """
    return _GradFunction(f, argnums, with_value=False)


def value_and_grad(f: Callable, argnums: int | Sequence[int] = 0) -> _GradFunction:
    """Like `grad`, returning `(f(*args), gradient)`."""
    return _GradFunction(f, argnums, with_value=True)


def vjp(f: Callable, *primals):
    """`(out, pullback)`: `pullback(cotangent)` returns one cotangent per primal.

    The cotangent has the structure of `out` (a number, or a tuple for tuple
    outputs). Non-float primals get None.
    """
    signature = signature_of(f, primals)
    active = tuple(is_float(t) for t in signature)

    def build() -> _Compiled:
        module, name = lower_function(f, signature)
        primal = next(op for op in module.ops if op.sym_name.data == name)
        out_types = primal.function_type.outputs.data
        gen = Differentiator(module, default_table()).reverse(name, active)
        _make_private(module, name)
        for op in module.ops:  # the generated pair is the public interface here
            if op.sym_name.data in (gen.augmented, gen.pullback):
                op.sym_visibility = None
        _optimise(module)
        compiled = compile_module(module)
        run = (compiled.function(gen.augmented), compiled.function(gen.pullback), out_types)
        return _Compiled(module, run)

    forward, backward, out_types = _cached((f, "vjp", signature), build).run
    results = forward(*primals)
    n_out = len(out_types)
    outputs, residuals = results[:n_out], results[n_out:]
    out = outputs[0] if n_out == 1 else tuple(outputs)

    def pullback(cotangent):
        cts = (cotangent,) if n_out == 1 else tuple(cotangent)
        if len(cts) != n_out:
            raise IradError(
                f"the pullback of {f.__name__} takes {n_out} cotangents, got {len(cts)}"
            )
        float_cts = [float(c) for c, t in zip(cts, out_types) if is_float(t)]
        grads = iter(backward(*residuals, *float_cts))
        return tuple(next(grads) if a else None for a in active)

    return out, pullback


__all__ = ["grad", "lower", "value_and_grad", "vjp"]
