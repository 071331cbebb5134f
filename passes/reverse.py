"""Reverse mode for one function: build its augmented primal and its pullback.

The pullback is built first, walking the primal backwards. Whenever an adjoint
needs a primal value, it becomes a *residual*: a pullback argument that the
augmented primal returns after the results (constants are rematerialised
instead). Then the augmented primal is built by cloning the primal forwards;
knowing the residuals up front, it can yield those computed inside `scf.if`
branches out of the `scf.if`.

At a call op the plan (made by the pass from the rule table) says either
`rule`: inline the rule's forward and pullback, or `generated`: call the
callee's generated augmented primal and pullback, keeping its residuals among
ours. Nothing is recomputed, so cost stays linear in the call-tree depth.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import FileLineColLoc, FloatAttr, FunctionType, SymbolRefAttr
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue

from xdsl.traits import IsTerminator

from irad.errors import DifferentiationError
from irad.passes.activity import is_float_type
from irad.passes.adjoints import ADJOINTS, NON_DIFFERENTIABLE
from irad.passes.array_adjoints import array_adjoint
from irad.passes.constants import float_constant, zero_constant
from irad.rules.table import RuleIR

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


@dataclass
class FunctionPlan:
    active: set[SSAValue]
    calls: dict[Operation, CallPlan]


def location(op: Operation) -> str:
    """`file:line:col: @function: op.name`; the source position when the op has one."""
    fn = op.parent_op()
    while fn is not None and not isinstance(fn, func.FuncOp):
        fn = fn.parent_op()
    where = f"@{fn.sym_name.data}" if fn is not None else "<module>"
    source = source_location(op)
    return f"{source}: {where}: {op.name}" if source else f"{where}: {op.name}"


def source_location(op: Operation) -> str:
    """`file:line:col` of the Python source an op was lowered from, or ""."""
    loc = op.location
    if isinstance(loc, FileLineColLoc):
        return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
    return ""


def _inside(anchor: Operation | None, region_op: Operation) -> bool:
    while anchor is not None:
        if anchor is region_op:
            return True
        anchor = anchor.parent_op()
    return False


def _anchor(key: ResidualKey) -> Operation | None:
    if isinstance(key, tuple):
        return key[0]
    return None if isinstance(key, BlockArgument) else key.owner


class PullbackBuilder:
    """Emits the pullback; also the `b` handed to the adjoints in passes/adjoints.py."""

    def __init__(self, primal: func.FuncOp, active_args: Sequence[bool], plan: FunctionPlan):
        self.primal_fn = primal
        self.active_args = active_args
        self.plan = plan
        result_types = primal.function_type.outputs.data
        self.cotangent_types = [t for t in result_types if is_float_type(t)]
        self.entry = Block(arg_types=self.cotangent_types)
        self.block = self.entry
        self.residual_keys: list[ResidualKey] = []
        self._residual_args: dict[ResidualKey, BlockArgument] = {}
        self._constants: dict[object, SSAValue] = {}
        # calls a cotangent reached; the others stay plain calls in the augmented primal
        self.reversed_calls: set[Operation] = set()

    # ---- the interface adjoints use ----------------------------------------
    def is_active(self, v: SSAValue) -> bool:
        return v in self.plan.active

    def op(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0] if op.results else None

    def const(self, value: float, type: Attribute) -> SSAValue:
        key = (float(value).hex(), type)  # distinguishes 0.0 from -0.0
        if key not in self._constants:
            self._constants[key] = self._at_entry(float_constant(value, type))
        return self._constants[key]

    def zero(self, type: Attribute) -> SSAValue:
        return self.const(0.0, type)

    def add(self, a, b):
        return self.op(arith.AddfOp(a, b))

    def sub(self, a, b):
        return self.op(arith.SubfOp(a, b))

    def mul(self, a, b):
        return self.op(arith.MulfOp(a, b))

    def div(self, a, b):
        return self.op(arith.DivfOp(a, b))

    def neg(self, a):
        return self.op(arith.NegfOp(a))

    def primal(self, v: SSAValue) -> SSAValue:
        """The value of primal `v` inside the pullback."""
        owner = v.owner
        if isinstance(owner, arith.ConstantOp):
            if v not in self._constants:
                self._constants[v] = self._at_entry(owner.clone())
            return self._constants[v]
        return self.residual(v, v.type)

    def residual(self, key: ResidualKey, type: Attribute) -> BlockArgument:
        if key not in self._residual_args:
            index = len(self.residual_keys)
            arg = self.entry.insert_arg(type, index)
            if isinstance(key, SSAValue):
                arg.name_hint = key.name_hint  # readable: the primal value's name
            self._residual_args[key] = arg
            self.residual_keys.append(key)
        return self._residual_args[key]

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
        cotangents = iter(self.entry.args)
        for v in body.last_op.operands:
            if is_float_type(v.type):
                ct = next(cotangents)
                if v.name_hint is not None:
                    ct.name_hint = f"d{v.name_hint}"  # the cotangent of %y reads %dy
                self.accumulate(adj, v, ct)
        self.reverse_block(body, adj)
        # one cotangent per requested float argument, zero when none reached it
        returned = [
            self.cotangent_or_zero(adj, arg)
            for arg, active in zip(body.args, self.active_args)
            if active and is_float_type(arg.type)
        ]
        self.op(func.ReturnOp(*returned))

    def cotangent_or_zero(self, adj, v: SSAValue) -> SSAValue:
        ct = adj.get(v)
        return ct if ct is not None else self.zero(v.type)

    def accumulate(self, adj, v: SSAValue, ct: SSAValue | None) -> None:
        if ct is None or not self.is_active(v):
            return
        adj[v] = self.add(adj[v], ct) if v in adj else ct

    def reverse_block(self, block: Block, adj) -> None:
        for op in reversed(list(block.ops)):
            if op is block.last_op and op.has_trait(IsTerminator):
                continue
            self.reverse_op(op, adj)

    def reverse_op(self, op: Operation, adj) -> None:
        cotangents = [adj.get(r) for r in op.results]
        if all(c is None for c in cotangents) or op.name in NON_DIFFERENTIABLE:
            return
        if isinstance(op, func.CallOp):
            operand_cts = self.reverse_call(op, cotangents)
        elif isinstance(op, scf.IfOp):
            self.reverse_if(op, cotangents, adj)
            return
        else:
            adjoint = array_adjoint(op) or ADJOINTS.get(op.name)
            if adjoint is None or len(op.results) != 1:
                hint = (
                    "control flow other than scf.if is not supported yet"
                    if op.regions
                    else "use the ops listed in docs/ir-conventions.md (Supported ops)"
                )
                raise DifferentiationError(
                    f"{location(op)}: no adjoint for the op `{op.name}`\n  hint: {hint}"
                )
            operand_cts = adjoint(self, op, cotangents[0])
        for operand, ct in zip(op.operands, operand_cts):
            self.accumulate(adj, operand, ct)

    def reverse_call(self, op: func.CallOp, cotangents) -> list[SSAValue | None]:
        call = self.plan.calls[op]
        self.reversed_calls.add(op)
        residuals = [
            self.residual((op, k), t) for k, t in enumerate(call.residual_types)
        ]
        result_cts = [
            ct if ct is not None else self.zero(r.type)
            for r, ct in zip(op.results, cotangents)
            if is_float_type(r.type)
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
        free = _free_active_values(op, self.plan.active)
        if not free:
            return
        cond = self.primal(op.cond)
        outer = self.block
        branches = []
        for region in op.regions:
            self.block = Block()
            local: dict[SSAValue, SSAValue] = {}
            for v, ct in zip(region.block.last_op.operands, cotangents):
                self.accumulate(local, v, ct)
            self.reverse_block(region.block, local)
            self.op(scf.YieldOp(*[self.cotangent_or_zero(local, v) for v in free]))
            branches.append(self.block)
        self.block = outer
        reversed_if = scf.IfOp(cond, [v.type for v in free], Region(branches[0]), Region(branches[1]))
        for v, ct in zip(free, self.op_results(reversed_if)):
            self.accumulate(adj, v, ct)


def _free_active_values(region_op: Operation, active: set[SSAValue]) -> list[SSAValue]:
    """Active values used inside `region_op` but defined outside it, in order."""
    seen: dict[SSAValue, None] = {}
    for region in region_op.regions:
        for inner in region.walk():
            for v in inner.operands:
                if v in active and v not in seen:
                    if isinstance(v, BlockArgument):
                        defined_inside = _inside(v.block.parent_op(), region_op)
                    else:
                        defined_inside = _inside(v.owner, region_op)
                    if not defined_inside:
                        seen[v] = None
    return list(seen)


class AugmentedBuilder:
    """Clones the primal forwards, returning the residuals the pullback asked for."""

    def __init__(
        self,
        primal: func.FuncOp,
        plan: FunctionPlan,
        residual_keys: list[ResidualKey],
        reversed_calls: set[Operation],
    ):
        self.primal_fn = primal
        self.plan = plan
        self.residual_keys = residual_keys
        self.reversed_calls = reversed_calls
        self.values: dict[SSAValue, SSAValue] = {}
        self.call_residuals: dict[tuple[Operation, int], SSAValue] = {}

    def key_type(self, key: ResidualKey) -> Attribute:
        if isinstance(key, tuple):
            return self.plan.calls[key[0]].residual_types[key[1]]
        return key.type

    def key_value(self, key: ResidualKey) -> SSAValue:
        return self.call_residuals[key] if isinstance(key, tuple) else self.values[key]

    def build(self) -> Block:
        body = self.primal_fn.body.block
        block = Block(arg_types=[a.type for a in body.args])
        for primal_arg, arg in zip(body.args, block.args):
            arg.name_hint = primal_arg.name_hint
        self.values.update(zip(body.args, block.args))
        self.clone_block(body, block)
        results = [self.values[v] for v in body.last_op.operands]
        residuals = [self.key_value(k) for k in self.residual_keys]
        block.add_op(func.ReturnOp(*results, *residuals))
        return block

    def clone_block(self, src: Block, dst: Block) -> None:
        for op in src.ops:
            if op is src.last_op and op.has_trait(IsTerminator):
                continue
            if isinstance(op, func.CallOp) and op in self.reversed_calls:
                self.clone_call(op, self.plan.calls[op], dst)
            elif isinstance(op, scf.IfOp):
                self.clone_if(op, dst)
            else:
                dst.add_op(op.clone(value_mapper=self.values))

    def clone_call(self, op: func.CallOp, call: CallPlan, dst: Block) -> None:
        args = [self.values[v] for v in op.operands]
        n = len(op.results)
        if call.kind == "rule":
            outputs = inline_rule_forward(call.rule_ir, call.symbols, args, dst)
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
        escaping = [
            k for k in self.residual_keys if _anchor(k) is not op and _inside(_anchor(k), op)
        ]
        branches = []
        for region in op.regions:
            block = Block()
            self.clone_block(region.block, block)
            yielded = [self.values[v] for v in region.block.last_op.operands]
            for key in escaping:
                if self._defined_in(key, region):
                    yielded.append(self.key_value(key))
                else:  # not computed on this path: any value of the right type will do
                    yielded.append(self._placeholder(self.key_type(key), block))
            block.add_op(scf.YieldOp(*yielded))
            branches.append(block)
        types = [r.type for r in op.results] + [self.key_type(k) for k in escaping]
        new_if = scf.IfOp(self.values[op.cond], types, Region(branches[0]), Region(branches[1]))
        dst.add_op(new_if)
        n = len(op.results)
        for r, v in zip(op.results, new_if.results[:n]):
            self.values[r] = v
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


def _inline(
    fn: func.FuncOp, symbols: dict[str, str], args: Sequence[SSAValue], dst: Block
) -> list[SSAValue]:
    """Clone a rule function's body into `dst` with its arguments bound to `args`,
    renaming the callees of calls by `symbols`; returns the values it returns."""
    body = fn.body.block
    mapping: dict[SSAValue, SSAValue] = dict(zip(body.args, args))
    for op in body.ops:
        if isinstance(op, func.ReturnOp):
            return [mapping[v] for v in op.operands]
        copy = op.clone(value_mapper=mapping, clone_name_hints=False)
        rename_callees(copy, symbols)
        dst.add_op(copy)
    raise DifferentiationError(f"rule function @{fn.sym_name.data} has no func.return")


def rename_callees(op: Operation, symbols: dict[str, str]) -> None:
    for inner in op.walk():
        if isinstance(inner, func.CallOp):
            new = symbols.get(inner.callee.root_reference.data)
            if new is not None:
                inner.properties["callee"] = SymbolRefAttr(new)


def inline_rule_forward(
    ir: RuleIR, symbols: dict[str, str], args: Sequence[SSAValue], dst: Block
) -> list[SSAValue]:
    """Clone a rule's forward into `dst`; returns its results, then its residuals."""
    return _inline(ir.forward, symbols, args, dst)


