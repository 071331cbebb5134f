"""Compiled gradients: the cache (keyed by the rule table's version, so a rule
edit forces a recompile) and the argument checks the API, the Jacobians and
`irad.export` share.

Compiled code also depends on the global arrays the function reads (hidden
arguments, irad/frontend/globals.py), which are only known once it is
lowered: a key holds a list of variants, and a call takes the one whose
globals still have the dtypes and shapes it was compiled for, passing their
current values; none matching, it compiles another."""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute

from irad.backends.python import recursion_error
from irad.errors import IradError
from irad.frontend.globals import NO_GLOBALS, HiddenGlobals
from irad.frontend.source import def_location
from irad.gc_pause import gc_paused
from irad.ir.types import describe, is_differentiable, is_tensor
from irad.recursion import deep_recursion
from irad.rules import default_table


@dataclass(frozen=True)
class Compiled:
    module: ModuleOp
    run: Callable  # takes the arguments (and tangents), then the hidden arrays
    out_types: tuple[Attribute, ...] = ()
    hidden: HiddenGlobals = NO_GLOBALS


_CACHE: dict[tuple, list[Compiled]] = {}


def current(variants: list[Compiled]) -> tuple[Compiled, tuple] | None:
    """The variant compiled for the global arrays as they are now, and their values."""
    for compiled in variants:
        values = compiled.hidden.read()
        if values is not None:
            return compiled, values
    return None


def variant(variants: list[Compiled], build: Callable[[], Compiled]) -> tuple[Compiled, tuple]:
    """`current(variants)`, or else a new variant built and added to them."""
    found = current(variants)
    if found is None:
        compiled = build()
        found = current([compiled])
        if found is None:  # a global array changed while it was compiled
            raise IradError(f"the global arrays {compiled.hidden.reader} reads changed shape while it was compiled")
        variants.append(compiled)
    return found


def cached(key: tuple, build: Callable[[], Compiled]) -> tuple[Compiled, tuple]:
    """The compiled code for `key` and the current values of its hidden arrays."""
    variants = _CACHE.setdefault((*key, default_table().version), [])

    def build_paused() -> Compiled:
        with gc_paused():
            return build()

    return variant(variants, build_paused)


def name_of(f) -> str:
    return getattr(f, "__name__", repr(f))


def error_at(f, message: str) -> IradError:
    """An error about how `f` is called, located at its `def`."""
    return IradError(def_location(f) + message)


def normalise_argnums(f, argnums, signature) -> tuple[int, ...]:
    single = isinstance(argnums, numbers.Integral) and not isinstance(argnums, bool)
    if single:
        nums = (argnums,)
    elif isinstance(argnums, Sequence) and not isinstance(argnums, str):
        nums = tuple(argnums)
    else:
        raise error_at(f, f"argnums must be an int or a tuple of ints, got {argnums!r}")
    if not nums:
        raise error_at(f, f"argnums of {name_of(f)} is empty")
    out = []
    for n in nums:
        if isinstance(n, bool) or not isinstance(n, numbers.Integral):
            raise error_at(f, f"argnums must be an int or a tuple of ints, got {argnums!r}")
        if not -len(signature) <= n < len(signature):
            raise error_at(
                f,
                f"argnums {argnums!r} is out of range for {name_of(f)}, "
                f"which was called with {len(signature)} arguments"
            )
        n = int(n) % len(signature)
        if not is_differentiable(signature[n]):
            raise error_at(
                f,
                f"cannot differentiate {name_of(f)} with respect to argument {n}: "
                f"it is {describe(signature[n])}, not a float\n"
                "  hint: pass a float, or leave it out of argnums"
            )
        out.append(n)
    if len(set(out)) != len(out):
        raise error_at(f, f"argnums {argnums!r} repeats an argument")
    return tuple(out)


def python_type(value) -> object:
    """What decides an argument's IR type: its Python type; for an array also
    its dtype and shape (a function is specialised per static shape)."""
    if isinstance(value, np.ndarray):
        return (np.ndarray, value.dtype, value.shape)  # dtypes hash and compare by value
    return type(value)


def run_compiled(fn: Callable, args: Sequence):
    """Run compiled code; generated functions call each other as Python
    functions, so a deep call chain may need a higher recursion limit. Beyond
    that, the recursion is an error naming the function, as natively."""
    try:
        return fn(*args)
    except RecursionError:
        return run_deeper(fn, args)


def run_deeper(fn: Callable, args: Sequence):
    """`run_compiled` after `fn(*args)` raised RecursionError: again, with a
    higher recursion limit."""
    with deep_recursion():
        try:
            return fn(*args)
        except RecursionError as exc:
            error = recursion_error(exc)
            if error is None:
                raise
    raise error


def seed(f, what: str, i: int, value, t: Attribute):
    """A cotangent or tangent the caller passes for a value of type `t`: a real
    number for a float, a real array of its shape for an array."""
    if is_tensor(t):
        shape = tuple(t.get_shape())
        array = np.asarray(value)
        if array.shape != shape or array.dtype.kind not in "fiu":
            raise error_at(f, f"{what} {i} of {name_of(f)} must be a real array of shape {shape}, got {value!r}")
        return array
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise error_at(f, f"{what} {i} of {name_of(f)} must be a real number, got {value!r}")
    return float(value)
