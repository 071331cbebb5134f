"""Reverse mode for one function: build its augmented primal and its pullback.

The pullback is built first, walking the primal backwards. Whenever an adjoint
needs a primal value, it becomes a *residual*: a pullback argument that the
augmented primal returns after the results (constants are rematerialised
instead). Then the augmented primal is built by cloning the primal forwards;
knowing the residuals up front, it can yield those computed inside `scf.if`
branches out of the `scf.if`. A primal nothing else will use (`take`) gives up
its own block instead: its ops stay where they are and only the calls it
reverses are replaced, rather than every op being cloned.

At a call op the plan (made by the pass from the rule table) says either
`rule`: inline the rule's forward and pullback, or `generated`: call the
callee's generated augmented primal and pullback, keeping its residuals among
ours. Nothing is recomputed, so cost stays linear in the call-tree depth.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import FunctionType
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue

from xdsl.traits import IsTerminator

from irad.base.errors import DifferentiationError
from irad.ir.builder import IRBuilder, clone
from irad.ir.constants import float_constant, zero_constant
from irad.ir.dialect import TAPE, ShadowCreateOp, ShadowMergeOp, TapeCreateOp, TapeFreeOp
from irad.ir.locations import location
from irad.ir.types import is_differentiable
from irad.passes.ad.activity import carries_cotangent, free_values
from irad.passes.ad.derivatives import derivative_of
from irad.passes.ad.reverse_loops import (
    CACHE,
    END_POSITION,
    INDEX,
    LOOPS,
    TRIP_COUNT,
    clone_loop,
    is_loop,
    loads_for_args,
    push,
    reverse_loop,
)
from irad.passes.ad.rule_ir import inline_body
from irad.rules.table import RuleIR
from irad.ir.isa import isa
from irad.ir.walk import find, inside, ops_of

# A residual is keyed by the primal value it holds, or by (call op, index) for
# the residuals a rule or a callee's augmented primal returns.
ResidualKey = SSAValue | tuple[Operation, int]


@dataclass(frozen=True)
class CallPlan:
    """How the pass differentiates one call op."""

    kind: str  # "rule" or "generated"
    callee: str
    rule_ir: RuleIR | None = None
    symbols: dict[str, str] | None = None  # rule IR symbol -> symbol in this module
    augmented: str = ""
    pullback: str = ""
    residual_types: tuple[Attribute, ...] = ()
    tape: bool = False  # the callee threads the caller's tape (see passes/ad/reverse_loops.py)


@dataclass
class FunctionPlan:
    active: set[SSAValue]
    calls: dict[Operation, CallPlan]
    checkpoint: bool = False  # loops recompute their bodies instead of recording residuals


def scope_of(key: ResidualKey) -> Operation | None:
    """The innermost primal loop a residual belongs to (None: the function).

    A value defined in a loop body differs per iteration, so it is recorded on
    the tape per iteration; the results of a loop and of a call belong to the
    scope around that op."""
    if isinstance(key, tuple):
        parent = key[0].parent_op()
    elif isa(key, BlockArgument):
        parent = key.block.parent_op()
    else:
        parent = key.owner.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        if is_loop(parent):
            return parent
        parent = parent.parent_op()
    return None


@dataclass
class Scope:
    """Residuals of one scope: the function, or one loop body (per iteration)."""

    block: Block  # where the residuals are block arguments while the sweep is built
    first_arg: int  # index of the first residual argument
    keys: list[ResidualKey]
    args: dict[ResidualKey, BlockArgument]


def _anchor(key: ResidualKey) -> Operation | None:
    if isinstance(key, tuple):
        return key[0]
    return None if isa(key, BlockArgument) else key.owner


class PullbackBuilder(IRBuilder):
    """Emits the pullback; also the `b` handed to the reverse rules of the op
    derivatives (passes/ad/derivatives/)."""

    def __init__(
        self, primal: func.FuncOp, active_args: Sequence[bool], plan: FunctionPlan, tape: bool = False
    ):
        super().__init__()
        self.primal_fn = primal
        self.active_args = active_args
        self.plan = plan
        result_types = primal.function_type.outputs.data
        self.cotangent_types = [t for t in result_types if carries_cotangent(t)]
        # In tape mode the pullback takes (tape, end position, cotangents).
        self.tape_mode = tape
        self.entry = Block(arg_types=[*([TAPE, INDEX] if tape else []), *self.cotangent_types])
        self.tape = self.entry.args[0] if tape else None
        if tape:
            self.entry.args[0].name_hint, self.entry.args[1].name_hint = "tape", "end"
        self.block = self.entry
        self.scopes: dict[Operation | None, Scope] = {
            None: Scope(self.entry, 2 if tape else 0, [], {})
        }
        self.residual_keys = self.scopes[None].keys
        self.loop_keys: dict[Operation, list[ResidualKey]] = {}  # kept as scopes close
        self.loop_records: dict[Operation, str] = {}  # what each reversed loop records
        self._constants: dict[object, SSAValue] = {}
        # calls a cotangent reached; the others stay plain calls in the augmented primal
        self.reversed_calls: set[Operation] = set()
        self._unattached: list[BlockArgument] = []  # the entry's residuals (_attach_residuals)

    def replayer(self, keys: dict[Operation, list[ResidualKey]]) -> AugmentedBuilder:
        """An augmented builder that recomputes a checkpointed loop's body inside
        this pullback; `keys` maps the loop to the residuals it asks for."""
        return AugmentedBuilder(self.primal_fn, self.plan, {None: [], **keys}, self.reversed_calls)

    # ---- the interface reverse rules use ------------------------------------
    def is_active(self, v: SSAValue) -> bool:
        return v in self.plan.active

    def const(self, value: float, type: Attribute) -> SSAValue:
        key = (float(value).hex(), type)  # distinguishes 0.0 from -0.0
        if key not in self._constants:
            self._constants[key] = self._at_entry(float_constant(value, type))
        return self._constants[key]

    def primal(self, v: SSAValue) -> SSAValue:
        """The value of primal `v` inside the pullback."""
        owner = v.owner
        if isa(owner, arith.ConstantOp):
            if v not in self._constants:
                self._constants[v] = self._at_entry(clone(owner, {}))
            return self._constants[v]
        return self.residual(v, v.type)

    def residual(self, key: ResidualKey, type: Attribute) -> BlockArgument:
        scope = self.scopes[scope_of(key)]
        if key not in scope.args:
            index = scope.first_arg + len(scope.keys)
            if scope.block is self.entry:  # attached in one step once the sweep is built
                arg = BlockArgument(type, self.entry, index)
                self._unattached.append(arg)
            else:
                arg = scope.block.insert_arg(type, index)
            if isa(key, SSAValue):
                arg.name_hint = key.name_hint  # readable: the primal value's name
            scope.args[key] = arg
            scope.keys.append(key)
        return scope.args[key]

    def has_residual(self, key: ResidualKey) -> bool:
        """Is `key` a residual of its scope already (or a constant)?"""
        if isa(key, SSAValue) and isa(key.owner, arith.ConstantOp):
            return True
        scope = self.scopes.get(scope_of(key))
        return scope is not None and key in scope.args

    def _attach_residuals(self) -> None:
        """Put the function's residual arguments into the entry block in one step.
        xDSL's Block.insert_arg rebuilds the argument tuple for each argument,
        quadratic in the residuals of a large pullback (thousands on a tree of
        a thousand inlined calls); `residual` made them with their final
        indices, and only the cotangent arguments after them move."""
        new, self._unattached = self._unattached, []
        if new:
            first = self.scopes[None].first_arg
            args = self.entry.args
            for arg in args[first:]:
                arg.index += len(new)
            self.entry._args = (*args[:first], *new, *args[first:])  # as insert_arg sets it

    def open_scope(self, loop: Operation, block: Block) -> None:
        self.scopes[loop] = Scope(block, len(block.args), [], {})

    def close_scope(self, loop: Operation) -> Scope:
        scope = self.scopes.pop(loop)
        self.loop_keys[loop] = scope.keys
        return scope

    def _at_entry(self, op: Operation) -> SSAValue:
        first = self.entry.first_op
        if first is None:
            self.entry.add_op(op)
        else:
            self.entry.insert_op_before(op, first)
        return op.results[0]

    # ---- the reverse sweep ---------------------------------------------------
    def build(self) -> None:
        body = self.primal_fn.body.block
        adj: dict[SSAValue, SSAValue] = {}
        cotangents = iter(self.entry.args[self.scopes[None].first_arg :])
        for v in body.last_op.operands:
            if carries_cotangent(v.type):
                ct = next(cotangents)
                if v.name_hint is not None:
                    ct.name_hint = f"d{v.name_hint}"  # the cotangent of %y reads %dy
                self.accumulate(adj, v, ct)
        self.reverse_block(body, adj)
        self._attach_residuals()
        # one cotangent per requested float argument, zero when none reached it
        returned = [
            self.cotangent_or_zero(adj, arg)
            for arg, active in zip(body.args, self.active_args)
            if active and carries_cotangent(arg.type)
        ]
        self.op(func.ReturnOp(*returned))
        if self.tape_mode:  # the function's own residuals are its last record
            scope = self.scopes[None]
            loads_for_args(self.entry, [scope.args[k] for k in scope.keys], self.tape, self.entry.args[1])

    def cotangent_or_zero(self, adj, v: SSAValue) -> SSAValue:
        ct = adj.get(v)
        return ct if ct is not None else self.zero(v.type)

    def zero(self, type: Attribute) -> SSAValue:
        if type == TAPE:  # a fresh shadow each time: shadows are updated in place
            return self.op(ShadowCreateOp())
        return super().zero(type)

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        if a.type == TAPE:
            return self.op(ShadowMergeOp(a, b))
        return super().add(a, b)

    def shadow(self, adj, tape: SSAValue) -> SSAValue:
        """The current shadow of `tape` (a fresh one if it has none yet), for an
        adjoint that updates it and puts the result in `adj[tape]`."""
        if tape not in adj:
            adj[tape] = self.zero(TAPE)
        return adj[tape]

    def accumulate(self, adj, v: SSAValue, ct: SSAValue | None) -> None:
        if ct is None:
            return
        if not self.is_active(v):
            if v.type == TAPE:  # a shadow no earlier op needs: its life ends here
                self.op(TapeFreeOp(ct))
            return
        if v.type == TAPE and adj.get(v) is ct:  # the shadow it already has, passed on
            return
        adj[v] = self.add(adj[v], ct) if v in adj else ct

    def reverse_block(self, block: Block, adj) -> None:
        for op in reversed(ops_of(block)):
            if op is block.last_op and op.has_trait(IsTerminator):
                continue
            self.reverse_op(op, adj)

    def reverse_op(self, op: Operation, adj) -> None:
        cotangents = [adj.get(r) for r in op.results]
        if all(c is None for c in cotangents):
            return
        entry = derivative_of(op)
        if entry is not None and not entry.differentiable:
            return
        if entry is not None and entry.structured:
            entry.reverse(self, op, cotangents, adj)
            return
        if entry is None or (len(op.results) != 1 and not entry.multi_result):
            hint = (
                "the region ops irad reverses are scf.if, scf.for and scf.while"
                if op.regions
                else "use the ops listed in docs/ir-conventions.md (Supported ops)"
            )
            raise DifferentiationError(
                f"{location(op)}: no adjoint for the op `{op.name}`\n  hint: {hint}"
            )
        given = cotangents if entry.multi_result else cotangents[0]
        for operand, ct in zip(op.operands, entry.reverse(self, op, given)):
            self.accumulate(adj, operand, ct)

    def reverse_loop(self, op: Operation, cotangents, adj) -> None:
        """scf.for and scf.while, with a tape (passes/ad/reverse_loops.py)."""
        reverse_loop(self, op, cotangents, adj)

    def reverse_call(self, op: func.CallOp, cotangents) -> list[SSAValue | None]:
        call = self.plan.calls[op]
        self.reversed_calls.add(op)
        if call.tape:  # the callee's records end where the call left the tape
            residuals = [self.tape, self.residual((op, END_POSITION), INDEX)]
        else:
            residuals = [
                self.residual((op, k), t) for k, t in enumerate(call.residual_types)
            ]
        result_cts = [
            ct if ct is not None else self.zero(r.type)
            for r, ct in zip(op.results, cotangents)
            if carries_cotangent(r.type)
        ]
        if call.kind == "rule":
            return inline_rule_pullback(
                call.rule_ir, call.symbols, residuals + result_cts, self.block, len(op.operands)
            )
        out = self.op_results(
            func.CallOp(
                call.pullback,
                residuals + result_cts,
                [o.type for o in op.operands if self.is_active(o)],
            )
        )
        arg_cts = iter(out)
        return [next(arg_cts) if self.is_active(o) else None for o in op.operands]

    def op_results(self, op: Operation) -> tuple[SSAValue, ...]:
        self.block.add_op(op)
        return tuple(op.results)

    def reverse_if(self, op: scf.IfOp, cotangents, adj) -> None:
        free = free_values(op, self.plan.active)
        if not free:
            return
        cond = self.primal(op.cond)
        outer = self.block
        # the shadows of tapes read inside go in and out (updated in place)
        threaded = {v: adj[v] for v in free if v.type == TAPE and v in adj}
        branches = []
        for region in op.regions:
            self.block = Block()
            local: dict[SSAValue, SSAValue] = dict(threaded)
            for v, ct in zip(region.block.last_op.operands, cotangents):
                self.accumulate(local, v, ct)
            self.reverse_block(region.block, local)
            self.op(scf.YieldOp(*[self.cotangent_or_zero(local, v) for v in free]))
            branches.append(self.block)
        self.block = outer
        reversed_if = scf.IfOp(cond, [v.type for v in free], Region(branches[0]), Region(branches[1]))
        for v, ct in zip(free, self.op_results(reversed_if)):
            if v in threaded:
                adj[v] = ct
            else:
                self.accumulate(adj, v, ct)


class AugmentedBuilder:
    """Clones the primal forwards, returning the residuals the pullback asked for."""

    def __init__(
        self,
        primal: func.FuncOp,
        plan: FunctionPlan,
        scope_keys: dict[Operation | None, list[ResidualKey]],
        reversed_calls: set[Operation],
        tape: bool = False,
        loop_records: dict[Operation, str] | None = None,
    ):
        self.primal_fn = primal
        self.loop_records = loop_records or {}
        self.plan = plan
        self.scope_keys = scope_keys
        self.residual_keys = scope_keys[None]
        self.reversed_calls = reversed_calls
        self.tape_mode = tape
        # the tape and the position where the next record goes, as cloning proceeds
        self.tape: SSAValue | None = None
        self.pos: SSAValue | None = None
        self.values: dict[SSAValue, SSAValue] = {}
        self.call_residuals: dict[tuple[Operation, int], SSAValue] = {}

    def key_type(self, key: ResidualKey) -> Attribute:
        if isinstance(key, tuple):
            if key[1] in (END_POSITION, TRIP_COUNT):
                return INDEX
            return self.plan.calls[key[0]].residual_types[key[1]]
        return key.type

    def records(self, op: Operation) -> bool:
        """Does cloning `op` write to the tape?"""
        if is_loop(op):
            return any(r in self.plan.active for r in op.results)
        return op in self.reversed_calls and self.plan.calls[op].tape

    def key_value(self, key: ResidualKey) -> SSAValue:
        return self.call_residuals[key] if isinstance(key, tuple) else self.values[key]

    def can_take(self) -> bool:
        """Can `take` build the augmented primal: every top-level op but the
        reversed calls is cloned as it is (no `scf.if`, no loop that records)?"""
        return not self.tape_mode and not any(
            isa(op, scf.IfOp) or self.records(op) for op in self.primal_fn.body.block.ops
        )

    def take(self) -> Block:
        """What `build` makes, made of the primal's own block, which leaves the
        primal without a body: its ops are the augmented primal's (the same ops
        in the same order as `build`'s clones), and each reversed call is
        replaced where it stands by what `clone_call` makes of it. For a primal
        nothing else uses (its caller erases it), when `can_take`."""
        body = self.primal_fn.body.block
        self.values = _Unchanged()  # a primal value is its own value in the augmented primal
        ret = body.last_op
        for op in [op for op in body.ops if op in self.reversed_calls]:
            made = Block()
            self.clone_call(op, self.plan.calls[op], made)
            for r in op.results:
                r.replace_all_uses_with(self.values[r])
            for new in list(made.ops):
                new.detach()
                body.insert_op_before(new, op)
            body.erase_op(op)
        results = [self.values[v] for v in ret.operands]
        residuals = [self.key_value(k) for k in self.residual_keys]
        body.erase_op(ret)
        body.add_op(func.ReturnOp(*results, *residuals))
        self.primal_fn.body.detach_block(body)
        return body

    def build(self) -> Block:
        body = self.primal_fn.body.block
        tape_types = [TAPE, INDEX] if self.tape_mode else []
        block = Block(arg_types=[*(a.type for a in body.args), *tape_types])
        for primal_arg, arg in zip(body.args, block.args):
            arg.name_hint = primal_arg.name_hint
        self.values.update(zip(body.args, block.args))
        if self.tape_mode:
            self.tape, self.pos = block.args[-2:]
            self.tape.name_hint, self.pos.name_hint = "tape", "pos"
        self.clone_block(body, block)
        results = [self.values[v] for v in body.last_op.operands]
        residuals = [self.key_value(k) for k in self.residual_keys]
        if self.tape_mode:  # the function's own residuals are its last record
            residuals = list(push(IRBuilder(block), self.tape, self.pos, residuals))
        block.add_op(func.ReturnOp(*results, *residuals))
        return block

    def clone_block(self, src: Block, dst: Block) -> None:
        for op in src.ops:
            if op is src.last_op and op.has_trait(IsTerminator):
                continue
            if isa(op, func.CallOp) and op in self.reversed_calls:
                self.clone_call(op, self.plan.calls[op], dst)
            elif self.records(op):
                clone_loop(self, op, dst)
            elif isa(op, scf.IfOp):
                self.clone_if(op, dst)
            else:
                dst.add_op(clone(op, self.values))

    def clone_call(self, op: func.CallOp, call: CallPlan, dst: Block) -> None:
        args = [self.values[v] for v in op.operands]
        n = len(op.results)
        if call.kind == "rule":
            outputs = inline_rule_forward(call.rule_ir, call.symbols, args, dst)
        elif call.tape:
            types = [r.type for r in op.results] + [TAPE, INDEX]
            new_call = func.CallOp(call.augmented, [*args, self.tape, self.pos], types)
            dst.add_op(new_call)
            outputs = list(new_call.results[:n])
            self.tape, self.pos = new_call.results[n:]
            self.call_residuals[(op, END_POSITION)] = self.pos
        else:
            types = [r.type for r in op.results] + list(call.residual_types)
            new_call = func.CallOp(call.augmented, args, types)
            dst.add_op(new_call)
            outputs = list(new_call.results)
        for r, v in zip(op.results, outputs[:n]):
            self.values[r] = v
            if v.name_hint is None and r.name_hint is not None:
                v.name_hint = r.name_hint
        for k, v in enumerate(outputs[n:]):
            self.call_residuals[(op, k)] = v

    def clone_if(self, op: scf.IfOp, dst: Block) -> None:
        scope = scope_of((op, 0))
        escaping = [
            k
            for k in self.scope_keys.get(scope, [])
            if _anchor(k) is not op and inside(_anchor(k), op)
        ]
        # a branch that writes records hands on the tape it ends with
        threads_tape = any(self.records(inner) for inner in op.walk() if inner is not op)
        entry_tape = (self.tape, self.pos)
        branches = []
        for region in op.regions:
            block = Block()
            self.tape, self.pos = entry_tape
            self.clone_block(region.block, block)
            yielded = [self.values[v] for v in region.block.last_op.operands]
            if threads_tape:
                yielded += [self.tape, self.pos]
            for key in escaping:
                if self._defined_in(key, region):
                    yielded.append(self.key_value(key))
                else:  # not computed on this path: any value of the right type will do
                    yielded.append(self._placeholder(self.key_type(key), block))
            block.add_op(scf.YieldOp(*yielded))
            branches.append(block)
        tape_types = [TAPE, INDEX] if threads_tape else []
        types = [r.type for r in op.results] + tape_types + [self.key_type(k) for k in escaping]
        new_if = scf.IfOp(self.values[op.cond], types, Region(branches[0]), Region(branches[1]))
        dst.add_op(new_if)
        n = len(op.results)
        for r, v in zip(op.results, new_if.results[:n]):
            self.values[r] = v
            v.name_hint = r.name_hint
        if threads_tape:
            self.tape, self.pos = new_if.results[n : n + 2]
            n += 2
        for key, v in zip(escaping, new_if.results[n:]):
            if isinstance(key, tuple):
                self.call_residuals[key] = v
            else:
                self.values[key] = v

    @staticmethod
    def _defined_in(key: ResidualKey, region: Region) -> bool:
        anchor = _anchor(key)
        while anchor is not None:
            if anchor.parent_region() is region:
                return True
            anchor = anchor.parent_op()
        return False

    @staticmethod
    def _placeholder(type: Attribute, block: Block) -> SSAValue:
        op = zero_constant(type)
        block.add_op(op)
        return op.results[0]


class _Unchanged(dict):
    """A value mapping in which every value not in it maps to itself."""

    def __missing__(self, key: SSAValue) -> SSAValue:
        return key


def inline_rule_forward(
    ir: RuleIR, symbols: dict[str, str], args: Sequence[SSAValue], dst: Block
) -> list[SSAValue]:
    """Clone a rule's forward into `dst`; returns its results, then its residuals."""
    return inline_body(ir.forward, symbols, args, dst)


