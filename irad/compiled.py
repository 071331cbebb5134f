"""Compiled gradients: the cache (keyed by the rule table's version, so a rule
edit forces a recompile, and by the switches of irad.config that enter the
cache key, so a change of one does too). The argument checks the API, the Jacobians and
`irad.export` share are in irad/arguments.py.

Compiled code also depends on the global arrays the function reads (hidden
arguments, irad/frontend/globals.py), which are only known once it is
lowered: a key holds a list of variants, and a call takes the one whose
globals still have the dtypes and shapes it was compiled for, and whose
guards hold (the numbers, strings, containers' layouts and functions it
baked in are still those it read), passing the arrays' current values; none
matching, it compiles another."""

from __future__ import annotations

import threading
import warnings
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute

from irad.backends.protocol import CompiledModule
from irad.base import config, progress
from irad.base.errors import IradError, IradWarning
from irad.frontend.globals import NO_GLOBALS, HiddenGlobals
from irad.frontend.source import name_of
from irad.frontend.transformations import Transformation
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


# The function a key is about (the innermost, for a transformation of a
# transformation) -> {the rest of the key: its variants}. Weak in the function,
# so the code compiled for a function nobody holds (a lambda made at each step
# of a loop) is freed with it.
_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_HELD: dict = {}  # the same, for functions that cannot be referenced weakly


def _keys_of(f) -> tuple[dict, object]:
    """The keys of `f`'s root function, and what `f` is apart from it (held by
    its keys, which must not hold the root)."""
    root, around = f, []
    while isinstance(root, Transformation):
        around.append((type(root).__name__, root.kind, root.identity()[2:]))
        root = root.f
    try:
        return _CACHE.setdefault(root, {}), tuple(around)
    except TypeError:  # not weakly referable, or unhashable (a dataclass with __call__: by identity)
        return _HELD.setdefault(_Identity(root) if _unhashable(root) else root, {}), tuple(around)


def wait_optimised(f, kind: str, timeout: float | None = None) -> bool:
    """Wait until the code compiled so far for the transformation `kind` of
    `f` (key[0] and key[1] of `cached`'s keys) runs its final code (native:
    -O2, tiers.py); False if a background compile failed (its calls keep
    running the quicker code, with the same results)."""
    keys, around = _keys_of(f)
    codes = {id(c.code): c.code for rest, variants in list(keys.items()) if rest[:2] == (around, kind)
             for c in variants if c.code is not None}
    return all([code.wait_optimised(timeout) for code in codes.values()])


def current(variants: list[Compiled]) -> tuple[Compiled, tuple] | None:
    """The variant compiled for the global arrays as they are now, and their values."""
    for compiled in variants:
        values = compiled.hidden.read()
        if values is not None:
            return compiled, values
    return None


# Held while compiling: the frontend, the rule table's lazily built rules and the
# caches are not made for two threads at once. A gradient's first calls from
# several threads compile it once (the others then find it); running compiled
# code takes no lock.
_COMPILING = threading.RLock()


MAX_VARIANTS = 8  # per key: a value that changes at every call must not fill the memory


def variant(variants: list[Compiled], build: Callable[[], Compiled]) -> tuple[Compiled, tuple]:
    """`current(variants)`, or else a new variant built and added to them (the
    oldest dropped beyond MAX_VARIANTS, with a warning naming what changed)."""
    found = current(variants)
    if found is not None:
        return found
    with _COMPILING:
        found = current(variants)  # another thread may have compiled it meanwhile
        if found is not None:
            return found
        compiled = build()
        found = current([compiled])
        if found is None:  # a global changed while it was compiled
            raise IradError(f"the globals {compiled.hidden.reader} reads changed while it was compiled")
        if len(variants) >= MAX_VARIANTS:
            _warn_recompiles(variants[-1])
            del variants[0]
        variants.append(compiled)
    return found


def _warn_recompiles(last: Compiled) -> None:
    changed = ", ".join(last.hidden.guards.changed()) or "the global arrays' dtypes or shapes"
    warnings.warn(
        f"irad: {last.hidden.reader} was compiled {MAX_VARIANTS} times for new values of {changed}, "
        "which it reads from outside its arguments and bakes in; pass a value that keeps changing "
        "as an argument (docs/python-subset.md#values-read-from-outside-guards)",
        IradWarning,
        stacklevel=4,
    )


def cached(key: tuple, build: Callable[[], Compiled]) -> tuple[Compiled, tuple]:
    """The compiled code for `key` and the current values of its hidden arrays."""
    def build_paused() -> Compiled:
        with gc_paused(), progress.compiling(f"{key[1]} of {name_of(key[0])}"):
            return in_large_chunk(build)

    keys, around = _keys_of(key[0])
    variants = keys.setdefault((around, *key[1:], default_table().version, config.cache_key()), [])
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
    (an error naming the function, as natively). Then the backend may start
    what it left for after the first call (CompiledModule.called)."""
    try:
        return fn(*args)
    except RecursionError:
        return run_deeper(fn, args, code)
    finally:
        code.called()


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
