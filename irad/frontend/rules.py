"""Lowering of rules written in Python, rrule style, to the table's RuleIR.

    def rule(x):                  forward(x)            -> (y, residuals...)
        y = softplus(x)
        def pullback(dy):         pullback(residuals..., dy) -> (dx)
            return dy * sigmoid(x)
        return y, pullback

The values the pullback closure reads from the rule's body become residuals.
A rule that returns None for the argument types at hand declines; `if`
statements whose condition is known while lowering (isinstance, a global
flag) pick the branch then, so declining never costs a runtime branch.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace

from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType
from xdsl.ir import Attribute, Region, SSAValue

from irad.frontend import held_ints
from irad.frontend.control_state import NOT_RETURNED
from irad.frontend.lowering import FunctionLowering
from irad.frontend.module_lowering import ModuleLowering
from irad.frontend.values import Static, Value
from irad.frontend.source import parse_function
from irad.ir.types import describe, is_differentiable
from irad.rules.keys import target_key
from irad.rules.table import FruleIR, RuleIR


@dataclass(frozen=True)
class _Closure:
    """A nested `def` in a rule: its pullback."""

    node: ast.FunctionDef


@dataclass(frozen=True)
class _RuleReturn:
    results: tuple[SSAValue, ...]
    pullback: _Closure


def lower_rrule(rule_fn, target, arg_types: tuple[Attribute, ...], table) -> RuleIR | None:
    """The IR of `rule_fn` (an rrule for `target`) at `arg_types`, or None if it declines."""
    lowering = ModuleLowering(table, symbols_by_key=True, hidden_globals=False)
    ir = _RuleLowering(lowering, parse_function(rule_fn), arg_types).lower_rule()
    if ir is not None:
        for op in (ir.forward, ir.pullback, lowering.module):
            held_ints.strip(op)
    return None if ir is None else _with_helpers(ir, lowering, target)


def lower_frule(rule_fn, target, arg_types: tuple[Attribute, ...], table) -> FruleIR | None:
    """The IR of `rule_fn` (an frule for `target`) at `arg_types`, or None if it declines."""
    lowering = ModuleLowering(table, symbols_by_key=True, hidden_globals=False)
    ir = _FruleLowering(lowering, parse_function(rule_fn), arg_types).lower_frule()
    if ir is not None:
        for op in (ir.jvp, lowering.module):
            held_ints.strip(op)
    return None if ir is None else _with_helpers(ir, lowering, target)


def _with_helpers(ir, lowering: ModuleLowering, target):
    """`ir` with the functions its rule calls: calls to the target mean the
    primal itself; the others are helpers the pass copies."""
    key = target_key(target)
    functions = [op for op in lowering.module.ops if isinstance(op, func.FuncOp)]
    primal = frozenset(
        op.sym_name.data
        for op in functions
        if op.sym_name.data == key or _attr(op, "irad.target") == key
    )
    helpers = tuple(op for op in functions if op.sym_name.data not in primal)
    for op in helpers:
        op.detach()
    return replace(ir, helpers=helpers, primal_symbols=primal)


def _attr(op: func.FuncOp, name: str) -> str | None:
    attr = op.attributes.get(name)
    return getattr(attr, "data", None)


class _RuleLowering(FunctionLowering):
    def statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.FunctionDef):
            self.env[stmt.name] = Static(_Closure(stmt))
            return
        super().statement(stmt)

    def returned_value(self, stmt: ast.Return) -> Value:
        value = stmt.value
        if _is_none(value):
            return None  # the rule declines
        if not (isinstance(value, ast.Tuple) and len(value.elts) == 2):
            raise self._shape_error(stmt)
        results = self.expr(value.elts[0])
        pullback = self.expr(value.elts[1])
        if not (isinstance(pullback, Static) and isinstance(pullback.obj, _Closure)):
            raise self._shape_error(stmt)
        results = results if isinstance(results, tuple) else (results,)
        return _RuleReturn(tuple(self.as_number(r, value.elts[0]) for r in results), pullback.obj)

    def _shape_error(self, node: ast.AST):
        return self.src.error(
            node,
            f"the rule {self.src.tree.name} must return `(y, pullback)`, with `pullback` "
            "a function defined inside it, or None to decline",
            "see docs/rules.md",
        )

    def lower_rule(self) -> RuleIR | None:
        tree = self.src.tree
        params = self.bind_parameters(
            self.block.args,
            lambda n: f"the rule {tree.name} takes {n} arguments, but its target is "
            f"called with {len(self.arg_types)}",
        )
        returned = _run_body(self, lambda: self._shape_error(tree))
        if returned is None:
            return None
        captured = _captured(returned.pullback.node, self.env)
        residuals = _residuals(captured)
        self.em.op(func.ReturnOp(*returned.results, *residuals))
        forward = func.FuncOp(
            "forward",
            FunctionType.from_lists(self.arg_types, [*(r.type for r in returned.results), *(v.type for v in residuals)]),
            Region(self.block),
        )
        pullback, cotangent_args = _PullbackLowering(
            self.owner, replace(self.src, tree=returned.pullback.node), params, self.arg_types,
            captured, [r.type for r in returned.results if is_differentiable(r.type)],
        ).lower_pullback()
        return RuleIR(forward, pullback, len(returned.results), cotangent_args)


def _captured(closure: ast.FunctionDef, env: dict[str, Value]) -> list[tuple[str, Value]]:
    """The (name, value) pairs of the rule's body that the closure reads."""
    params = {a.arg for a in closure.args.posonlyargs + closure.args.args}
    names = [n for n in ast.walk(closure) if isinstance(n, ast.Name)]
    stored = {n.id for n in names if isinstance(n.ctx, ast.Store)}
    loaded = dict.fromkeys(n.id for n in names if isinstance(n.ctx, ast.Load))
    return [
        (name, env[name]) for name in loaded if name in env and name not in params | stored
    ]


