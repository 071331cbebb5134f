"""jax.numpy, jax.scipy and jax.nn called inside a program.

A program written for JAX calls `jnp.tanh`, `jax.scipy.special.logsumexp` or
`jax.nn.softmax`. Their Python source is JAX's tracing machinery, which irad
cannot lower; their meaning is numpy's or scipy's function of the same name
(JAX's mirrors them), computed as JAX does with `jax_enable_x64`. So a call
resolves to that function, and irad's table lowers it; jax.nn's functions, which
have no numpy twin, and jnp.linalg's that symmetrise their input, are written in
irad's Python subset (irad/jax_python.py). A JAX function with no counterpart is refused by its own name.
Where JAX's default differs only out of range (jnp.take fills an index out of
range with NaN), irad's run-time check fails as numpy's IndexError does.
"""

from __future__ import annotations

import sys
import types

import numpy as np

# (JAX's module, the module whose function of the same name it mirrors, the
# names mirrored: None for all, or JAX's name -> the twin's; the first entry
# for a function counts)
_MIRRORS = (
    ("jax.numpy", "numpy", None),
    ("jax.numpy.linalg", "irad.jax_python", ("cholesky", "eigh", "eigvalsh")),  # they symmetrise first
    ("jax.numpy.linalg", "numpy.linalg", None),
    ("jax.numpy.fft", "numpy.fft", None),
    ("jax.scipy.special", "scipy.special", None),
    ("jax.scipy.linalg", "scipy.linalg", None),
    ("jax.scipy.stats.norm", "scipy.stats.norm", None),
    ("jax.nn", "irad.jax_python", None),
    ("jax", "irad", ("grad", "value_and_grad", "jacfwd", "jacrev", "hessian", "vmap", "jvp", "vjp")),
    ("jax.lax", "irad", ("stop_gradient",)),
    ("jax.tree_util", "irad.jax_python", ("tree_map", "tree_leaves")),
    ("jax.tree", "irad.jax_python", {"map": "tree_map", "leaves": "tree_leaves"}),
)

# The hint for JAX's functions that have no counterpart
_REWRITES = {
    "jax.lax.fori_loop": "write a Python for loop over range(lower, upper)",
    "jax.lax.scan": "write a Python for loop that appends each step's output to a list, then np.stack it",
    "jax.lax.cond": "write if/else (np.where for arrays)",
    "jax.lax.switch": "write if/elif on the index",
    "jax.lax.while_loop": "write a Python while loop",
    "jax.lax.select": "write np.where",
    "jax.jit": "call the function itself: irad compiles the whole program",
    "jax.checkpoint": "call the function itself",
}

_RANDOM = ("draw the numbers outside the program and pass them in (noise = jax.random.normal(key, shape), "
           "then loss(w, x, noise)): a compiled program is a function of its arguments")

# id -> (JAX's object, its public name, the module of its counterpart, the
# counterpart's name), for the JAX modules imported so far
_table: dict[int, tuple[object, str, str, str]] = {}
_seen: set = set()  # the public names and (module, twin) pairs entered
_modules_seen = 0  # len(sys.modules) at the last scan: no import since, nothing new


def _module(path: str):
    """The module at `path`, or the object there (scipy.stats.norm); None if
    it cannot be imported."""
    import importlib

    try:
        return importlib.import_module(path)
    except ImportError:
        parent, _, name = path.rpartition(".")
        try:
            return getattr(importlib.import_module(parent), name, None) if parent else None
        except ImportError:
            return None


def _add_imported() -> None:
    """Enter the functions of the JAX modules imported since the last call (a
    program can only reach those); their counterparts are imported when called."""
    global _modules_seen
    if len(sys.modules) == _modules_seen:
        return
    _modules_seen = len(sys.modules)
    for public, rewrite in _REWRITES.items():  # first, so that jax.lax.cond is named by its public name
        module, _, name = public.rpartition(".")
        if module in sys.modules and public not in _seen:
            _seen.add(public)
            obj = getattr(sys.modules[module], name, None)
            if obj is not None:
                _table[id(obj)] = (obj, public, "", "")
    for jax_module, twin_module, names in _MIRRORS:
        source = sys.modules.get(jax_module)
        if source is None or (jax_module, twin_module) in _seen:
            continue
        _seen.add((jax_module, twin_module))
        renamed = names if isinstance(names, dict) else {}
        for name in names or dir(source):
            obj = getattr(source, name, None)
            if name.startswith("_") or not callable(obj) or isinstance(obj, type) or id(obj) in _table:
                continue
            _table[id(obj)] = (obj, f"{jax_module}.{name}", twin_module, renamed.get(name, name))


def mirror(obj) -> tuple[str, object, str | None] | None:
    """(JAX's public name, the numpy/scipy/irad function it mirrors or None,
    what to write instead) if `obj` is one of JAX's functions; None for any
    other object."""
    if "jax" not in sys.modules:
        return None  # not imported: obj cannot be one of JAX's
    module = getattr(obj, "__module__", None) or ""
    if module.split(".")[0] not in ("jax", "jaxlib"):
        return None
    if isinstance(obj, type):  # jnp.float32(x), jnp.bool_(b): numpy's scalar types
        dtype = getattr(obj, "dtype", None)
        if not isinstance(dtype, np.dtype):
            return None
        return f"jax.numpy.{obj.__name__}", dtype.type if dtype.type.__module__ == "numpy" else None, None
    _add_imported()
    owner = getattr(obj, "__self__", None)
    if isinstance(obj, types.MethodType) and owner is not None and id(owner) in _table:
        return _ufunc_method(owner, obj.__name__)
    entry = _table.get(id(obj))
    if entry is None or entry[0] is not obj:
        name = getattr(obj, "__name__", type(obj).__name__)
        if module.startswith(("jax.random", "jax._src.random")):
            return f"jax.random.{name}", None, _RANDOM
        return f"{module}.{name}", None, None
    _, public, twin_module, name = entry
    counterpart = getattr(_module(twin_module), name, None) if twin_module else None
    return public, counterpart if callable(counterpart) else None, _REWRITES.get(public)


def _ufunc_method(ufunc, method: str) -> tuple[str, object, str | None]:
    """jnp.add.outer is np.add.outer; JAX's jnp.add.at returns a new array
    where numpy's updates in place."""
    name, counterpart, _ = mirror(ufunc)
    if method == "at":
        return f"{name}.at", None, "write x.at[indices].add(v): a new array, as JAX's jnp.add.at gives"
    return f"{name}.{method}", getattr(counterpart, method, None), None
