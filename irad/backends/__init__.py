"""Backends that run a differentiated xDSL module.

* ``"python"`` (the default): the module becomes Python source (python.py).
  It needs nothing beyond pip.
* ``"native"``: the module is lowered by upstream MLIR 22 and JIT-compiled by
  llvmlite (native.py). It needs the Debian package mlir-22-tools.

Both compile a module into an object whose ``function(name)`` is a Python
callable returning a tuple of the function's results.
"""

from irad.backends.python import CompiledModule, compile_module
from irad.errors import BackendError

BACKENDS = ("python", "native")


def check_backend(backend: str) -> str:
    if backend not in BACKENDS:
        raise BackendError(
            f"unknown backend {backend!r}\n  hint: use one of {', '.join(map(repr, BACKENDS))}"
        )
    return backend


def compile_for(module, backend: str):
    """Compile `module` with the named backend."""
    if check_backend(backend) == "native":
        from irad.backends import native  # imports llvmlite only when used

        return native.compile_module(module)
    return compile_module(module)


__all__ = ["BACKENDS", "CompiledModule", "check_backend", "compile_for", "compile_module"]