def inline_rule_pullback(
    ir: RuleIR, symbols: dict[str, str], args: Sequence[SSAValue], dst: Block, num_args: int
) -> list[SSAValue | None]:
    """Clone a rule's pullback into `dst`; returns one cotangent per primal
    argument, None where the rule says it is zero."""
    per_arg: list[SSAValue | None] = [None] * num_args
    for i, ct in zip(ir.cotangent_args, inline_body(ir.pullback, symbols, args, dst)):
        per_arg[i] = ct
    return per_arg


def build_from_rule(
    primal: func.FuncOp, active_args: Sequence[bool], ir: RuleIR, symbols: dict[str, str]
) -> tuple[Block, Block, list[Attribute]]:
    """Generated functions whose bodies are a rule for the primal itself."""
    ins = primal.function_type.inputs.data
    aug = Block(arg_types=ins)
    outputs = inline_rule_forward(ir, symbols, aug.args, aug)
    aug.add_op(func.ReturnOp(*outputs))
    residual_types = list(ir.residual_types)
    cotangent_types = [t for t in primal.function_type.outputs.data if carries_cotangent(t)]
    pb = Block(arg_types=[*residual_types, *cotangent_types])
    per_arg = inline_rule_pullback(ir, symbols, pb.args, pb, len(ins))
    returned = []
    for ct, t, active in zip(per_arg, ins, active_args):
        if active and is_differentiable(t):
            if ct is None:  # the signature wants one; the rule says it is zero
                ct = float_constant(0.0, t)
                pb.add_op(ct)
                ct = ct.result
            returned.append(ct)
    pb.add_op(func.ReturnOp(*returned))
    return aug, pb, residual_types


