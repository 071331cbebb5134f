"""Jacobians and Hessians: jacfwd (forward mode), jacrev (reverse mode), hessian.

The result has JAX's structure: the tree of f's outputs, each float output
replaced by the tree of the arguments in `argnums` (one argument's tree for an
int `argnums`, a tuple of them for a tuple), whose leaves are the blocks
d output / d argument leaf, of shape `output.shape + argument.shape` (a float
for two scalars). Int and bool argument leaves get None. With
`has_aux=True`, f returns `(out, aux)` and the call returns `(jacobian, aux)`.

One module computes every block, output leaf by argument leaf, with request
ops (irad/frontend/transformations.py), in vector mode: jacfwd one `irad.jvp`
per float argument leaf in `argnums`, jacrev one `irad.vjp` per output leaf,
each mapped by an `irad.vmap` over the leaf's identity basis, so the code does
not grow with the Jacobian (irad-vmap unrolls a map it cannot batch). So a
Jacobian is IR too, and the transformations compose: an outer derivative
differentiates these requests (`jacfwd(jacrev(f))`, and programs may call
them). hessian(f) = jacfwd(grad(f)): forward over reverse.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from irad.api import TransformationFunction, grad
from irad.arguments import normalise_argnums
from irad.backends import Backend, check_backend
from irad.base import config
from irad.compiled import Compiled, cached, run_compiled
from irad.base.pytrees import Node, unflatten
from irad.frontend.source import name_of
from irad.keywords import keyword_form
from irad.frontend.transformations import constructor
from irad.pipeline import options, transformation_module


class _JacobianFunction(TransformationFunction):
    """The callable returned by jacfwd / jacrev."""

    def __init__(self, f: Callable, argnums, mode: str, backend: Backend | str = "python", has_aux: bool = False,
                 static_argnums=(), static_argnames=()):
        super().__init__(mode, f, argnums, has_aux, static_argnums, static_argnames)
        self.backend = check_backend(backend)
        self.__name__ = f"{mode}({name_of(f)})"

    def _recipe(self) -> tuple[Callable, tuple, dict]:
        make = jacfwd if self.kind == "jacfwd" else jacrev  # hessian is jacfwd(grad(f))
        return make, (self.f, self.argnums), {"has_aux": self.has_aux, "backend": self.backend}

    def options(self) -> tuple:
        return (self.backend,)

    def _compiled(self, signature: Node) -> tuple[Compiled, tuple]:
        """The compiled Jacobian, and the hidden arrays' values."""
        nums = normalise_argnums(self.f, self.argnums, signature)

        def build() -> Compiled:
            module, entry, hidden, results = transformation_module(self, signature, options(self.backend))
            code = self.backend.compile(module)
            return Compiled(module, code.function(entry), (), hidden, results, code)

        return cached((self.f, self.kind, nums, self.single, self.has_aux, signature, self.backend), build)

    def __call__(self, *args, **kwargs):
        form = keyword_form(self, len(args), kwargs) if kwargs else None  # keyword-only arguments (irad/keywords.py)
        if form is not None:
            return form(*args, **kwargs)
        leaves, signature = self._arguments(args, kwargs)
        compiled, hidden = self._compiled(signature)
        return unflatten(compiled.results, iter(run_compiled(compiled.run, (*leaves, *hidden), compiled.code)))


@constructor
def jacfwd(
    f: Callable, argnums: int | Sequence[int] = 0, *, has_aux: bool = False, backend: str | Backend | None = None,
    iree_target: str | None = None, iree_device: str | None = None, static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
) -> _JacobianFunction:
    """The Jacobian of `f` with respect to `argnums`, by forward mode. With
    has_aux=True, f returns `(out, aux)` and the call `(jacobian, aux)`.
    `backend`, `static_argnums` and `static_argnames` as for `irad.grad`."""
    backend = check_backend(backend or config.read("backend"), iree_target, iree_device)
    return _JacobianFunction(f, argnums, "jacfwd", backend, has_aux, static_argnums, static_argnames)


@constructor
def jacrev(
    f: Callable, argnums: int | Sequence[int] = 0, *, has_aux: bool = False, backend: str | Backend | None = None,
    iree_target: str | None = None, iree_device: str | None = None, static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
) -> _JacobianFunction:
    """The Jacobian of `f` with respect to `argnums`, by reverse mode. With
    has_aux=True, f returns `(out, aux)` and the call `(jacobian, aux)`.
    `backend`, `static_argnums` and `static_argnames` as for `irad.grad`."""
    backend = check_backend(backend or config.read("backend"), iree_target, iree_device)
    return _JacobianFunction(f, argnums, "jacrev", backend, has_aux, static_argnums, static_argnames)


@constructor
def hessian(
    f: Callable, argnums: int | Sequence[int] = 0, *, has_aux: bool = False, backend: str | Backend | None = None,
    iree_target: str | None = None, iree_device: str | None = None, static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
) -> _JacobianFunction:
    """The Hessian of `f` (which returns one float): jacfwd(grad(f)), forward
    over reverse. With has_aux=True, f returns `(value, aux)` and the call
    `(hessian, aux)`. `static_argnums` and `static_argnames` as for `irad.grad`."""
    backend = check_backend(backend or config.read("backend"), iree_target, iree_device)
    static = {"static_argnums": static_argnums, "static_argnames": static_argnames}
    return jacfwd(grad(f, argnums, has_aux=has_aux, **static), argnums, has_aux=has_aux, backend=backend, **static)


__all__ = ["hessian", "jacfwd", "jacrev"]
