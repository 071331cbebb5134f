"""What MLIR fuses and what it does not, decided before mlir-opt (native backend):
cheap array producers are recomputed into each consumer, so they fuse;
expensive ones stay out of consumers that broadcast them.

MLIR's `--linalg-fuse-elementwise-ops` fuses an elementwise producer into its
consumer only when the producer has one use. A gradient uses its forward
intermediates twice (the forward pass and the pullback read `x - mean` and
its square, and a broadcast of the cotangent feeds two products), so those
stay materialised: on the vectorised GMM, four (N, K, d) arrays, 6 MB each at
N = 3000, written once and read back from memory. JAX (XLA) fuses them by
recomputing the producer inside each consumer loop.

`recompute_cheap_producers` does the same on the tensor module, before
mlir-opt: an op whose result is a large array, computed elementwise from its
operands by cheap arithmetic (a broadcast, + - * /, negation, min/max,
comparisons, selects, conversions; no exp, log or tanh) and used more than
once, gets one copy per use, provided every use iterates over its elements
(an elementwise op of the same shape, a reduction of it) in the same block
(MLIR fuses within a block; a block at most doubles). Each copy then has
a single use and fuses into its consumer; the consumers are visited first
(in reverse order), so a producer of a copied op is copied for each copy in
turn. An op with any other use is left alone: a matrix product or a return
needs the array materialised anyway, and a broadcast would repeat the
producer's work along its new axes (on the GMM, an (N, K) cotangent
recomputed d times over was slower than reading it back; on the MLP,
recomputing `dh * (1 - h**2)` for the bias gradient beside the product that
needs it materialised cost 20%). Recomputing is exact: the same operations
on the same operands give the same bits, and a fused reduction accumulates
in the same order.

The other way round, MLIR also fuses a single-use producer into a consumer
that reads it through a broadcast, and then computes it once per element of
the consumer: `np.exp(-2 * log_sigmas)` (K, d) broadcast over the GMM's N
points ran N times as many `exp`s, which took more than half of the native
GMM primal (whose `inv_var` has one use; the gradient's has more).
MLIR's C++ API takes a control function for this (IREE's refuses such
fusions), mlir-opt has no option, so `materialise_before_broadcasts` puts
a copy into a new tensor (`bufferization.alloc_tensor copy(...)`: not a
linalg op, so fusion stops there) between a broadcasting consumer and a
producer chain MLIR would fuse into it that holds anything but cheap
arithmetic (an `exp`, `log`, `tanh`, ...). The producer is then computed
once into its own buffer, copied once (it is the small side of the
broadcast); the broadcast still fuses into its consumers. (A
`materialize_in_destination` into a `tensor.empty` would spare the copy,
but CSE merges equal empties, and bufferization then fails on the
read-after-write conflict.) The same operations run on the same operands:
no bit changes.
"""

from __future__ import annotations

from xdsl.dialects import arith, bufferization, func, tensor
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Operation, Use
from xdsl.ir.affine import AffineDimExpr

# Smaller arrays stay in cache anyway; copying their producers would only add
# code for mlir-opt and LLVM to compile.
MIN_ELEMENTS = 1 << 14
# An op used more often stays materialised: a bound on what the copies cost
# to compile, however the uses branch.
MAX_COPIES_PER_OP = 64

_CHEAP_ARITH = (
    arith.AddfOp, arith.SubfOp, arith.MulfOp, arith.DivfOp, arith.NegfOp, arith.MaximumfOp, arith.MinimumfOp,
    arith.MaxnumfOp, arith.MinnumfOp, arith.CmpfOp, arith.SelectOp, arith.UIToFPOp, arith.SIToFPOp,
    arith.AddiOp, arith.SubiOp, arith.MuliOp, arith.CmpiOp, arith.AndIOp, arith.OrIOp, arith.XOrIOp,
    arith.ExtFOp, arith.TruncFOp,
)


def _large(op: Operation) -> bool:
    if len(op.results) != 1:
        return False
    t = op.results[0].type
    return isinstance(t, TensorType) and t.has_static_shape() and t.element_count() >= MIN_ELEMENTS


def _cheap_body(op: linalg.GenericOp) -> bool:
    return all(isinstance(inner, (*_CHEAP_ARITH, linalg.YieldOp)) for inner in op.body.walk())


def _cheap(op: Operation) -> bool:
    """Computed elementwise from its operands, by cheap arithmetic."""
    if isinstance(op, (linalg.BroadcastOp, tensor.SplatOp)):
        return True
    if isinstance(op, _CHEAP_ARITH):
        return True  # on tensors: elementwise
    if isinstance(op, linalg.GenericOp):
        return (
            all(it.data.value == "parallel" for it in op.iterator_types.data)
            and len(op.outputs) == 1
            and _cheap_body(op)
        )
    return False


def recompute_cheap_producers(module: ModuleOp) -> int:
    """Copy each cheap, large, multiply used array producer once per use (in
    place). Returns the number of copies made."""
    copies = 0
    for function in [op for op in module.ops if isinstance(op, func.FuncOp)]:
        for block in [b for region in function.regions for b in region.blocks]:
            copies += _recompute_in(block)
    return copies