def needs_tape(fn: func.FuncOp, plan: FunctionPlan) -> bool:
    """Does the function reverse a loop or call a function that threads a tape?"""
    return any(any(r in plan.active for r in op.results) for op in find(fn, LOOPS)) or any(
        plan.calls[op].tape for op in find(fn, func.CallOp) if op in plan.calls
    )


def build_reverse(
    primal: func.FuncOp, active_args: Sequence[bool], plan: FunctionPlan, tape: bool = False,
    take: bool = False,
) -> tuple[Block, Block, list[Attribute]]:
    """The bodies of the augmented primal and pullback, and the residual types
    (none in tape mode: the residuals are records on the tape). With `take`
    (the primal is dead afterwards), the augmented primal is made of the
    primal's own block where it can be (`AugmentedBuilder.take`), leaving the
    primal without a body."""
    pullback = PullbackBuilder(primal, active_args, plan, tape)
    pullback.build()
    cached = {
        loop: keys
        for loop, keys in pullback.loop_keys.items()
        if pullback.loop_records[loop] == CACHE
    }
    scope_keys = {None: pullback.residual_keys, **cached}
    augmented = AugmentedBuilder(
        primal, plan, scope_keys, pullback.reversed_calls, tape, pullback.loop_records
    )
    aug_block = augmented.take() if take and augmented.can_take() else augmented.build()
    if tape:
        return aug_block, pullback.entry, []
    _merge_duplicate_residuals(aug_block, pullback.entry, len(primal.function_type.outputs.data))
    n_residuals = len(aug_block.last_op.operands) - len(primal.function_type.outputs.data)
    residual_types = [a.type for a in pullback.entry.args[:n_residuals]]
    return aug_block, pullback.entry, residual_types


