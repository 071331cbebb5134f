"""irad's xDSL universe: the dialect and passes irad adds to xDSL tools.

Registered under the ``xdsl.universe`` entry point (see ``pyproject.toml``),
so stock ``xdsl-opt`` finds them; ``irad-opt`` registers them explicitly.

Every loader imports its module only when called: xDSL builds the
multiverse on each ``xdsl-opt`` start, so importing this module must stay
cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdsl.universe import XDSL_UNIVERSE, Universe

if TYPE_CHECKING:
    from xdsl.ir import Dialect
    from xdsl.passes import ModulePass


def _irad_dialect() -> Dialect:
    from irad.ir.dialect import IRAD

    return IRAD


def _math_dialect() -> Dialect:
    from irad.ir.mlir_ops import MATH

    return MATH


def _arith_dialect() -> Dialect:
    from irad.ir.mlir_ops import ARITH

    return ARITH


def _report_irad_errors_cleanly() -> None:
    """Stock xdsl-opt re-raises a DiagnosticException (which IradError is) unless
    --verify-diagnostics is given, so Python would print a traceback for a user
    error. Once an irad pass is loaded into the tool, an uncaught IradError is
    printed as irad-opt prints it (where, what, hint) and the exit status stays 1."""
    import sys

    from irad.base.errors import IradError

    previous = sys.excepthook
    if getattr(previous, "_irad_clean", False):
        return

    def hook(kind, error, traceback):
        if isinstance(error, IradError):
            print(f"{error}", file=sys.stderr)
            return
        previous(kind, error, traceback)

    hook._irad_clean = True
    sys.excepthook = hook


def _differentiate_pass() -> type[ModulePass]:
    _report_irad_errors_cleanly()
    import irad.frontend  # noqa: F401  (adds the built-in Python-written rules to the table)
    from irad.passes.differentiate import DifferentiatePass

    return DifferentiatePass


def _jvp_pass() -> type[ModulePass]:
    _report_irad_errors_cleanly()
    import irad.frontend  # noqa: F401  (adds the built-in Python-written rules to the table)
    from irad.passes.jvp import JvpPass

    return JvpPass


def _vmap_pass() -> type[ModulePass]:
    _report_irad_errors_cleanly()
    import irad.frontend  # noqa: F401  (adds the built-in Python-written rules to the table)
    from irad.passes.vmap import VmapPass

    return VmapPass


def _lower_tape_pass() -> type[ModulePass]:
    from irad.passes.lower_tape import LowerTapePass

    return LowerTapePass


def _for_mlir_opt_pass() -> type[ModulePass]:
    _report_irad_errors_cleanly()
    import irad.frontend  # noqa: F401  (adds the built-in Python-written rules to the table)
    from irad.passes.for_mlir_opt import ForMlirOptPass

    return ForMlirOptPass


def _optimize_pass() -> type[ModulePass]:
    from irad.passes.optimize import OptimizePass

    return OptimizePass


def _inline_pass() -> type[ModulePass]:
    from irad.passes.inline import InlinePass

    return InlinePass


def _float_folds_pass() -> type[ModulePass]:
    from irad.passes.float_folds import FloatFoldsPass

    return FloatFoldsPass


def _sink_accumulations_pass() -> type[ModulePass]:
    from irad.passes.sink_accumulations import SinkAccumulationsPass

    return SinkAccumulationsPass


def _hoist_loop_invariants_pass() -> type[ModulePass]:
    from irad.passes.hoist_loop_invariants import HoistLoopInvariantsPass

    return HoistLoopInvariantsPass


def _sink_broadcasts_pass() -> type[ModulePass]:
    from irad.passes.sink_broadcasts import SinkBroadcastsPass

    return SinkBroadcastsPass


def _join_slice_sums_pass() -> type[ModulePass]:
    from irad.passes.join_slice_sums import JoinSliceSumsPass

    return JoinSliceSumsPass


def _split_loops_pass() -> type[ModulePass]:
    from irad.passes.split_loops import SplitLoopsPass

    return SplitLoopsPass


def _symbol_dce_pass() -> type[ModulePass]:
    from irad.passes.symbol_dce import SymbolDCEPass

    return SymbolDCEPass


IRAD_UNIVERSE = Universe(
    all_dialects={"irad": _irad_dialect},
    all_passes={
        "irad-differentiate": _differentiate_pass,
        "irad-jvp": _jvp_pass,
        "irad-vmap": _vmap_pass,
        "irad-lower-tape": _lower_tape_pass,
        "irad-inline": _inline_pass,
        "irad-optimize": _optimize_pass,
        "irad-float-folds": _float_folds_pass,
        "irad-sink-broadcasts": _sink_broadcasts_pass,
        "irad-join-slice-sums": _join_slice_sums_pass,
        "irad-symbol-dce": _symbol_dce_pass,
        "irad-sink-accumulations": _sink_accumulations_pass,
        "irad-hoist-loop-invariants": _hoist_loop_invariants_pass,
        "irad-for-mlir-opt": _for_mlir_opt_pass,
        "irad-split-loops": _split_loops_pass,
    },
)

# MLIR 22's math and arith ops that xDSL 0.75 lacks (math.erfc, math.sincos,
# arith.remf, ...; irad/ir/mlir_ops.py) belong to xDSL's own `math` and `arith`
# dialects, which xDSL's universe already names; a second universe defining them
# again would make the multiverse raise. So irad swaps the loaders of those two
# entries for loaders of the same dialects with the missing ops added. xDSL builds
# the multiverse after importing every plugin (this module included), so stock
# `xdsl-opt` and `irad-opt` both parse MLIR 22 math IR.
XDSL_UNIVERSE.all_dialects.update(math=_math_dialect, arith=_arith_dialect)
