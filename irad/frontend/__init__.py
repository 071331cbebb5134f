"""Frontend: Python source (AST) -> xDSL module (func/arith/math/scf)."""

from irad.frontend.lowering import bind_arguments, lower_function, signature_of

__all__ = ["bind_arguments", "lower_function", "signature_of"]
