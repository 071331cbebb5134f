"""irad's pipeline, defined once: every transformation's request ops
(irad.vmap, irad.grad, irad.value_and_grad, irad.vjp, irad.vjp_split, irad.jvp) go
through the same sequence of passes, with the options of one `Options`:

    irad-vmap                                                   vmap requests, the innermost first (a
                                                                derivative request they reach is generated
                                                                and batched, or asked of batched code)
    irad-differentiate{checkpoint inline hoist keep-shared}   reverse-mode requests
    irad-jvp{tape}                                              forward-mode requests (after reverse
                                                                mode: forward over reverse)
    irad-lower-tape{form}                                       the tape ops become memref/tensor code
    irad-optimize{max-depth keep-shared},irad-sink-accumulations,
        irad-hoist-loop-invariants,irad-symbol-dce              the optimiser

The Python API (irad/pipeline.py), `irad-for-mlir-opt` and `irad-opt` users
take their pass lists from here.

A module built to be differentiated again (`inline=False`) is not inlined
(max-depth=0): its calls, to rule targets above all, must meet the rule table
again; and its tape ops stay (no irad-lower-tape): reverse mode follows them
with shadow tapes, and the pipeline that differentiates it lowers them.
Forward mode follows memref code, so irad-jvp lowers the tape itself before
it rewrites requests. Otherwise irad-differentiate inlines the callees it
differentiates before it reverses them (linear compile time in the depth of
a call tree; the optimiser would inline their generated functions anyway);
inlined code to run, a loop's sums of products are then taken after it
(irad-sink-accumulations) and its invariant array code computed before it
(irad-hoist-loop-invariants).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.passes import ModulePass

from irad.passes.differentiate import DifferentiatePass
from irad.passes.hoist_loop_invariants import HoistLoopInvariantsPass
from irad.passes.jvp import JvpPass
from irad.passes.lower_tape import LowerTapePass
from irad.passes.optimisation.inliner import DEFAULT_MAX_DEPTH, KEEP_ALL_INLINED
from irad.passes.optimize import OptimizePass
from irad.passes.sink_accumulations import SinkAccumulationsPass
from irad.passes.symbol_dce import SymbolDCEPass
from irad.passes.vmap import VmapPass

TAPE_FORMS = ("memref", "tensor", "objects")


@dataclass(frozen=True)
class Options:
    """How requests are compiled. `checkpoint`: loops record only each
    iteration's inputs and the reverse sweep recomputes the body. `inline`:
    code to run (False: a module to be differentiated again). `hoist`: loop
    invariants leave loops before reverse mode records them. `keep_shared`:
    irad-inline's keep-shared (the backend's: 0 inlines all). `tape`: the
    form irad-lower-tape gives the tape (the backend's: IREE takes tensors,
    the Python backend keeps a record's array in one slot: "objects")."""

    checkpoint: bool = False
    inline: bool = True
    hoist: bool = True
    keep_shared: int = KEEP_ALL_INLINED
    tape: str = "memref"

    def __post_init__(self):
        if self.tape not in TAPE_FORMS:
            raise ValueError(f"the tape's form must be one of {', '.join(TAPE_FORMS)}, not {self.tape!r}")


def optimise_passes(options: Options) -> tuple[ModulePass, ...]:
    """The optimiser; inlined (code to run), sinking and hoisting follow."""
    if not options.inline:
        return OptimizePass(max_depth=0), SymbolDCEPass()
    return (
        OptimizePass(max_depth=DEFAULT_MAX_DEPTH, keep_shared=options.keep_shared),
        SinkAccumulationsPass(), HoistLoopInvariantsPass(), SymbolDCEPass(),
    )


def autodiff_passes(options: Options) -> tuple[ModulePass, ...]:
    """Every request rewritten, the tape lowered (code to run), optimised."""
    keep_shared = options.keep_shared if options.inline else KEEP_ALL_INLINED
    steps: list[ModulePass] = [
        VmapPass(),
        DifferentiatePass(checkpoint=options.checkpoint, inline=options.inline, hoist=options.hoist, keep_shared=keep_shared),
        JvpPass(tape=options.tape),
    ]
    if options.inline:
        steps.append(LowerTapePass(form=options.tape))
    return (*steps, *optimise_passes(options))


def spec(passes: tuple[ModulePass, ...]) -> str:
    """The passes as `irad-opt -p` takes them."""
    return ",".join(str(p.pipeline_pass_spec()) for p in passes)
