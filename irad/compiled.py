"""Compiled gradients: the cache (keyed by the rule table's version, so a rule
edit forces a recompile, and by the switches of irad.config that enter the
cache key, so a change of one does too). The argument checks the API, the Jacobians and
`irad.export` share are in irad/arguments.py.

Compiled code also depends on the global arrays the function reads (hidden
arguments, irad/frontend/globals.py), which are only known once it is
lowered: a key holds a list of variants, and a call takes the one whose
globals still have the dtypes and shapes it was compiled for, passing their
current values; none matching, it compiles another."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute

from irad.backends.protocol import CompiledModule
from irad.base import config
from irad.base.errors import IradError
from irad.frontend.globals import NO_GLOBALS, HiddenGlobals
from irad.base.pytrees import Tree
from irad.base.gc_pause import gc_paused
from irad.base.stack_chunk import in_large_chunk
from irad.base.recursion import deep_recursion
from irad.rules import default_table


@dataclass(frozen=True)
class Compiled:
    module: ModuleOp
    run: Callable  # takes the arguments (and tangents), then the hidden arrays
    out_types: tuple[Attribute, ...] = ()
    hidden: HiddenGlobals = NO_GLOBALS
    results: Tree | None = None  # the tree of f's results (leaves: out_types)
    code: CompiledModule | None = None  # what the backend compiled, `run` among its functions
    # a call entry for an EntryPlan (irad/backends/entry.py), and those made, by plan
    enter: Callable | None = None
    entries: dict = field(default_factory=dict, compare=False, repr=False)


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
    key = (*key, default_table().version, config.cache_key())
    try:
        variants = _CACHE.setdefault(key, [])
    except TypeError:  # an unhashable callable (a dataclass with __call__): known by identity
        variants = _CACHE.setdefault(tuple(_Identity(k) if _unhashable(k) else k for k in key), [])

    def build_paused() -> Compiled:
        with gc_paused():
            return in_large_chunk(build)

    return variant(variants, build_paused)


@dataclass(frozen=True, eq=False)
class _Identity:
    """A key part standing for an unhashable object, equal only to itself (it
    keeps the object alive, as the compiled code it keys does)."""

    obj: object

    def __eq__(self, other) -> bool:
        return isinstance(other, _Identity) and other.obj is self.obj

    def __hash__(self) -> int:
        return id(self.obj)


def _unhashable(obj) -> bool:
    try:
        hash(obj)
    except TypeError:
        return True
    return False


def run_compiled(fn: Callable, args: Sequence, code: CompiledModule):
    """Run `fn`, a function of `code`. Generated functions may call each
    other as Python functions, so a deep call chain may need a higher
    recursion limit; beyond that, the backend says what the recursion means
    (an error naming the function, as natively)."""
    try:
        return fn(*args)
    except RecursionError:
        return run_deeper(fn, args, code)


def run_deeper(fn: Callable, args: Sequence, code: CompiledModule):
    """`run_compiled` after `fn(*args)` raised RecursionError: again, with a
    higher recursion limit."""
    with deep_recursion():
        try:
            return fn(*args)
        except RecursionError as exc:
            error = code.recursion_error(exc)
            if error is None:
                raise
    raise error