def inline_rule_pullback(
    ir: RuleIR, symbols: dict[str, str], args: Sequence[SSAValue], dst: Block, num_args: int
) -> list[SSAValue | None]:
    """Clone a rule's pullback into `dst`; returns one cotangent per primal
    argument, None where the rule says it is zero."""
    per_arg: list[SSAValue | None] = [None] * num_args
    for i, ct in zip(ir.cotangent_args, _inline(ir.pullback, symbols, args, dst)):
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
    cotangent_types = [t for t in primal.function_type.outputs.data if is_float_type(t)]
    pb = Block(arg_types=[*residual_types, *cotangent_types])
    per_arg = inline_rule_pullback(ir, symbols, pb.args, pb, len(ins))
    returned = []
    for ct, t, active in zip(per_arg, ins, active_args):
        if active and is_float_type(t):
            if ct is None:  # the signature wants one; the rule says it is zero
                ct = float_constant(0.0, t)
                pb.add_op(ct)
                ct = ct.result
            returned.append(ct)
    pb.add_op(func.ReturnOp(*returned))
    return aug, pb, residual_types


def build_reverse(
    primal: func.FuncOp, active_args: Sequence[bool], plan: FunctionPlan
) -> tuple[Block, Block, list[Attribute]]:
    """The bodies of the augmented primal and pullback, and the residual types."""
    pullback = PullbackBuilder(primal, active_args, plan)
    pullback.build()
    augmented = AugmentedBuilder(primal, plan, pullback.residual_keys, pullback.reversed_calls)
    aug_block = augmented.build()
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
    primal: func.FuncOp, active_args: Sequence[bool], residual_types: Sequence[Attribute]
) -> tuple[FunctionType, FunctionType]:
    ins = primal.function_type.inputs.data
    outs = primal.function_type.outputs.data
    aug = FunctionType.from_lists(ins, [*outs, *residual_types])
    cts = [t for t in outs if is_float_type(t)]
    grads = [t for t, a in zip(ins, active_args) if a and is_float_type(t)]
    pb = FunctionType.from_lists([*residual_types, *cts], grads)
    return aug, pb
