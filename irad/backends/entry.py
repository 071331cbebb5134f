"""Call entries: the one Python function a gradient call runs.

The API (irad/api.py) asks the backend that compiled a signature for an
*entry*: a function, generated from source once per compiled signature, that
becomes the gradient's `__call__`. It checks the arguments cheaply (their
number, each one's exact class, an array's dtype and shape, the rule table's
version), runs the compiled code inline and returns the results in the
caller's structure. So the common call is one Python frame before the numpy
calls (the Python backend inlines the generated function's body) or the
ctypes call (the native backend inlines its caller). Anything the checks do
not vouch for (a new shape or dtype, keyword arguments, pytrees, bad
arguments, a RecursionError) goes to `plan.otherwise`, the API's general path,
which explains errors, compiles, and runs the code as before.

A backend builds the body (`Body`); `define` wraps it in the checks. A
backend without entries gets `generic` (the protocol's default,
protocol.py), which calls the compiled function.
(Not to be confused with the native backend's *entry* functions,
native/checks.py, the C functions its machine code is called through.)
"""

from __future__ import annotations

import itertools
import linecache
import string
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

import numpy as np

from irad.base.pytrees import INT64

_counter = itertools.count()


@dataclass(frozen=True)
class ArrayKind:
    """An ndarray argument of exactly this dtype and shape."""

    dtype: np.dtype
    shape: tuple[int, ...]


@dataclass(frozen=True)
class EntryPlan:
    """What an entry checks and returns, from the API's signature.

    `kinds`: per positional argument, its exact class (float, int, bool,
    np.float64, ...) or an ArrayKind. `results`: the returned expression, from
    `{0}`, `{1}`, ... (the compiled function's results, in order), over the
    names in `names`. `otherwise(self, args, kwargs)` is the general path.
    The entry is valid while `table.version == version` and `holds()` (the
    guards of the values the code baked in, irad/frontend/globals.py)."""

    kinds: tuple
    results: str
    otherwise: Callable
    table: object
    version: int
    names: dict = field(default_factory=dict, compare=False)
    holds: Callable | None = None


@dataclass(frozen=True)
class Body:
    """A backend's part of an entry: statements over the parameters (indented
    one level) that run the code and return `plan.results` of its results, or
    the general path's result for what they cannot run; and the names they
    use besides the generated module's."""

    lines: list[str]
    names: dict


def params(n: int) -> list[str]:
    return [f"a{i}" for i in range(n)]


def guard(plan: EntryPlan, names: Sequence[str], env: dict, checked: Collection[int] = ()) -> str:
    """The condition that the arguments `names` are of `plan.kinds`, but for
    the arrays at positions `checked`, which the body checks itself."""
    terms = []
    env["_e_ndarray"] = np.ndarray
    for i, (name, kind) in enumerate(zip(names, plan.kinds)):
        if isinstance(kind, ArrayKind) and i in checked:
            continue
        if isinstance(kind, ArrayKind):
            env[f"_e_dtype{i}"] = kind.dtype
            terms.append(f"type({name}) is _e_ndarray and {name}.dtype is _e_dtype{i} and {name}.shape == {kind.shape!r}")
        else:
            env[f"_e_class{i}"] = kind
            terms.append(f"type({name}) is _e_class{i}")
            if kind is int:  # larger ints are not i64 leaves
                terms.append(f"{INT64[0]} <= {name} < {INT64[1]}")
    return " and ".join(terms) or "True"


def define(
    plan: EntryPlan, names: Sequence[str], body: Body, namespace: dict, label: str, checked: Collection[int] = ()
) -> Callable:
    """The entry: `__call__(self, *args, **kwargs)`, its body run in
    `namespace` (the generated module's globals) with `body.names` and the
    plan's constants bound as closure variables."""
    env: dict = {"_e_otherwise": plan.otherwise, "_e_table": plan.table, "_e_version": plan.version,
                 **plan.names, **body.names}
    condition = guard(plan, names, env, checked)
    if plan.holds is not None:
        env["_e_holds"] = plan.holds
        condition = f"{condition} and _e_holds()"
    unpack = "".join(f"{n}, " for n in names)
    slow = "return _e_otherwise(_self, _args, _kwargs)"
    lines = [
        "def __call__(_self, *_args, **_kwargs):",
        f"    if _kwargs or len(_args) != {len(names)} or _e_table.version != _e_version:",
        f"        {slow}",
        *([f"    {unpack}= _args"] if names else []),
        f"    if not ({condition}):",
        f"        {slow}",
        *body.lines,
    ]
    source = "\n".join(
        [f"def _e_make({', '.join(env)}):", *(f"    {line}" for line in lines), "    return __call__", ""]
    )
    filename = f"<irad entry #{next(_counter)} {label}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    scope: dict = {}
    exec(compile(source, filename, "exec"), namespace, scope)
    return scope["_e_make"](**env)


class _Items:
    """`{k}` of `plan.results` as the k-th item of the tuple named `name`."""

    def __init__(self, name: str):
        self.name = name

    def __getitem__(self, k: int) -> str:
        return f"{self.name}[{k}]"


def generic(plan: EntryPlan, run: Callable, label: str) -> Callable:
    """An entry that calls the compiled function `run` (two frames)."""
    names = params(len(plan.kinds))
    results = string.Formatter().vformat(plan.results, _Items("_r"), {})
    body = Body(
        [
            "    try:",
            f"        _r = _e_run({', '.join(names)})",
            "    except RecursionError:",
            "        return _e_otherwise(_self, _args, _kwargs)",
            f"    return {results}",
        ],
        {"_e_run": run},
    )
    return define(plan, names, body, {}, label)


def is_internal(filename: str) -> bool:
    """Generated entries are irad's frames, not the caller's (irad/arguments.py)."""
    return filename.startswith("<irad")
