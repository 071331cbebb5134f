"""Loops and the tape: reversing `scf.for` / `scf.while`, and the records the
reverse sweep reads the forward sweep's per-iteration values from.

The tape (`irad.tape_*` ops, irad/ir/dialect.py) is a `memref<?xf64>` value
plus an `index` position, threaded through the augmented primal (as loop
iter_args, `scf.if` results and call arguments). It is a stack of *records*:

* at the end of every iteration of a reversed loop, the augmented primal
  pushes the loop body's residuals: `[r0, r1, ...]`, of a size known at
  compile time, so the reversed iteration finds the record before it by
  subtracting that size. Only a body that writes records of its own (nested
  reversed loops, calls that thread the tape) puts the position the iteration
  started at first: `[start, r0, r1, ...]`. An `scf.for` with a record of fixed
  size reserves room for all its records before it starts
  (`irad.tape_reserve`), and its pushes never check for growth;
* a function in tape mode (it has such loops, calls a function that does, or is
  recursive) pushes its own residuals once, before it returns.

Every construct that writes records also leaves its end position (and a loop
its trip count) as a residual of the enclosing scope, so the pullback finds
each record by position: the reversed loop starts at the loop's end position
and steps back one record per iteration, whatever nested loops or calls wrote
in between, and a construct the pullback skips cannot misalign the rest.
A record holds numbers and tensors of static shape; irad-lower-tape
(passes/lower_tape.py) turns the ops into memref code.

What is recorded is kept lean, as Enzyme and LAGrad do:

* a value defined outside a loop is read from outside (a residual of the
  enclosing scope), never recorded per iteration;
* loop-invariant scalar code is hoisted out of loops before differentiation
  (`hoist_invariants`; irad-differentiate{hoist=true}), so it is outside;
* the induction variable of an `scf.for`, and integer arithmetic on it and on
  values from outside, is recomputed in the reversed iteration from its trip
  counter, and so is a residual that one cheap scalar `arith` op makes from
  such values and from residuals recorded anyway (`sitofp` of the index):
  recomputing it costs one op, recording it a store and a load.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects import arith, func, scf, tensor
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, TensorType
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.traits import is_side_effect_free, is_speculatable

from irad.base.errors import DifferentiationError
from irad.ir.builder import IRBuilder
from irad.ir.dialect import (
    TAPE,
    TapePushOp,
    TapeReadOp,
    TapeReserveOp,
    is_recordable_type,
    record_slots,
)
from irad.ir.locations import location
from irad.ir.types import is_float
from irad.passes.ad.activity import free_values
from irad.ir.isa import isa
from irad.ir.walk import defined_inside, find
from irad.passes.hoist_loop_invariants import hoist_out_of

INDEX = IndexType()
# Residual keys a loop or tape-mode call leaves in its enclosing scope.
END_POSITION = -1
TRIP_COUNT = -2

LOOPS = (scf.ForOp, scf.WhileOp)
# What a reversed loop records per iteration: nothing (its adjoint reads no
# primal value), its body's residuals, or (checkpointing) its body's inputs.
NOTHING, CACHE, REPLAY = "nothing", "cache", "replay"


def is_loop(op: Operation | None) -> bool:
    return isa(op, LOOPS)


def _check_recordable(types: Sequence[Attribute]) -> None:
    """The user's error for what the tape ops' verifiers would refuse."""
    for t in types:
        if not is_recordable_type(t):
            raise DifferentiationError(
                f"a value of type {t} is needed by the reverse sweep inside a loop or a "
                "recursive function, and irad's tape holds only numbers\n"
                "  hint: keep non-numeric values out of loops and recursive functions"
            )


def push(
    c: IRBuilder, tape: SSAValue, pos: SSAValue, values: Sequence[SSAValue], reserved: bool = False
) -> tuple[SSAValue, SSAValue]:
    """Append `values` as one record; returns the (possibly new) tape and the end."""
    if not values:
        return tape, pos
    _check_recordable([v.type for v in values])
    return tuple(c.insert(TapePushOp(tape, pos, values, reserved)).results)


def loads_for_args(block: Block, args: Sequence[SSAValue], tape: SSAValue, end: SSAValue,
                   leading: Sequence[Attribute] = ()) -> list[SSAValue]:
    """Replace block arguments standing for residuals by loads from the record
    ending at `end`, inserted at the start of `block`. The record may begin with
    `leading` values (a loop's start position); their values are returned."""
    types = [*leading, *(a.type for a in args)]
    if not types:
        return []
    _check_recordable(types)
    values = IRBuilder(block, block.first_op).insert(TapeReadOp(tape, end, types)).results
    for arg, v in zip(args, values[len(leading):]):
        arg.replace_all_uses_with(v)
        block.erase_arg(arg)
    return values[: len(leading)]


# ---- the shape of the two loop forms ------------------------------------------
def loop_body(op: Operation) -> Block:
    return op.body.block if isinstance(op, scf.ForOp) else op.after_region.block


def carried_args(op: Operation) -> list[SSAValue]:
    """The body's block arguments that carry values between iterations."""
    body = loop_body(op)
    return list(body.args[1:]) if isinstance(op, scf.ForOp) else list(body.args)


def loop_inits(op: Operation) -> list[SSAValue]:
    return list(op.operands[3:]) if isinstance(op, scf.ForOp) else list(op.operands)


def check_while(op: scf.WhileOp, active: set[SSAValue], where: str) -> None:
    """The reversible scf.while: its condition forwards the carried values
    unchanged and computes nothing that needs a derivative."""
    before = op.before_region.block
    condition = before.last_op
    forwarded = list(condition.operands[1:])
    if forwarded != list(before.args):
        raise DifferentiationError(
            f"{where}: an scf.while whose condition region passes on values other "
            "than its own arguments (in order) cannot be reversed\n"
            "  hint: compute new values in the `do` region"
        )
    for inner in op.before_region.walk():
        if any(r in active for r in inner.results):
            raise DifferentiationError(
                f"{where}: the condition region of an scf.while computes a value "
                "that needs a derivative\n  hint: compute it in the `do` region"
            )


# ---- what costs nothing to have again: invariants, the index, cheap scalars -------
# Integer division traps (and irad checks its divisor), so it is neither hoisted
# out of a loop that might not run it nor recomputed where it was not computed.
_TRAPPING = frozenset(
    f"arith.{name}"
    for name in ("divsi", "divui", "remsi", "remui", "floordivsi", "ceildivsi", "ceildivui")
)


def _scalar(t: Attribute) -> bool:
    return not isinstance(t, TensorType | MemRefType)


def _cheap_scalar(op: Operation) -> bool:
    """A pure op on numbers that cannot trap: computing it again, or earlier,
    changes nothing but the time it takes."""
    return (
        not op.regions
        and op.name not in _TRAPPING
        and not isinstance(op, func.CallOp)
        and all(_scalar(v.type) for v in (*op.operands, *op.results))
        and is_side_effect_free(op)
        and is_speculatable(op)
    )


def hoist_invariants(fn: func.FuncOp) -> None:
    """Move the cheap scalar ops of loop bodies that use only values from outside
    the loop out before it (innermost loops first, so an invariant climbs as far
    as it can). Reverse mode then reads them from outside, instead of recording
    them every iteration. Only ops that cannot trap move: a loop that runs no
    iteration computes them for nothing, harmlessly."""
    for loop in reversed(find(fn, LOOPS)):  # inner loops before the loops around them
        hoist_out_of(loop, loop_body(loop), _cheap_scalar)


# The most slots a loop reserves on its tape (2^53 bytes): a trip count beyond
# that fails as the allocation of more memory than any machine has, where the
# product trips × slots would wrap around in i64 (range(2^61) with a record of
# six slots reserved a tape of 0 bytes natively, and wrote past it).
MAX_RESERVED_SLOTS = 1 << 50


# ---- the forward sweep: a loop that records its iterations ----------------------
def clone_loop(a, op: Operation, dst: Block) -> None:
    """Clone a loop into the augmented primal (builder `a`), carrying the tape,
    the position and a trip counter, and pushing one record per iteration."""
    inits = [a.values[v] for v in loop_inits(op)]
    kind = a.loop_records.get(op, NOTHING)  # as the pullback decided
    fixed = not _writes_records_inside(op, a.plan)
    if kind == REPLAY:  # checkpointing: the iteration's inputs only
        record_types = [arg.type for arg in replay_inputs(op)]
    elif kind == CACHE:
        record_types = [a.key_type(k) for k in a.scope_keys.get(op, [])]
    else:
        record_types = []
    reserved = fixed and bool(record_types) and isinstance(op, scf.ForOp)
    if reserved:  # room for every record, once, before the loop
        c = IRBuilder(dst)
        lower, upper, step = (a.values[v] for v in op.operands[:3])
        trips = c.value(arith.CeilDivSIOp(c.value(arith.SubiOp(upper, lower)), step))
        trips = c.value(arith.MaxSIOp(trips, c.index(0)))
        # at most MAX_RESERVED_SLOTS + a record: the product cannot wrap around to a
        # small tape the loop would write beyond; the allocation of so many fails
        per_trip = record_slots(record_types)
        trips = c.value(arith.MinSIOp(trips, c.index(MAX_RESERVED_SLOTS // per_trip + 1)))
        slots = c.value(arith.MuliOp(trips, c.index(per_trip)))
        tail = _tail_slots(a, op)
        if tail:
            slots = c.value(arith.AddiOp(slots, c.index(tail)))
        a.tape = c.value(TapeReserveOp(a.tape, a.pos, slots))
    zero = IRBuilder(dst).index(0)
    extra = [a.tape, a.pos, zero]
    extra_types = [TAPE, INDEX, INDEX]
    body = loop_body(op)
    new_body = Block(arg_types=[*(arg.type for arg in body.args), *extra_types])
    for old, new in zip(body.args, new_body.args):
        new.name_hint = old.name_hint
    a.values.update(zip(body.args, new_body.args))
    tape, start, count = new_body.args[-3:]
    tape.name_hint, start.name_hint, count.name_hint = "tape", "pos", "trip"
    a.tape, a.pos = tape, start
    a.clone_block(body, new_body)
    yields = [a.values[v] for v in body.last_op.operands]
    if kind == REPLAY:
        record = [a.values[arg] for arg in replay_inputs(op)]
    elif kind == CACHE:
        record = [a.key_value(k) for k in a.scope_keys.get(op, [])]
    else:
        record = []
    if record and not fixed:  # nested records in between: say where this one starts
        record = [start, *record]
    c = IRBuilder(new_body)
    tape, end = push(c, a.tape, a.pos, record, reserved)
    count = c.value(arith.AddiOp(count, c.index(1)))
    new_body.add_op(scf.YieldOp(*yields, tape, end, count))
    result_types = [*(r.type for r in op.results), *extra_types]
    if isinstance(op, scf.ForOp):
        lower, upper, step = (a.values[v] for v in op.operands[:3])
        new = scf.ForOp(lower, upper, step, [*inits, *extra], Region(new_body))
    else:
        before = op.before_region.block
        new_before = Block(arg_types=[*(arg.type for arg in before.args), *extra_types])
        for old, new in zip(before.args, new_before.args):
            new.name_hint = old.name_hint
        a.values.update(zip(before.args, new_before.args))
        a.clone_block(before, new_before)
        condition = before.last_op
        new_before.add_op(
            scf.ConditionOp(
                a.values[condition.operands[0]],
                *(a.values[v] for v in condition.operands[1:]),
                *new_before.args[-3:],
            )
        )
        new = scf.WhileOp([*inits, *extra], result_types, Region(new_before), Region(new_body))
    dst.add_op(new)
    n = len(op.results)
    for r, v in zip(op.results, new.results[:n]):
        a.values[r] = v
        v.name_hint = r.name_hint
    a.tape, a.pos, trips = new.results[n:]
    a.call_residuals[(op, END_POSITION)] = a.pos
    a.call_residuals[(op, TRIP_COUNT)] = trips


def _tail_slots(a, op: Operation) -> int:
    """The slots of the function's own record (tape mode), if `op` is the last
    op of its body to write records: its reserve makes room for that record
    too, so that the push before the return does not grow the tape again
    (a copy of everything the loop recorded). Room to spare is harmless."""
    body = a.primal_fn.body.block
    if not a.tape_mode or op.parent_block() is not body:
        return 0
    if any(a.records(later) for later in _ops_after(op)):
        return 0
    return record_slots([a.key_type(k) for k in a.residual_keys])


def _ops_after(op: Operation):
    later = op.next_op
    while later is not None:
        yield later
        later = later.next_op


# ---- the reverse sweep: the same iterations, last first --------------------------
def constant_index(v: SSAValue) -> int | None:
    """The integer `v` always is (an `arith.constant`, possibly through
    `arith.index_cast`s), else None."""
    while isinstance(v.owner, arith.IndexCastOp):
        v = v.owner.input
    owner = v.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def static_trip_count(op: Operation) -> int | None:
    """How many times an `scf.for` with constant bounds runs, else None."""
    if not isinstance(op, scf.ForOp):
        return None
    lower, upper, step = (constant_index(v) for v in op.operands[:3])
    if lower is None or upper is None or step is None or step <= 0:
        return None
    return max(0, -((lower - upper) // step))


def _index_constant(n: int) -> SSAValue:
    """A detached `arith.constant n : index` (b.primal clones it into the pullback)."""
    return arith.ConstantOp.from_int_and_width(n, IndexType()).result


def reverse_loop(b, op: Operation, cotangents, adj) -> None:
    """Emit the adjoint of a loop into the pullback (builder `b`): an scf.for over
    the trip count that reads each iteration's record, newest first, carrying
    the cotangents of the carried values and accumulating those of the values
    the body uses from outside."""
    if isinstance(op, scf.WhileOp):
        check_while(op, b.plan.active, location(op))
    body = loop_body(op)
    args, inits = carried_args(op), loop_inits(op)
    yields = list(body.last_op.operands)
    slots = [j for j, arg in enumerate(args) if b.is_active(arg) or b.is_active(op.results[j])]
    free = free_values(op, b.plan.active)
    known = static_trip_count(op)
    # a count known at compile time is a constant of the pullback, not a residual:
    # the reversed loop then has static bounds (irad-sink-accumulations needs them)
    trips = b.residual((op, TRIP_COUNT), INDEX) if known is None else b.primal(_index_constant(known))
    last = b.residual((op, END_POSITION), INDEX)
    seeds = [
        cotangents[j] if cotangents[j] is not None else b.zero(args[j].type) for j in slots
    ]
    outer = b.block
    c = IRBuilder(outer)
    lower, one = c.index(0), c.index(1)
    rbody = Block(
        arg_types=[INDEX, INDEX, *(args[j].type for j in slots), *(f.type for f in free)]
    )
    rbody.args[1].name_hint = "end"
    cts = rbody.args[2 : 2 + len(slots)]
    sums = rbody.args[2 + len(slots) :]
    b.open_scope(op, rbody)
    b.block = rbody
    # The shadow of a tape the body reads goes round the loop, updated in
    # place; a float's cotangent is summed from zero.
    local: dict[SSAValue, SSAValue] = {f: s for s, f in zip(sums, free) if f.type == TAPE}
    for j, ct in zip(slots, cts):
        b.accumulate(local, yields[j], ct)
    b.reverse_block(body, local)
    new_cts = [b.cotangent_or_zero(local, args[j]) for j in slots]
    new_sums = [
        local[f] if f.type == TAPE else b.add(s, local[f]) if f in local else s
        for s, f in zip(sums, free)
    ]
    scope = b.close_scope(op)
    fixed = not _writes_records_inside(op, b.plan)
    end = rbody.args[1]
    if not recomputes(op, b.plan):
        _recompute_cheap(b, op, rbody, scope, trips)
    if records_nothing(op, b.plan, scope.keys):
        b.loop_records[op] = NOTHING
        start = end
    elif recomputes(op, b.plan):
        b.loop_records[op] = REPLAY
        start = _recompute_residuals(b, op, rbody, scope)
    else:
        b.loop_records[op] = CACHE
        args = [scope.args[k] for k in scope.keys]
        if fixed:
            loads_for_args(rbody, args, b.tape, end)
            start = _record_start(rbody, end, [a.type for a in args])
        else:
            (start,) = loads_for_args(rbody, args, b.tape, end, leading=[INDEX])
    rbody.add_op(scf.YieldOp(start, *new_cts, *new_sums))
    b.block = outer
    zeros = [b.shadow(adj, f) if f.type == TAPE else b.zero(f.type) for f in free]
    results = b.op_results(scf.ForOp(lower, trips, one, [last, *seeds, *zeros], Region(rbody)))
    for j, ct in zip(slots, results[1 : 1 + len(slots)]):
        b.accumulate(adj, inits[j], ct)
    for f, ct in zip(free, results[1 + len(slots) :]):
        if f.type == TAPE:
            adj[f] = ct  # the shadow it took in, updated
        else:
            b.accumulate(adj, f, ct)


# ---- checkpointing: recompute a body instead of recording its residuals ----------
def _writes_records_inside(op: Operation, plan) -> bool:
    """Does the body hold reversed loops or tape-threading calls?"""
    for inner in op.walk():
        if inner is op:
            continue
        if is_loop(inner) and any(r in plan.active for r in inner.results):
            return True
        if inner in plan.calls and plan.calls[inner].tape:
            return True
    return False


def _record_start(rbody: Block, end: SSAValue, types: Sequence[Attribute]) -> SSAValue:
    """Where a record of fixed size ending at `end` starts (computed at the end of
    the reversed iteration, which hands it on)."""
    c = IRBuilder(rbody)
    return c.value(arith.SubiOp(end, c.index(record_slots(types))))


def _recompute_cheap(b, op: Operation, rbody: Block, scope, trips: SSAValue) -> None:
    """Take off the loop's record what the reversed iteration can have for one
    cheap op or so (see the module docstring), computing it at the start of the
    reversed body instead: the induction variable (from the trip counter), integer
    arithmetic on it and on values from outside, and a scalar `arith` op whose
    operands are such values or residuals recorded anyway."""
    body = loop_body(op)
    iv = body.args[0] if isinstance(op, scf.ForOp) else None
    first = rbody.first_op
    c = IRBuilder(rbody, first) if first is not None else IRBuilder(rbody)
    made: dict[SSAValue, SSAValue] = {}

    def index_value(v: SSAValue) -> SSAValue | None:
        """`v` in the reversed iteration if it costs no record: from outside the
        loop, the induction variable, or integer arithmetic on those."""
        if v in made:
            return made[v]
        if not defined_inside(v, op):
            made[v] = b.primal(v)
        elif v is iv:  # iteration trips-1-j of lower + k * step
            lower, step = b.primal(op.operands[0]), b.primal(op.operands[2])
            k = c.value(arith.SubiOp(c.value(arith.SubiOp(trips, c.index(1))), rbody.args[0]))
            made[v] = c.value(arith.AddiOp(lower, c.value(arith.MuliOp(k, step))))
        elif (
            not isinstance(v, BlockArgument)
            and not isinstance(v.type, TensorType)
            and not is_float(v.type)
            and _cheap_scalar(v.owner)
            and all(index_value(x) is not None for x in v.owner.operands)
        ):
            made[v] = _clone_with(c, v, made)
        else:
            return None
        return made[v]

    failed: set[SSAValue] = set()
    known = static_trip_count(op)

    def residual_value(key: SSAValue) -> SSAValue | None:
        """The residual `key` recomputed (from cheap values, and from residuals
        recorded anyway or recomputed first), or None if it stays recorded."""
        if key in made:
            return made[key]
        if key in failed:
            return None
        value = index_value(key)
        if value is None and not isinstance(key, BlockArgument):
            owner = key.owner
            if (owner.name.startswith("arith.") and _cheap_scalar(owner)) or _cheap_tensor(owner):
                value = _remade(key)
        if value is None:
            failed.add(key)
        return value

    def _remade(v: SSAValue) -> SSAValue | None:
        """The op defining `v` cloned onto its operands' values here, if they are all available."""
        operands = [_available(x, v) for x in v.owner.operands]
        if any(x is None for x in operands):
            return None
        made[v] = _clone_with(c, v, dict(zip(v.owner.operands, operands)))
        return made[v]

    def _available(x: SSAValue, user: SSAValue) -> SSAValue | None:
        """Operand `x` of the op that makes `user`, in the reversed iteration."""
        if x in scope.args:
            recomputed_x = residual_value(x)
            return recomputed_x if recomputed_x is not None else scope.args[x]
        if x in made:
            return made[x]
        if not isinstance(x, BlockArgument) and isinstance(x.owner, arith.ConstantOp):
            return b.primal(x)  # a constant, wherever it is: cloned at the pullback's entry
        if isinstance(x.type, TensorType):
            if defined_inside(x, op):
                # a splat or a view inside the loop (of a value available here:
                # the row xs[t] a reshape reads) is made again, not recorded
                return _remade(x) if isinstance(x.owner, _REMADE_INSIDE) else None
            # an array from outside becomes a residual of the scope around the
            # loop: only if it is one already, or no larger than the records it
            # saves (one per iteration, when the trip count is known: the rows
            # xs[t] of a loop over xs)
            if not b.has_residual(x) and _elements(x.type) > _elements(user.type) * (known or 1):
                return None
        return index_value(x)

    recomputed = [
        key for key in list(scope.keys)
        if isinstance(key, SSAValue) and residual_value(key) is not None
    ]
    for key in recomputed:
        arg = scope.args.pop(key)
        arg.replace_all_uses_with(made[key])
        rbody.erase_arg(arg)
        scope.keys.remove(key)


def _cheap_tensor(op: Operation) -> bool:
    """A pure op making a tensor in one pass over its result, or none: an
    elementwise `arith` op, a splat, a slice or a reshape. Recomputed in the
    reversed iteration from values it has anyway, it costs no more than the
    record it saves (a copy in, a copy out)."""
    return (
        not op.regions
        and len(op.results) == 1
        and isinstance(op.results[0].type, TensorType)
        and op.name not in _TRAPPING
        and (op.name.startswith("arith.") or isinstance(op, _TENSOR_REMAKES))
        and is_side_effect_free(op)
    )


_TENSOR_REMAKES = (tensor.SplatOp, tensor.ExtractSliceOp, tensor.ReshapeOp, tensor.CollapseShapeOp,
                   tensor.ExpandShapeOp)
# Operands of a remade op that are remade too, when no residual holds them: a
# splat, and the views, which copy at most what the record they save would.
_REMADE_INSIDE = _TENSOR_REMAKES


def _elements(t: Attribute) -> int:
    """How many numbers a value of type `t` holds (a dynamic size counts as unbounded)."""
    if not isinstance(t, TensorType):
        return 1
    shape = t.get_shape()
    return math.prod(shape) if all(d >= 0 for d in shape) else math.inf


def _clone_with(c: IRBuilder, v: SSAValue, values: dict[SSAValue, SSAValue]) -> SSAValue:
    """The op defining `v`, cloned at `c` onto `values`; its result for `v`."""
    clone = c.insert(v.owner.clone(value_mapper=dict(values)))
    return clone.results[v.index]


def records_nothing(op: Operation, plan, keys) -> bool:
    """A body whose adjoint reads no primal value and that writes no records
    (e.g. `s = s + c * x`) needs no record per iteration: only the trip count."""
    return not keys and not _writes_records_inside(op, plan)


def _touches_a_tape(op: Operation) -> bool:
    """Does the loop carry or use a tape (generated code, differentiated again)?"""
    return any(
        v.type == TAPE for inner in op.walk() for v in (*inner.operands, *inner.results)
    )


def recomputes(op: Operation, plan) -> bool:
    """Is this loop checkpointed? Only when asked for, and only loops whose body
    writes no records of its own (nested reversed loops, tape-threading calls)
    and touches no tape of a gradient being differentiated again: those keep
    recording, since replaying them would have to rewrite a tape."""
    return plan.checkpoint and not _writes_records_inside(op, plan) and not _touches_a_tape(op)


def replay_inputs(op: Operation) -> list[SSAValue]:
    """The body arguments a replay of the body reads (an unused induction
    variable is not recorded)."""
    return [arg for arg in loop_body(op).args if arg.uses]


def _recompute_residuals(b, op: Operation, rbody: Block, scope) -> SSAValue:
    """Load the iteration's inputs (its block arguments) from its record and run
    the body forwards again, at the start of the reversed iteration, to get the
    values the adjoint code asked for. Returns the iteration's start position."""
    body = loop_body(op)
    first_adjoint_op = rbody.first_op
    args = replay_inputs(op)
    # a replayed body writes no records of its own, so its record has a fixed size
    types = [arg.type for arg in args]
    inputs = loads_for_args(rbody, [], b.tape, rbody.args[1], leading=types)
    start = _record_start(rbody, rbody.args[1], types)
    # Values the body uses from outside the loop come from the enclosing scope.
    outer = b.block
    replay = b.replayer({op: scope.keys})
    replay.values.update(zip(args, inputs))
    b.block = rbody
    for v in free_values(op, None):
        replay.values[v] = b.primal(v)
    b.block = outer
    scratch = Block()
    replay.clone_block(body, scratch)
    for inner in list(scratch.ops):
        inner.detach()
        if first_adjoint_op is None:
            rbody.add_op(inner)
        else:
            rbody.insert_op_before(inner, first_adjoint_op)
    for key in scope.keys:
        arg = scope.args[key]
        arg.replace_all_uses_with(replay.key_value(key))
        rbody.erase_arg(arg)
    return start
