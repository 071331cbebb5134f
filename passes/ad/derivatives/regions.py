"""Derivatives of the ops with regions (scf.if, scf.for, scf.while) and of calls.

These are structured entries (registry.py): their rules rebuild the whole op,
with any number of results, so they delegate to the builders that know the
enclosing sweep: PullbackBuilder (passes/ad/reverse.py, loops through
passes/ad/reverse_loops.py) and TangentBuilder with ForwardRegions (passes/ad/forward.py,
passes/ad/forward_regions.py). A call's derivative comes from the rule table or
the callee's generated functions, which the builders look up.
"""

from __future__ import annotations

from irad.base.errors import BatchingError
from irad.ir.locations import location
from irad.ir.metadata import MASKED
from irad.passes.ad.derivatives import batching
from irad.passes.ad.derivatives.registry import OpDerivative


def _reverse_if(b, op, cotangents, adj) -> None:
    b.reverse_if(op, cotangents, adj)


def _reverse_loop(b, op, cotangents, adj) -> None:
    if MASKED in op.attributes:
        raise BatchingError(
            f"{location(op)}: irad cannot differentiate in reverse mode a loop whose trip count varies along "
            "a vmap batch (it runs to the largest, with a mask, and the discarded iterations' cotangents "
            "would be zero times derivatives that may be infinite)\n  hint: differentiate inside the vmap "
            "(vmap(grad(f)) takes each element's gradient in a loop over the batch), or give every element "
            "the same trip count (pad the sequences and mask the padding with np.where)"
        )
    b.reverse_loop(op, cotangents, adj)


def _reverse_call(b, op, cotangents, adj) -> None:
    for operand, ct in zip(op.operands, b.reverse_call(op, cotangents)):
        b.accumulate(adj, operand, ct)


def _forward_if(b, op) -> None:
    if op.results:
        b.if_(op)
    else:  # nothing to carry a tangent out of it
        b.clone(op)


def _forward_for(b, op) -> None:
    b.for_(op)


def _forward_while(b, op) -> None:
    b.while_(op)


def _forward_call(b, op) -> None:
    b.call(op)


ENTRIES: dict[str, OpDerivative] = {
    e.name: e
    for e in (
        OpDerivative("scf.if", _reverse_if, _forward_if, structured=True, batch=batching.if_),
        OpDerivative("scf.for", _reverse_loop, _forward_for, structured=True, batch=batching.for_),
        OpDerivative("scf.while", _reverse_loop, _forward_while, structured=True, batch=batching.while_),
        OpDerivative("func.call", _reverse_call, _forward_call, structured=True, batch=batching.call),
    )
}