def _residuals(captured: list[tuple[str, Value]]) -> list[SSAValue]:
    """The runtime values among the captured ones, each once."""
    values: dict[SSAValue, None] = {}
    for _, value in captured:
        for v in value if isinstance(value, tuple) else (value,):
            if isinstance(v, SSAValue):
                values[v] = None
    return list(values)


class _PullbackLowering(FunctionLowering):
    """Lowers a rule's nested pullback: captured values arrive as residuals."""

    def __init__(self, owner, src, rule_params, primal_types, captured, cotangent_types):
        residuals = _residuals(captured)
        super().__init__(owner, src, (*(v.type for v in residuals), *cotangent_types))
        self.rule_params = rule_params
        self.primal_types = primal_types
        self.cotangent_types = cotangent_types
        self.who = f"rule {self.fn.__qualname__}"
        renamed = dict(zip(residuals, self.block.args))
        for value, arg in renamed.items():
            arg.name_hint = value.name_hint
        for name, value in captured:
            if isinstance(value, tuple):
                self.env[name] = tuple(renamed.get(v, v) for v in value)
            else:
                self.env[name] = renamed.get(value, value) if isinstance(value, SSAValue) else value

    def returned_value(self, stmt: ast.Return) -> Value:
        value = stmt.value
        parts = value.elts if isinstance(value, ast.Tuple) else [value]
        return tuple(None if _is_none(p) else self.number(p) for p in parts), stmt

    def lower_pullback(self) -> tuple[func.FuncOp, tuple[int, ...]]:
        tree = self.src.tree
        n = len(self.cotangent_types)
        self.bind_parameters(
            self.block.args[len(self.block.args) - n :],
            lambda k: f"{self.who}: the pullback takes {k} arguments, expected one "
            f"cotangent per float result of the primal ({n})",
        )
        returned, node = _run_body(
            self, lambda: self.src.error(tree, f"{self.who}: the pullback does not return its cotangents")
        )
        if len(returned) != len(self.primal_types):
            raise self.src.error(
                node,
                f"{self.who}: the pullback returns {len(returned)} cotangents, expected one "
                f"per argument of the primal ({len(self.primal_types)}: "
                f"{', '.join(self.rule_params)})",
                "return a tuple with one entry per argument; None for a zero cotangent",
            )
        kept = []
        for i, (ct, t) in enumerate(zip(returned, self.primal_types)):
            arg = f"argument {i} ('{self.rule_params[i]}', {describe(t)})"
            if ct is None:
                continue
            if not is_differentiable(t):
                raise self.src.error(
                    node,
                    f"{self.who}: the pullback returns a cotangent for {arg}; it is not a "
                    "float, so its cotangent must be None",
                    "return None in that position",
                )
            if ct.type != t:
                raise self.src.error(
                    node,
                    f"{self.who}: the pullback returns a cotangent for {arg} that is "
                    f"{describe(ct.type)}, expected {describe(t)}",
                    "return a float of the argument's type, or None for a zero cotangent",
                )
            kept.append(i)
        self.em.op(func.ReturnOp(*(returned[i] for i in kept)))
        op = func.FuncOp(
            "pullback",
            FunctionType.from_lists([a.type for a in self.block.args], [returned[i].type for i in kept]),
            Region(self.block),
        )
        return op, tuple(kept)


