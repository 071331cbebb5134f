"""irad-sink-accumulations: sums over the iterations of a loop of matrix
products (or of column sums) taken after the loop, as one product (one sum).

The reversed loop of a gradient accumulates a weight's cotangent one outer
product per iteration, `dW += h_tᵀ g_t`:

    %dW2 = arith.addf %dW, %p
    %p = linalg.matmul ins(%hT, %g : tensor<MxK>, tensor<KxN>) outs(%zeros)

Each iteration then fills a fresh M×N product with zeros, multiplies with
K = 1 (no BLAS is good at that) and adds M×N numbers. Since
Σ_i x_i y_i = [x_0 … x_{T-1}] [y_0; …; y_{T-1}], an `scf.for` with constant
bounds 0..T step 1 (T ≥ 1; a reversed loop has them when the primal loop
has constant bounds) instead stacks x_i into columns K·i.. and y_i into rows
K·i.. of buffers it carries (`tensor.insert_slice` into a `tensor.empty`,
every slot written once), and one matmul of depth K·T after the loop gives the
sum, added to the accumulator's initial value unless that is zero. An x that
is a transposed u (h_tᵀ) is stacked as u, in rows, and the product reads the
stack transposed (BLAS's transpose flag natively, a view in numpy). The same
for `acc += sum(v, axis=0)` (the cotangent of a broadcast bias): one sum over
the rows of v's stack. Values stacked twice share one stack.

A contraction that sums over one letter both its inputs have (irad-vmap's
per-example `dW_b += outer(g_b, h_b)`: 'bik,bkj->bij' with K = 1) sinks the
same way: each input stacked along its axis of that letter, one contraction
of the stacks after the loop (a batched matrix product of depth K·T).

An accumulator qualifies only if the loop reads it nowhere but in that
`addf`, whose result is only yielded as its next value: then no iteration
can tell the difference. The sum is reassociated (rounding differs, as
between BLAS and a loop). Sizes: the stacks hold T·K·(M + N) numbers, what
the tape already holds for such a loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, builtin, scf, tensor
from xdsl.dialects.builtin import TensorType
from xdsl.dialects.linalg.ops import MatmulOp, ReduceOp, TransposeOp
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from irad.ir import contraction
from irad.ir import tensor as T
from irad.ir.builder import IRBuilder
from irad.ir.constants import is_splat_of
from irad.passes.ad.reverse_loops import constant_index, static_trip_count
from irad.ir.walk import find


@dataclass
class _Stack:
    """A value of the body stacked along `axis` (0: rows, 1: columns) over the iterations."""

    value: SSAValue
    axis: int
    arg: BlockArgument | None = None
    result: SSAValue | None = None


@dataclass
class _Sunk:
    """An accumulator sunk out of the loop: what it adds up, from which stacks."""

    position: int  # among the loop's iter_args
    add: Operation
    term: Operation  # the linalg.matmul, linalg.reduce or contraction
    stacks: tuple[_Stack, ...]
    transposed: bool  # the matmul's lhs is the transposed stack of its transpose's input
    subscripts: tuple[list[str], str] | None = None  # a contraction's


def _static_2d(v: SSAValue) -> bool:
    t = v.type
    return isinstance(t, TensorType) and len(t.get_shape()) == 2 and min(t.get_shape()) >= 0


def _only_use(value: SSAValue, user: Operation) -> bool:
    return all(use.operation is user for use in value.uses)


def _is_sum_over_rows(op: Operation) -> bool:
    """linalg.reduce by addf over axis 0 of a static matrix, from zeros."""
    if not isinstance(op, ReduceOp) or len(op.operands) != 2 or not _static_2d(op.operands[0]):
        return False
    body_ops = list(op.regions[0].block.ops)
    return (
        tuple(op.dimensions.get_values()) == (0,)
        and len(body_ops) == 2
        and isinstance(body_ops[0], arith.AddfOp)
        and is_splat_of(op.operands[1], 0.0)
    )


def _plain_matmul(op: Operation) -> bool:
    return (
        isinstance(op, MatmulOp)
        and len(op.inputs) == 2
        and len(op.outputs) == 1
        and all(_static_2d(v) for v in (*op.inputs, op.outputs[0]))
        and is_splat_of(op.outputs[0], 0.0)
    )


def _summed_letter(op: Operation) -> str | None:
    """The one letter a 2-input contraction of static tensors from zeros sums
    over, found in both inputs (a batched matrix product, as irad-vmap makes of
    `dW += outer(g, h)`), else None."""
    if not contraction.is_contraction(op) or len(op.inputs) != 2 or not is_splat_of(op.outputs[0], 0.0):
        return None
    if not all(isinstance(v.type, TensorType) and v.type.has_static_shape() for v in op.inputs):
        return None
    ins, out = contraction.subscripts(op)
    summed = {c for c in ins[0] + ins[1] if c not in out}
    if len(summed) != 1:
        return None
    (k,) = summed
    return k if k in ins[0] and k in ins[1] else None


def _transposed_input(x: SSAValue) -> SSAValue | None:
    owner = x.owner
    if isinstance(owner, TransposeOp) and tuple(owner.permutation.get_values()) == (1, 0):
        return owner.inputs[0]
    return None


def _accumulation(acc: BlockArgument, position: int, body: Block) -> tuple[Operation, Operation] | None:
    """(addf, term) if iter_arg `acc` is only ever `acc + term`, yielded as its
    next value, with `term` a product or a column sum computed for it alone."""
    add = acc.first_use.operation if acc.first_use is not None else None
    if not isinstance(add, arith.AddfOp) or not _only_use(acc, add) or add.parent_block() is not body:
        return None
    if add.lhs is add.rhs:
        return None
    term = (add.rhs if add.lhs is acc else add.lhs).owner
    if not isinstance(term, Operation) or term.parent_block() is not body or not _only_use(term.results[0], add):
        return None
    if not (_plain_matmul(term) or _is_sum_over_rows(term) or _summed_letter(term) is not None):
        return None
    uses = list(add.result.uses)
    if len(uses) != 1 or uses[0].operation is not body.last_op or uses[0].index != position:
        return None
    return add, term


def sink_accumulations(loop: scf.ForOp) -> bool:
    """Sink the accumulations of `loop` (see the module docstring); whether any."""
    trips = static_trip_count(loop)
    if trips is None or trips < 1 or constant_index(loop.lb) != 0 or constant_index(loop.step) != 1:
        return False
    body = loop.body.block
    stacks: dict[tuple[SSAValue, int], _Stack] = {}

    def stack(value: SSAValue, axis: int) -> _Stack:
        return stacks.setdefault((value, axis), _Stack(value, axis))

    sunk: list[_Sunk] = []
    for position, acc in enumerate(body.args[1:]):
        found = _accumulation(acc, position, body)
        if found is None:
            continue
        add, term = found
        if contraction.is_contraction(term):  # each input stacked along the letter it sums over
            k = _summed_letter(term)
            ins, out = contraction.subscripts(term)
            stacked = tuple(stack(x, s.index(k)) for x, s in zip(term.inputs, ins))
            sunk.append(_Sunk(position, add, term, stacked, False, (ins, out)))
        elif isinstance(term, MatmulOp):
            x, y = term.inputs
            u = _transposed_input(x)
            lhs = stack(u, 0) if u is not None else stack(x, 1)
            sunk.append(_Sunk(position, add, term, (lhs, stack(y, 0)), u is not None))
        else:
            sunk.append(_Sunk(position, add, term, (stack(term.operands[0], 0),), False))
    if not sunk:
        return False
    _rebuild(loop, trips, sunk, list(stacks.values()))
    return True


def _stack_type(s: _Stack, trips: int) -> TensorType:
    dims = list(T.shape(s.value))
    dims[s.axis] *= trips
    return T.tensor_type(T.element(s.value), dims)


def _rebuild(loop: scf.ForOp, trips: int, sunk: Sequence[_Sunk], stacks: Sequence[_Stack]) -> None:
    body = loop.body.block
    old_yield = body.last_op
    iv = body.args[0]
    # in the body: each stacked value written into its slot of this iteration
    c = IRBuilder(body, old_yield)
    offsets: dict[int, SSAValue] = {1: iv}  # by the rows (columns) a slot has
    for s in stacks:
        s.arg = body.insert_arg(_stack_type(s, trips), len(body.args))
        rows = T.shape(s.value)[s.axis]
        if rows not in offsets:
            offsets[rows] = c.value(arith.MuliOp(iv, c.index(rows)))
        offset = offsets[rows]
        rank = len(T.shape(s.value))
        static = [T.DYNAMIC if d == s.axis else 0 for d in range(rank)]
        s.result = c.op(tensor.InsertSliceOp.get(s.value, s.arg, list(T.shape(s.value)), static, [1] * rank,
                                                 [offset]))
    dropped = {k.position for k in sunk}
    kept = [v for j, v in enumerate(old_yield.operands) if j not in dropped]
    c.insert(scf.YieldOp(*kept, *(s.result for s in stacks)))
    old_yield.detach()
    old_yield.erase()
    for k in sunk:
        k.add.detach()
        k.add.erase()
        x = k.term.operands[0]
        k.term.detach()
        k.term.erase()
        if k.transposed and not x.uses:
            transpose = x.owner
            init = transpose.outputs[0]
            transpose.detach()
            transpose.erase()
            if isinstance(init.owner, tensor.EmptyOp) and not init.uses:
                init.owner.detach()
                init.owner.erase()
    inits = list(loop.operands[3:])
    for j in sorted(dropped, reverse=True):
        body.erase_arg(body.args[1 + j])
    # the loop again, carrying the stacks instead of the accumulators
    before = IRBuilder(loop.parent_block(), loop)
    empties = [before.op(tensor.EmptyOp([], _stack_type(s, trips))) for s in stacks]
    region = Region()
    loop.body.move_blocks(region)
    new = scf.ForOp(loop.lb, loop.ub, loop.step, [v for j, v in enumerate(inits) if j not in dropped] + empties,
                    region)
    before.insert(new)
    kept_results = [r for j, r in enumerate(loop.results) if j not in dropped]
    for old, result in zip(kept_results, new.results):
        old.replace_all_uses_with(result)
        result.name_hint = old.name_hint
    n = len(kept_results)
    for s, result in zip(stacks, new.results[n:]):
        s.result = result
    # after it: the whole sum at once
    after = IRBuilder(loop.parent_block(), loop)
    for k in sunk:
        total = _total(after, k, k.term)
        init = inits[k.position]
        if not is_splat_of(init, 0.0):
            total = after.op(arith.AddfOp(init, total))
        loop.results[k.position].replace_all_uses_with(total)
    loop.detach()
    loop.erase()


def _total(b: IRBuilder, k: _Sunk, term: Operation) -> SSAValue:
    if isinstance(term, ReduceOp):
        return T.reduce(b, k.stacks[0].result, [0])
    if k.subscripts is not None:
        return contraction.contract(b, [s.result for s in k.stacks], *k.subscripts)
    lhs, rhs = (s.result for s in k.stacks)
    if k.transposed:
        lhs = T.transpose(b, lhs, [1, 0])
    return T.matmul(b, lhs, rhs)


class SinkAccumulationsPass(ModulePass):
    """Sink each loop's matrix-product and column-sum accumulators out of it
    (see passes/sink_accumulations.py)."""

    name = "irad-sink-accumulations"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        # inner loops first: what they sink may let the loop around them sink more
        for loop in reversed(find(op, scf.ForOp)):
            sink_accumulations(loop)
