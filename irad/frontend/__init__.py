"""Frontend: Python source (AST) -> xDSL module (func/arith/math/scf/tensor/linalg).

Importing it adds irad's Python-written built-in rules to the default table,
and the numpy functions of each family to the numpy table (numpy_table.py).
scipy's functions join the table, and their rules the default table, the
first time a program calls one (numpy_table.on_demand), so that importing irad
does not import scipy; so do scipy.linalg's, which irad lowers from its own
source (irad/scipy_linalg.py).
"""

from irad.frontend import builtin_rules, linalg_rules, numpy_interp
from irad.frontend import numpy_contractions, numpy_counting, numpy_elementwise, numpy_linalg  # noqa: F401
from irad.frontend import numpy_shapes, numpy_sizes, numpy_statistics  # noqa: F401  (numpy table entries)
from irad.frontend.entry_arguments import bind_arguments, signature_of
from irad.frontend.module_lowering import lower_function
from irad.frontend import numpy_table
from irad.rules import add_builtins
from irad.rules.keys import IMPLEMENTED_IN_PYTHON

add_builtins(builtin_rules.install)
add_builtins(linalg_rules.install)
add_builtins(numpy_interp.install)


def _scipy_special() -> None:
    from irad.frontend import scipy_rules, scipy_special  # noqa: F401  (numpy table entries)

    add_builtins(scipy_rules.install)


def _scipy_stats() -> None:
    numpy_table.load("scipy.special")  # norm's functions call irad.special's, and their rules
    from irad.frontend import scipy_stats  # noqa: F401  (numpy table entries)


def _scipy_linalg() -> None:
    import scipy.linalg

    from irad import scipy_linalg

    for name in ("cholesky", "cho_factor", "cho_solve", "solve_triangular", "solve", "inv", "det", "eigh",
                 "block_diag", "expm"):
        IMPLEMENTED_IN_PYTHON[getattr(scipy.linalg, name)] = getattr(scipy_linalg, name)


numpy_table.on_demand("scipy.special", _scipy_special)
numpy_table.on_demand("scipy.linalg", _scipy_linalg)
numpy_table.on_demand("scipy.stats", _scipy_stats)

__all__ = ["bind_arguments", "lower_function", "signature_of"]
