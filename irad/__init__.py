"""irad: IR-level reverse-mode automatic differentiation for Python, built on xDSL.

    import irad, math
    def f(x, y):
        return math.sin(x) * y + x ** 2
    irad.grad(f, argnums=(0, 1))(1.0, 2.0)

See docs/ for the supported Python subset and the IR conventions.
"""

from irad.errors import BackendError, DifferentiationError, IradError, UnsupportedError

_API = ("grad", "lower", "value_and_grad", "vjp")


def __getattr__(name: str):
    # Lazy, so that `xdsl-opt` loading irad's entry point stays cheap.
    if name in _API:
        from irad import api

        return getattr(api, name)
    raise AttributeError(f"module 'irad' has no attribute {name!r}")


__all__ = ["BackendError", "DifferentiationError", "IradError", "UnsupportedError", *_API]
