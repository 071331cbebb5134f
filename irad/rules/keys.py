"""Rule-table keys of Python callables: `module.qualname`, e.g. "math.sin"."""

from __future__ import annotations

import functools
import itertools
import math
import sys
import types

import numpy as np

from irad import functional_python, numerics, numpy_python

# Library functions irad implements in its own Python subset (lowered from source).
IMPLEMENTED_IN_PYTHON: dict[object, object] = {
    divmod: numerics.divmod_,
    math.hypot: numerics.hypot,
    math.lgamma: numerics.lgamma,
    math.gamma: numerics.gamma,
    math.prod: functional_python.prod,
    math.dist: functional_python.dist,
    functools.reduce: functional_python.reduce,
    map: functional_python.map_,
    itertools.accumulate: functional_python.accumulate,
    itertools.product: functional_python.product,
    itertools.combinations: functional_python.combinations,
    itertools.combinations_with_replacement: functional_python.combinations_with_replacement,
    itertools.permutations: functional_python.permutations,
    np.cov: numpy_python.cov,
    np.corrcoef: numpy_python.corrcoef,
    np.convolve: numpy_python.convolve,
    np.quantile: numpy_python.quantile,
    np.percentile: numpy_python.percentile,
    np.linalg.lstsq: numpy_python.lstsq,
    np.searchsorted: numpy_python.searchsorted,
    np.digitize: numpy_python.digitize,
    np.isclose: numpy_python.isclose,
    np.allclose: numpy_python.allclose,
    np.block: numpy_python.block,
    np.apply_along_axis: numpy_python.apply_along_axis,
    np.vectorize: numpy_python.vectorize,
}


# Libraries whose callables are named by the public module a program reaches
# them through: a scipy.special ufunc has no __module__, scipy.special.logsumexp
# is defined in scipy.special._logsumexp, and scipy.stats.norm.cdf is a method
# of the object scipy.stats.norm.
PUBLICLY_NAMED = ("scipy",)


def library_name(obj: object) -> str | None:
    """`scipy.special.expit`, `scipy.stats.norm.cdf`: the public name of a
    callable of a library of PUBLICLY_NAMED; None for any other object."""
    if not any(library in sys.modules for library in PUBLICLY_NAMED):
        return None  # not imported: obj cannot be one of theirs
    if isinstance(obj, types.MethodType):
        owner = _public_name(obj.__self__)
        return None if owner is None else f"{owner}.{obj.__name__}"
    return _public_name(obj)


def _public_name(obj: object) -> str | None:
    try:
        module = getattr(obj, "__module__", None)
    except Exception:  # an object whose attributes raise is nobody's library function
        return None
    if module is None and type(obj).__name__ == "ufunc":  # scipy.special's ufuncs have none
        name = getattr(obj, "__name__", "")
        for library in PUBLICLY_NAMED:
            special = sys.modules.get(f"{library}.special")
            if special is not None and getattr(special, name, None) is obj:
                return f"{library}.special.{name}"
        return None
    if not isinstance(module, str) or module.split(".")[0] not in PUBLICLY_NAMED:
        return None
    public = module.split(".")
    public = ".".join(public[:next((i for i, p in enumerate(public) if p.startswith("_")), len(public))])
    namespace = sys.modules.get(public)
    name = getattr(obj, "__name__", None)
    if namespace is not None and not (isinstance(name, str) and getattr(namespace, name, None) is obj):
        # an object (scipy.stats.norm) or an alias: the name the namespace gives it
        name = next((k for k, v in vars(namespace).items() if v is obj and not k.startswith("_")), name)
    if not isinstance(name, str):
        name = type(obj).__qualname__  # an instance the namespace does not hold
    return f"{public}.{name}"


def target_key(obj: object) -> str:
    """The rule-table name of a callable: `module.qualname`, e.g. "math.sin".

    A library function irad implements in Python is named after that
    implementation, which is what the frontend calls; a scipy function by its
    public name (`library_name`). Strings name IR-level
    targets (a function symbol) as they are.
    """
    if isinstance(obj, str):
        return obj
    public = library_name(obj)
    if public is not None:
        return public
    obj = IMPLEMENTED_IN_PYTHON.get(obj, obj)
    module = getattr(obj, "__module__", None) or "builtins"
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or repr(obj)
    return f"{module}.{name}"
