"""Batching a derivative request (`irad.grad`, `irad.value_and_grad`,
`irad.vjp`, `irad.jvp`) that irad-vmap meets in a vmapped function, for the
ways a batch reaches it.

- **Reverse mode, a primal argument varies along the batch and the callee
  reaches a loop** (per-example gradients of a recurrent model:
  `vmap(grad(loss), in_axes=(None, 0, 0))`). The request is differentiated
  in place and the generated code batched, with a *batched tape*: a tape
  made in batched code records the values that vary along the batch for
  every element and the shared ones once (passes/ad/derivatives/tape.py,
  passes/batching/records.py; irad-lower-tape scales its positions). So a
  shared weight stays shared through the loop and its pullback: `W @ h_b` is
  one matrix product for the batch, and the weight's per-example cotangent a
  batched outer product per step (irad-sink-accumulations then takes their
  sum over the steps as one batched product after the loop). Not when the
  batched callee has a loop whose trip count varies along the batch (below),
  when the callee asks for derivatives itself, or when a derivative request
  of the module reaches the vmap (its code would be differentiated again,
  and a batched tape has no shadow): then as the next case.
- **A primal argument varies along the batch and the callee reaches a loop**,
  otherwise (forward mode: `vmap(hessian(f))` through a loop). The request
  is asked of the callee's batched function instead, in which every argument
  it differentiates is batched (an unbatched one is broadcast first, so that
  each element gets its own derivative), with batched cotangents (ones for a
  gradient: reverse requests become `irad.vjp`) or tangents. irad-differentiate
  and irad-jvp, which run after irad-vmap, differentiate the batched code.
  Each element's outputs depend on its own arguments only, so the derivative
  of the batched function is each element's derivative. With a loop whose
  trip count varies along the batch, a reverse request is asked once per
  element instead (passes/batching/per_element.py).
- **Otherwise** (no loop, or only the cotangents or tangents vary, as in a
  Jacobian over a basis) the request is differentiated in place (the requests
  below it first) and the generated code batched: an unbatched primal
  argument stays unbatched in the forward sweep (one matmul for the whole
  batch, not one per element with broadcast weights) and its cotangent is
  batched where the batch reaches it; a reverse tape then holds unbatched
  values and is copied as it is. Forward mode over a reverse tape with only
  the tangents batched (a Hessian over a basis, through a loop) is refused:
  forward mode follows the tape as memref code, which irad-vmap does not batch.
"""

from __future__ import annotations

from xdsl.dialects import func, scf
from xdsl.ir import Operation, SSAValue

from irad.ir.constants import float_constant, zero_constant
from irad.ir.dialect import DerivativeRequestOp, JvpOp, VjpOp, VmapOp
from irad.ir.metadata import MASKED
from irad.ir.symbols import functions_by_name
from irad.ir.types import is_differentiable
from irad.ir.walk import find, walk
from irad.passes.ad.differentiator import REQUESTS, Differentiator, reached_ops
from irad.passes.ad.forward import ForwardDifferentiator
from irad.passes.batching.per_element import request_per_element
from irad.passes.lower_tape import TAPE_OPS

REQUEST_NAMES = ("irad.grad", "irad.value_and_grad", "irad.vjp", "irad.jvp")


def batch_request(b, op: Operation) -> list[SSAValue] | None:
    """The batch rule of the derivative request `op` (module doc); `b` is the
    BatchBuilder. Returns the results' new values (all batched), or None when
    it has batched the generated code itself."""
    callee = b.batcher.functions[op.callee.root_reference.data]
    n = len(callee.function_type.inputs.data)
    primals, extra = list(op.args[:n]), list(op.args[n:])  # extra: cotangents or tangents
    if not any(b.is_batched(v) for v in primals) or not _reaches_loop(b.batcher.module, op):
        b.note(op, f"@{callee.sym_name.data} differentiated first, then its derivative code batched "
                   "(no loop, or only the cotangents or tangents vary)")
        _differentiate_here(b, op)
        return None
    wrt = op.wrt_indices
    if not isinstance(op, JvpOp):
        shared = b.batcher.batched(callee.sym_name.data, tuple(b.is_batched(v) for v in primals), b.size, op)
        if _reaches_masked(b.batcher.module, shared.name):
            b.note(op, f"asked of @{callee.sym_name.data} once per element, in a loop over the batch (its batched "
                       "callee has a loop whose trip count varies along the batch, which reverse mode refuses)")
            return request_per_element(b, op)
        if (b.batcher.batched_tapes and not _reaches_request(b.batcher.module, op)
                and not _vmap_differentiated(b.batcher.module)):
            b.note(op, f"@{callee.sym_name.data} differentiated first, then its derivative code batched with a "
                       "batched tape (it reaches a loop: the tape records the values that vary along the "
                       "batch per element, the shared ones once)")
            _differentiate_here(b, op)
            return None
    tangent_of = dict(zip(wrt, extra)) if isinstance(op, JvpOp) else {}
    flags = tuple(b.is_batched(v) or i in wrt and (not tangent_of or b.is_batched(tangent_of[i]))
                  for i, v in enumerate(primals))
    made = b.batcher.batched(callee.sym_name.data, flags, b.size, op)
    b.note(op, f"asked of @{made.name}, the batched callee, which is differentiated after batching (it "
               "reaches a loop: the tape records whole batches)")
    batched = b.batcher.functions[made.name]
    inputs, outputs = batched.function_type.inputs.data, batched.function_type.outputs.data
    args = [b.batched(v) if flag else b.get(v) for v, flag in zip(primals, flags)]
    if isinstance(op, JvpOp):
        tangents = [b.batched(t) if flags[i] else b.get(t) for i, t in zip(wrt, extra)]
        jvp = b.insert(JvpOp(made.name, [*args, *tangents], wrt, [*outputs, *filter(is_differentiable, outputs)]))
        jvp.attributes.update(op.attributes)
        floats = [flag for t, flag in zip(outputs, made.batched_results) if is_differentiable(t)]
        return _batched_all(b, jvp.results, [*made.batched_results, *floats])
    # a result that is not batched depends on no differentiated argument (they
    # are all batched): its cotangent contributes nothing
    seeded = [(t, flag) for t, flag in zip(op.differentiated(outputs), made.batched_results) if is_differentiable(t)]
    if isinstance(op, VjpOp):
        cotangents = [b.batched(c) if flag else b.op(zero_constant(t)) for c, (t, flag) in zip(extra, seeded)]
    else:  # the one float result, seeded with 1 per element
        cotangents = [b.op(float_constant(1.0, t)) for t, _ in seeded]
    aux = None if op.aux is None else op.aux.value.data
    vjp = b.insert(VjpOp(made.name, [*args, *cotangents], wrt, [inputs[i] for i in wrt], aux))
    vjp.attributes.update(op.attributes)
    results = list(vjp.results)
    if isinstance(op, DerivativeRequestOp) and op.RETURNS_VALUES:
        call = b.insert(func.CallOp(made.name, args, list(outputs)))
        results = _batched_all(b, call.results, made.batched_results) + results
    return results


