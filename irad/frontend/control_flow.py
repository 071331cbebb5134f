"""Statement-level control flow: `if`/`elif`/`else`, `for ... in range`, `while`,
`break`, `continue` and `return` anywhere, lowered to structured `scf` ops.

Python's jumps become *flags* in the path's control state (control_state.py:
returned, broke, continued, and the value `return` gave), kept apart from the
variables. A flag is a Python bool while it is known at lowering time and an
`i1` value once it depends on data. Statements after a possible jump run under
`scf.if not flag` (`run_statements`), so every form reduces to `scf.if`,
`scf.for` and `scf.while` with values carried as results and iter_args:

* `if`: both arms are lowered into their own blocks from a copy of the path;
  the slots (variables, shared arrays, control state) that differ afterwards
  leave the `scf.if` as results.
* `for`: an `scf.for` over the trip count (0 to n step 1, in `index`), with
  the loop variable computed from the induction variable (irad/frontend/iteration.py
  says what a loop can walk); `break` and `return` set a flag that is carried
  and guards the rest of the body and all later iterations.
* `while`: an `scf.while` whose condition also tests the break/return flags.

The types a loop carries are found by lowering the body once (into a block that
is thrown away) and promoting int to float where the body does (`s = 0`
then `s += x`), until they are stable.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, TensorType
from xdsl.ir import Attribute, Block, Region, SSAValue

from irad.frontend import callables, joins, loop_else, match_statements, number_joins, numpy_scalars
from irad.frontend.control_state import (
    BROKE, CONTINUED, FLAGS, RETURNED, VALUE, PathEnded, is_user_variable, is_variable,
)
from irad.frontend.emitter import Emitter, can_raise
from irad.frontend.values import Kind, NoValue, Static, is_array, mark_orders, same_orders, value_kind
from irad.base.errors import UnsupportedError
from irad.ir.symbols import value_name
from irad.ir.types import F64, I1, describe, is_int

INDEX = IndexType()
_MISSING = object()
_UNJOINABLE = (
    "give it a number, an array, or a container of the same structure (the same keys, "
    "fields and lengths) on every path; a function or an object known while lowering "
    "must be the same one on every path, so branch inside one function instead"
)
# Rounds enough for learning the returned value's type and bool -> int -> float.
_MAX_TYPE_ROUNDS = 8  # types, and numpy float widths (numpy_scalars.assume_carried)


def assigned_names(body: list[ast.stmt]) -> list[str]:
    """Variables a statement list assigns, in order of first assignment."""
    seen: dict[str, None] = {}
    for node in callables.own_scope(body):  # not what nested functions assign
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            seen.setdefault(node.id, None)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
            if isinstance(node.value, ast.Name):  # y[i] = v rebinds the array y
                seen.setdefault(node.value.id, None)
        elif isinstance(node, ast.FunctionDef):
            seen.setdefault(node.name, None)
        elif isinstance(node, ast.MatchAs) and node.name:  # case k: binds k
            seen.setdefault(node.name, None)
    return list(seen)


def written_names(body: list[ast.stmt]) -> set[str]:
    """Variables whose array a statement list writes into (`y[i] = v`, `y.T[0] += v`, `c['k'][i] = v`)."""
    roots = set()
    for node in callables.own_scope(body):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
            root = node.value
            while isinstance(root, (ast.Subscript, ast.Attribute)):
                root = root.value
            if isinstance(root, ast.Name):
                roots.add(root.id)
    return roots


def _contains(body: list[ast.stmt], kinds: tuple, stop_at_loops: bool) -> bool:
    """Does `body` hold a statement of `kinds` (outside nested loops if asked)?"""
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, kinds):
            return True
        if stop_at_loops and isinstance(node, (ast.For, ast.While)):
            continue
        stack.extend(n for n in ast.iter_child_nodes(node) if isinstance(n, (ast.stmt, ast.match_case)))
    return False


def assigned_first(body: list[ast.stmt], name: str) -> ast.Assign | None:
    """The statement `name = <expr>` at the top of a loop body that runs before
    anything in the body reads `name` or may leave the iteration (a `break`,
    `continue` or `return`), its value not reading `name`; None if there is none.
    Every iteration that starts then assigns `name` first, so in a loop known to
    run, `name` holds after it what the last iteration assigned (created_kept)."""
    for stmt in body:
        if (isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets)
                and any(t.id == name for t in stmt.targets) and not _mentions(stmt.value, name)):
            return stmt
        if _mentions(stmt, name) or _contains([stmt], (ast.Break, ast.Continue, ast.Return), stop_at_loops=False):
            return None
    return None


def _mentions(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


def flatten(value, functions: bool = False) -> list[SSAValue] | None:
    """The SSA values of an environment entry (a number, an array, or a tuple,
    list, dict, NamedTuple or dataclass of them), or None if it holds something
    else. With `functions`, what a branch joins: also functions and objects known
    while lowering, whose run-time values (a lambda's defaults) are the leaves."""
    leaves: list[SSAValue] = []
    return None if _shape(value, functions, leaves) is None else leaves


def _structure(value, functions: bool = False) -> object:
    """What two values must share to be joined: their containers and keys (and
    with `functions`, the functions and objects known while lowering in them)."""
    return callables.structure(_shape(value, functions))


def _rebuild(like, values: list[SSAValue], functions: bool = False):
    """`like`'s structure with `values` as its leaves."""
    return callables.rebuild(_shape(like, functions), iter(values))


def _shape(value, functions: bool, leaves: list[SSAValue] | None = None) -> object:
    """callables.flatten's shape of `value`; with `functions`, live closures (as a branch joins them)."""
    return callables.flatten(value, [] if leaves is None else leaves, callables.live if functions else None)


def _jumping_arms_first(body: list[ast.stmt]) -> list[ast.stmt]:
    """`if c: ...; continue` + `else: B` + `rest` as `if c: ...; continue` + `B` +
    `rest` (and the same with the arms swapped; a jumping arm is one whose every
    path breaks, continues or returns, `if d: break` + `return`, see
    _leaves_iteration): B runs only where the jump was
    not taken, as `rest` does, so both are lowered together under the jump's
    flag. Joined with the jumping arm's values at the `if` instead, a name B
    rebinds to a fresh array would not be writable in `rest`. In a chain (`if a:
    X elif b: ...; break elif c: ...; continue else: Y`) the jumps are lowered
    first, as the chain with the other arms emptied and cut after the last jump
    (`if a: pass elif b: ...; break elif c: ...; continue`), then the chain
    without them (`if a: X else: Y`: where no jump was taken and `a` is false,
    `b` and `c` were too), whose tests are evaluated again (irad's conditions
    have no side effects, but for `:=`: such a chain is left as it is). A chain all of whose arms jump is left as it is."""
    for i, stmt in enumerate(body):
        if not isinstance(stmt, ast.If) or not stmt.orelse:
            continue
        arms = _arms(stmt)
        jumping = [k for k, (_, arm) in enumerate(arms) if _leaves_iteration(arm)]
        if not jumping or len(jumping) == len(arms):
            continue
        if any(isinstance(n, ast.NamedExpr) for test, _ in arms if test is not None for n in ast.walk(test)):
            continue  # a test that assigns (`:=`) is evaluated once, where Python evaluates it
        split = getattr(stmt, "irad_jumping_arm", None)  # made once, however often the body is lowered
        if split is None:
            jump = [(test, arm if k in jumping else [ast.copy_location(ast.Pass(), stmt)])
                    for k, (test, arm) in enumerate(arms)]
            rest = [arm for k, arm in enumerate(arms) if k not in jumping]
            if arms[-1][0] is None and len(arms) - 1 in jumping:
                # the `else` jumps: where it did not, the last test left holds
                rest[-1] = (None, rest[-1][1])
            split = stmt.irad_jumping_arm = (_chain(jump[:jumping[-1] + 1], stmt), _chain(rest, stmt))
        jump, rest = split
        return [*body[:i], *jump, *_jumping_arms_first([*rest, *body[i + 1:]])]
    return body


def _always_jumps(body: list[ast.stmt]) -> bool:
    """Does every path through `body` end in a return, break or continue?"""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, ast.If):
        return all(_always_jumps(arm) for _, arm in _arms(last))
    return isinstance(last, (ast.Return, ast.Break, ast.Continue))


