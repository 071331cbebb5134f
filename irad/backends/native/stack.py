"""Small static-shape temporaries on the stack (native backend).

A gradient over small arrays allocates a few dozen temporaries per call (the
tiny GMM's, 100×3 doubles and smaller: 26 of them), each through irad's
allocator (native/runtime.ll): malloc, a header, the call's list of buffers,
and free. On small arrays that bookkeeping is a fifth of the gradient's
instructions, more than the arithmetic of the forward pass it repeats. MLIR's
`--promote-buffers-to-stack` turns an allocation of static shape, at most
`max-alloc-size-in-bytes`, that does not leave its function (is not returned)
and is not made in a loop, into a `memref.alloca`: a few bytes of the
function's frame, freed when it returns (or when a failed check longjmps
out), that LLVM may keep in registers altogether. The arithmetic is
unchanged, so the results are the same bits.

A frame must stay small, though: the functions of a module may call each
other, and a recursive function checks its stack against a floor that leaves
only `native_checks.STACK_MARGIN` bytes for what runs below its deepest
frame. So:

* a module with recursion gets no promotion (its frames repeat, unboundedly);
* nor does one that calls an external function on arrays (the LAPACK glue of
  native/linalg.py), which may hand an operand's buffer back as its result
  for the caller to free;
* otherwise the stack promotion may add to any chain of calls is at most the
  bytes of every static tensor of the module that may become a promoted
  buffer (each function appears at most once on an acyclic chain), and the
  per-buffer limit is the largest of `LIMITS` that keeps that bound within
  `budget()` bytes (irad.config's `native_stack_kb`, 256 KB by default; 0
  turns promotion off). Bufferization allocates at most one buffer per such tensor,
  so the bound is an overestimate: views (slices, reshapes) and the tensors
  fusion removes are counted too.
"""

from __future__ import annotations

from xdsl.dialects import func, scf, tensor
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation

from irad.base import config
from irad.ir.callgraph import call_cycles

# The per-buffer limits tried, largest first (bytes).
LIMITS = (8192, 4096, 2048, 1024, 512, 256, 128, 64)
# Ops whose tensor result is a view of an operand, or no buffer of its own once bufferized.
_VIEWS = (tensor.ExtractSliceOp, tensor.ReshapeOp, tensor.CollapseShapeOp, tensor.ExpandShapeOp, tensor.CastOp)
# MLIR promotes nothing made in a loop's body (it would be made again on each trip).
_LOOPS = (scf.ForOp, scf.WhileOp, scf.ParallelOp)


def budget() -> int:
    """Bytes promotion may add to the stack of any chain of calls (0: none)."""
    return config.read("native_stack_kb") * 1024


def promotion(module: ModuleOp) -> tuple[str, ...]:
    """The mlir-opt pass that puts `module`'s small temporaries on the stack (to
    run after bufferization, before deallocation), or none."""
    limit = buffer_limit(module, budget())
    return (f"--promote-buffers-to-stack=max-alloc-size-in-bytes={limit}",) if limit else ()


def buffer_limit(module: ModuleOp, budget_bytes: int) -> int:
    """The largest per-buffer limit (bytes) whose promoted buffers fit in
    `budget_bytes` on any chain of calls; 0 if none may be promoted."""
    if budget_bytes <= 0 or call_cycles(module) or _external_array_callees(module):
        return 0
    sizes = [size for op in module.walk() if (size := _static_bytes(op))]
    for limit in LIMITS:
        if sum(size for size in sizes if size <= limit) <= budget_bytes:
            return limit
    return 0


def _external_array_callees(module: ModuleOp) -> bool:
    """Whether `module` declares a function it cannot see into that takes arrays
    (irad.linalg's LAPACK primitives, native/linalg.py): such a callee may
    return an operand's buffer as its result, which the caller then frees, so
    an operand on the stack would be freed as if it were the heap's."""
    return any(
        isinstance(op, func.FuncOp) and op.is_declaration
        and any(isinstance(t, TensorType) for t in op.function_type.inputs.data)
        for op in module.ops
    )


def _static_bytes(op: Operation) -> int:
    """The bytes of a buffer bufferization may make for `op`'s tensor result
    that MLIR could promote (0 if none)."""
    if len(op.results) != 1 or isinstance(op, _VIEWS):
        return 0
    t = op.results[0].type
    if not isinstance(t, TensorType) or not t.has_static_shape():
        return 0
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        if isinstance(parent, _LOOPS):
            return 0
        parent = parent.parent_op()
    return t.element_count() * max(1, getattr(t.element_type, "bitwidth", 64) // 8)
