"""The engine of irad-vmap: batched copies of functions, one per callee and
batching signature (which arguments carry the batch).

A batched function takes each batched argument with the batch as its leading
axis and the others as they are; it returns each result batched or not, as
its body decides (`BatchedFunction.batched_results`). Its body is the
primal's, op by op: an op that reads no batched value is copied as it is
(constants, index arithmetic, the unbatched parts of the program); any other
op goes to its registry entry's `batch` rule (passes/ad/derivatives/
batching.py), and an op without one is refused, naming it and where it is.

Named `@<primal>.vmap.<signature>`, one letter per argument: `b` batched,
`u` unbatched, `i` batched and known to be an identity basis (a Jacobian's
sweeps: the matmul rule then skips the dense product, passes/batching/
basis.py; seen as rows, its one-hot cotangents also get compact twins,
passes/batching/one_hot.py), `r` batched and passed as its compact twin,
`g` batched and passed as its forward twin (gathered per row; the owner
arrays follow the arguments); marked as generated from the primal
(irad.primal, irad.role = "vmap"). A result that has a twin is returned as
its twin (`BatchedFunction.result_rows`, `result_gathered`), so that a
helper's pullback (jvp) keeps the compact form across the call; the caller
rebuilds the dense value where it needs it. A callee that reaches a check,
called under a mask (an arm of a branch on a batched condition, a masked
loop's body), is `@<primal>.vmap.<signature>.masked` and takes the mask last
(BatchBuilder.call).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from xdsl.dialects import arith, cf, func, scf, tensor
from xdsl.dialects.builtin import DenseArrayBase, DenseIntOrFPElementsAttr, FloatAttr, IntegerAttr, ModuleOp, StringAttr, TensorType, i1, i64
from xdsl.dialects.linalg.ops import BroadcastOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from irad.base.errors import BatchingError
from irad.ir import tensor as T
from irad.ir.builder import IRBuilder, clone, private_function
from irad.ir.dialect import TAPE, TapeCreateOp, VmapOp, batched_type
from irad.ir.locations import find_function, location
from irad.ir.metadata import mark_generated
from irad.ir.symbols import fresh_symbol, functions_by_name
from irad.ir.walk import ops_of, walk
from irad.passes.ad.derivatives import batching, derivative_of
from irad.passes.ad.derivatives.tape import batch_free
from irad.passes.ad.differentiator import reached_ops
from irad.passes.batching import masks, one_hot
from irad.passes.batching.basis import is_basis
from irad.passes.batching.records import Records
from irad.passes.batching.requests import REQUEST_NAMES, batch_request

VMAP = "vmap"
MASKED_SUFFIX = "masked"  # @f.vmap.<signature>.masked: @f batched for a call under a mask, which it takes last
MASKED_NOTE = "its {} varies along the batch: it runs to the largest trip count, with a mask"
# the rules of ops outside the registry: integer ops, asserts, derivative requests
OTHER_RULES = {**batching.UNDIFFERENTIATED, **dict.fromkeys(REQUEST_NAMES, batch_request), "irad.tape_free": batch_free}


@dataclass(frozen=True)
class BatchedFunction:
    name: str
    batched_results: tuple[bool, ...]
    # per result, the rows of the compact twin returned in its place (0: the value itself)
    result_rows: tuple[int, ...] = ()
    # per result, a forward twin returned in its place: (its owner argument's slot, m), or None
    result_gathered: tuple[tuple[int, int] | None, ...] = ()


def signature_string(batched: Sequence[bool], bases: Sequence[bool] = (), rows: Sequence[int] = (),
                     gathered: Sequence = ()) -> str:
    bases = bases or [False] * len(batched)
    rows = rows or [0] * len(batched)
    gathered = gathered or [None] * len(batched)
    return "".join("i" if basis else "r" if row else "g" if form else "b" if flag else "u"
                   for flag, basis, row, form in zip(batched, bases, rows, gathered))


class Batcher:
    """Makes the batched functions of one module (memoised per callee,
    batching signature and batch size)."""

    def __init__(self, module: ModuleOp, batched_tapes: bool = True):
        self.module = module
        # whether a reverse request through a loop may be batched with a batched
        # tape (requests.py); irad-vmap tries again without when that fails
        self.batched_tapes = batched_tapes
        self.functions = functions_by_name(module)
        self._made: dict[tuple, BatchedFunction] = {}
        self._in_progress: set[tuple] = set()
        self.records = Records()  # which values of each batched tape record vary along the batch
        # what was decided, for `irad explain --mode vmap`: (depth, text), a
        # batched function's line above those of its ops and callees
        self.notes: list[tuple[int, str]] = []

    def batched(self, name: str, batched: tuple[bool, ...], size: int, use: Operation,
                bases: tuple[bool, ...] = (), rows: tuple[int, ...] = (),
                gathered: tuple[tuple[int, int] | None, ...] = (), masked: bool = False) -> BatchedFunction:
        """@name batched along the arguments flagged in `batched`, for a batch
        of `size`; those flagged in `bases` are the identity basis, those with
        `rows` come as compact twins of that many rows, those with a
        `gathered` form (slot, m) as forward twins whose owners follow the
        arguments, one per slot (one_hot.py); if `masked`, called under a mask
        (BatchBuilder.masked), which it takes last (one i1 per element)."""
        bases = bases if any(bases) else ()
        rows = rows if any(rows) else ()
        gathered = gathered if any(gathered) else ()
        key = (name, batched, size, bases, rows, gathered, masked)
        if key in self._made:
            return self._made[key]
        primal = find_function(self.functions, name, use)
        if primal.is_declaration:
            raise BatchingError(
                f"{location(use)}: @{name} has no body (a rule target or an external function), so irad "
                "cannot batch it\n  hint: call it outside the vmapped function, or give it an irad body"
            )
        if key in self._in_progress:
            raise BatchingError(
                f"{location(use)}: @{name} calls itself with batched arguments; irad-vmap does not batch "
                "recursion yet\n  hint: write the recursion as a loop, or map it outside irad"
            )
        self._in_progress.add(key)
        try:
            made = self._make(primal, batched, size, bases, rows, gathered, masked)
        finally:
            self._in_progress.discard(key)
        self._made[key] = made
        return made

    def reaches_check(self, name: str) -> bool:
        """Whether @name, or a function it reaches, has a run-time check (cf.assert)."""
        names = {name} | {r.callee.root_reference.data for r in reached_ops(self.functions, [name])}
        return any(isinstance(inner, cf.AssertOp) for n in names if n in self.functions
                   for inner in walk(self.functions[n]))

    def rewrite_request(self, request: VmapOp) -> None:
        """Replace `request` by a call to the callee's batched function: the
        batched operands' axes moved to the front before, the results' batch
        axes moved to `out_axes` after."""
        size, name = request.size, request.callee.root_reference.data
        b = IRBuilder(before=request)
        args = [v if axis is None else T.transpose(b, v, _to_front(axis, len(T.shape(v))))
                for v, axis in zip(request.args, request.in_axis_list)]
        bases = tuple(a is not None and is_basis(v, {}) for v, a in zip(args, request.in_axis_list))
        made = self.batched(name, tuple(a is not None for a in request.in_axis_list), size, request, bases)
        call = func.CallOp(made.name, args, list(self.functions[made.name].function_type.outputs.data))
        b.insert(call)
        results = []
        for i, (v, flag, axis) in enumerate(zip(call.results, made.batched_results, request.out_axis_list)):
            if made.result_rows and made.result_rows[i]:  # returned as its compact twin
                shape = self.functions[name].function_type.outputs.data[i].get_shape()
                v = one_hot.dense(b, v, shape, made.result_rows[i], size)
            if axis is None:
                if flag:
                    raise BatchingError(
                        f"{location(request)}: result #{i} of @{name} varies along the batch, but its out_axes "
                        "entry is none\n  hint: give it an output axis (out_axes=0), or make it independent "
                        "of the batched arguments"
                    )
                results.append(v)
                continue
            if not flag:
                v = broadcast(b, v, size)
            rank = len(T.shape(v))
            results.append(T.transpose(b, v, [*range(1, axis + 1), 0, *range(axis + 1, rank)]))
        for old, new in zip(request.results, results):
            old.replace_all_uses_with(new)
        request.detach()
        request.erase()

    def _make(self, primal: func.FuncOp, batched: tuple[bool, ...], size: int, bases: tuple[bool, ...],
              rows: tuple[int, ...], gathered: tuple[tuple[int, int] | None, ...], masked: bool) -> BatchedFunction:
        inputs = primal.function_type.inputs.data
        rows = rows or (0,) * len(batched)
        gathered = gathered or (None,) * len(batched)
        owner_types = one_hot.owner_types(inputs, gathered)
        block = Block(arg_types=[one_hot.twin_type(t, size) if row else one_hot.gathered_type(t, form[1]) if form
                                 else typed(t, flag, size) for t, flag, row, form in zip(inputs, batched, rows, gathered)]
                      + owner_types + ([TensorType(i1, [size])] if masked else []))
        owners = block.args[len(inputs):len(inputs) + len(owner_types)]
        depth, first_note = len(self._in_progress) - 1, len(self.notes)
        b = BatchBuilder(self, size, block, depth + 1)
        if masked:  # the elements that take the path of the call: its checks hold only for them
            b.mask = block.args[-1]
            b.mask.name_hint = "mask"
        for old, new, flag, basis, row, form in zip(primal.body.block.args, block.args, batched,
                                                    bases or [False] * len(batched), rows, gathered):
            new.name_hint = old.name_hint
            if row:
                one_hot.receive(b, old, new, row)
                continue
            if form:
                one_hot.receive_gathered(b, old, new, owners[form[0]])
                continue
            b.set(old, new, flag)
            if basis:
                b.bases[new] = size
                one_hot.start(b, old)
        ret = b.run(primal.body.block)
        result_gathered = one_hot.gathered_results(b, ret.operands, owners)
        flags = tuple(b.is_batched(v) for v in ret.operands)
        result_rows = tuple(one_hot.reverse_rows(b, v) if f else 0 for v, f in zip(ret.operands, flags))
        results = [b.one_hot[v].value if row or form else b.get(v)
                   for v, row, form in zip(ret.operands, result_rows, result_gathered)]
        block.add_op(func.ReturnOp(*results))
        signature = signature_string(batched, bases, rows, gathered) + (f".{MASKED_SUFFIX}" if masked else "")
        name = fresh_symbol(f"{primal.sym_name.data}.{VMAP}.{signature}", self.functions)
        fn = private_function(name, block, [v.type for v in results])
        mark_generated(fn, primal, VMAP)
        self.module.body.block.add_op(fn)
        self.functions[name] = fn
        args = ", ".join(f"{a.name_hint or i} {'batched' if f else 'shared'}"
                         for i, (a, f) in enumerate(zip(primal.body.block.args, batched)))
        args += ", under the caller's mask" if masked else ""
        results = ", ".join("batched" if f else "shared" for f in flags)
        self.notes.insert(first_note, (depth, f"@{primal.sym_name.data} as @{name} ({args}) -> ({results})"))
        return BatchedFunction(name, flags, result_rows if any(result_rows) else (),
                               result_gathered if any(result_gathered) else ())


def _none(values) -> tuple[int, ...]:
    return (0,) * len(values)


def typed(type_: Attribute, flag: bool, size: int) -> Attribute:
    """The type of a value of `type_` that carries the batch if `flag`: a
    batched tape keeps its type (its records carry the batch)."""
    return batched_type(type_, 0, size) if flag and type_ != TAPE else type_


def broadcast(b: IRBuilder, v: SSAValue, size: int) -> SSAValue:
    """`v` repeated `size` times along a new leading axis (a splat constant
    becomes a tensor.splat of its number: the init of a batched reduction,
    above all, with nothing to broadcast)."""
    splat = _splat_value(v)
    if splat is not None:
        number = b.op(arith.ConstantOp(FloatAttr(splat, T.element(v)) if isinstance(splat, float)
                                       else IntegerAttr(splat, T.element(v))))
        return T.splat(b, number, T.shape(v) and [size, *T.shape(v)] or [size])
    if not isinstance(v.type, TensorType):
        return b.op(tensor.SplatOp(v, [], TensorType(v.type, [size])))
    init = b.op(tensor.EmptyOp([], batched_type(v.type, 0, size)))
    return b.op(BroadcastOp(v, init, DenseArrayBase.from_list(i64, [0])))


def _splat_value(v: SSAValue) -> float | int | None:
    """The one value of a constant tensor whose elements are all equal (else None)."""
    if not isinstance(v.owner, arith.ConstantOp) or not isinstance(v.owner.value, DenseIntOrFPElementsAttr):
        return None
    values = v.owner.value.get_values()
    return values[0] if values and all(x == values[0] for x in values) else None


def _to_front(axis: int, rank: int) -> list[int]:
    return [axis, *(d for d in range(rank) if d != axis)]


class BatchBuilder(IRBuilder):
    """Builds a batched body: what each primal value became (`get`) and
    whether it carries the batch (`is_batched`); the interface of the
    registry's batching rules."""

    def __init__(self, batcher: Batcher, size: int, block: Block, depth: int = 0):
        super().__init__(block)
        self.batcher = batcher
        self.size = size
        self.depth = depth
        self._values: dict[SSAValue, tuple[SSAValue, bool]] = {}
        self.bases: dict[SSAValue, int] = {}  # batched values known to be the identity basis, and its size
        # the compact twins of batched values one-hot along their first axis, by primal value (one_hot.py)
        self.one_hot: dict[SSAValue, one_hot.OneHot] = {}
        self._probing = 0  # inside a loop's fixed-point probes: no notes
        # inside an arm of a branch on a batched condition, or a masked loop's body:
        # the elements that take this path (one i1 each); their checks hold only there
        self.mask: SSAValue | None = None

    def note(self, op: Operation, text: str) -> None:
        """Record what batching `op` decided (for `irad explain --mode vmap`)."""
        if not self._probing:
            self.batcher.notes.append((self.depth, f"{op.name}: {text}"))

    # ---- values --------------------------------------------------------------------
    def set(self, old: SSAValue, new: SSAValue, batched: bool) -> None:
        self._values[old] = (new, batched)

    def get(self, v: SSAValue) -> SSAValue:
        return self._values[v][0] if v in self._values else v

    def is_batched(self, v: SSAValue) -> bool:
        found = self._values.get(v)
        return found is not None and found[1]

    def batched_type(self, type_: Attribute) -> Attribute:
        return typed(type_, True, self.size)

    def batched(self, v: SSAValue) -> SSAValue:
        """`v` with the batch as its leading axis (the same for every element: broadcast)."""
        new = self.get(v)
        if self.is_batched(v):
            return new
        if new.type == TAPE:
            raise BatchingError("irad-vmap: a tape recorded for one element meets one recorded for the batch "
                                "(a loop or branch carries both)\n  hint: take the per-example gradients with "
                                "a Python loop")
        if isinstance(new.owner, tensor.EmptyOp) and not new.owner.operands:  # no contents to repeat
            return self.op(tensor.EmptyOp([], self.batched_type(new.type)))
        return self.broadcast(new)

    def broadcast(self, new: SSAValue) -> SSAValue:
        return broadcast(self, new, self.size)

    def unbatched(self, v: SSAValue, op: Operation, what: str) -> SSAValue:
        """`v`, which must be the same for the whole batch (`what` it is to `op`)."""
        if self.is_batched(v):
            self.refuse(op, f"{what} varies along the batch", "keep it the same for every element "
                        "(in_axes=None for the values it comes from), or map this step with a Python loop")
        return v

    def refuse(self, op: Operation, why: str, hint: str = "") -> None:
        raise BatchingError(
            f"{location(op)}: irad-vmap cannot batch `{op.name}`: {why}"
            + (f"\n  hint: {hint}" if hint else "")
        )

    # ---- ops -----------------------------------------------------------------------
    def run(self, block: Block) -> Operation:
        """Batch the ops of `block` but its terminator, which it returns."""
        ops = ops_of(block)
        for op in ops[:-1]:
            self.batch_op(op)
        return ops[-1]

    def batch_op(self, op: Operation) -> None:
        # a tape made in batched code is batched: what it records may vary; a
        # check under a mask holds only for the elements the mask takes
        if not self._reads_batched(op) and not isinstance(op, TapeCreateOp) and not self._checks_masked(op):
            mapper = {v: self.get(v) for v in self._read(op)}
            copy = clone(op, mapper)
            self.insert(copy)
            for old, new in zip(op.results, copy.results):
                self.set(old, new, False)
            return
        entry = derivative_of(op)
        rule = entry.batch if entry is not None else OTHER_RULES.get(op.name)
        if rule is None:
            reason = entry.refused if entry is not None and entry.refused else "it has no batching rule"
            self.refuse(op, reason, "compute this step outside the vmapped function, or map it with a Python loop")
        if not self._probing:  # forward twins are followed before the op (one_hot.py)
            one_hot.ahead(self, op, self._read(op))
        results = rule(self, op)
        if results is not None:
            for old, new in zip(op.results, results):
                self.set(old, new, True)
        if not self._probing:  # a probe's blocks are dropped: no twin may point into them
            one_hot.follow(self, op)
        for old in op.results:
            self.get(old).name_hint = old.name_hint

    def _checks_masked(self, op: Operation) -> bool:
        """Whether `op`, which reads no batched value, has a check the mask
        must reach. Not a call's: on values shared by the batch it holds for
        every element or for none, and a masked path runs only where some
        element takes it (so unbatched recursion stays a plain call)."""
        return self.mask is not None and any(isinstance(inner, cf.AssertOp) for inner in walk(op))

    def within(self, mask: SSAValue) -> SSAValue:
        """The elements where `mask` holds within the current mask."""
        return mask if self.mask is None else T.elementwise(
            self, lambda e, a: e.op(arith.AndIOp(a[0], a[1])), [self.mask, mask], i1, "piecewise-constant")

    @contextmanager
    def masked(self, mask: SSAValue, within: bool = False):
        """Batch a path that only the elements where `mask` holds take (within
        the current mask; `within`: `mask` is that already): an arm of a
        branch on a batched condition, or a masked loop's body. Its checks
        (cf.assert), and those of the functions it calls (`call`), hold only
        for them."""
        saved = self.mask
        self.mask = mask if within else self.within(mask)
        try:
            yield
        finally:
            self.mask = saved

    def _read(self, op: Operation) -> list[SSAValue]:
        """The values `op` reads: its operands, and those its regions take from outside."""
        if not op.regions:
            return list(op.operands)
        inner_ops = list(walk(op))
        inside = {r for inner in inner_ops[1:] for r in inner.results}
        inside.update(a for inner in inner_ops for region in inner.regions for blk in region.blocks for a in blk.args)
        return [v for inner in inner_ops for v in inner.operands if v not in inside]

    def _reads_batched(self, op: Operation) -> bool:
        return any(self.is_batched(v) for v in self._read(op))

    def no_batched_inside(self, op: Operation) -> None:
        """Refuse a region that reads a batched value from outside (a linalg body)."""
        for inner in walk(op):
            if inner is not op and any(self.is_batched(v) for v in inner.operands):
                self.refuse(op, "its body reads a value that varies along the batch")

    @contextmanager
    def probing(self):
        """Batch a region only to learn which of its values vary (a loop's fixed point): no notes."""
        self._probing += 1
        try:
            yield
        finally:
            self._probing -= 1

    @contextmanager
    def at_end(self, block: Block):
        saved = self.insertion_point
        self.insertion_point = InsertPoint.at_end(block)
        try:
            yield
        finally:
            self.insertion_point = saved

    def _region(self, block: Block, new_block: Block, forced: Sequence[bool] | None = None):
        """Batch `block` into `new_block`; its yielded values and their flags
        (`forced`: batch the ones flagged, and yield them)."""
        with self.at_end(new_block):
            end = self.run(block)
            flags = [self.is_batched(v) for v in end.operands]
            if forced is None:
                return end, flags
            values = [self.batched(v) if f else self.get(v) for v, f in zip(end.operands, forced)]
            new_block.add_op(scf.YieldOp(*values))
            return end, flags

    # ---- regions and calls (the registry's structured rules call these) -------------
    def if_(self, op: scf.IfOp) -> None:
        if self.is_batched(op.cond):
            self.note(op, "its condition varies along the batch: both branches run, each element's result selected")
            self._select_arms(op)
            return
        blocks = [r.blocks[0] if r.blocks else None for r in op.regions]
        with self.probing():
            probe = [self._region(blk, Block())[1] if blk is not None else [] for blk in blocks]
        flags = [any(p[i] for p in probe if p) for i in range(len(op.results))]
        regions = []
        for blk in blocks:
            if blk is None:
                regions.append(Region())
                continue
            new_block = Block()
            self._region(blk, new_block, flags)
            regions.append(Region(new_block))
        types = [self.batched_type(r.type) if f else r.type for r, f in zip(op.results, flags)]
        new = scf.IfOp(self.get(op.cond), types, regions[0], regions[1])
        self.insert(new)
        for old, v, f in zip(op.results, new.results, flags):
            self.set(old, v, f)

    def _select_arms(self, op: scf.IfOp) -> None:
        """A batched condition: both arms computed (masks.if_arms), each element's
        result selected; each arm's checks, and those of the functions it
        calls, hold for the elements that take it."""
        arms = masks.if_arms(self, op)
        cond = self.get(op.cond)
        for i, result in enumerate(op.results):
            self.set(result, masks.select_rows(self, cond, arms[0][i], arms[1][i]), True)

    def for_(self, op: scf.ForOp) -> None:
        if any(self.is_batched(v) for v in (op.lb, op.ub, op.step)):  # a trip count per element
            self.note(op, MASKED_NOTE.format("trip count"))
            masks.for_loop(self, op)
            return
        self.note(op, "its trip count is shared by the batch")
        body = op.body.block
        flags = [self.is_batched(v) for v in op.iter_args]
        for _ in range(len(flags) + 1):  # a carried value batched by the body is batched from the start
            probe = Block(arg_types=self._carried_types(op, flags))
            self._bind(body, probe, flags)
            with self.probing():
                found = self._region(body, probe)[1]
            widened = [f or g for f, g in zip(flags, found)]
            if widened == flags:
                break
            flags = widened
        new_block = Block(arg_types=self._carried_types(op, flags))
        self._bind(body, new_block, flags)
        self._region(body, new_block, flags)
        inits = [self.batched(v) if f else self.get(v) for v, f in zip(op.iter_args, flags)]
        new = scf.ForOp(self.get(op.lb), self.get(op.ub), self.get(op.step), inits, Region(new_block))
        self.insert(new)
        for old, v, f in zip(op.results, new.results, flags):
            self.set(old, v, f)

    def while_(self, op: scf.WhileOp) -> None:
        """A while loop whose condition is the same for the whole batch: its
        carried values batched where the batch reaches them (a fixed point, as
        for scf.for); one whose condition varies along the batch runs with a
        mask (masks.while_loop)."""
        before, after = op.before_region.block, op.after_region.block
        flags = [self.is_batched(v) for v in op.arguments]
        for _ in range(2 * len(flags) + 2):
            with self.probing():
                passed = self._while_before(op, before, Block(arg_types=self._typed(before.args, flags)), flags)
                if passed is not None:
                    found = self._while_after(after, Block(arg_types=self._typed(after.args, passed)), passed)
            if passed is None:
                self.note(op, MASKED_NOTE.format("condition"))
                masks.while_loop(self, op)
                return
            widened = [f or g for f, g in zip(flags, found)]
            if widened == flags:
                break
            flags = widened
        self.note(op, "its condition is shared by the batch")
        new_before = Block(arg_types=self._typed(before.args, flags))
        passed = self._while_before(op, before, new_before, flags, forced=True)
        new_after = Block(arg_types=self._typed(after.args, passed))
        self._while_after(after, new_after, passed, forced=flags)
        inits = [self.batched(v) if f else self.get(v) for v, f in zip(op.arguments, flags)]
        new = scf.WhileOp(inits, self._typed(op.results, passed), Region(new_before), Region(new_after))
        self.insert(new)
        for old, v, f in zip(op.results, new.results, passed):
            self.set(old, v, f)

    def _typed(self, values, flags) -> list[Attribute]:
        return [self.batched_type(v.type) if f else v.type for v, f in zip(values, flags)]

    def _while_before(self, op, block: Block, new_block: Block, flags, forced: bool = False) -> list[bool] | None:
        """The condition region batched: the flags of the values it passes on
        (None: the condition varies along the batch)."""
        for old, new, f in zip(block.args, new_block.args, flags):
            new.name_hint = old.name_hint
            self.set(old, new, f)
        with self.at_end(new_block):
            end = self.run(block)
            if self.is_batched(end.condition):
                return None
            passed = [self.is_batched(v) for v in end.args]
            if forced:
                new_block.add_op(scf.ConditionOp(self.get(end.condition), *(self.get(v) for v in end.args)))
        return passed

    def _while_after(self, block: Block, new_block: Block, flags, forced: Sequence[bool] | None = None) -> list[bool]:
        for old, new, f in zip(block.args, new_block.args, flags):
            new.name_hint = old.name_hint
            self.set(old, new, f)
        return self._region(block, new_block, forced)[1]

    def _carried_types(self, op: scf.ForOp, flags: Sequence[bool]) -> list[Attribute]:
        carried = [self.batched_type(v.type) if f else v.type for v, f in zip(op.iter_args, flags)]
        return [op.body.block.args[0].type, *carried]

    def _bind(self, body: Block, new_block: Block, flags: Sequence[bool]) -> None:
        self.set(body.args[0], new_block.args[0], False)
        new_block.args[0].name_hint = body.args[0].name_hint
        for old, new, f in zip(body.args[1:], new_block.args[1:], flags):
            new.name_hint = old.name_hint
            self.set(old, new, f)

    def call(self, op: func.CallOp) -> None:
        """A call of the callee batched by this signature; a value with a
        compact twin passes the twin (one_hot.py; a forward twin's owners after
        the arguments), and the callee returns its results' twins. Under a
        mask, a callee that reaches a check takes the mask too (last), so that
        its checks, and those of the functions it calls, hold only for the
        elements that take the path of the call."""
        flags = tuple(self.is_batched(v) for v in op.operands)
        bases = tuple(f and is_basis(self.get(v), self.bases) for v, f in zip(op.operands, flags))
        rows = tuple(one_hot.reverse_rows(self, v) if f and not basis else 0
                     for v, f, basis in zip(op.operands, flags, bases))
        gathered, owners = one_hot.gathered_operands(self, op.operands, bases)
        name = op.callee.root_reference.data
        masked = self.mask is not None and self.batcher.reaches_check(name)
        made = self.batcher.batched(name, flags, self.size, op, bases, rows, gathered, masked)
        callee = self.batcher.functions[made.name]
        args = [self.one_hot[v].value if row or form else self.get(v) for v, row, form in zip(op.operands, rows, gathered)]
        new = func.CallOp(made.name, args + owners + ([self.mask] if masked else []),
                          list(callee.function_type.outputs.data))
        self.insert(new)
        for old, v, f, row, form in zip(op.results, new.results, made.batched_results,
                                        made.result_rows or _none(op.results),
                                        made.result_gathered or (None,) * len(op.results)):
            if row:
                one_hot.receive(self, old, v, row)
            elif form:
                one_hot.receive_gathered(self, old, v, owners[form[0]])
            else:
                self.set(old, v, f)

__all__ = ["BatchBuilder", "BatchedFunction", "Batcher", "VMAP", "signature_string"]