def _leaves_iteration(arm: list[ast.stmt]) -> bool:
    """Does every path through `arm` jump, some by break or continue? (An arm
    that only returns needs no split: after it no variable is read again.)"""
    return _always_jumps(arm) and _contains(arm, (ast.Break, ast.Continue), stop_at_loops=True)


def _arms(stmt: ast.If) -> list[tuple[ast.expr | None, list[ast.stmt]]]:
    """An `if`/`elif`/`else` chain's arms as (test, body); the `else` last, with
    test None (its body empty if there is none)."""
    arms = []
    while True:
        arms.append((stmt.test, stmt.body))
        if len(stmt.orelse) != 1 or not isinstance(stmt.orelse[0], ast.If):
            return [*arms, (None, stmt.orelse)]
        stmt = stmt.orelse[0]


def _chain(arms: list, like: ast.If) -> list[ast.stmt]:
    """The statements of the chain `arms` (see _arms)."""
    if not arms:
        return []
    test, body = arms[0]
    if test is None:
        return list(body)
    return [ast.copy_location(ast.If(test, list(body), _chain(arms[1:], like)), like)]


def _shown(name) -> str:
    return "the returned value" if name is VALUE else f"'{name}'"


class _Rebound(NoValue):
    """A name known while lowering before a loop (a function) that the body
    binds anew: no scf loop carries it, so it has no one value at the top of
    the body (nor after the loop, unless control_flow can tell which it is)."""


def _rebound(value, where: str, when: str) -> _Rebound:
    what = "a function" if value_kind(value) is Kind.CALLABLE else "a value known while lowering"
    if when == "before":
        which = ("before the body binds it again, it would be the one from before the loop in the "
                 "first iteration and the one the body binds in later ones")
        hint = ("read it in the body only after the body binds it, or give the body's function another "
                "name; a loop over a tuple is unrolled, so its body may read a different function per item")
    else:
        which = ("after it, irad cannot tell it from the one before the loop: the body may not run, or not "
                 "reach its binding (a `break`, `continue` or `return` in the loop)"
                 if when == "after" else
                 "after it, it would be the last iteration's, whose run-time values (its defaults) the loop "
                 "does not carry")
        hint = "bind it after the loop, or give the body's function another name"
    return _Rebound(
        f"it is {what} the loop at {where} binds anew, and a loop lowered to scf.for or "
        f"scf.while carries only run-time values (numbers, arrays and containers of them): {which}",
        hint,
    )


def _widen(em: Emitter, v: SSAValue, t: Attribute, joined: str) -> SSAValue:
    """`v` as `t` where `t` is the join of its type; otherwise `v` unchanged (a
    loop body that widened a variable: the next round carries the join)."""
    return joins.convert(em, v, t, joined) if joins.join_types(v.type, t) == t else v


def _ints_as_floats(types: dict[str, list[Attribute]], slots) -> dict[str, list[Attribute]]:
    """The carried types with every int (not a flag, bool or array) as f64."""
    return {
        n: [F64 if n in slots and n not in FLAGS and is_int(t) else t for t in ts]
        for n, ts in types.items()
    }


def _discard(block: Block) -> None:
    """Forget a block lowered only to learn types (its ops use outer values)."""
    block.drop_all_references()


@dataclass
class _Carried:
    """What a loop carries, as guessed before a lowering of its body (widened until it settles)."""

    carried: list  # the slots carried (variables, bases, flags), without the returned value
    returns: bool  # the body has a `return`
    inits: dict  # slot -> its values before the loop
    types: dict  # slot (and VALUE) -> the types the loop carries it as
    widths: dict  # slot -> the numpy float widths (NEP 50) its numbers may have
    value_like: object = None  # a value of the returned value's structure; None: not known yet
    # arrays fresh before the loop that an iteration may leave holding an array
    # irad cannot write through (a call's result): not writable in the body either
    unwritable: set = field(default_factory=set)
    # variables the body creates, first thing (assigned_first), that a loop known to run
    # keeps after it: name -> a value of their structure (see _carry_created)
    created: dict = field(default_factory=dict)

    def slots(self) -> list:
        """What the scf op carries: the carried slots, and the returned value once its structure is known."""
        return self.carried + ([VALUE] if self.returns and self.value_like is not None else [])


