"""The reverse-mode engine of `irad-differentiate` (passes/differentiate.py):
the Differentiator, which differentiates func/arith/math/scf IR.

The pass replaces each request op (`irad.grad`, `irad.value_and_grad`,
`irad.vjp`) by calls to generated functions. At every call op with an active
argument it asks the rule table once, at compile time: a matching rule is
inlined; otherwise (no rule, or the rule declined) the callee is
differentiated into its own generated functions, memoised per (callee,
activity). Callees are generated
before their callers by an explicit worklist, so deep call chains do not hit
Python's recursion limit. It works on IR alone (no Python frontend), so it
runs inside stock `xdsl-opt` too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ArrayAttr, FunctionType, ModuleOp, StringAttr
from xdsl.ir import Block, Operation, Region
from xdsl.rewriter import InsertPoint, Rewriter

from irad.ir.constants import float_constant
from irad.ir.dialect import TAPE, DerivativeRequestOp, JvpOp, TapeFreeOp, ValueAndGradOp, VjpOp, VjpSplitOp
from irad.base.errors import DifferentiationError
from irad.ir.types import is_differentiable, is_float, shape_of
from irad.passes.ad.aux import cut_aux
from irad.passes.ad.activity import active_values, refused_use, varied_memory, varied_values
from irad.passes.optimisation.callgraph import CallGraph
from irad.passes.ad.decisions import CallDecision, decision_at
from irad.passes.ad.derivatives import refusal, refused_reason
from irad.passes.optimisation.inliner import KEEP_ALL_INLINED, inline_callees
from irad.passes.ad.rule_ir import import_helpers, rule_key
from irad.ir.metadata import (
    AUGMENTED,
    ENTRY,
    PULLBACK,
    generated_name,
    mark_generated,
    origin,
)
from irad.ir.locations import find_function, location
from irad.passes.ad.reverse_loops import hoist_invariants
from irad.passes.ad.reverse import (
    CallPlan,
    FunctionPlan,
    build_from_rule,
    build_reverse,
    build_tape_entry,
    function_types,
    needs_tape,
)
from irad.rules import Decision, RuleTable, default_table
from irad.ir.symbols import fresh_symbol, functions_by_name
from irad.rules.table import NON_DIFFERENTIABLE, REVERSE, check_rule_ir
from irad.ir.walk import find

Key = tuple[str, tuple[bool, ...]]  # (primal symbol, activity per argument)
# The table's answers that leave a call to AD: the callee's body is differentiated.
DIFFERENTIATED = ("no-rule", "declined", "opted-out")


@dataclass(frozen=True)
class Generated:
    """The generated pair callers use (flat residuals) and, for a function in
    tape mode, the pair that threads a tape (see passes/ad/reverse_loops.py)."""

    augmented: str
    pullback: str
    residual_types: tuple
    tape_augmented: str = ""
    tape_pullback: str = ""


def tape_names(name: str, active: tuple[bool, ...]) -> tuple[str, str]:
    """@f.augmented.tape.<act> / @f.pullback.tape.<act>: the tape-threading pair."""
    return (
        generated_name(name, AUGMENTED, active, "tape"),
        generated_name(name, PULLBACK, active, "tape"),
    )


@dataclass
class _Pending:
    plan: FunctionPlan
    callees: dict[Operation, Key] = field(default_factory=dict)
    rule: Decision | None = None  # a rule for the function itself


def _no_body(
    fn: func.FuncOp, use: Operation | None = None, decision: Decision | None = None
) -> DifferentiationError:
    where = f"{location(use)}: " if use is not None else ""
    why = "no rule"
    if decision is not None and decision.rule is not None:
        why = f"its {decision.rule.describe()} {decision.kind.replace('-', ' ')}"
    return DifferentiationError(
        f"{where}@{fn.sym_name.data} has no body and {why} (target '{rule_key(fn)}'), "
        "so it cannot be differentiated\n  hint: register a rule for it (irad.rrule), "
        "or mark it irad.non_differentiable"
    )


def _seeded_type(op: DerivativeRequestOp, name: str, outputs) -> object:
    """The type of the one float result a gradient request seeds with 1.0: a
    float or, as in JAX, a float array of shape ()."""
    floats = [t for t in outputs if is_differentiable(t)]
    if len(floats) != 1 or not (is_float(floats[0]) or shape_of(floats[0]) == ()):
        shown = ", ".join(map(str, outputs)) or "nothing"
        hint = "use irad.vjp, which takes a cotangent per float result" if floats else (
            "return a float"
        )
        raise DifferentiationError(
            f"{location(op)}: @{name} must return exactly one float (and any integers "
            f"or booleans) to take its gradient, but returns ({shown})\n  hint: {hint}"
        )
    return floats[0]


REQUESTS = (DerivativeRequestOp, VjpOp, VjpSplitOp)


def reached_ops(functions: dict[str, func.FuncOp], names: list[str]) -> list[Operation]:
    """The calls and requests in the functions `names` reach through calls and
    requests (forward mode's included)."""
    seen: set[str] = set()
    found: list[Operation] = []
    while names:
        name = names.pop()
        if name in seen or name not in functions:
            continue
        seen.add(name)
        for inner in find(functions[name], (func.CallOp, JvpOp, *REQUESTS)):
            found.append(inner)
            names.append(inner.callee.root_reference.data)
    return found


def _shares_augmented(op: VjpOp, other: Operation, n_inputs: int) -> bool:
    """Whether the vjp request `other` may share `op`'s augmented primal: the
    same callee, the same `n_inputs` arguments, wrt and aux, in the same block
    (jacrev's sweeps)."""
    if not isinstance(other, VjpOp) or other.parent is not op.parent:
        return False
    return (
        other.callee == op.callee and other.wrt == op.wrt and other.aux == op.aux
        and len(other.args) == len(op.args) and op.split(n_inputs)[0] == other.split(n_inputs)[0]
    )


def _zero(t) -> arith.ConstantOp:
    return float_constant(0.0, t)


class Differentiator:
    """Generates augmented primals and pullbacks into one module."""

    def __init__(
        self,
        module: ModuleOp,
        table: RuleTable | None = None,
        checkpoint: bool = False,
        inline: bool = False,
        hoist: bool = False,
        keep_shared: int = KEEP_ALL_INLINED,
    ):
        self.module = module
        # recompute loop bodies in the reverse sweep instead of recording residuals
        self.checkpoint = checkpoint
        # inline the callees AD differentiates into their callers first
        self.inline = inline
        # ... except shared callees of at least this many ops (passes/inline.py's is_shared)
        self.keep_shared = keep_shared
        # move loop-invariant scalar code out of loops first (passes/ad/reverse_loops.py)
        self.hoist = hoist
        self._graph: CallGraph | None = None
        self.table = table if table is not None else default_table()
        self.functions: dict[str, func.FuncOp] = functions_by_name(module)
        self.generated: dict[Key, Generated] = {}
        # keys on a call cycle: their pairs thread a tape and call each other
        self.recursive: set[Key] = set()
        self.decisions: list[CallDecision] = []
        # the primal of the module's only request, which its generated pair may
        # consume (`_takes_primal`)
        self._sole_request: str | None = None
        self._taken: set[str] = set()  # primals whose body became their augmented primal

    # ---- entry points ------------------------------------------------------
    def rewrite_requests(self) -> None:
        """Rewrite every request, the innermost first: a request whose callee
        reaches another request (a gradient of a gradient) waits for that one,
        so it differentiates generated code."""
        requests = find(self.module, REQUESTS)
        if len(requests) == 1:  # nothing to order (and no other request needs its primal)
            self._sole_request = requests[0].callee.root_reference.data
            self.rewrite_request(requests[0])
            return
        first = True
        while requests:
            if not first:
                self._next_order()
            first = False
            pending = set(requests)
            ready = [op for op in requests if not any(r in pending for r in self._requests_below(op))]
            for op in ready or requests[:1]:  # a cycle of requests: as written
                if op in pending:
                    done = self.rewrite_request(op, [r for r in requests if r in pending])
                    pending.difference_update(done)
            requests = [r for r in requests if r in pending]

    def _next_order(self) -> None:
        """Forget what was generated for the requests rewritten so far: the
        next ones differentiate their generated code, where the table may
        decide otherwise (a rule that declines at order 2). Functions generated
        the same way are still reused (`_existing`)."""
        self.functions = functions_by_name(self.module)
        self.generated = {}
        self.recursive = set()
        self._graph = None

    def _requests_below(self, op: Operation) -> list[Operation]:
        """The request ops in the functions `op`'s callee reaches through calls
        and requests."""
        return [r for r in reached_ops(self.functions, [op.callee.root_reference.data]) if isinstance(r, REQUESTS)]

    def reverse(self, name: str, active: tuple[bool, ...]) -> Generated:
        """Generate (or reuse) the augmented primal and pullback of @name."""
        self._ensure((name, active))
        return self.generated[(name, active)]

    # ---- request ops -------------------------------------------------------
    def rewrite_request(self, op: Operation, pending: list[Operation] = ()) -> list[Operation]:
        """Replace the request `op` (and the `pending` vjp requests that share
        its augmented primal) by calls to the generated pair; returns the
        requests replaced."""
        name = op.callee.root_reference.data
        fn = self.function(name, op)
        inputs = fn.function_type.inputs.data
        for i in op.wrt_indices:
            if not is_differentiable(inputs[i]):
                raise DifferentiationError(
                    f"{location(op)}: cannot differentiate with respect to argument {i} "
                    f"of @{name}: it has type {inputs[i]}, not a float"
                )
        active = tuple(i in op.wrt_indices for i in range(len(inputs)))
        target = name
        if op.aux is not None:  # the aux results pass through irad.stop_gradient
            target = cut_aux(self.module, name, op.aux.value.data)
            self.functions.update((f.sym_name.data, f) for f in self.module.ops if isinstance(f, func.FuncOp))
            self._graph = None  # rebuilt with the copy when inlining needs it
            if self._sole_request == name:
                self._sole_request = target
        if isinstance(op, VjpSplitOp):
            self._split_functions(op, target, active)
            return [op]
        group = [op] + [r for r in pending if r is not op and _shares_augmented(op, r, len(inputs))] \
            if isinstance(op, VjpOp) else [op]
        self._rewrite_group(group, name, target, active)
        return group

    def _rewrite_group(self, group: list[Operation], name: str, target: str, active: tuple[bool, ...]) -> None:
        """One augmented primal of @target on the requests' arguments, then a
        pullback per request, on the cotangents it gives (irad.vjp) or on the
        seed 1.0 of the one float result; aux floats get 0.0."""
        inputs = self.function(name, group[0]).function_type.inputs.data
        outputs = self.function(target, group[0]).function_type.outputs.data
        n = len(outputs)
        gen = self.reverse(target, active)
        first = group[0]
        args = first.split(len(inputs))[0] if isinstance(first, VjpOp) else first.args
        aug = func.CallOp(gen.augmented, list(args), [*outputs, *gen.residual_types])
        Rewriter.insert_op(aug, InsertPoint.before(first))
        grad_types = [inputs[i] for i in first.wrt_indices]
        differentiated = first.differentiated(outputs)
        aux_floats = [t for t in outputs[len(differentiated):] if is_differentiable(t)]
        kept = set()
        for op in group:
            seeds = [] if isinstance(op, VjpOp) else [float_constant(1.0, _seeded_type(op, name, differentiated))]
            seeds += [_zero(t) for t in aux_floats]
            given = list(op.split(len(inputs))[1]) if isinstance(op, VjpOp) else []
            pullback = func.CallOp(gen.pullback, [*aug.results[n:], *given, *(s.result for s in seeds)], grad_types)
            results = list(pullback.results)
            if isinstance(op, ValueAndGradOp):
                results = [*aug.results[:n], *results]
            kept.update(results)
            # The requests own the tape their augmented primal allocated: free
            # it after the last pullback (a no-op in the Python backend).
            frees = [TapeFreeOp(r) for r in aug.results[n:] if r.type == TAPE] if op is group[-1] else []
            Rewriter.replace_op(op, [*seeds, pullback, *frees], results)
            for s in seeds:
                s.result.name_hint = None
        for v in aug.results:  # the request's name belongs to its results only
            if v not in kept:
                v.name_hint = None
        self._forget_taken(name)

    def _split_functions(self, op: VjpSplitOp, target: str, active: tuple[bool, ...]) -> None:
        """The public pair irad.vjp_split asks for: each calls its generated half."""
        gen = self.reverse(target, active)
        inputs = self.function(target, op).function_type.inputs.data
        outputs = self.function(target, op).function_type.outputs.data
        cotangents = [t for t in op.differentiated(outputs) if is_differentiable(t)]
        aux_floats = [t for t in outputs[len(op.differentiated(outputs)):] if is_differentiable(t)]
        grad_types = [t for t, a in zip(inputs, active) if a]
        if (gen.augmented, gen.pullback) == (op.augmented.data, op.pullback.data) and not aux_floats:
            for name in (gen.augmented, gen.pullback):  # the generated pair is the one asked for
                self.functions[name].sym_visibility = None
            self.module.body.block.erase_op(op)
            return
        for public, callee, arg_types, result_types, zeros in (
            (op.augmented.data, gen.augmented, list(inputs), [*outputs, *gen.residual_types], []),
            (op.pullback.data, gen.pullback, [*gen.residual_types, *cotangents], grad_types, aux_floats),
        ):
            block = Block(arg_types=arg_types)
            constants = [_zero(t) for t in zeros]
            call = func.CallOp(callee, [*block.args, *(c.result for c in constants)], result_types)
            block.add_ops([*constants, call, func.ReturnOp(*call.results)])
            wrapper = func.FuncOp(public, FunctionType.from_lists(arg_types, result_types), Region(block))
            mark_generated(wrapper, self.function(target, op), ENTRY)
            self.module.body.block.add_op(wrapper)
            self.functions[public] = wrapper
        self.module.body.block.erase_op(op)
        self._forget_taken(target)

    def _forget_taken(self, name: str) -> None:
        if name in self._taken:  # its body became the augmented primal
            fn = self.functions.pop(name)
            if self._graph is not None:
                del self._graph.functions[name]
            self.module.body.block.erase_op(fn)

    # ---- the worklist ------------------------------------------------------
    def _ensure(self, root: Key) -> None:
        """Generate `root` and every callee it needs, callees first.

        The stack is the current path through the call graph, so meeting a key
        that is already on it means real recursion: every key on the cycle is
        generated in tape mode, whose signatures are known before the bodies, so
        the cycle's members can call each other's generated functions.
        """
        stack: list[Key] = [root]
        pending: dict[Key, _Pending] = {}
        while stack:
            key = stack[-1]
            if key in self.generated:
                stack.pop()
                continue
            if key not in pending:
                pending[key] = self._plan(key, is_root=key == root)
            missing = [
                k
                for k in pending[key].callees.values()
                if k not in self.generated and k not in self.recursive
            ]
            if missing:
                dep = missing[0]
                if dep in stack:
                    self.recursive.update(stack[stack.index(dep) :])
                    continue
                stack.append(dep)
                continue
            self._generate(key, pending.pop(key))
            stack.pop()

    def _plan(self, key: Key, is_root: bool) -> _Pending:
        name, active_args = key
        fn = self.function(name)
        order = origin(fn)[1] + 1  # calls inside generated code are differentiated again
        if is_root:
            # Reached directly (a request, or the API): a rule for @name itself wins.
            # Callees were already looked up at their call sites.
            decision = self._decide(name, fn, fn.function_type, name, order)
            if decision.kind == "rule":
                return _Pending(FunctionPlan(set(), {}), rule=decision)
            if decision.kind == "non-differentiable":
                raise DifferentiationError(
                    f"@{name} is marked non-differentiable ({decision.rule.describe()}), "
                    "so it has no gradient\n  hint: remove the entry to differentiate it"
                )
        if fn.is_declaration:
            raise _no_body(fn)
        if len(fn.body.blocks) != 1:
            raise DifferentiationError(
                f"@{name} has {len(fn.body.blocks)} blocks: unstructured control flow "
                "is not supported\n  hint: use structured control flow (scf.if)"
            )
        if self.inline:
            self._inline_differentiated(name, fn, order)
        if self.hoist:
            hoist_invariants(fn)
        calls = find(fn, func.CallOp)
        constant = {op for op in calls if self._non_differentiable(op)}
        varied = varied_values(fn, active_args, constant)
        into_memory = varied_memory(fn, varied)
        if into_memory is not None:
            raise DifferentiationError(
                f"{location(into_memory)}: reverse mode cannot follow derivatives through "
                f"memory: @{name} puts a value that depends on the differentiated arguments "
                "into a memref (the tape of a loop or recursion, differentiated again)\n"
                "  hint: for second "
                "derivatives of programs with loops or recursion use irad.hessian or "
                "irad.jacfwd(irad.grad(f)) (forward over reverse)"
            )
        refused = refused_use(fn, varied)
        if refused is not None:
            raise refusal(refused, refused_reason(refused))
        active = active_values(fn, active_args, constant, varied)
        plan = FunctionPlan(active, {}, checkpoint=self.checkpoint)
        pending = _Pending(plan)
        for op in calls:
            callee_name = op.callee.root_reference.data
            callee = self.function(callee_name, op)
            if not any(o in active for o in op.operands) or not any(r in active for r in op.results):
                # no cotangent flows through this call: it stays a plain call
                kind = "non-differentiable" if op in constant else "inactive"
                self._record(name, op, callee, kind)
                continue
            decision = self._decide(name, callee, callee.function_type, callee_name, order, op)
            if decision.kind == "rule":
                plan.calls[op] = CallPlan(
                    "rule",
                    callee_name,
                    decision.ir,
                    import_helpers(self.module, self.functions, decision.ir, callee_name),
                    residual_types=decision.ir.residual_types,
                )
                continue
            if callee.is_declaration:
                raise _no_body(callee, op, decision)
            pending.callees[op] = (callee_name, tuple(o in active for o in op.operands))
        return pending

    def _inline_differentiated(self, name: str, fn: func.FuncOp, order: int) -> None:
        """Inline into primal @name the calls of primal callees AD would
        differentiate (no rule, opted out, or a rule that declines), as
        passes/inline.py's `inline_callees` says; rules, non-differentiable
        callees and recursion stay calls and are decided below as usual. The
        primal is changed in place; what it computes is not. A private callee
        nothing calls any more is erased."""
        if origin(fn)[1] != 0:
            return  # generated code, differentiated again: its calls stay, as the metadata says
        if self._graph is None:
            self._graph = CallGraph.build(self.module)

        def wanted(call: func.CallOp, callee: func.FuncOp) -> bool:
            if origin(callee)[1] != 0:  # generated code
                return False
            decision = self._lookup(callee, callee.function_type, order, call)
            if decision.kind not in DIFFERENTIATED:
                return False
            self._record(name, call, callee, decision.kind, decision.rule)
            return True

        for erased in inline_callees(fn, self._graph, wanted, self.keep_shared):
            del self.functions[erased]

    def _non_differentiable(self, op: func.CallOp) -> bool:
        callee = self.function(op.callee.root_reference.data, op)
        entry = self.table.entry(rule_key(callee), tuple(o.type for o in op.operands))
        return entry is not None and entry.kind == NON_DIFFERENTIABLE

    def _decide(
        self, caller: str, callee: func.FuncOp, ftype, callee_name: str, order: int, op=None
    ) -> Decision:
        """Ask the rule table about one call (or a request), and record the answer."""
        arg_types = tuple(ftype.inputs.data)
        decision = self._lookup(callee, ftype, order, op)
        self._record(caller, op, callee, decision.kind, decision.rule)
        if decision.kind == "rule":
            check_rule_ir(decision.rule, decision.ir, arg_types, tuple(ftype.outputs.data))
        return decision

    def _lookup(self, callee: func.FuncOp, ftype, order: int, op=None) -> Decision:
        try:
            return self.table.lookup(rule_key(callee), tuple(ftype.inputs.data), REVERSE, order)
        except DifferentiationError as exc:
            where = f"{location(op)}: " if op is not None else ""
            raise DifferentiationError(f"{where}{exc}") from None

    def _record(self, caller: str, op, callee: func.FuncOp, kind: str, rule=None) -> None:
        self.decisions.append(decision_at(caller, op, callee, kind, rule))

    def _generate(self, key: Key, pending: _Pending) -> None:
        name, active = key
        primal = self.function(name)
        for op, callee_key in pending.callees.items():
            if callee_key in self.generated:
                gen = self.generated[callee_key]
            else:  # a recursive call to a member of the cycle, generated later
                gen = Generated("", "", (), *tape_names(*callee_key))
            tape = bool(gen.tape_augmented)
            pending.plan.calls[op] = CallPlan(
                "generated",
                callee_key[0],
                augmented=gen.tape_augmented if tape else gen.augmented,
                pullback=gen.tape_pullback if tape else gen.pullback,
                residual_types=() if tape else gen.residual_types,
                tape=tape,
            )
        aug_name = generated_name(name, AUGMENTED, active)
        pb_name = generated_name(name, PULLBACK, active)
        rule = pending.rule.rule.describe() if pending.rule is not None else None
        existing = self._existing(aug_name, pb_name, primal, key, rule)
        if existing is not None:
            self.generated[key] = existing
            return
        if aug_name in self.functions or pb_name in self.functions:
            # an earlier run made these from another decision (e.g. a rule that
            # declines at this order): keep both, under fresh names
            aug_name = fresh_symbol(aug_name, self.functions)
            pb_name = fresh_symbol(pb_name, self.functions)
        tape = pending.rule is None and (key in self.recursive or needs_tape(primal, pending.plan))
        if pending.rule is not None:
            symbols = import_helpers(self.module, self.functions, pending.rule.ir, name)
            aug_block, pb_block, residual_types = build_from_rule(
                primal, active, pending.rule.ir, symbols
            )
        else:
            take = self._takes_primal(name, primal, tape)
            aug_block, pb_block, residual_types = build_reverse(primal, active, pending.plan, tape, take)
            if take and primal.body.first_block is None:
                self._taken.add(name)
        pairs = []
        if tape:
            tape_aug, tape_pb = tape_names(name, active)
            pairs.append((tape_aug, tape_pb, aug_block, pb_block, [], True))
            aug_block, pb_block, residual_types = build_tape_entry(primal, active, tape_aug, tape_pb)
        pairs.append((aug_name, pb_name, aug_block, pb_block, residual_types, False))
        for aug_sym, pb_sym, aug_body, pb_body, residuals, threaded in pairs:
            aug_type, pb_type = function_types(primal, active, residuals, threaded)
            for sym, ftype, block, role in (
                (aug_sym, aug_type, aug_body, AUGMENTED),
                (pb_sym, pb_type, pb_body, PULLBACK),
            ):
                generated = func.FuncOp(sym, ftype, Region(block), visibility="private")
                mark_generated(generated, primal, role)
                if rule is not None:
                    generated.attributes["irad.rule"] = StringAttr(rule)
                self.module.body.block.add_op(generated)
                self.functions[sym] = generated
        self.generated[key] = Generated(
            aug_name, pb_name, tuple(residual_types), *(tape_names(name, active) if tape else ("", ""))
        )

    def _takes_primal(self, name: str, primal: func.FuncOp, tape: bool) -> bool:
        """May the augmented primal of @name be made of its body (it is then
        erased)? When @name is the callee of the module's only request, private,
        and referenced by that request alone (the call graph of inlining counts
        the references), nothing needs it once the request is rewritten: the
        optimiser would erase it. Saves cloning the primal, the largest
        function in a module whose call tree was inlined."""
        return (
            name == self._sole_request
            and not tape
            and self._graph is not None
            and self._graph.uses[name] == 1
            and primal.sym_visibility is not None
            and primal.sym_visibility.data == "private"
        )

    def _existing(
        self, aug_name: str, pb_name: str, primal: func.FuncOp, key: Key, rule: str | None
    ) -> Generated | None:
        """Reuse functions an earlier run generated the same way (from the same
        rule, or from the body); refuse a clashing symbol that is not generated."""
        aug, pb = self.functions.get(aug_name), self.functions.get(pb_name)
        if aug is None and pb is None:
            return None
        if aug is None or pb is None or "irad.primal" not in aug.attributes:
            clash = aug_name if aug is not None else pb_name
            raise DifferentiationError(
                f"cannot generate @{clash}: a function with that name already exists\n"
                "  hint: rename it; names ending in .augmented.* and .pullback.* "
                "are reserved for generated code"
            )
        made_from = aug.attributes.get("irad.rule")
        if (made_from.data if isinstance(made_from, StringAttr) else None) != rule:
            return None
        n = len(primal.function_type.outputs.data)
        threaded = tape_names(*key)
        if threaded[0] not in self.functions:
            threaded = ("", "")
        return Generated(aug_name, pb_name, tuple(aug.function_type.outputs.data[n:]), *threaded)

    def attach_remarks(self) -> None:
        """Record the decisions about each primal's calls on its augmented primal."""
        for (name, _), gen in self.generated.items():
            lines = dict.fromkeys(
                d.describe() for d in self.decisions if d.caller == name and d.location
            )
            self.functions[gen.augmented].attributes["irad.remarks"] = ArrayAttr(
                [StringAttr(line) for line in lines]
            )

    def function(self, name: str, use: Operation | None = None) -> func.FuncOp:
        return find_function(self.functions, name, use)
