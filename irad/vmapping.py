"""vmap: a function mapped over an axis of its arguments, with JAX's semantics.

`irad.vmap(f, in_axes=0, out_axes=0, axis_size=None)` is a Transformation
(kind "vmap"): called, it lowers f for one element of the batch and asks for
the batched function with an `irad.vmap` request (irad/frontend/transformations.py),
which the pipeline's irad-vmap pass rewrites (passes/vmap.py). So it composes
with the derivative transformations both ways, on every backend:
`vmap(grad(loss), in_axes=(None, 0, 0))` gives per-example gradients, and a
program may differentiate through a vmap it calls.
"""

from __future__ import annotations

from collections.abc import Callable

from irad.api import TransformationFunction
from irad.arguments import arguments
from irad.backends import Backend, check_backend
from irad.base import config
from irad.base.pytrees import Node, unflatten
from irad.compiled import Compiled, cached, run_compiled
from irad.frontend.source import name_of
from irad.frontend.transformations import VMAP, constructor
from irad.frontend.entry_arguments import as_signature
from irad.passes.vmap import rewrite_vmap_requests
from irad.pipeline import lowered, options, transformation_module


def _frozen(axes) -> object:
    """`axes` as a hashable key (dicts and lists made tuples)."""
    if isinstance(axes, dict):
        return ("dict", tuple(sorted((k, _frozen(v)) for k, v in axes.items())))
    if isinstance(axes, (list, tuple)):
        return (type(axes).__name__, tuple(_frozen(a) for a in axes))
    return axes


class _VmapFunction(TransformationFunction):
    """The callable returned by vmap."""

    def __init__(self, f: Callable, in_axes, out_axes, axis_size: int | None, backend: Backend | str = "python"):
        super().__init__(VMAP, f)
        self.in_axes, self.out_axes, self.axis_size = in_axes, out_axes, axis_size
        self.backend = check_backend(backend)
        self.__name__ = f"vmap({name_of(f)})"

    def _compiled(self, signature: Node) -> tuple[Compiled, tuple]:
        """The compiled batched function, and the hidden arrays' values."""

        def build() -> Compiled:
            module, entry, hidden, results = transformation_module(self, signature, options(self.backend))
            code = self.backend.compile(module)
            return Compiled(module, code.function(entry), (), hidden, results, code)

        key = (self.f, VMAP, _frozen(self.in_axes), _frozen(self.out_axes), self.axis_size, signature, self.backend)
        return cached(key, build)

    def options(self) -> tuple:
        return _frozen(self.in_axes), _frozen(self.out_axes), self.axis_size, self.backend

    def _recipe(self) -> tuple[Callable, tuple, dict]:
        return vmap, (self.f, self.in_axes, self.out_axes), {"axis_size": self.axis_size, "backend": self.backend}

    def __call__(self, *args, **kwargs):
        leaves, signature = arguments(self.f, args, kwargs)
        compiled, hidden = self._compiled(signature)
        return unflatten(compiled.results, iter(run_compiled(compiled.run, (*leaves, *hidden), compiled.code)))


@constructor
def vmap(f: Callable, in_axes=0, out_axes=0, *, axis_size: int | None = None,
         backend: str | Backend | None = None) -> _VmapFunction:
    """`f` mapped over an axis of its arguments, as jax.vmap: `in_axes` says
    which axis of each argument is the batch (an int for all, None for an
    argument shared by the whole batch, or a tuple with one entry per
    argument, each an int, None or a container matching that argument);
    `out_axes` where the batch goes in each result (the same forms, matching
    f's results); `axis_size` the batch's size where no argument is mapped.
    `backend` as for `irad.grad`."""
    backend = check_backend(backend or config.read("backend"))
    return _VmapFunction(f, in_axes, out_axes, axis_size, backend)


def explain_vmap(f: Callable, *args, in_axes=0, out_axes=0, axis_size: int | None = None) -> str:
    """What irad-vmap decides for `vmap(f, in_axes, out_axes)` at `args`: each
    batched function (which arguments and results carry the batch), and how
    its branches, loops and derivative requests are batched (`irad explain
    --mode vmap`)."""
    t = vmap(f, in_axes, out_axes, axis_size=axis_size)
    signature = arguments(f, args, {})[1]
    module = lowered(t, as_signature(signature))[0]
    notes = rewrite_vmap_requests(module)
    title = f"irad explain: vmap of {name_of(f)}, in_axes={in_axes!r}, out_axes={out_axes!r}"
    return "\n".join([title, *("  " * (depth + 1) + text for depth, text in notes)])


__all__ = ["explain_vmap", "vmap"]
