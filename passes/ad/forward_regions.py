"""Forward mode through structured control flow and memory.

Loops carry a tangent beside each carried value that varies (found to a fixed
point over the body, as values vary in later iterations); `scf.if` yields
tangents beside values. A memref of floats (the tape reverse mode keeps) has a
*shadow* memref of the same shape holding the tangents of what is stored:
every alloc, store, load and dealloc is mirrored on it, as Enzyme does with
shadow memory. The mixin below is part of TangentBuilder (passes/ad/forward.py).
"""

from __future__ import annotations

from xdsl.dialects import scf
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Attribute, Block, Operation, Region

from irad.ir.types import is_differentiable
from irad.passes.ad.activity import propagate_varied


def has_tangent_type(t: Attribute) -> bool:
    """Floats (and float tensors) carry tangents; memrefs of floats carry shadow memrefs."""
    return is_differentiable(t) or (isinstance(t, MemRefType) and is_differentiable(t.element_type))


class ForwardRegions:
    """Mixin of TangentBuilder: scf.if, scf.for, scf.while and memref ops."""

    # ---- branches -----------------------------------------------------------
    def if_(self, op: scf.IfOp) -> None:
        outer = self.block
        branches = []
        for region in op.regions:
            self.block = Block()
            self.clone_block(region.block)
            branches.append((self.block, region.block.last_op.operands))
        with_tangent = [
            i for i, r in enumerate(op.results)
            if has_tangent_type(r.type) and any(y[i] in self.tangents for _, y in branches)
        ]
        for block, yielded in branches:
            self.block = block
            extra = [self.tangent_or_zero(yielded[i]) for i in with_tangent]
            block.add_op(scf.YieldOp(*(self.values[v] for v in yielded), *extra))
        self.block = outer
        types = [*(r.type for r in op.results), *(op.results[i].type for i in with_tangent)]
        new = scf.IfOp(self.values[op.cond], types, Region(branches[0][0]), Region(branches[1][0]))
        self._bind_results(op, new, with_tangent)

    # ---- loops --------------------------------------------------------------
    def _with_tangent(self, op: Operation, *arg_lists) -> list[list[int]]:
        """Per list of a loop's region arguments, which of them vary (the fixed
        point over the loop, from the values that have tangents now)."""
        varied = set(self.tangents)
        propagate_varied([op], varied, carries=has_tangent_type, shadows=True)
        return [[i for i, a in enumerate(args) if a in varied] for args in arg_lists]

    def for_(self, op: scf.ForOp) -> None:
        body = op.body.block
        carried = body.args[1:]
        (with_tangent,) = self._with_tangent(op, carried)
        inits = op.operands[3:]
        new_inits = [self.values[v] for v in inits] + [self.tangent_or_zero(inits[i]) for i in with_tangent]
        block = Block(arg_types=[body.args[0].type, *(a.type for a in carried), *(carried[i].type for i in with_tangent)])
        self._enter(body.args, block.args[: len(body.args)], with_tangent, block.args[len(body.args):], offset=1)
        self._clone_yielding(body, block, with_tangent, scf.YieldOp)
        lb, ub, step = (self.values[v] for v in op.operands[:3])
        new = scf.ForOp(lb, ub, step, new_inits, Region(block))
        self._bind_results(op, new, with_tangent)

    def while_(self, op: scf.WhileOp) -> None:
        before, after = op.before_region.block, op.after_region.block
        carried = list(before.args)
        forwarded = list(after.args)
        carried_t, forwarded_t = self._with_tangent(op, carried, forwarded)
        inits = list(op.operands)
        new_inits = [self.values[v] for v in inits] + [self.tangent_or_zero(inits[i]) for i in carried_t]
        new_before = Block(arg_types=[*(a.type for a in carried), *(carried[i].type for i in carried_t)])
        self._enter(carried, new_before.args[: len(carried)], carried_t, new_before.args[len(carried):])
        self._clone_condition(before, new_before, forwarded_t)
        new_after = Block(arg_types=[*(a.type for a in forwarded), *(forwarded[i].type for i in forwarded_t)])
        self._enter(forwarded, new_after.args[: len(forwarded)], forwarded_t, new_after.args[len(forwarded):])
        self._clone_yielding(after, new_after, carried_t, scf.YieldOp)
        result_types = [*(r.type for r in op.results), *(op.results[i].type for i in forwarded_t)]
        new = scf.WhileOp(new_inits, result_types, Region(new_before), Region(new_after))
        self._bind_results(op, new, forwarded_t)

    def _enter(self, old_args, new_args, with_tangent, tangent_args, offset: int = 0) -> None:
        """Map a region's arguments, and the tangents of those that carry one."""
        for old, new in zip(old_args, new_args):
            self.values[old] = new
            new.name_hint = old.name_hint
        for i, t in zip(with_tangent, tangent_args):
            old = old_args[offset + i]
            t.name_hint = f"t{old.name_hint}" if old.name_hint else None
            self.tangents[old] = t

    def _clone_yielding(self, src: Block, dst: Block, with_tangent, terminator) -> None:
        outer, self.block = self.block, dst
        self.clone_block(src)
        yielded = src.last_op.operands
        extra = [self.tangent_or_zero(yielded[i]) for i in with_tangent]
        dst.add_op(terminator(*(self.values[v] for v in yielded), *extra))
        self.block = outer

    def _clone_condition(self, src: Block, dst: Block, forwarded_t) -> None:
        outer, self.block = self.block, dst
        self.clone_block(src)
        cond = src.last_op
        forwarded = cond.operands[1:]
        extra = [self.tangent_or_zero(forwarded[i]) for i in forwarded_t]
        dst.add_op(scf.ConditionOp(self.values[cond.operands[0]], *(self.values[v] for v in forwarded), *extra))
        self.block = outer

    def _bind_results(self, op: Operation, new: Operation, with_tangent: list[int]) -> None:
        self.block.add_op(new)
        n = len(op.results)
        for r, v in zip(op.results, new.results[:n]):
            self.values[r] = v
        for i, t in zip(with_tangent, new.results[n:]):
            self.tangents[op.results[i]] = t

    # ---- memory: shadow memrefs -----------------------------------------------------
    def memory(self, op: Operation) -> None:
        """Clone a memref/bufferization op, then mirror it on the shadows: the same
        op with each float memref or value replaced by its shadow or tangent
        (alloc, store, load, dealloc, subview, copy, materialize_in_destination, to_tensor alike)."""
        self.block.add_op(op.clone(value_mapper=self.values))
        if op.name not in MIRRORED or not any(
            has_tangent_type(v.type) for v in (*op.operands, *op.results)
        ):
            return
        mapping = dict(self.values)
        for v in op.operands:
            if has_tangent_type(v.type):
                mapping[v] = self.tangent_or_zero(v)
        mirror = op.clone(value_mapper=mapping)
        self.block.add_op(mirror)
        for r, m in zip(op.results, mirror.results):
            if has_tangent_type(r.type):
                self.tangents[r] = m


# Memory ops mirrored on shadow memrefs (memref.dim only reads a size).
MIRRORED = frozenset(
    {
        "memref.alloc",
        "memref.store",
        "memref.load",
        "memref.dealloc",
        "memref.subview",
        "memref.copy",
        "bufferization.materialize_in_destination",
        "bufferization.to_tensor",
    }
)