def _batched_all(b, values, flags) -> list[SSAValue]:
    """`values`, each with the batch axis (the request's results are batched)."""
    return [v if flag else b.broadcast(v) for v, flag in zip(values, flags)]


def _differentiate_here(b, op: Operation) -> None:
    """Rewrite `op` in the function being batched, the requests its callee
    reaches first (the innermost first), then batch the ops that replaced it."""
    module = b.batcher.module
    functions = functions_by_name(module)
    below = [r for r in reached_ops(functions, [op.callee.root_reference.data]) if isinstance(r, (*REQUESTS, JvpOp))]
    for inner in reversed(below):
        if inner.parent is not None:  # (jacrev's sweeps share one augmented primal)
            _rewrite(module, inner)
    if isinstance(op, JvpOp) and _reaches_tape(module, op):
        b.refuse(op, "forward mode over a reverse tape (a Hessian through a loop) with only the tangents "
                 "batched: forward mode follows the tape as memref code, which irad-vmap does not batch",
                 "take forward over reverse without vmap (irad.hessian unrolls per element), or batch the "
                 "primal too")
    block, before, after = op.parent_block(), op.prev_op, op.next_op
    _rewrite(module, op)
    b.batcher.functions.update(functions_by_name(module))
    current = before.next_op if before is not None else block.first_op
    while current is not None and current is not after:
        following = current.next_op
        b.batch_op(current)
        current = following


def _rewrite(module, op: Operation) -> None:
    if isinstance(op, JvpOp):
        ForwardDifferentiator(module).rewrite_request(op)
    else:
        Differentiator(module).rewrite_request(op)


def _reached_functions(module, op: Operation) -> list[func.FuncOp]:
    functions = functions_by_name(module)
    reached = reached_ops(functions, [op.callee.root_reference.data])
    names = {op.callee.root_reference.data} | {r.callee.root_reference.data for r in reached if hasattr(r, "callee")}
    return [functions[n] for n in names if n in functions]


def _reaches_tape(module, op: Operation) -> bool:
    return any(find(f, TAPE_OPS) for f in _reached_functions(module, op))


def _reaches_masked(module, name: str) -> bool:
    """Whether @name reaches a loop irad-vmap runs with a mask."""
    functions = functions_by_name(module)
    names = {name} | {r.callee.root_reference.data for r in reached_ops(functions, [name]) if hasattr(r, "callee")}
    return any(MASKED in inner.attributes for n in names if n in functions for inner in walk(functions[n]))


def _reaches_request(module, op: Operation) -> bool:
    """Whether `op`'s callee asks for a derivative itself (its tape would be
    differentiated again: a batched tape has no shadow)."""
    return any(isinstance(r, (*REQUESTS, JvpOp)) for r in reached_ops(functions_by_name(module),
                                                                        [op.callee.root_reference.data]))


def _vmap_differentiated(module) -> bool:
    """Whether a derivative request of the module reaches an irad.vmap: its
    batched code would be differentiated again (a batched tape has no shadow)."""
    functions = functions_by_name(module)
    for request in find(module, (*REQUESTS, JvpOp)):
        names = [request.callee.root_reference.data]
        names += [r.callee.root_reference.data for r in reached_ops(functions, list(names))]
        if any(find(functions[n], VmapOp) for n in set(names) if n in functions):
            return True
    return False


def _reaches_loop(module, op: Operation) -> bool:
    """Whether reverse mode may record a tape for `op` (its callee reaches a loop)."""
    return any(find(f, (scf.ForOp, scf.WhileOp)) for f in _reached_functions(module, op))


__all__ = ["REQUEST_NAMES", "batch_request"]
