"""irad: IR-level reverse-mode automatic differentiation for Python, built on xDSL.

    import irad, math
    def f(x, y):
        return math.sin(x) * y + x ** 2
    irad.grad(f, argnums=(0, 1))(1.0, 2.0)

See docs/ for the supported Python subset and the IR conventions.
"""

from irad.base.errors import BackendError, DifferentiationError, IradError, UnsupportedError

_API = ("grad", "jvp", "lower", "value_and_grad", "vjp")
_JACOBIANS = ("jacfwd", "jacrev", "hessian")
_PYTHON_RULES = ("rrule", "frule")  # lowered by the frontend
_TABLE_EDITS = ("opt_out", "non_differentiable")
_RULES = (*_PYTHON_RULES, *_TABLE_EDITS)
_LAZY_MODULES = ("rules", "testing", "linalg")
_BACKENDS = ("Python", "Native", "IREE")  # llvmlite and IREE load only when a module is compiled


def __getattr__(name: str):
    # Lazy, so that `xdsl-opt` loading irad's entry point stays cheap.
    if name in _API:
        from irad import api

        return getattr(api, name)
    if name in _JACOBIANS:
        from irad import jacobians

        return getattr(jacobians, name)
    if name in _BACKENDS:
        from irad import backends

        return getattr(backends, name)
    if name in _PYTHON_RULES:
        from irad.frontend import registration

        return getattr(registration, name)
    if name in _TABLE_EDITS:
        import irad.frontend  # noqa: F401  (the default table's built-in rules)
        from irad.rules import registry

        return getattr(registry, name)
    if name == "vmap":
        from irad.vmapping import vmap

        return vmap
    if name == "stop_gradient":
        from irad.markers import stop_gradient

        return stop_gradient
    if name == "export":
        from irad.mlir_export import export

        return export
    if name == "numpy_functions":
        import irad.frontend  # noqa: F401  (fills the numpy table)
        from irad.frontend.numpy_table import numpy_functions

        return numpy_functions
    if name == "config":
        import importlib

        return importlib.import_module("irad.config")
    if name == "explain":
        from irad.report import explain

        return explain
    if name in _LAZY_MODULES:
        import importlib

        import irad.frontend  # noqa: F401  (the default table's built-in rules)

        return importlib.import_module(f"irad.{name}")
    raise AttributeError(f"module 'irad' has no attribute {name!r}")


__all__ = [
    "BackendError",
    *_BACKENDS,
    "DifferentiationError",
    "IradError",
    "UnsupportedError",
    *_API,
    "config",
    *_JACOBIANS,
    *_RULES,
    "explain",
    "export",
    "numpy_functions",
    "stop_gradient",
    "vmap",
]