@dataclass
class LoopBodyOutcome:
    """What one lowering of a loop body gave."""

    before: Block | None  # the condition's block (a `while`), or None
    after: Block  # the body's block
    yielded: dict = field(default_factory=dict)  # slot -> the values it ends an iteration with (widened)
    held: dict = field(default_factory=dict)  # variable -> those values before widening
    changed: list = field(default_factory=list)  # slots from before the loop that the body changed
    views: object = None  # the sharing of arrays the next iteration starts from (views.Table)
    breaks: tuple = ()  # the sharing where a `break` left (views.Exit), for after the loop
    new_value: object = None  # what `return` gave, where the loop does not carry the returned value yet
    rebound: dict = field(default_factory=dict)  # a name _rebound_functions set apart -> what the body left in it

    def discard(self) -> None:
        """Forget the blocks (lowered only to learn what the loop carries)."""
        _discard(self.after)
        if self.before is not None:
            _discard(self.before)


class ControlFlow:
    """The statements that branch, loop or jump, for one FunctionLowering (`fl`).

    Its interface: `statement` (for the STATEMENTS), `run_statements`, and for
    the loops iteration.py lowers, `loop`, `branch`, `jumped`, `taken`,
    `no_value` and `not_kept`. What it needs from its owner: the current path,
    emitter and source (`fl.path`, `fl.env`, `fl.control`, `fl.em`, `fl.src`),
    which it replaces while it lowers an arm or a body; the lowering of a
    statement or an expression (`statement`, `expr`, `number`, `as_number`,
    `static_condition`, `returned_value`, `runtime_values`); the arrays'
    writability and sharing (`fl.arrays`); and the list rules at joins
    (`freeze_lists`, `join_lists`, `differing_lengths`, `refuse_while_lists`).
    """

    STATEMENTS = (ast.If, ast.While, ast.Return, ast.Break, ast.Continue, ast.Match)

    def __init__(self, fl) -> None:
        self.fl = fl
        # a loop body's first assignment of a variable it creates -> what it gave (_settled_body)
        self.assigned_seen: dict[ast.stmt, dict] = {}

    def statement(self, stmt: ast.stmt) -> None:
        """Lower one of the STATEMENTS."""
        getattr(self, f"stmt_{type(stmt).__name__}")(stmt)

    # ---- statement lists under jump flags ---------------------------------
    def run_statements(self, body: list[ast.stmt]) -> None:
        """Lower statements; those after a possible jump run only if it was not taken."""
        body = _jumping_arms_first(body)
        for i, stmt in enumerate(body):
            jumped = self.jumped()
            if jumped is True:
                return  # unreachable, as after a `return` in plain Python
            if jumped is not False:
                self.branch(jumped, self.taken, lambda rest=body[i:]: self._resume(rest), stmt)
                return
            outer, self.fl.statement_em = self.fl.statement_em, self.fl.em
            try:
                self.fl.statement(stmt)
            except PathEnded:  # it called a function that always raises: nothing after it runs
                self.fl.control.returned = True
                return
            finally:
                self.fl.statement_em = outer
            if stmt in self.assigned_seen:  # what a loop body's first assignment gave (_settled_body)
                self.assigned_seen[stmt] = {t.id: self.fl.path.get(t.id) for t in stmt.targets}

    def taken(self) -> None:
        # On this path a jump was taken; with a single dynamic flag it is that one.
        dynamic = [f for f in FLAGS if self.fl.control.get(f) not in (True, False)]
        if len(dynamic) == 1:
            self.fl.control.set(dynamic[0], True)

    def _resume(self, rest: list[ast.stmt]) -> None:
        self.fl.control.clear_jumps()  # on this path no jump was taken
        self.run_statements(rest)

    def jumped(self):
        """False, True, or an i1 value: has a return/break/continue been taken?"""
        dynamic = []
        for state in self.fl.control.flags():
            if state is True:
                return True
            if state is not False:
                dynamic.append(state)
        if not dynamic:
            return False
        result = dynamic[0]
        for v in dynamic[1:]:
            result = self.fl.em.op(arith.OrIOp(result, v))
        return result

    def stmt_Return(self, stmt: ast.Return) -> None:
        self.fl.control.value = self.fl.returned_value(stmt)
        self.fl.control.returned = True

    def stmt_Break(self, stmt: ast.Break) -> None:
        self.fl.arrays.views.exit(broke=True)
        self.fl.control.broke = True

    def stmt_Continue(self, stmt: ast.Continue) -> None:
        self.fl.arrays.views.exit(broke=False)
        self.fl.control.continued = True

    # ---- if ---------------------------------------------------------------
    def stmt_If(self, stmt: ast.If) -> None:
        test = self.fl.expr(stmt.test)
        known = self.fl.expressions.static_condition(test)
        if known is not None:
            # known while lowering (isinstance, a shape, a global flag, a constant):
            # only the branch taken is lowered, so no runtime branch exists
            self.run_statements(stmt.body if known else stmt.orelse)
            return
        cond = self.fl.em.to_bool(self.fl.as_number(test, stmt.test))
        self.branch(
            cond,
            lambda: self.run_statements(stmt.body),
            lambda: self.run_statements(stmt.orelse),
            stmt,
        )

    def branch(self, cond: SSAValue, then_fn, else_fn, node: ast.AST) -> None:
        """Lower two arms into an scf.if; slots (variables, shared arrays'
        bases, control state) that differ become results."""
        before, outer = self.fl.path, self.fl.em
        arms = []
        for lower_arm in (then_fn, else_fn):
            block = Block()
            self.fl.em, self.fl.path = Emitter(block), before.copy()
            lower_arm()
            arms.append((block, self.fl.path))
        self.fl.em, self.fl.path = outer, before.copy()
        (then_block, then_path), (else_block, else_path) = arms
        jumped = tuple(any(state is True for state in p.control.flags()) for p in (then_path, else_path))
        returned = tuple(p.control.returned is True for p in (then_path, else_path))
        self.fl.arrays.views.join_branches(  # which names share arrays after the join
            (then_path, else_path), (Emitter(then_block), Emitter(else_block)), jumped, self.fl.src.location(node)
        )
        self.fl.path.views.table = then_path.views.table  # the join gave both arms one
        self.fl.path.views.exits = then_path.views.exits
        blocks = (then_block, else_block)
        merged = [m for name in dict.fromkeys([*then_path.slots(), *else_path.slots()])
                  if (m := self._join_slot(name, then_path.get(name, _MISSING), else_path.get(name, _MISSING),
                                           cond, blocks, returned, node)) is not None]
        if not merged and not (can_raise(then_block) or can_raise(else_block)):
            _discard(then_block)  # no variable changes: the arms' pure ops have no effect
            _discard(else_block)
            return
        then_block.add_op(scf.YieldOp(*[v for m in merged for v in m[2]]))
        else_block.add_op(scf.YieldOp(*[v for m in merged for v in m[3]]))
        types = [v.type for m in merged for v in m[2]]
        results = list(self.fl.em.results(scf.IfOp(cond, types, Region(then_block), Region(else_block))))
        for name, (like, other), fa, fb, held in merged:
            values, results = results[: len(fa)], results[len(fa) :]
            for v in values:
                if is_variable(name):
                    v.name_hint = value_name(name)
            # a dict whose paths inserted its keys in different orders is not iterated (values.py)
            self.fl.path[name] = joined = mark_orders(_rebuild(like, values, functions=True), like, other)
            self.fl.arrays.carried(values, *held, where=f"the `if` at {self.fl.src.location(node)}")  # writable after, if on both paths
            arms = tuple(None if r else p.get(name) for r, p in zip(returned, (then_path, else_path)))
            self.fl.lists.join_lists(joined, arms, (then_path.slots(), else_path.slots()), name,
                            self.fl.src.location(node))  # lists.py

    def _join_slot(self, name, a, b, cond, blocks: tuple[Block, Block], returned: tuple[bool, bool], node):
        """Join one slot of the arms of an `if` (`a` and `b`, _MISSING where an arm
        has none): None where the joined path is set without an scf.if result (the
        same value on both paths, a flag that is the condition, a slot without a
        value); otherwise (name, (a, b), the then arm's values, the else arm's,
        those values before widening) for a result."""
        if self._joined_without_result(name, a, b, cond):
            return None
        paired = self._paired_arms(name, a, b, blocks, returned, node)
        if paired is None:
            return None
        return self._joined_values(name, *paired, blocks, node)

    def _joined_without_result(self, name, a, b, cond) -> bool:
        """Set the slot where it needs no scf.if result: one value on both paths,
        or a flag set on exactly one of them (the condition, or its negation)."""
        if a is b or (isinstance(a, (tuple, Static)) and a == b) or callables.same_function(a, b):
            if a is not _MISSING:
                self.fl.path[name] = a
            return True
        if name in FLAGS and isinstance(a, bool) and isinstance(b, bool):
            self.fl.path[name] = cond if a else self.fl.em.op(arith.XOrIOp(cond, self.fl.em.const(1, I1)))
            return True
        return False

    def _paired_arms(self, name, a, b, blocks: tuple[Block, Block], returned: tuple[bool, bool], node):
        """The two arms' values made alike for one result: flags as i1, a
        placeholder where an arm returned; None where the slot is settled without
        a result (no value on a path, or only the path that did not return counts)."""
        then_block, else_block = blocks
        if name in FLAGS:
            return self._as_flag(a, then_block), self._as_flag(b, else_block)
        if name is VALUE and (a is _MISSING or b is _MISSING):
            # the arm that did not return yields a placeholder of the same shape
            a = self._placeholder_like(b, then_block) if a is _MISSING else a
            b = self._placeholder_like(a, else_block) if b is _MISSING else b
            if a is None and b is None:  # `return` without a value
                self.fl.path[name] = None
                return None
            return a, b
        if returned[0] != returned[1] and name is not VALUE:
            # after an arm that returned, a variable is never read again: the
            # other arm's value is the one that matters, whatever its type
            kept = b if returned[0] else a
            if kept is _MISSING:
                self.fl.path.pop(name)
                return None
            if isinstance(kept, NoValue) or not flatten(kept, functions=True):
                self.fl.path[name] = kept  # nothing computed at run time (or no value): it holds as it is
                return None
            a = self._placeholder_like(b, then_block) if returned[0] else a
            b = self._placeholder_like(a, else_block) if returned[1] else b
            return a, b
        if a is _MISSING or b is _MISSING or isinstance(a, NoValue) or isinstance(b, NoValue):
            where = self.fl.src.location(node)
            self.no_value(name, NoValue(
                f"it is assigned on only one path of the branch at {where}",
                "assign it on every path, or before the branch",
            ) if a is _MISSING or b is _MISSING else (a if isinstance(a, NoValue) else b))
            return None
        return a, b

    def _joined_values(self, name, a, b, blocks: tuple[Block, Block], node):
        """The arms' run-time values converted to their joined types: (name, (a, b),
        the then arm's, the else arm's, those before widening); None (the name
        holds why) where a user's variable holds values of no common structure."""
        then_block, else_block = blocks
        a = self._runtime_number(a, Emitter(then_block), node)
        b = self._runtime_number(b, Emitter(else_block), node)
        fa, fb = flatten(a, functions=True), flatten(b, functions=True)
        if fa is None or fb is None or _structure(a, True) != _structure(b, True):
            if not is_user_variable(name):
                raise self.fl.src.error(node, f"{_shown(name)} {self._unjoinable(a, b, 'this branch')}", _UNJOINABLE)
            # Python's variable would hold one of them: an error where it is read
            why = self._unjoinable(a, b, f"the branch at {self.fl.src.location(node)}")
            self.no_value(name, NoValue(f"it {why}", self.fl.lists.LENGTH_HINT if self.fl.lists.differing_lengths(a, b) else _UNJOINABLE))
            return None
        types = [joins.join_types(x.type, y.type) for x, y in zip(fa, fb)]
        for x, y, t in zip(fa, fb, types):
            if t is None:
                what = _shown(name)
                raise self.fl.src.error(
                    node,
                    f"{what} has no common type after this branch: {joins.mismatch(x.type, y.type)}",
                    "irad's array shapes are static: give it the same shape on every path",
                )
        # an array widened to the join is still the array its path held, so it
        # stays writable if that one was (`branch` gives `carried` the unwidened)
        held = (fa, fb)
        joined = number_joins.joined(self.fl.src.location(node), _shown(name), "this `if`")
        fa = [joins.convert(Emitter(then_block), v, t, joined) for v, t in zip(fa, types)]
        fb = [joins.convert(Emitter(else_block), v, t, joined) for v, t in zip(fb, types)]
        return name, (a, b), fa, fb, held

    def no_value(self, name, value) -> None:
        """After a join, a user's variable without a value holds why (reading it
        is the error); irad's own slots (`a.1`, a base, the returned value) are
        just undefined."""
        if value is not _MISSING and is_user_variable(name):
            self.fl.arrays.views.bind(name, None)  # it shares no array with anything
            self.fl.env[name] = value
        else:
            self.fl.path.pop(name)

    def _unjoinable(self, a, b, where: str) -> str:
        """Why two values have no join."""
        kind = self.fl.lists.differing_lengths(a, b)
        if kind is not None:
            return f"holds {kind} of {len(a)} items on one path of {where} and of {len(b)} on the other"
        if isinstance(a, callables.Closure) and isinstance(b, callables.Closure) and a.code is b.code:
            # one `def` run on both paths, with other defaults
            return (f"holds {self.fl.kind_of(a)} on the two paths of {where}, with default "
                    "values that differ in what is known while lowering (pass those as arguments)")
        return f"holds different kinds of values on the two paths of {where} ({self.fl.kind_of(a)} and {self.fl.kind_of(b)})"

    def _runtime_number(self, value, em: Emitter, node: ast.AST):
        """Numbers known while lowering (`len(x)`, a shape entry, arithmetic on
        them), alone or in a container, as constants emitted by `em`: where they
        meet run-time values (a join, a loop's carried variable) they must be."""
        outer, self.fl.em = self.fl.em, em
        try:
            return self.fl.runtime_values(value, node)
        finally:
            self.fl.em = outer

    def _as_flag(self, state, block: Block) -> SSAValue:
        if isinstance(state, bool):
            return Emitter(block).const(state, I1)
        return state

    def _placeholder_like(self, value, block: Block):
        values = flatten(value, functions=True)
        if values is None:
            return value  # e.g. None on both paths; the merge reports a mismatch
        em = Emitter(block)
        # a placeholder is a fresh array: it stands for nothing a write could reach
        return _rebuild(value, [self.fl.arrays.new(em.const(0, v.type)) for v in values], functions=True)

    # ---- loops --------------------------------------------------------------
    def stmt_While(self, stmt: ast.While) -> None:
        if stmt.orelse:
            self.loop_with_else(stmt)
            return
        self.fl.lists.refuse_while_lists(stmt)  # lists.py

        def condition(block: Block) -> None:
            outer = self.fl.em
            self.fl.em = Emitter(block)
            try:
                cond = self.fl.em.to_bool(self.fl.number(stmt.test))
                running = self.jumped()  # a break or return ends the loop
                if running is not False:
                    running = self.fl.em.op(arith.XOrIOp(running, self.fl.em.const(1, I1)))
                    cond = self.fl.em.op(arith.AndIOp(running, cond))
                block.add_op(scf.ConditionOp(cond, *block.args))
            finally:
                self.fl.em = outer

        def build(inits: list[SSAValue], before: Block, body: Block) -> list[SSAValue]:
            types = [v.type for v in inits]
            op = scf.WhileOp(inits, types, Region(before), Region(body))
            return list(self.fl.em.results(op))

        self.loop(stmt, [], None, condition, build, exclude=set())

    def stmt_Match(self, stmt: ast.Match) -> None:
        """A `match` statement: the `if`/`elif` chain it means (match_statements.py)."""
        subject, statements = match_statements.as_if_chain(self.fl, stmt)
        try:
            self.run_statements(statements)
        finally:
            self.fl.env.pop(subject, None)

    def loop_with_else(self, stmt: ast.For | ast.While) -> None:
        """A loop with an `else` body: the loop, then the body where no `break` ran (loop_else.py)."""
        flag, statements = loop_else.without_else(stmt)
        try:
            self.run_statements(statements)
        finally:
            if flag is not None:
                self.fl.env.pop(flag, None)

    def loop(self, stmt, extra_args, bind_target, condition, build, exclude, runs: bool = False) -> None:
        """Lower a loop whose carried values are the variables its body assigns
        (`runs`: the body is known to run at least once), in four steps: what the
        loop carries, the body lowered until what it carries settles, the scf op,
        and the names rebound after it."""
        rebound = self._rebound_functions(stmt, exclude)
        saved = (self.fl.control.broke, self.fl.control.continued)
        state = self._loop_state(stmt, exclude, rebound)
        outcome = self._settled_body(stmt, state, exclude, extra_args, bind_target, condition, runs)
        results = self._emit_loop(stmt, state, outcome, build)
        self._rebind_after_loop(stmt, state, outcome, results, rebound, runs)
        self.fl.control.broke, self.fl.control.continued = saved  # break/continue belong to this loop only

    def _rebound_functions(self, stmt, exclude) -> dict[str, object]:
        """The names the body assigns that hold a function (or an object known while
        lowering) before the loop: no scf loop can carry them, so each holds a
        _Rebound in the body, and what it holds after is decided by _after_rebinding.
        The other names the body assigns become run-time values (a number known
        while lowering is emitted as a constant), as a loop carries them."""
        rebound: dict[str, object] = {}
        for name in self._assigned_before(stmt, exclude):
            self.fl.env[name] = self._runtime_number(self.fl.env[name], self.fl.em, stmt)
            if flatten(self.fl.env[name]) is not None:
                continue
            if flatten(self.fl.env[name], functions=True) is None:
                raise self.fl.src.error(
                    stmt,
                    f"the loop assigns '{name}', which holds something other than a number "
                    "before the loop; only numbers can be carried through a loop",
                    "carry numbers, arrays, or tuples, lists and dicts of them",
                )
            rebound[name] = self.fl.env[name]
            self.fl.env[name] = _rebound(rebound[name], self.fl.src.location(stmt), "before")
        return rebound

    def _assigned_before(self, stmt, exclude) -> list[str]:
        """The names the body assigns that hold a value before the loop."""
        return [n for n in assigned_names(stmt.body)
                if n in self.fl.env and n not in exclude and not isinstance(self.fl.env[n], NoValue)]

    def _loop_state(self, stmt, exclude, rebound) -> _Carried:
        """The first guess at what the loop carries: the variables the body assigns,
        the break flag if it breaks, the return flag if it returns, with the types
        and numpy float widths they have before the loop."""
        carried = [n for n in self._assigned_before(stmt, exclude) if n not in rebound]
        if _contains(stmt.body, (ast.Break,), stop_at_loops=True):
            self.fl.control.broke = False
            carried.append(BROKE)
        returns = _contains(stmt.body, (ast.Return,), stop_at_loops=False)
        if returns:
            carried.append(RETURNED)
        for n in carried:  # after the loop they hold copies (lists.py)
            self.fl.lists.freeze_lists(self.fl.path.get(n), f"the loop at {self.fl.src.location(stmt)} carries it")
        state = _Carried(carried=[], returns=returns, inits={}, types={}, widths={})
        for n in carried:
            self._carry(state, n)
        # without a value returned before the loop, the returned value's type comes from the body
        state.value_like = self.fl.path.get(VALUE) if not returns or VALUE in self.fl.path else None
        return state

    def _read_by_closures(self) -> set[str]:
        """The names the lambdas and nested defs of the function being lowered read from it."""
        tree = self.fl.src.tree
        return {n for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.Lambda)) and node is not tree
                for n in callables.free_names(node)}

    def _carry_created(self, state: _Carried, seen: dict) -> bool:
        """Carry the variables the body assigns first thing (`seen`: the values the
        first lowering gave them there), so that after a loop known to run they
        hold what the last iteration assigned, as in Python (the `for ... else`
        search that breaks with what it found). Each enters the loop as a
        placeholder of its types, which no iteration reads (assigned_first) and
        the loop's results never hold: the first iteration assigns it. True if
        the body must be lowered again, carrying them."""
        added = False
        for name, value in seen.items():
            if isinstance(value, Static):  # a number known in that iteration: its type
                value = self._runtime_number(value, Emitter(Block()), self.fl.src.tree)
            if not isinstance(value, SSAValue):
                continue  # not a number or an array: not kept, as before
            values = [value]
            state.carried.append(name)
            state.created[name] = value
            state.inits[name] = [self.fl.arrays.new(self.fl.em.const(0, v.type)) if isinstance(v.type, TensorType)
                                 else self.fl.em.const(0, v.type) for v in values]
            state.types[name] = [v.type for v in values]
            state.widths[name] = [numpy_scalars.float_widths(v) for v in values]
            added = True
        return added

    def _carry(self, state: _Carried, name) -> None:
        """Carry `name` from the value it holds before the loop."""
        state.carried.append(name)
        state.inits[name] = self._carried_init(name)
        state.types[name] = [v.type for v in state.inits[name]]
        state.widths[name] = [numpy_scalars.float_widths(v) for v in state.inits[name]]

    def _settled_body(self, stmt, state: _Carried, exclude, extra_args, bind_target, condition,
                      runs: bool) -> LoopBodyOutcome:
        """The body lowered with the carried state guessed, and again with the
        state widened (_widened says why) until one lowering confirms the guess:
        the loop's types are those of a fixed point, which is what scf needs."""
        widening_failed = None  # the error of the round before ints were widened
        # variables the body creates first thing: kept after a loop known to run
        firsts = {} if not runs else {
            n: first for n in assigned_names(stmt.body)
            if is_user_variable(n) and n not in exclude and isinstance(self.fl.path.get(n, NoValue("", "")), NoValue)
            and (first := assigned_first(stmt.body, n)) is not None}
        if firsts:  # a closure reading one would see the placeholder where Python raises NameError
            firsts = {n: first for n, first in firsts.items() if n not in self._read_by_closures()}
        for _ in range(_MAX_TYPE_ROUNDS):
            slots = state.slots()
            if VALUE in slots and VALUE not in state.types:
                state.types[VALUE] = [v.type for v in flatten(state.value_like)]
            watched = [first for n, first in firsts.items() if n not in state.created]
            self.assigned_seen.update({first: {} for first in watched})
            try:
                outcome = self._lower_loop_body(stmt, state, extra_args, bind_target, condition)
            except UnsupportedError as error:
                # The types tried are provisional: an int that the body makes a
                # float (`s = 0; s = s + x + h(s)`) may fail while still an int.
                # Carry such ints as floats and try again; if that fails too, the
                # program is at fault, and the error is the first one.
                widened = _ints_as_floats(state.types, slots)
                if widened == state.types or widening_failed is not None:
                    raise (widening_failed or error) from None
                widening_failed, state.types = error, widened
                continue
            seen = {n: self.assigned_seen[first].get(n) for n, first in firsts.items() if first in watched}
            for first in watched:
                self.assigned_seen.pop(first, None)
            if not self._widened(stmt, state, outcome, exclude) and not self._carry_created(state, seen):
                return outcome
            outcome.discard()
        raise self.fl.src.error(stmt, "the types this loop carries do not settle")  # pragma: no cover - monotone, short

    def _widened(self, stmt, state: _Carried, outcome: LoopBodyOutcome, exclude) -> bool:
        """Widen `state` where the body's lowering contradicts it (and so the body
        must be lowered again), in this order: an array the body assumed writable
        that an iteration may leave unwritable; names that share an array with one
        the body writes, or a sharing that differs at the end of the body; the
        returned value's type, once learned; types or float widths that grow."""
        opaque = {n for n, values in outcome.held.items() if n not in state.unwritable
                  and self._writable(state.inits.get(n, [])) and not self._writable(values)}
        if opaque:  # the body assumed them writable: lower it again without
            state.unwritable |= opaque
            return True
        shared = [n for n in outcome.changed if n not in exclude and n not in state.carried]
        written = written_names(stmt.body)  # a name written in place, or changed only through another
        self._refuse_shared_with_an_item(stmt, [n for n in outcome.changed if n in shared or n in written])
        if shared or outcome.views is not self.fl.path.views.table:
            # names sharing an array with one the body writes change too: carry them;
            # and lower again from the sharing every iteration may start with
            for n in shared:
                self._carry(state, n)
            self.fl.path.views.table = outcome.views
            return True
        if state.returns and state.value_like is None and outcome.new_value is not None:
            state.value_like = outcome.new_value  # learned the type; lower again carrying it
            return True
        slots = state.slots()
        out_types = {n: [v.type for v in outcome.yielded[n]] for n in slots}
        for n in slots:
            for a, b in zip(state.types[n], out_types[n]):
                if joins.join_types(a, b) is None:
                    raise self.fl.src.error(
                        stmt,
                        f"{_shown(n)} has no common type across the iterations of this loop: "
                        f"{describe(a)} before an iteration, {describe(b)} after it",
                        "irad's array shapes are static: keep its shape the same in every iteration",
                    )
        joined = {n: [joins.join_types(a, b) for a, b in zip(state.types[n], out_types[n])] for n in slots}
        settled = {n: [a | numpy_scalars.float_widths(v) for a, v in zip(state.widths.get(n, []), outcome.yielded[n])]
                   for n in state.widths}
        if joined == state.types and settled == state.widths:
            return False
        state.types, state.widths = joined, settled
        return True

    def _refuse_shared_with_an_item(self, stmt, changed) -> None:
        """A name (or a base) the body wrote into, or changed only through an
        array it shares, where a container's item is that array too (`c = {'k': a}`, then
        `c['k'][i] = v` or `a[i] = v` in the loop): carried, the name and the
        item are two loop arguments, which a write through one no longer
        reaches the other of (numpy's value in the first iteration only). A
        loop of known length is then run once per iteration (iteration.py)."""
        for name in changed:  # names, and the bases of arrays names share (views.py)
            value = self.fl.path.get(name)
            if not is_array(value):
                continue
            holders = [other for other, held in self.fl.path.env.items() if other != name
                       and not isinstance(held, SSAValue) and any(v is value for v in flatten(held) or ())]
            if holders:
                shown = f"'{holders[0]}'" if is_user_variable(holders[0]) else "a container"
                array = f"'{name}'" if isinstance(name, str) else "a name"
                raise self.fl.src.error(
                    stmt, f"this loop writes into an array that {array} and an item of {shown} both hold, which "
                    "irad cannot follow from one iteration to the next",
                    "give the container its own copy (np.copy(...)), or write through one of them only")

    def _emit_loop(self, stmt, state: _Carried, outcome: LoopBodyOutcome, build) -> list[SSAValue]:
        """The scf op (made by `build`) of the settled body, from the carried
        values before the loop converted to the settled types; its results."""
        init_values = []
        for n in state.slots():
            values = state.inits[n] if n != VALUE else self._value_init(state.types[VALUE])
            joined = number_joins.joined(self.fl.src.location(stmt), _shown(n), "this loop")
            init_values += [joins.convert(self.fl.em, v, t, joined) for v, t in zip(values, state.types[n])]
        outcome.after.add_op(scf.YieldOp(*[v for n in state.slots() for v in outcome.yielded[n]]))
        return build(init_values, outcome.before, outcome.after)

    def _rebind_after_loop(self, stmt, state: _Carried, outcome: LoopBodyOutcome, results, rebound, runs) -> None:
        """After the loop: the carried slots hold its results (arrays stay writable
        where they were on entry and in the body), the sharing of arrays is the
        settled one, rebound functions hold what _after_rebinding says, and what
        the body created holds no value."""
        where = f"the loop at {self.fl.src.location(stmt)}"
        for n in state.slots():
            count = len(state.types[n])
            values, results = results[:count], results[count:]
            like = state.value_like if n == VALUE else state.created.get(n, self.fl.path.get(n))
            if n in FLAGS:
                self.fl.path[n] = values[0]
                continue
            for v in values:
                if is_variable(n):
                    v.name_hint = value_name(n)
            self.fl.path[n] = _rebuild(like, values)
            self.fl.lists.freeze_lists(self.fl.path[n], f"it is the copy {where} carries")
            self.fl.arrays.carried(values, state.inits.get(n, []), outcome.held.get(n, outcome.yielded[n]), where=where)
        self.fl.path.views.table = outcome.views
        self.fl.arrays.views.after_exits(outcome.breaks, where)  # names shared where a `break` left
        for n, value in rebound.items():
            self.fl.env[n] = self._after_rebinding(n, value, outcome.rebound[n], runs, stmt)
        for n in assigned_names(stmt.body):  # what the body creates is not carried out of it
            if n not in state.carried and n not in rebound:
                self.no_value(n, self.not_kept(stmt))

    def _after_rebinding(self, name: str, before, end, runs: bool, stmt):
        """What a name known while lowering before the loop (a function) that the
        body binds anew holds after it: the same function on every path, or the
        body's where the body runs and every run binds the same one (without
        run-time defaults: a closure reads its variables when called)."""
        if end is before or (isinstance(end, Static) and end == before) or callables.same_function(end, before):
            return before
        if isinstance(end, NoValue) and not isinstance(end, _Rebound):
            return end  # the body left it without a value, for a reason of its own (a join)
        if runs and not isinstance(end, NoValue) and flatten(end, functions=True) == []:
            return end
        return _rebound(before, self.fl.src.location(stmt), "defaults" if runs and not isinstance(end, NoValue) else "after")

    def not_kept(self, stmt: ast.stmt, target: bool = False) -> NoValue:
        what = "it is the variable of the loop" if target else "it is first assigned inside the loop"
        return NoValue(
            f"{what} at {self.fl.src.location(stmt)}, and irad keeps no variable the body "
            "of a `while` or of a `for` over a range or an array creates",
            "assign it before the loop (a number, an array or a container of them), so the loop carries it",
        )

    def _carried_init(self, name) -> list[SSAValue]:
        value = self.fl.path[name]
        if name in FLAGS:
            return [self._as_flag(value, self.fl.em.block)]
        return flatten(value)

    def _value_init(self, types: list[Attribute]) -> list[SSAValue]:
        current = self.fl.path.get(VALUE)
        if current is not None and flatten(current) is not None:
            return flatten(current)
        return [self.fl.em.const(0, t) for t in types]

    def _writable(self, values) -> bool:
        """Every array among `values` is one a write may go to (see ArrayLowering.fresh)."""
        return all(v in self.fl.arrays.fresh for v in values if isinstance(v.type, TensorType))

    def _lower_loop_body(self, stmt, state: _Carried, extra_args, bind_target, condition) -> LoopBodyOutcome:
        """Lower the (condition and) body once for the carried state guessed in
        `state` (types, numpy float widths; a carried array in `state.unwritable`
        is not writable even if it was before the loop)."""
        outer, outer_em = self.fl.path, self.fl.em
        arg_types = [t for n in state.slots() for t in state.types[n]]
        before = after = None
        try:
            if condition is not None:
                before = Block(arg_types=arg_types)
                self.fl.path = outer.copy()
                self.fl.path.views.exits = ()  # the body's own break and continue
                self._bind_carried(stmt, state, outer, before, 0)
                condition(before)
            after = Block(arg_types=[*extra_args, *arg_types])
            self.fl.path, self.fl.em = outer.copy(), Emitter(after)
            self.fl.path.views.exits = ()
            self._bind_carried(stmt, state, outer, after, len(extra_args))
            if bind_target is not None:
                bind_target(after)
            self.fl.control.continued = False
            self.run_statements(stmt.body)
            outcome = LoopBodyOutcome(before, after)
            self._yield_carried(stmt, state, outer, outcome)
            self._record_body_effects(stmt, state, outer, outcome)
            return outcome
        except UnsupportedError:
            for block in (before, after):  # a failed round leaves no uses behind
                if block is not None:
                    _discard(block)
            raise
        finally:
            self.fl.path, self.fl.em = outer, outer_em

    def _bind_carried(self, stmt, state: _Carried, outer, block: Block, offset: int) -> None:
        """Bind the carried slots to `block`'s arguments from `offset` on, of the
        guessed types; carried arrays are writable unless `state.unwritable`."""
        args = list(block.args[offset:])
        where = f"the loop at {self.fl.src.location(stmt)}"
        for n in state.slots():
            count = len(state.types[n])
            values, args = args[:count], args[count:]
            like = state.value_like if n == VALUE else state.created.get(n, outer.get(n))
            self.fl.path[n] = values[0] if n in FLAGS else _rebuild(like, values)
            numpy_scalars.assume_carried(values, state.widths.get(n))
            if n not in state.unwritable and n not in FLAGS:
                self.fl.arrays.carried(values, flatten(like) or [], where=where)
            for v in values:
                if is_variable(n):
                    v.name_hint = value_name(n)

    def _yield_carried(self, stmt, state: _Carried, outer, outcome: LoopBodyOutcome) -> None:
        """What the end of the body yields for each carried slot, widened to the
        guessed types (`outcome.yielded`), and the values before widening
        (`outcome.held`, for variables)."""
        for n in state.slots():
            value = self.fl.path.get(n, _MISSING)
            if n in FLAGS:
                outcome.yielded[n] = [self._as_flag(value if value is not _MISSING else False, outcome.after)]
                continue
            value = self._runtime_number(value, self.fl.em, stmt)
            values = flatten(value) if value is not _MISSING else None
            like = state.value_like if n == VALUE else state.created.get(n, outer.get(n))
            self._check_carried(stmt, n, value, values, like, len(state.types[n]))
            if is_variable(n):
                outcome.held[n] = values
            joined = number_joins.joined(self.fl.src.location(stmt), _shown(n), "this loop")
            outcome.yielded[n] = [_widen(self.fl.em, v, t, joined) for v, t in zip(values, state.types[n])]

    def _record_body_effects(self, stmt, state: _Carried, outer, outcome: LoopBodyOutcome) -> None:
        """What else the body did, for `_widened` and `_rebind_after_loop`: the
        value a `return` gave, the functions it rebound, the sharing of arrays
        at its end joined with the loop's entry, its breaks, the names it changed."""
        if VALUE not in state.slots() and RETURNED in state.slots():
            outcome.new_value = self.fl.path.get(VALUE)
        outcome.rebound = {n: self.fl.env.get(n) for n in outer.env if isinstance(outer.env[n], _Rebound)}
        outcome.views = self.fl.arrays.views.join_loop(outer, self.fl.path, self.fl.src.location(stmt))
        outcome.breaks = tuple(e for e in self.fl.path.views.exits if e.broke)
        # the join may add bases; a name without a value before the loop (NoValue)
        # is one the body creates, not a changed one
        start = {**outer.env, **outer.views.bases}
        outcome.changed = [n for n, v in start.items() if n in self.fl.path and self.fl.path[n] is not v
                           and not isinstance(v, NoValue)]

    def _check_carried(self, stmt, n, value, values, like, count: int) -> None:
        """A carried slot keeps its structure (and a dict its keys' order) across an iteration."""
        if values is None or len(values) != count or (like is not None and _structure(value) != _structure(like)):
            what = _shown(n)
            kind = self.fl.lists.differing_lengths(like, value)
            if kind is not None:
                raise self.fl.src.error(stmt, f"{what} is {kind} of {len(like)} items before an iteration of "
                                     f"this loop and of {len(value)} after it", self.fl.lists.LENGTH_HINT)
            raise self.fl.src.error(
                stmt,
                f"{what} changes shape inside the loop",
                "keep a variable a number, an array or a container of the same structure in loops",
            )
        if like is not None and not same_orders(value, like):
            raise self.fl.src.error(
                stmt, f"the loop body inserts the keys of the dict '{n}' in another order than before "
                "the loop (Python would iterate it in either order)",
                "build the dict with its keys in the same order before and inside the loop",
            )