def _merge_duplicate_residuals(aug: Block, pullback: Block, num_results: int) -> None:
    """Pass a value once when several residual keys hold the same SSA value."""
    ret = aug.last_op
    values = list(ret.operands)
    residual_args = list(pullback.args[: len(values) - num_results])
    first: dict[SSAValue, int] = {}
    keep = list(range(num_results))
    for i, v in enumerate(values[num_results:]):
        if v in first:
            residual_args[i].replace_all_uses_with(residual_args[first[v]])
            pullback.erase_arg(residual_args[i])
        else:
            first[v] = i
            keep.append(num_results + i)
    if len(keep) != len(values):
        aug.insert_op_before(func.ReturnOp(*[values[i] for i in keep]), ret)
        aug.erase_op(ret)


def function_types(
    primal: func.FuncOp,
    active_args: Sequence[bool],
    residual_types: Sequence[Attribute],
    tape: bool = False,
) -> tuple[FunctionType, FunctionType]:
    """Signatures of the pair; in tape mode the augmented primal takes and returns
    (tape, position) and the pullback takes them where residuals would be."""
    ins = primal.function_type.inputs.data
    outs = primal.function_type.outputs.data
    tape_types = [TAPE, INDEX] if tape else []
    aug = FunctionType.from_lists([*ins, *tape_types], [*outs, *residual_types, *tape_types])
    cts = [t for t in outs if carries_cotangent(t)]
    grads = [t for t, a in zip(ins, active_args) if a and carries_cotangent(t)]
    pb = FunctionType.from_lists([*tape_types, *residual_types, *cts], grads)
    return aug, pb


def build_tape_entry(
    primal: func.FuncOp, active_args: Sequence[bool], augmented: str, pullback: str
) -> tuple[Block, Block, list[Attribute]]:
    """The usual (flat-residual) pair for a tape-mode function: the augmented
    primal allocates a tape and calls the threaded one; the residuals are the
    tape and its end position."""
    aug_type, pb_type = function_types(primal, active_args, [], tape=True)
    ins = primal.function_type.inputs.data
    aug = Block(arg_types=ins)
    tape, start = IRBuilder(aug).insert(TapeCreateOp()).results
    call = func.CallOp(augmented, [*aug.args, tape, start], aug_type.outputs.data)
    aug.add_op(call)
    aug.add_op(func.ReturnOp(*call.results))
    pb = Block(arg_types=pb_type.inputs.data)
    back = func.CallOp(pullback, list(pb.args), pb_type.outputs.data)
    pb.add_op(back)
    pb.add_op(func.ReturnOp(*back.results))
    return aug, pb, [TAPE, INDEX]
