"""When the native backend splits large loop nests over its two threads
(irad-split-loops, passes/split_loops.py), and with what threshold.

The pass runs between two mlir-opt runs (compile.lower_to_llvm_ir), on the
text mlir-opt prints. irad.config's `native_split_loops` turns it off;
`native_split_min_work` sets the threshold (passes/split_loops.py says how it
was measured). Both are read when a module is compiled and are in its
pipeline (`pipeline_marker`), so the object cache keeps variants apart.
"""

from __future__ import annotations

import functools
import io
import re
import threading

from xdsl.context import Context
from xdsl.dialects.builtin import (
    ModuleOp,
)

from irad.backends.native import blas as native_blas

from irad.backends.native import split as native_split
from irad.base import config
from irad.passes.split_loops import PASS_NAME, _may_split, outline

LOOPS, PARALLEL_LOOPS = "--convert-linalg-to-loops", "--convert-linalg-to-parallel-loops"


def enabled() -> bool:
    """Whether large loop nests are split: on unless switched off, with more
    than one core for this process and a BLAS library (whose split module
    holds the helper)."""
    return config.read("native_split_loops") and native_split.cores() > 1 and native_blas.blas_library() is not None


def min_work() -> int:
    return config.read("native_split_min_work")


def pipeline_marker() -> str | None:
    """The pipeline entry that runs this pass (None if loops are not split);
    the threshold is in it, and so in the object cache's key. Binds the
    runtime's symbol in this process (a cache hit runs code that calls it)."""
    if not enabled():
        return None
    native_split.rows_symbol(native_blas.blas_library())
    return f"{PASS_NAME}={min_work()}"


def in_pipeline(module: ModuleOp, passes: tuple[str, ...]) -> tuple[str, ...]:
    """`passes` (mlir-opt's, up to linalg's loops) with this pass after the
    loops, which are made parallel ones, if loops are split and `module`
    (tensors) may have a nest of `min_work()` work; else `passes`."""
    if not (enabled() and _may_split(module, min_work())):
        return passes  # (and the split module is not built for nothing)
    marker = pipeline_marker()
    at = passes.index(LOOPS)
    return (*passes[:at], PARALLEL_LOOPS, marker, *passes[at + 1:])


def unsplit(passes: tuple[str, ...]) -> tuple[str, ...]:
    """`passes` without this pass (linalg's plain loops): tier 0's pipeline
    (tiers.py). Splitting waits for the -O2 code: it costs a second mlir-opt
    run and an xDSL parse and print (0.2-0.5 s at n = 1024 in
    bench/jacobians.py), and rows split over threads give the same bits as
    unsplit ones (tests/backends/test_native_split_loops.py), so calls do
    not see which tier ran them."""
    at = [i for i, p in enumerate(passes) if threshold_of(p) is not None]
    if not at:
        return passes
    assert passes[at[0] - 1] == PARALLEL_LOOPS, passes  # as in_pipeline puts them
    return (*passes[:at[0] - 1], LOOPS, *passes[at[0] + 1:])


def threshold_of(marker: str) -> int | None:
    """The threshold in a pipeline entry, None if it is not this pass's."""
    name, _, value = marker.partition("=")
    return int(value) if name == PASS_NAME else None


# mlir-opt prints a float splat that has no decimal form (inf, NaN) as its
# bits, dense<0xFFF0000000000000>, which xDSL 0.75 reads as an integer's
# value (-inf became 1.8e19). Its hex blob, dense<"0x000000000000F0FF">
# (bytes in memory order), one element for a splat, xDSL reads right; the
# other dense arrays mlir-opt prints as blobs (PRINT_OPTIONS).
_HEX_SPLAT = re.compile(r"dense<0x([0-9A-Fa-f]+)>")


PRINT_OPTIONS = ("--mlir-print-op-generic", "--mlir-print-elementsattrs-with-hex-if-larger=1")


def _as_blob(match: re.Match) -> str:
    bits = int(match.group(1), 16).to_bytes(len(match.group(1)) // 2, "big")
    return f'dense<"0x{bits[::-1].hex().upper()}">'


_parsing = threading.Lock()


@functools.cache
def _context() -> Context:
    from xdsl.dialects import get_all_dialects

    context = Context(allow_unregistered=True)
    for name, load in get_all_dialects().items():
        context.register_dialect(name, load)
    return context


def run_on_text(text: str, threshold: int) -> str:
    """The module in `text` (MLIR, generic form, as mlir-opt prints it) with
    its large parallel loop nests outlined; `text` itself if there are none."""
    from xdsl.parser import Parser
    from xdsl.printer import Printer
    from xdsl.utils.exceptions import ParseError

    with _parsing:  # the context loads dialects as it meets them: one parse at a time
        try:
            module = Parser(_context(), _HEX_SPLAT.sub(_as_blob, text)).parse_module()
        except ParseError:
            # what xDSL 0.75 cannot read (mlir-opt packs an i1 array's blob
            # in bits, xDSL expects bytes: np.tril's mask) runs unsplit
            return text
    if not outline(module, threshold):
        return text
    out = io.StringIO()
    Printer(stream=out, print_generic_format=True).print_op(module)
    return out.getvalue()


__all__ = ["run_on_text", "enabled", "min_work", "pipeline_marker", "unsplit"]
