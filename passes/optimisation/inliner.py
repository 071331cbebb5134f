"""The `func.call` inliner of `irad-inline` (passes/inline.py) and
`irad-optimize`, which reads irad's provenance metadata.

xDSL 0.75 has no inliner. This one decides on the *primal* call graph (see
passes/optimisation/callgraph.py): a generated function (it carries `irad.primal`) is
inlined at every call unless its primal is recursive, so the pullbacks of a
non-recursive call tree end up in the top-level gradient function, while the
generated functions of a recursive primal stay calls and are never unrolled.

Functions without metadata come from elsewhere, so the rule for them is
conservative: inline only a callee of at most `threshold` ops that is not on
a cycle of the call graph.

For both, a call is inlined only while at most `max-depth` levels of calls
are nested into one function; `max-depth=0` turns inlining off. With
`keep-shared=N` (N > 0), a callee called from two or more places whose body
has at least N ops stays a function (`is_shared`): its code is compiled once
rather than once per call site (the native backend asks for this; see
docs/inlining.md).

Functions are visited callers first (the SCCs of the call graph in
topological order), each with a worklist of its calls: a callee's body goes
in as it is, and the calls it brings along join the worklist one level
deeper. The last use of a private callee has its body moved rather than
cloned, so each op is moved or cloned once per function it ends up in and a
long chain costs linear time. No Python recursion on call depth anywhere.
Private functions nothing references are erased, before and after. Only
single-block callees are inlined (irad's IR is structured; a multi-block body
would need its caller's block split).
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, OpResult, Operation, SSAValue

from irad.base.errors import IradError
from irad.ir.builder import clone
from irad.passes.optimisation.callgraph import CallGraph, is_generated, node_of, symbol_uses
from irad.ir.walk import find, find_among, operands as operand_tuple, walk

DEFAULT_THRESHOLD = 32
DEFAULT_MAX_DEPTH = 1000
KEEP_ALL_INLINED = 0  # keep-shared=0: no callee is kept for being shared


def is_shared(graph: CallGraph, name: str, keep_shared: int) -> bool:
    """With keep-shared=N (N > 0): @name is referenced from two or more places
    and its body has at least N ops, so it stays a function."""
    return 0 < keep_shared <= graph.size.get(name, 0) and graph.uses[name] >= 2


def _is_private(fn: func.FuncOp) -> bool:
    return fn.sym_visibility is not None and fn.sym_visibility.data == "private"


@dataclass
class _Inliner:
    module: ModuleOp
    threshold: int
    max_depth: int
    keep_shared: int = KEEP_ALL_INLINED

    graph: CallGraph = field(init=False)
    uses: Counter = field(init=False)  # references per symbol, kept up to date
    erased: set[str] = field(init=False)

    def run(self) -> int:
        graph = self.graph = CallGraph.build(self.module)
        self.uses = graph.uses
        self.erased = set()
        self._erase_unused_private()
        inlined = 0
        # Callers first: a callee's body is inlined as it was lowered or generated,
        # and the calls it exposes are handled in the caller's worklist, so every op
        # is moved or cloned once per function it ends up in (linear for a chain).
        for members in reversed(graph.order):
            for name in members:
                if name not in self.erased:
                    inlined += self._inline_into(name)
        self._erase_unused_private()
        return inlined

    def _erase_unused_private(self) -> None:
        """Erase private functions nothing references, and what only they referenced."""
        functions = self.graph.functions
        dead = [
            n for n, f in functions.items()
            if n not in self.erased and _is_private(f) and self.uses[n] == 0
        ]
        while dead:
            name = dead.pop()
            fn = functions[name]
            self.erased.add(name)
            for op in fn.body.walk():
                for used in symbol_uses(op):
                    self.uses[used] -= 1
                    if (
                        used in functions and used not in self.erased
                        and self.uses[used] == 0 and _is_private(functions[used])
                    ):
                        dead.append(used)
            self.module.body.block.erase_op(fn)

    def _inline_into(self, name: str) -> int:
        inlined = 0
        # Breadth first: the pullback call that takes all of an augmented primal's
        # residuals is inlined before the calls that produce them, so each residual
        # is rewired into the (smaller) call of its own subtree, not the root's.
        work = deque((call, 0) for call in self.graph.calls[name])
        while work:
            call, depth = work.popleft()
            callee_name = call.callee.root_reference.data
            callee = self.graph.functions.get(callee_name)
            if callee is None or callee_name in self.erased or call.callee.nested_references.data:
                continue  # not a function of this module (or one already inlined away)
            if depth >= self.max_depth or not self._inlinable(name, callee):
                continue
            self.uses[callee_name] -= 1
            move = _is_private(callee) and self.uses[callee_name] == 0
            new_ops = _inline_call(call, callee, move)
            inlined += 1
            if move:
                self.erased.add(callee_name)
                self.module.body.block.erase_op(callee)
            else:  # cloned: the symbols the copies use are new uses
                for op in new_ops:
                    for inner in walk(op):
                        self.uses.update(symbol_uses(inner))
            work.extend((inner, depth + 1) for inner in find_among(new_ops, func.CallOp))
        return inlined

    def _inlinable(self, caller: str, callee: func.FuncOp) -> bool:
        name = callee.sym_name.data
        graph = self.graph
        if callee.is_declaration or len(callee.body.blocks) != 1:
            return False
        if graph.component[name] == graph.component[caller]:
            return False  # a call inside a cycle of the raw call graph
        if is_shared(graph, name, self.keep_shared):
            return False
        if is_generated(callee):
            return node_of(callee) not in graph.primal_recursive
        return name not in graph.raw_recursive and graph.size[name] <= self.threshold


def _inline_call(call: func.CallOp, callee: func.FuncOp, move: bool) -> list[Operation]:
    """Replace `call` by the callee's body, moved when nothing else uses the callee,
    else cloned; returns the ops now in the caller."""
    body = callee.body.block
    if move:
        _replace_all(zip(body.args, call.operands))
        ret = body.last_op
        results: list[SSAValue] = list(ret.operands)
        new_ops = _move_before(body, ret, call)
        ret.detach()
        ret.erase()
    else:
        mapping: dict[SSAValue, SSAValue] = dict(zip(body.args, call.operands))
        block = call.parent_block()
        new_ops = []
        for op in body.ops:
            if op is body.last_op:
                results = [mapping.get(v, v) for v in op.operands]
                break
            new_ops.append(clone(op, mapping))
            block.insert_op_before(new_ops[-1], call)
    inlined = set(new_ops)
    for old, new in zip(call.results, results, strict=True):
        if old.name_hint is not None and isinstance(new, OpResult) and new.owner in inlined:
            new.name_hint = old.name_hint  # the caller's name reads better in the caller
    _replace_all(zip(call.results, results, strict=True))
    call.detach()
    call.erase()
    return new_ops


def _move_before(body: Block, end: Operation, call: Operation) -> list[Operation]:
    """Move the ops of `body` before `end` to just before `call` (in another
    block); returns them. What xDSL's `Rewriter.inline_block` does op by op
    (counting the block, detaching each op, attaching it after checking that
    it does not contain its new block), here as one splice of xDSL's linked
    list: each op gets its new parent, and the two ends are relinked. The
    moved ops come from a function and go into another, so none can contain
    the block it goes to."""
    first = body._first_op
    if first is end:
        return []
    dest = call.parent
    moved = []
    op = first
    while op is not end:
        op.parent = dest
        moved.append(op)
        op = op._next_op
    last = end._prev_op
    body._first_op, end._prev_op = end, None  # `body` keeps `end` alone
    before = call._prev_op
    first._prev_op, last._next_op, call._prev_op = before, call, last
    if before is None:
        dest._first_op = first
    else:
        before._next_op = first
    return moved


def _replace_all(pairs) -> None:
    """Replace every use of each old value by its new one.

    Each user gets its operand tuple rebuilt once: a call passing k residuals
    would otherwise be rebuilt k times (`replace_all_uses_with` sets one operand
    at a time), quadratic in the residuals a pullback forwards.
    """
    mapping: dict[SSAValue, SSAValue] = {}
    users: dict[Operation, None] = {}
    for old, new in pairs:
        if old is new:
            continue
        mapping[old] = new
        if new.name_hint is None:
            new.name_hint = old.name_hint
        for use in old.uses:
            users[use.operation] = None
    for user in users:
        user.operands = [mapping.get(v, v) for v in operand_tuple(user)]


def inline_callees(
    fn: func.FuncOp,
    graph: CallGraph,
    wanted: Callable[[func.CallOp, func.FuncOp], bool],
    keep_shared: int = KEEP_ALL_INLINED,
) -> list[str]:
    """Inline into `fn`, breadth first, every call to a function of `graph` that
    `wanted` accepts, and in turn the calls the inlined bodies bring along;
    returns the functions erased (see below).

    Before differentiation (irad-differentiate{inline=true}): a call the rule
    table leaves to AD is inlined into its caller, so the callee's residuals are
    values of the caller and no augmented primal returns those of all the
    functions below it (linear in a deep chain, where passing them up level by
    level is quadratic). Callees on a cycle with `fn`, recursive callees and
    callees without a single-block body stay calls, and so do shared callees
    (`is_shared`) under keep-shared=N. As the inliner does, the
    last use of a private callee moves its body (and erases it) rather than
    cloning it; `graph.uses` is kept up to date.
    """
    name = fn.sym_name.data
    if name not in graph.component:
        return []
    erased: list[str] = []
    work = deque(find(fn, func.CallOp))
    while work:
        call = work.popleft()
        callee_name = call.callee.root_reference.data
        callee = graph.functions.get(callee_name)
        if (
            callee is None
            or call.callee.nested_references.data
            or callee.is_declaration
            or len(callee.body.blocks) != 1
            or graph.component[callee_name] == graph.component[name]
            or callee_name in graph.raw_recursive
            or is_shared(graph, callee_name, keep_shared)
            or not wanted(call, callee)
        ):
            continue
        graph.uses[callee_name] -= 1
        move = _is_private(callee) and graph.uses[callee_name] == 0
        new_ops = _inline_call(call, callee, move)
        if move:
            del graph.functions[callee_name]
            callee.detach()
            callee.erase()
            erased.append(callee_name)
        else:  # cloned: the symbols the copies use are new uses
            for op in new_ops:
                for inner in walk(op):
                    graph.uses.update(symbol_uses(inner))
        work.extend(find_among(new_ops, func.CallOp))
    return erased


def inline_calls(
    module: ModuleOp,
    threshold: int = DEFAULT_THRESHOLD,
    max_depth: int = DEFAULT_MAX_DEPTH,
    keep_shared: int = KEEP_ALL_INLINED,
) -> int:
    """Inline what the rules above allow; returns the number of calls inlined."""
    for option, value in (("threshold", threshold), ("max-depth", max_depth), ("keep-shared", keep_shared)):
        if value < 0:
            raise IradError(
                f"irad-inline: {option}={value} is negative\n"
                f"  hint: give a count of ops (threshold, keep-shared) or call levels (max-depth); "
                "max-depth=0 turns inlining off, keep-shared=0 keeps no callee for being shared"
            )
    return _Inliner(module, threshold, max_depth, keep_shared).run()
