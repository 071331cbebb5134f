"""Functions a helper returns: the JAX idiom `def make_loss(scale): def loss(w, x):
...; return loss`, and `return lambda h: ...` or `return functools.partial(f, k=k)`.

A function called from inside a program may return a lambda, a nested def or a
`functools.partial` it made, or a function known while lowering (`np.tanh`),
alone or inside a tuple, list, dict, NamedTuple or dataclass. What crosses the
call is what the function captured: its run-time values (a closure over
`scale`, over an array) become results of the func.func and its known ones
(functions, modules, ints) stay in the result's tree (callables.flatten with
`bind`), so the caller rebuilds the closure around its own SSA values and calls
it like one it made: the closure's body is lowered as its own func.func, which
the derivative passes go through.

Python reads a closure's variables when it runs; once the function that made it
has returned, they keep the values they had at its `return`, so binding them
there is Python's meaning.

The function the user transforms (the entry) still returns data only: irad.grad
and friends give numbers and arrays back. Other objects known while lowering (a
module, a string) are not returned: the error names the helper's `return`.
"""

from __future__ import annotations

import ast

from xdsl.ir import SSAValue

from irad.base.pytrees import Node
from irad.frontend.callables import StaticShape, flatten


def returned_leaves(fl, value, node: ast.AST):
    """The leaves and tree of what `fl`'s function returns, functions made in the
    program included; None when it holds something else."""
    leaves: list[SSAValue] = []
    tree = flatten(fl.runtime_values(value, node), leaves, fl.calls.bind_closure)
    return None if tree is None or not _data_or_functions(tree) else (leaves, tree)


def _data_or_functions(shape) -> bool:
    """Is every part of a returned tree data or a function (not a module, a string, ...)?"""
    if isinstance(shape, Node):
        return all(_data_or_functions(c) for c in shape.children)
    return not isinstance(shape, StaticShape) or callable(shape.obj) and not isinstance(shape.obj, type)
