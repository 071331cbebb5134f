"""Functions the program made (a lambda, a nested def, a functools.partial)
given to a transformation inside the program: `irad.grad(lambda a: loss(a, y))(x)`
and the pullback of `irad.vjp(lambda a: ..., x)` (program_vjp.py).

A transformation's function is known while lowering, but such a function holds
run-time values (what it captured). It is passed instead as the first argument
of `apply_function`, which the transformation differentiates with `argnums`
shifted by one: the function is an argument it does not differentiate
(`made_function_argument`), its captured values among the arguments of the
derivative's entry, so the program's own derivative goes through them.

As in Python, a transformed lambda reads its variables when the derivative is
called (`g = irad.grad(lambda a: a * c); c = 2.0; g(x)` uses the new `c`, as
JAX's does); irad.vjp calls f at once, so its pullback keeps what f read then.
"""

from __future__ import annotations

import ast
import inspect
import numbers

from xdsl.ir import SSAValue

from irad.frontend.callables import Closure, Partial, flatten, rebuild
from irad.frontend.transformations import Transformation
from irad.frontend.values import Static


def apply_function(function, *args):
    """What the transformation of a function the program made differentiates."""
    return function(*args)


def is_made_function(value) -> bool:
    return isinstance(value, (Closure, Partial))


def bound(fl, function):
    """`function` with what it reads from its definer fixed now."""
    leaves: list[SSAValue] = []
    return rebuild(flatten(function, leaves, fl.calls.bind_closure), iter(leaves))


def made_function_argument(t: Transformation, i: int, value, n_args: int) -> bool:
    """Is argument `i` of a call to the transformation `t` (of `n_args`) a
    function the program made that `t` does not differentiate?"""
    if not is_made_function(value):
        return False
    nums = (t.argnums,) if isinstance(t.argnums, numbers.Integral) else tuple(t.argnums)
    return i not in {n % n_args for n in nums}


def transform_made_function(fl, node: ast.Call, transform, args: list, kwargs: dict) -> Partial:
    """`transform(f, *args[1:], **kwargs)` for a function f the program made:
    apply_function's transformation, applied to f."""
    parameters = inspect.signature(transform).parameters
    name = getattr(transform, "__name__", "the transformation")
    if "argnums" not in parameters or "static_argnames" in kwargs:
        raise fl.src.error(
            node, f"irad.{name} of a lambda or nested def inside a program "
            + ("takes no static_argnames" if "argnums" in parameters else "is not supported"),
            "define the function at module level and pass the values it reads as arguments",
        )
    bound_arguments = inspect.signature(transform).bind(apply_function, *args[1:], **kwargs)
    given = bound_arguments.arguments
    given["argnums"] = _shifted(given.get("argnums", parameters["argnums"].default))
    if "static_argnums" in given:
        given["static_argnums"] = _shifted(given["static_argnums"])
    made = transform(*bound_arguments.args, **bound_arguments.kwargs)
    return Partial(Static(made), (args[0],))  # bound when called (calls.shape_of)


def _shifted(nums):
    """argnums of f as argnums of apply_function (f its first argument)."""
    if isinstance(nums, numbers.Integral):
        return nums + 1 if nums >= 0 else nums
    return type(nums)(n + 1 if n >= 0 else n for n in nums)
