"""irad: IR-level reverse-mode automatic differentiation for Python, built on xDSL.

    import irad, math
    def f(x, y):
        return math.sin(x) * y + x ** 2
    irad.grad(f, argnums=(0, 1))(1.0, 2.0)

See docs/ for the supported Python subset and the IR conventions.
"""

from irad.api import grad, lower, value_and_grad, vjp
from irad.errors import BackendError, DifferentiationError, IradError, UnsupportedError

__all__ = [
    "BackendError",
    "DifferentiationError",
    "IradError",
    "UnsupportedError",
    "grad",
    "lower",
    "value_and_grad",
    "vjp",
]
