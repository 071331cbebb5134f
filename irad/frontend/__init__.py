"""Frontend: Python source (AST) -> xDSL module (func/arith/math/scf/tensor/linalg).

Importing it adds irad's Python-written built-in rules to the default table,
and the numpy functions of each family to the numpy table (numpy_table.py).
"""

from irad.frontend import builtin_rules, linalg_rules
from irad.frontend import numpy_contractions, numpy_elementwise, numpy_linalg, numpy_shapes, numpy_statistics  # noqa: F401  (numpy table entries)
from irad.frontend.lowering import bind_arguments, lower_function, signature_of
from irad.rules import add_builtins

add_builtins(builtin_rules.install)
add_builtins(linalg_rules.install)

__all__ = ["bind_arguments", "lower_function", "signature_of"]
