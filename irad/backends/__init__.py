"""Backends that run a differentiated xDSL module, behind one protocol
(protocol.py): a `Backend` object compiles a module into a `CompiledModule`.

* `Python()` (`"python"`, the default): the module becomes Python/numpy
  source (python/). It needs nothing beyond pip.
* `Native(keep_shared=None)` (`"native"`): upstream MLIR 22 lowers the module
  and llvmlite JIT-compiles it (native/). It needs mlir-22-tools.
* `IREE(target="llvm-cpu", device=None)` (`"iree"`): IREE compiles the module
  for a target and its runtime runs it (iree/). It needs the extra
  ``pip install -e '.[iree]'``.

`backend=` on every transformation takes a name of `BACKENDS` or an object;
`check_backend` turns either into the object.
"""

from __future__ import annotations

import warnings

from irad.backends.iree.backend import IREE
from irad.backends.native.backend import Native
from irad.backends.protocol import Backend, CompiledModule
from irad.backends.python.backend import Python
from irad.base.errors import BackendError

# name -> class; the name alone gives the backend with its default options
BACKENDS: dict[str, type[Backend]] = {cls.name: cls for cls in (Python, Native, IREE)}


def check_backend(
    backend: str | Backend, iree_target: str | None = None, iree_device: str | None = None
) -> Backend:
    """The Backend object for the API's `backend=` (a name or an object) and
    its deprecated `iree_target=` and `iree_device=` (which warn, naming
    `irad.IREE(target=..., device=...)`, their replacement)."""
    if isinstance(backend, Backend):
        if iree_target is not None or iree_device is not None:
            raise BackendError(
                f"iree_target and iree_device do not apply to backend={backend!r}\n"
                "  hint: give a target and a device to irad.IREE(target=..., device=...)"
            )
        return backend
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise BackendError(
            f"unknown backend {backend!r}\n  hint: use one of {', '.join(map(repr, BACKENDS))}, or a backend "
            "object: irad.Python(), irad.Native(), irad.IREE(target='llvm-cpu')"
        )
    if iree_target is None and iree_device is None:
        return BACKENDS[backend]()
    if backend != "iree":
        raise BackendError(
            f"iree_target and iree_device apply to backend='iree', not {backend!r}\n"
            "  hint: pass backend=irad.IREE(target=..., device=...), or leave them out"
        )
    replacement = IREE(iree_target, iree_device)  # checks them first
    warnings.warn(
        f"iree_target= and iree_device= are deprecated: pass backend=irad.IREE(target={iree_target!r}, "
        f"device={iree_device!r}) instead",
        DeprecationWarning,
        stacklevel=3,  # the caller of the transformation (irad.grad, ...)
    )
    return replacement


__all__ = ["BACKENDS", "IREE", "Backend", "CompiledModule", "Native", "Python", "check_backend"]