class _FruleLowering(FunctionLowering):
    """Lowers an frule: `rule(x..., dx...)` returning `(y, dy)` or None.

    Tangent parameters of int and bool arguments are bound to None."""

    def __init__(self, owner, src, arg_types):
        self.primal_types = arg_types
        tangent_types = [t for t in arg_types if is_differentiable(t)]
        super().__init__(owner, src, (*arg_types, *tangent_types))
        self.who = f"frule {self.fn.__qualname__}"

    def returned_value(self, stmt: ast.Return) -> Value:
        value = stmt.value
        if _is_none(value):
            return None  # the rule declines
        if not (isinstance(value, ast.Tuple) and len(value.elts) == 2):
            raise self.src.error(
                stmt, f"{self.who} must return `(y, dy)`: the value and its tangent, or None "
                "to decline", "see docs/forward-mode.md",
            )
        results = self.expr(value.elts[0])
        results = results if isinstance(results, tuple) else (results,)
        tangents = value.elts[1]
        parts = tangents.elts if isinstance(tangents, ast.Tuple) else [tangents]
        return (
            tuple(self.as_number(r, value.elts[0]) for r in results),
            tuple(None if _is_none(p) else self.number(p) for p in parts),
            stmt,
        )

    def lower_frule(self) -> FruleIR | None:
        n = len(self.primal_types)
        tree = self.src.tree
        tangents = iter(self.block.args[n:])
        self.bind_parameters(
            [*self.block.args[:n], *(next(tangents) if is_differentiable(t) else None for t in self.primal_types)],
            lambda k: f"{self.who} takes {k} arguments, expected the target's {n} arguments "
            f"followed by one tangent each ({2 * n})",
        )
        returned = _run_body(
            self, lambda: self.src.error(tree, f"{self.who} does not return `(y, dy)` or None")
        )
        if returned is None:
            return None
        results, tangents, stmt = returned
        if len(tangents) != len(results):
            raise self.src.error(
                stmt, f"{self.who} returns {len(tangents)} tangents for {len(results)} results",
                "return one tangent per result; None for a zero tangent",
            )
        out = []
        for i, (r, t) in enumerate(zip(results, tangents)):
            if not is_differentiable(r.type):
                if t is not None:
                    raise self.src.error(
                        stmt, f"{self.who} returns a tangent for result {i}, which is "
                        f"{describe(r.type)}; its tangent must be None",
                    )
                continue
            if t is None:
                t = self.em.const(0.0, r.type)
            elif t.type != r.type:
                raise self.src.error(
                    stmt, f"{self.who} returns a tangent of type {describe(t.type)} for "
                    f"result {i}, which is {describe(r.type)}",
                    "return a float of the result's type, or None for a zero tangent",
                )
            out.append(t)
        self.em.op(func.ReturnOp(*results, *out))
        jvp = func.FuncOp(
            "jvp",
            FunctionType.from_lists(
                [a.type for a in self.block.args], [*(r.type for r in results), *(t.type for t in out)]
            ),
            Region(self.block),
        )
        return FruleIR(jvp, len(results))


def _run_body(lowering: FunctionLowering, missing_return) -> Value:
    """Lower a rule's (or pullback's) body; what its `return` gives. Whether it
    returns, and so whether a rule declines, must be known while lowering."""
    lowering.control_flow.run_statements(lowering.src.tree.body)
    returned = lowering.control.returned
    if returned is False:
        raise missing_return()
    if returned is not True:
        raise lowering.src.error(
            lowering.src.tree,
            f"{lowering.src.tree.name} returns on some paths only, decided at run time",
            "a rule decides at lowering time: test static properties (isinstance) "
            "before returning None, and return on every path",
        )
    value = lowering.control.value
    return None if value is NOT_RETURNED else value


def _is_none(node: ast.expr | None) -> bool:
    return node is None or (isinstance(node, ast.Constant) and node.value is None)