def _same_domain(use: Use, shape: tuple[int, ...]) -> bool:
    """The user iterates over the producer's own elements, once each: an
    elementwise op of the same shape, a reduction of it, or a generic reading
    it through a permutation. A broadcast (or any other user) would repeat
    the producer's work over a larger domain if the producer fused into it."""
    user, value = use.operation, use.operation.operands[use.index]
    if user.parent_block() is not value.owner.parent_block():
        return False  # in a loop's body, say: MLIR fuses within a block only
    if isinstance(user, linalg.ReduceOp):
        return value is user.input
    if isinstance(user, linalg.GenericOp):
        if value not in user.inputs:
            return False
        indexing = user.indexing_maps.data[list(user.inputs).index(value)].data
        return indexing.num_dims == len(shape) and _is_permutation(indexing)
    if isinstance(user, _CHEAP_ARITH) or user.dialect_name() == "math":
        return all(isinstance(r.type, TensorType) and tuple(r.type.get_shape()) == shape for r in user.results)
    return False


def _is_permutation(indexing) -> bool:
    dims = [e.position for e in indexing.results if isinstance(e, AffineDimExpr)]
    return len(dims) == len(indexing.results) == indexing.num_dims and len(set(dims)) == len(dims)


def _recompute_in(block) -> int:
    copies, ops = 0, list(block.ops)
    for op in reversed(ops):
        if copies >= len(ops):
            break  # the block at most doubles, however the copies multiply along chains
        if not (_large(op) and _cheap(op)):
            continue
        shape = tuple(op.results[0].type.get_shape())
        uses = list(op.results[0].uses)
        if len(uses) < 2 or len(uses) > MAX_COPIES_PER_OP:
            continue
        if not all(_same_domain(use, shape) for use in uses):
            continue  # materialised for that use anyway: the others read it back
        for use in uses[1:]:  # the op itself serves the first
            copy = op.clone()
            block.insert_op_before(copy, use.operation)
            use.operation.operands[use.index] = copy.results[0]
            copies += 1
    return copies


# Ops MLIR's fusion folds away or sees through: a producer behind them fuses as if direct.
_VIEWS = (tensor.ExtractSliceOp, tensor.ReshapeOp, tensor.CollapseShapeOp, tensor.ExpandShapeOp, tensor.CastOp)


def materialise_before_broadcasts(module: ModuleOp) -> int:
    """Materialise (in place) every array a consumer broadcasts whose producer
    chain MLIR would fuse into that consumer and holds more than cheap
    arithmetic. Returns the number of arrays materialised."""
    barriers = 0
    for op in list(module.walk()):
        for index, value in enumerate(op.operands):
            if _broadcasts(op, index) and _fuses_expensive(value, op.parent_block()):
                barriers += _materialise(op, index)
    return barriers


def _broadcasts(user: Operation, index: int) -> bool:
    """`user` reads its operand `index` (an array) over a larger domain than
    the operand's own elements, each element more than once."""
    if isinstance(user, linalg.BroadcastOp):
        return index == 0 and user.init.type.element_count() > user.input.type.element_count()
    if isinstance(user, linalg.GenericOp) and user.operands[index] in user.inputs:
        value = user.operands[index]
        if not isinstance(value.type, TensorType):
            return False
        indexing = user.indexing_maps.data[list(user.inputs).index(value)].data
        return _is_projection(indexing)
    return False


def _is_projection(indexing) -> bool:
    """Reads through some of the loops only (each element for every value of
    the others): distinct loop indices, fewer than there are loops. (A
    constant index reads a slice: no repeated work to avoid.)"""
    dims = [e.position for e in indexing.results if isinstance(e, AffineDimExpr)]
    return len(dims) == len(indexing.results) == len(set(dims)) < indexing.num_dims


def _fuses_expensive(value, block) -> bool:
    """Whether MLIR would fuse, into a consumer of `value` in `block`, a chain
    of producers that holds more than cheap arithmetic: each fuses only if
    it has one use, is elementwise and sits in the same block."""
    op = value.owner
    if not isinstance(op, Operation) or op.parent_block() is not block or len(op.results) != 1:
        return False
    if not op.results[0].has_one_use():
        return False  # materialised anyway
    if isinstance(op, _VIEWS):
        return _fuses_expensive(op.operands[0], block)
    if _cheap(op):
        return any(_fuses_expensive(v, block) for v in op.operands if isinstance(v.type, TensorType))
    return _elementwise(op)


def _elementwise(op: Operation) -> bool:
    """Computed element by element on tensors (so MLIR fuses it), cheap or not."""
    if isinstance(op, linalg.GenericOp):
        return all(it.data.value == "parallel" for it in op.iterator_types.data) and len(op.outputs) == 1
    if op.dialect_name() in ("arith", "math"):
        return isinstance(op.results[0].type, TensorType)
    return False


def _materialise(user: Operation, index: int) -> int:
    value = user.operands[index]
    if not value.type.has_static_shape():
        return 0
    copy = bufferization.AllocTensorOp(value.type, copy=value)
    user.parent_block().insert_op_before(copy, user)
    user.operands[index] = copy.tensor
    return 1
