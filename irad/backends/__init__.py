"""Backends that run a differentiated xDSL module.

* ``"python"`` (the default): the module becomes Python source (python.py).
  It needs nothing beyond pip.
* ``"native"``: the module is lowered by upstream MLIR 22 and JIT-compiled by
  llvmlite (native.py). It needs the Debian package mlir-22-tools.
* ``"iree"``: the module is compiled by IREE for a target (``llvm-cpu``, or a
  GPU by name) and run by IREE's runtime (iree.py). It needs the extra
  ``pip install -e '.[iree]'``.

Each compiles a module into an object whose ``function(name)`` is a Python
callable returning a tuple of the function's results. A `Backend` names the
backend and its options; it is hashable, so compiled code is cached per
backend and target.
"""

from __future__ import annotations

from dataclasses import dataclass

from irad.backends.python.translate import CompiledModule, compile_module
from irad.base import config
from irad.base.errors import BackendError

BACKENDS = ("python", "native", "iree")


@dataclass(frozen=True)
class Backend:
    """A backend and its options: for IREE, the compiler's target and the
    runtime's device (None: the target's default device)."""

    name: str
    iree_target: str | None = None
    iree_device: str | None = None

    @property
    def tape_form(self) -> str:
        """The form irad-lower-tape gives the tape: IREE takes tensors only."""
        return "tensor" if self.name == "iree" else "memref"

    @property
    def keep_shared(self) -> int:
        """irad-inline's keep-shared for this backend's gradients (0: inline all).
        Native code compiles each function once: a callee called from several
        places whose body has at least `native_keep_shared` ops (irad.config)
        stays a function rather than being compiled again at every call site;
        the Python backend inlines all."""
        return config.read("native_keep_shared") if self.name == "native" else 0


def check_backend(
    backend: str | Backend, iree_target: str | None = None, iree_device: str | None = None
) -> Backend:
    """The Backend for the API's `backend=`, `iree_target=` and `iree_device=`."""
    if isinstance(backend, Backend):
        return backend
    if backend not in BACKENDS:
        raise BackendError(
            f"unknown backend {backend!r}\n  hint: use one of {', '.join(map(repr, BACKENDS))}"
        )
    if backend != "iree":
        if iree_target is not None or iree_device is not None:
            raise BackendError(
                f"iree_target and iree_device apply to backend='iree', not {backend!r}\n"
                "  hint: pass backend='iree', or leave them out"
            )
        return Backend(backend)
    from irad.backends.iree import compile as iree  # checks the options; imports IREE only when compiling

    return Backend("iree", *iree.options(iree_target, iree_device))


def compile_for(module, backend: Backend | str):
    """Compile `module` with `backend` (a Backend, or a backend's name)."""
    backend = check_backend(backend)
    if backend.name == "native":
        from irad.backends.native import compile as native  # imports llvmlite only when used

        return native.compile_module(module)
    if backend.name == "iree":
        from irad.backends.iree import compile as iree

        return iree.compile_module(module, backend.iree_target, backend.iree_device)
    return compile_module(module)


__all__ = ["BACKENDS", "Backend", "CompiledModule", "check_backend", "compile_for", "compile_module"]
