"""`irad-vmap`: JAX's vmap on func/arith/math/scf/tensor/linalg IR.

The pass replaces each `irad.vmap` request by a call to the callee's batched
function (passes/batching/batcher.py), made op by op from the batching rules
of the op registry (passes/ad/derivatives/batching.py), one batched function
per callee and batching signature.

vmap requests are rewritten the innermost first: one whose callee reaches
another vmap request waits for it. A derivative request the batched code
meets is batched by its own rule (passes/batching/requests.py): mostly
differentiated in place and the generated code batched, through a loop with
a batched tape (per-example gradients of a recurrent model); in the other
cases it becomes a request on the batched callee, left to irad-differentiate
and irad-jvp, which run after this pass. Should the derivative code of a
batched tape meet an op irad-vmap cannot batch (a write at an index that
varies along the batch, which batching the function first turns into a
gather), the pass starts again from the module as it was, without batched
tapes. A derivative of a vmapped function (grad of vmap)
differentiates the batched code.

A request marked `irad.unrollable` (a Jacobian's sweeps over a basis) that
the batcher refuses becomes one call per element instead (batching/unroll.py):
the same values, with code that grows with the batch.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from irad.base.errors import BatchingError
from irad.ir.dialect import JvpOp, VmapOp
from irad.ir.locations import location
from irad.ir.symbols import functions_by_name
from irad.ir.metadata import UNROLLABLE
from irad.ir.walk import find
from irad.passes.ad.differentiator import REQUESTS, reached_ops
from irad.passes.batching.batcher import Batcher
from irad.passes.batching.unroll import unroll


@dataclass(frozen=True)
class VmapPass(ModulePass):
    """Replace irad.vmap requests by calls to generated batched functions,
    the innermost first."""

    name = "irad-vmap"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_vmap_requests(op)


def rewrite_vmap_requests(module: ModuleOp) -> list[tuple[int, str]]:
    """Rewrite every irad.vmap request of `module`, the innermost first; what
    was decided, as (depth, text) lines (`irad explain --mode vmap`)."""
    before = module.clone() if find(module, (*REQUESTS, JvpOp)) and find(module, (scf.ForOp, scf.WhileOp)) else None
    try:
        return _rewrite_all(module, batched_tapes=before is not None)
    except BatchingError:
        if before is None:
            raise
        for op in list(module.body.block.ops):  # the module as it was
            op.detach()
        for op in list(before.body.block.ops):
            op.detach()
            module.body.block.add_op(op)
        return _rewrite_all(module, batched_tapes=False)


def _rewrite_all(module: ModuleOp, batched_tapes: bool) -> list[tuple[int, str]]:
    batcher = Batcher(module, batched_tapes)  # one for the module: a callee batched the same way is batched once
    notes: list[tuple[int, str]] = []
    while requests := find(module, VmapOp):
        functions = functions_by_name(module)
        below = {r: reached_ops(functions, [_callee(r)]) for r in requests}
        ready = [r for r in requests if not any(isinstance(o, VmapOp) for o in below[r])]
        if not ready:
            raise BatchingError(
                f"{location(requests[0])}: the vmapped function reaches itself through vmap requests\n"
                "  hint: vmap a function that does not vmap itself"
            )
        for request in ready:
            mark = len(batcher.notes)
            try:
                batcher.rewrite_request(request)
            except BatchingError as error:
                if UNROLLABLE not in request.attributes:
                    raise
                del batcher.notes[mark:]
                reason = str(error).splitlines()[0]
                notes += [*batcher.notes, (0, f"irad.vmap @{_callee(request)}: one call per element ({reason})")]
                unroll(request)
                batcher = Batcher(module, batched_tapes)  # the refused attempt may have differentiated code: functions anew
    return notes + batcher.notes


def _callee(request) -> str:
    return request.callee.root_reference.data



__all__ = ["VmapPass", "rewrite_vmap_requests"]
