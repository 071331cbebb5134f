"""`irad-vmap`: JAX's vmap on func/arith/math/scf/tensor/linalg IR.

The pass replaces each `irad.vmap` request by a call to the callee's batched
function (passes/batching/batcher.py), made op by op from the batching rules
of the op registry (passes/ad/derivatives/batching.py), one batched function
per callee and batching signature.

Requests are rewritten the innermost first, whatever their kind. A vmap
request whose callee reaches another vmap request waits for it; one whose
callee reaches derivative requests (per-example gradients: vmap of grad) has
those rewritten first, by reverse or forward mode, and batches the generated
code. The pass runs before irad-differentiate and irad-jvp in irad's pipeline,
so a derivative of a vmapped function (grad of vmap) differentiates the
batched code.

A request marked `irad.unrollable` (a Jacobian's sweeps over a basis) that
the batcher refuses becomes one call per element instead (batching/unroll.py):
the same values, with code that grows with the batch.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from irad.base.errors import BatchingError
from irad.ir.dialect import JvpOp, VmapOp
from irad.ir.locations import location
from irad.ir.metadata import UNROLLABLE
from irad.ir.walk import find
from irad.passes.ad.differentiator import REQUESTS, Differentiator, reached_ops
from irad.passes.ad.forward import ForwardDifferentiator
from irad.passes.batching.batcher import Batcher
from irad.passes.lower_tape import TAPE_OPS
from irad.passes.batching.unroll import unroll

DERIVATIVE_REQUESTS = (JvpOp, *REQUESTS)


@dataclass(frozen=True)
class VmapPass(ModulePass):
    """Replace irad.vmap requests by calls to generated batched functions,
    the innermost first (derivative requests below a vmap first)."""

    name = "irad-vmap"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        while requests := find(op, VmapOp):
            functions = _functions(op)
            below = {r: reached_ops(functions, [_callee(r)]) for r in requests}
            ready = [r for r in requests if not any(isinstance(o, VmapOp) for o in below[r])]
            if not ready:
                raise BatchingError(
                    f"{location(requests[0])}: the vmapped function reaches itself through vmap requests\n"
                    "  hint: vmap a function that does not vmap itself"
                )
            for request in ready:
                try:
                    _rewrite_derivatives_below(op, request)
                    Batcher(op).rewrite_request(request)
                except BatchingError:
                    if UNROLLABLE not in request.attributes:
                        raise
                    unroll(request)


def _callee(request) -> str:
    return request.callee.root_reference.data


def _functions(module: ModuleOp) -> dict[str, func.FuncOp]:
    return {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}


def _rewrite_derivatives_below(module: ModuleOp, request: VmapOp) -> None:
    """The derivative requests `request`'s callee reaches, rewritten the
    innermost first (those reached last)."""
    found = [o for o in reached_ops(_functions(module), [_callee(request)]) if isinstance(o, DERIVATIVE_REQUESTS)]
    for inner in reversed(found):
        if inner.parent is None:  # rewritten with another (jacrev's sweeps share one)
            continue
        if isinstance(inner, JvpOp):
            if _reaches_tape(module, inner):
                raise BatchingError(
                    f"{location(inner)}: irad-vmap cannot batch forward mode over a tape (the jvp of a "
                    "gradient through a loop, as in hessian)\n  hint: compute it outside the vmapped "
                    "function, or map it with a Python loop"
                )
            ForwardDifferentiator(module).rewrite_request(inner)
        else:
            Differentiator(module).rewrite_request(inner)


def _reaches_tape(module: ModuleOp, request: JvpOp) -> bool:
    """Does the callee of `request` reach tape ops (reverse mode's, not yet
    lowered: forward mode follows them only as memref code)?"""
    functions = _functions(module)
    names = {_callee(request), *(_callee(o) for o in reached_ops(functions, [_callee(request)]))}
    return any(find(functions[n], TAPE_OPS) for n in names if n in functions)


__all__ = ["VmapPass"]
