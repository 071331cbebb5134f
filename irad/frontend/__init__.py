"""Frontend: Python source (AST) -> xDSL module (func/arith/math/scf)."""

from irad.frontend.lowering import lower_function, signature_of

__all__ = ["lower_function", "signature_of"]
