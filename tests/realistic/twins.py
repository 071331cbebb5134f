"""The JAX twin of a program: the same source, executed again with `np` bound to
jax.numpy and scipy's functions to jax.scipy's, so a program is written once and
checked against JAX in float64 without a second copy."""

from __future__ import annotations

import functools
import sys
import types
from pathlib import Path

import numpy
import scipy.special
import scipy.stats

import irad

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import jax.scipy.special  # noqa: E402
import jax.scipy.stats  # noqa: E402


class _JaxNumpy(types.ModuleType):
    """jax.numpy, with numpy's errstate (a no-op for JAX) that jax.numpy lacks."""

    errstate = numpy.errstate

    def __getattr__(self, name):
        return getattr(jnp, name)


JAX_NUMPY = _JaxNumpy("jax.numpy")


def twin(function):
    """The function of the same name in the JAX copy of `function`'s module (a
    functools.partial becomes a partial of the twin)."""
    if isinstance(function, functools.partial):
        return functools.partial(twin(function.func), *function.args, **function.keywords)
    if isinstance(function, types.MethodType):
        return types.MethodType(twin(function.__func__), function.__self__)
    if not isinstance(function, types.FunctionType):  # a callable object: its class's __call__
        return types.MethodType(twin(type(function).__call__), function)
    namespace = _jax_module(sys.modules[function.__module__].__file__)
    target = namespace
    for part in function.__qualname__.split("."):
        target = target[part] if isinstance(target, dict) else getattr(target, part)
    return target


@functools.cache
def _jax_module(path: str) -> dict:
    namespace = {"__name__": Path(path).stem + "_jax_twin"}
    exec(compile(Path(path).read_text(), path, "exec"), namespace)
    for name, value in list(namespace.items()):
        if value is irad:
            namespace[name] = jax
        elif value is numpy:
            namespace[name] = JAX_NUMPY
        elif value is scipy.special:
            namespace[name] = jax.scipy.special
        elif value is scipy.stats.norm:
            namespace[name] = jax.scipy.stats.norm
        elif value is getattr(scipy.special, name, None) and not isinstance(value, types.ModuleType):
            namespace[name] = getattr(jax.scipy.special, name)
    return namespace
