"""The forward-mode engine of `irad-jvp` (passes/jvp.py): differentiation of
func/arith/math/scf IR along tangents.

The pass replaces each `irad.jvp` request by a call to a generated function

    @f.jvp.<activity>(args..., tangents of the active float args...)
        -> (results..., tangents of the float results...)

which computes the primal and its tangent side by side. At every call op whose
arguments carry tangents it asks the rule table once, at compile time, in
forward mode: a matching frule is inlined; otherwise (no rule, declined, opted
out) the callee gets its own generated jvp function; a non-differentiable
callee gives a zero tangent. Nothing is cached for a later sweep, so recursion
needs nothing special: a recursive primal gives a recursive jvp function.

Each op's tangent comes from its forward rule in the registry of op
derivatives (passes/ad/derivatives/). For a scalar or elementwise op that is by
default its reverse rule applied to the tangent: a 1x1 Jacobian per operand is
its own transpose, so dx = dy * df/dx also gives dy = df/dx * dx, with the
tangent of each active operand in turn.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from xdsl.dialects import func, tensor
from xdsl.dialects.linalg.ops import FillOp
from xdsl.dialects.builtin import FunctionType, ModuleOp, StringAttr, TensorType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import Rewriter
from xdsl.traits import IsTerminator

from irad.base.errors import DifferentiationError
from irad.ir.builder import IRBuilder
from irad.ir.constants import float_constant
from irad.ir.dialect import JvpOp
from irad.ir.locations import find_function, location
from irad.ir.metadata import JVP, generated_name, mark_generated, origin
from irad.ir.symbols import fresh_symbol, functions_by_name
from irad.ir.types import is_differentiable
from irad.passes.ad.decisions import CallDecision, decision_at
from irad.passes.ad.derivatives import OpDerivative, derivative_of, refusal
from irad.passes.ad.activity import varied_values
from irad.passes.ad.forward_regions import ForwardRegions, has_tangent_type
from irad.passes.ad.rule_ir import import_helpers, inline_body, rule_key
from irad.rules import Decision, RuleTable, default_table
from irad.rules.table import FORWARD

Key = tuple[str, tuple[bool, ...]]  # (primal symbol, which arguments carry tangents)


def jvp_type(primal: func.FuncOp, active: Sequence[bool]) -> FunctionType:
    ins = primal.function_type.inputs.data
    outs = primal.function_type.outputs.data
    tangents_in = [t for t, a in zip(ins, active) if a]
    tangents_out = [t for t in outs if has_tangent_type(t)]
    return FunctionType.from_lists([*ins, *tangents_in], [*outs, *tangents_out])


class ForwardDifferentiator:
    """Generates jvp functions into one module."""

    def __init__(self, module: ModuleOp, table: RuleTable | None = None):
        self.module = module
        self.table = table if table is not None else default_table()
        self.functions: dict[str, func.FuncOp] = functions_by_name(module)
        self.generated: dict[tuple[Key, str | None], str] = {}
        self._queue: list[tuple[Key, Decision | None, str]] = []
        self._varied: dict[Key, list[bool]] = {}
        self.decisions: list[CallDecision] = []  # what happened at each call, for reports

    def rewrite_requests(self) -> None:
        for op in [op for op in self.module.walk() if isinstance(op, JvpOp)]:
            self.rewrite_request(op)

    def rewrite_request(self, op: JvpOp) -> None:
        name = op.callee.root_reference.data
        fn = self.function(name, op)
        n = len(fn.function_type.inputs.data)
        active = tuple(i in op.wrt_indices for i in range(n))
        symbol = self.jvp(name, active)
        call = func.CallOp(symbol, list(op.args), jvp_type(fn, active).outputs.data)
        Rewriter.replace_op(op, call)

    def jvp(self, name: str, active: tuple[bool, ...]) -> str:
        """The symbol of @name's jvp function for `active`, generating it and
        every jvp function it calls (from a queue: no recursion on call depth).
        Requested directly, a rule for @name itself applies; callees were
        looked up at their call sites already."""
        fn = self.function(name)
        arg_types = tuple(fn.function_type.inputs.data)
        decision = self.table.lookup(rule_key(fn), arg_types, FORWARD, origin(fn)[1] + 1)
        self.record(name, None, fn, decision.kind, decision.rule)
        symbol = self._request((name, active), decision if decision.kind == "rule" else None)
        while self._queue:
            self._generate(*self._queue.pop())
        return symbol

    def _request(self, key: Key, rule: Decision | None = None) -> str:
        """The symbol of the jvp function for `key`, made from `rule` or from
        the body; generated later unless it exists (from an earlier run)."""
        made_from = rule.rule.describe() if rule is not None else None
        request = (key, made_from)
        if request not in self.generated:
            name, active = key
            symbol = generated_name(name, JVP, active)
            existing = self.functions.get(symbol)
            if existing is not None and "irad.primal" not in existing.attributes:
                raise DifferentiationError(
                    f"cannot generate @{symbol}: a function with that name already exists\n"
                    "  hint: rename it; names ending in .jvp.* are reserved for generated code"
                )
            if existing is not None and _made_from(existing) == made_from:
                self.generated[request] = symbol
                return symbol
            symbol = fresh_symbol(symbol, self.functions)
            self.functions[symbol] = None  # reserved until generated
            self.generated[request] = symbol
            self._queue.append((key, rule, symbol))
        return self.generated[request]

    def _generate(self, key: Key, rule: Decision | None, symbol: str) -> None:
        name, active = key
        primal = self.function(name)
        builder = TangentBuilder(self, primal, active)
        if rule is not None:
            block = builder.build_from_rule(rule.ir)
        elif primal.is_declaration:
            raise _no_frule(primal)
        else:
            block = builder.build()
        fn = func.FuncOp(symbol, jvp_type(primal, active), Region(block), visibility="private")
        mark_generated(fn, primal, JVP)
        if rule is not None:
            fn.attributes["irad.rule"] = StringAttr(rule.rule.describe())
        self.module.body.block.add_op(fn)
        self.functions[symbol] = fn

    def function(self, name: str, use: Operation | None = None) -> func.FuncOp:
        return find_function(self.functions, name, use)

    def record(self, caller: str, op: Operation | None, callee: func.FuncOp, kind: str, rule=None) -> None:
        self.decisions.append(decision_at(caller, op, callee, kind, rule, mode="forward"))

    def varied_results(self, fn: func.FuncOp, active: tuple[bool, ...]) -> list[bool]:
        """Per result of `fn` that has a tangent: does it depend on the active arguments?"""
        key = (fn.sym_name.data, active)
        if fn.is_declaration:  # reported when its jvp function is generated
            return [True] * sum(has_tangent_type(t) for t in fn.function_type.outputs.data)
        if key not in self._varied:
            varied = varied_values(fn, active, carries=has_tangent_type, shadows=True)
            self._varied[key] = [v in varied for v in fn.body.block.last_op.operands if has_tangent_type(v.type)]
        return self._varied[key]


class TangentBuilder(IRBuilder, ForwardRegions):
    """Clones one primal and computes tangents beside it.

    It is also the `b` the rules in passes/ad/derivatives/ are written against:
    `primal(v)` is the cloned value of `v`, `tangents` maps primal values to
    their tangents, and in a reverse rule used forwards `is_active(v)` holds for
    the one operand whose tangent is being pushed through (`pushing`).
    """

    def __init__(self, owner: ForwardDifferentiator, primal: func.FuncOp, active: Sequence[bool]):
        super().__init__()
        self.owner = owner
        self.primal_fn = primal
        self.active = active
        self.values: dict[SSAValue, SSAValue] = {}
        self.tangents: dict[SSAValue, SSAValue] = {}
        self.block = Block()
        self._pushing: SSAValue | None = None
        self.order = origin(primal)[1] + 1  # calls inside generated code: a higher order

    # ---- the interface the derivative rules use ---------------------------------
    def is_active(self, v: SSAValue) -> bool:
        return v is self._pushing

    @contextmanager
    def pushing(self, v: SSAValue) -> Iterator[None]:
        self._pushing = v
        try:
            yield
        finally:
            self._pushing = None

    def primal(self, v: SSAValue) -> SSAValue:
        return self.values[v]

    def const(self, value: float, type: Attribute) -> SSAValue:
        return self.op(float_constant(value, type))

    # ---- the sweep ---------------------------------------------------------------
    def build(self) -> Block:
        body = self.primal_fn.body.block
        n = len(body.args)
        tangent_types = [a.type for a, act in zip(body.args, self.active) if act]
        self.block = Block(arg_types=[*(a.type for a in body.args), *tangent_types])
        tangent_args = iter(self.block.args[n:])
        for arg, new, act in zip(body.args, self.block.args, self.active):
            new.name_hint = arg.name_hint
            self.values[arg] = new
            if act:
                t = next(tangent_args)
                t.name_hint = f"t{arg.name_hint}" if arg.name_hint else None
                self.tangents[arg] = t
        self.clone_block(body)
        returned = body.last_op.operands
        tangents = [self.tangent_or_zero(v) for v in returned if has_tangent_type(v.type)]
        self.block.add_op(func.ReturnOp(*(self.values[v] for v in returned), *tangents))
        return self.block

    def build_from_rule(self, ir) -> Block:
        """The body as the function's own frule."""
        primal = self.primal_fn
        arg_types = tuple(primal.function_type.inputs.data)
        n = len(arg_types)
        self.block = Block(arg_types=[*arg_types, *(t for t, a in zip(arg_types, self.active) if a)])
        given = iter(self.block.args[n:])
        tangents = [
            (next(given) if a else self.zero(t))
            for t, a in zip(arg_types, self.active)
            if is_differentiable(t)
        ]
        owner = self.owner
        symbols = import_helpers(owner.module, owner.functions, ir, primal.sym_name.data)
        outputs = inline_body(ir.jvp, symbols, [*self.block.args[:n], *tangents], self.block)
        self.block.add_op(func.ReturnOp(*outputs))
        return self.block

    def tangent_or_zero(self, v: SSAValue) -> SSAValue:
        t = self.tangents.get(v)
        if t is not None:
            return t
        if not is_differentiable(v.type):
            raise DifferentiationError(f"internal: no shadow for the memref {v} in forward mode")
        if isinstance(v.type, TensorType) and not v.type.has_static_shape():
            return self._dynamic_zero(self.values.get(v, v))
        return self.zero(v.type)

    def _dynamic_zero(self, primal: SSAValue) -> SSAValue:
        """Zeros shaped like `primal`, a tensor of dynamic shape (a tape in tensor
        form, for IREE), which no constant can be."""
        t = primal.type
        sizes = [self.value(tensor.DimOp(primal, self.index(i))) for i, n in enumerate(t.get_shape()) if n < 0]
        empty = self.value(tensor.EmptyOp(sizes, t))
        zero = self.value(float_constant(0.0, t.element_type))
        return self.results(FillOp([zero], [empty], [t]))[0]

    def clone(self, op: Operation) -> None:
        self.insert(op.clone(value_mapper=self.values))

    def clone_block(self, src: Block) -> None:
        for op in src.ops:
            if op is src.last_op and op.has_trait(IsTerminator):
                continue
            entry = derivative_of(op)
            if op.name.startswith(("memref.", "bufferization.")):
                self.memory(op)
            elif entry is not None and entry.structured:
                entry.forward(self, op)  # rebuilt: they may carry tangents or shadows
            else:
                self.clone(op)
                varies = any(o in self.tangents for o in op.operands)
                if varies and (entry is None or entry.differentiable):
                    self.push_tangents(op, entry)

    def push_tangents(self, op: Operation, entry: OpDerivative | None) -> None:
        if entry is not None and entry.refused:  # whatever its results' types
            raise refusal(op, entry.refused)
        if not any(is_differentiable(r.type) for r in op.results):
            return  # comparisons and other piecewise-constant results carry no tangent
        if entry is None:
            raise DifferentiationError(
                f"{location(op)}: no tangent rule for the op `{op.name}`\n"
                "  hint: use the ops listed in docs/ir-conventions.md (Supported ops)"
            )
        if len(op.results) != 1 and not entry.multi_result:
            raise DifferentiationError(
                f"{location(op)}: forward mode does not support the op `{op.name}` yet\n"
                "  hint: use the ops listed in docs/ir-conventions.md (Supported ops)"
            )
        tangents = entry.forward(self, op)
        for result, tangent in zip(op.results, tangents if entry.multi_result else [tangents]):
            if tangent is not None:
                self.tangents[result] = tangent

    def call(self, op: func.CallOp) -> None:
        owner = self.owner
        callee_name = op.callee.root_reference.data
        callee = owner.function(callee_name, op)
        caller = self.primal_fn.sym_name.data
        if not any(o in self.tangents for o in op.operands):
            # without tangents in, the callee's derivative is not needed (nor looked up)
            owner.record(caller, op, callee, "inactive")
            self.clone(op)
            return
        arg_types = tuple(o.type for o in op.operands)
        decision = owner.table.lookup(rule_key(callee), arg_types, FORWARD, self.order)
        args = [self.values[o] for o in op.operands]
        float_results = [r for r in op.results if has_tangent_type(r.type)]
        n = len(op.results)
        if not float_results or decision.kind == "non-differentiable":
            kind = "non-differentiable" if decision.kind == "non-differentiable" else "inactive"
            owner.record(caller, op, callee, kind, decision.rule if kind != "inactive" else None)
            self.block.add_op(op.clone(value_mapper=self.values))
            return
        owner.record(caller, op, callee, decision.kind, decision.rule)
        if decision.kind == "rule":
            ir = decision.ir
            symbols = import_helpers(owner.module, owner.functions, ir, callee_name)
            tangents = [self.tangent_or_zero(o) for o in op.operands if is_differentiable(o.type)]
            outputs = inline_body(ir.jvp, symbols, [*args, *tangents], self.block)
        else:
            if callee.is_declaration:
                raise _no_frule(callee, op)
            active = tuple(o in self.tangents and has_tangent_type(o.type) for o in op.operands)
            symbol = owner._request((callee_name, active))
            tangents = [self.tangents[o] for o, a in zip(op.operands, active) if a]
            call = func.CallOp(symbol, [*args, *tangents], jvp_type(callee, active).outputs.data)
            self.block.add_op(call)
            outputs = list(call.results)
            # a result that does not depend on the active arguments has a zero
            # tangent: it must not count as a tangent here, or 0 * (a NaN partial,
            # such as log(x) for x < 0) would poison what it meets
            varies = owner.varied_results(callee, active)
            float_results = [r for r, v in zip(float_results, varies) if v]
            outputs = outputs[:n] + [t for t, v in zip(outputs[n:], varies) if v]
        for r, v in zip(op.results, outputs[:n]):
            self.values[r] = v
        for r, t in zip(float_results, outputs[n:]):
            self.tangents[r] = t



def _no_frule(fn: func.FuncOp, use: Operation | None = None) -> DifferentiationError:
    where = f"{location(use)}: " if use is not None else ""
    return DifferentiationError(
        f"{where}@{fn.sym_name.data} has no body and no frule (target '{rule_key(fn)}'), so "
        "its tangent cannot be computed\n  hint: register one with irad.frule, or mark "
        "it irad.non_differentiable"
    )


def _made_from(fn: func.FuncOp) -> str | None:
    """The rule a generated function was made from (its `irad.rule`), if any."""
    attr = fn.attributes.get("irad.rule")
    return attr.data if isinstance(attr, StringAttr) else None
