"""Names that share one numpy array: aliases (`z = y`) and basic views
(`r = Y[0]`, `Y[:, 1:3]`, `Y.T`, `Y.reshape(...)` of a contiguous array),
after PyTorch's *functionalization*.

A name that shares its array with another name, or that is a view, is a
*member* of a *base*: an abstract buffer (a `Base`) whose current SSA value
the path's `ViewState` keeps beside the table. A member reaches its value from the
base's through a *chain* of view steps (Slice, Transpose, Reshape). A write
through a member scatters its new value back through the inverse of its chain
into the base, and every other member is re-derived from the new base; so all
names stay consistent and the IR keeps pure value semantics, which the AD
passes already differentiate. Names bound to their own array are not members.

The table of members and the bases' values form the `ViewState` of a path
(control_state.Path), so the arms of a branch and a loop body each work on
their own copy, and joins compare
them: two names that share an array on one path into a join but not on another
(or through different views) are a *conflict*, and a write through either (or
through a name sharing their array) is an error until one of them is bound
anew, since numpy would make the write visible on one path only. A loop body
is lowered again from the join of the table before the loop and the one its
body leaves, until that join settles.

The statements after a `break` or `continue` do not run on its path, so the
joins after it take the other paths' tables; the table it left with is kept as
an `Exit`, which the loop applies where that path goes on (a `continue`'s where
the next iteration starts, a `break`'s after the loop) as conflicts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import tensor
from xdsl.dialects.builtin import TensorType
from xdsl.ir import BlockArgument, SSAValue

from irad.frontend.values import ListValue, MappingValue, is_array
from irad.ir import tensor as T
from irad.ir.symbols import value_name
from irad.ir.types import is_float

# Where a base's buffer comes from, in order of how strongly it refuses writes.
# GLOBAL: a global array the function takes as a hidden argument (globals.py).
FRESH, OPAQUE, ARGUMENT, GLOBAL = "fresh", "opaque", "argument", "global"
_RANK = {FRESH: 0, OPAQUE: 1, ARGUMENT: 2, GLOBAL: 2}


def _inside(container) -> list:
    """The values a container holds, nested containers' included."""
    out, stack = [], [container]
    while stack:
        v = stack.pop()
        if isinstance(v, tuple):
            stack.extend(v)
        elif isinstance(v, MappingValue):
            stack.extend(x for _, x in v.items)
        else:
            out.append(v)
    return out


def _key_of(value):
    """A hashable stand-in for an int or an SSA value (compared by identity)."""
    return value if isinstance(value, int) else ("ssa", id(value))


# ---- view steps: read the view from its source, write it back into the source ----
@dataclass(frozen=True, eq=False)
class Slice:
    """`x[i, a:b:s, None]`: per source axis an offset (int or index value), a size
    and a stride; `dims` is the view's shape (int axes dropped, None axes added)."""

    offsets: tuple
    sizes: tuple
    strides: tuple
    dims: tuple

    def read(self, em, x: SSAValue) -> SSAValue:
        sliced = em.op(tensor.ExtractSliceOp(x, list(self.offsets), list(self.sizes), list(self.strides),
                                             TensorType(T.element(x), list(self.sizes))))
        return T.reshape(em, sliced, self.dims)

    def write(self, em, x: SSAValue, v: SSAValue) -> SSAValue:
        return em.op(tensor.InsertSliceOp.get(
            T.reshape(em, v, self.sizes), x, list(self.sizes),
            static_offsets=[o if isinstance(o, int) else T.DYNAMIC for o in self.offsets],
            static_strides=list(self.strides),
            offsets=[o for o in self.offsets if not isinstance(o, int)],
        ))

    def key(self):
        return ("slice", tuple(_key_of(o) for o in self.offsets), self.sizes, self.strides, self.dims)

    def layout(self, a: np.ndarray) -> np.ndarray:
        # offsets do not change whether a later reshape can be a view: 0 stands in for runtime ones
        index = tuple(slice(o if isinstance(o, int) else 0, None, s) for o, s in zip(self.offsets, self.strides))
        part = a[index][tuple(slice(0, n) for n in self.sizes)]
        return part.reshape(self.dims)


@dataclass(frozen=True)
class Transpose:
    perm: tuple

    def read(self, em, x):
        return T.transpose(em, x, self.perm)

    def write(self, em, x, v):
        return T.transpose(em, v, [self.perm.index(i) for i in range(len(self.perm))])

    def key(self):
        return ("transpose", self.perm)

    def layout(self, a):
        return a.transpose(self.perm)


@dataclass(frozen=True)
class Reshape:
    dims: tuple
    source: tuple

    def read(self, em, x):
        return T.reshape(em, x, self.dims)

    def write(self, em, x, v):
        return T.reshape(em, v, self.source)

    def key(self):
        return ("reshape", self.dims, self.source)

    def layout(self, a):
        return a.reshape(self.dims)


@dataclass(frozen=True)
class Member:
    base: str
    chain: tuple = ()

    def key(self):
        return tuple(s.key() for s in self.chain)


@dataclass(frozen=True)
class Table:
    """Who shares which base (immutable: branches share it until one changes it).
    `conflicts` holds, per pair of names (or one name), why a write through them is refused."""

    members: dict = field(default_factory=dict)  # name -> Member
    origins: dict = field(default_factory=dict)  # base key -> (FRESH/OPAQUE/ARGUMENT/GLOBAL, its name)
    conflicts: dict = field(default_factory=dict)  # frozenset of names -> message

    def same_as(self, other: Table) -> bool:
        """The same sharing (chains compared step by step, SSA offsets by identity)."""
        def shape(t):
            return {n: (m.base, m.key()) for n, m in t.members.items()}, t.origins, t.conflicts
        return self is other or shape(self) == shape(other)


EMPTY = Table()


@dataclass(frozen=True)
class Base:
    """The key of one shared array (a slot of the path, as a variable's name is)."""

    number: int

    def __str__(self) -> str:
        return f"$base{self.number}"


@dataclass(frozen=True, eq=False)
class Exit:
    """The sharing where a `break` or `continue` left the loop body: the table
    and the variables then. The joins after it take the other paths' tables (the
    statements after a jump do not run on its path), so the loop applies it: a
    `continue`'s where the next iteration starts (`Views.join_loop`), a
    `break`'s after the loop (`Views.after_exits`)."""

    table: Table
    names: frozenset
    broke: bool


@dataclass
class ViewState:
    """A path's array sharing: the table of members, each base's current value,
    and the Exits its loop body has taken so far."""

    table: Table = EMPTY
    bases: dict = field(default_factory=dict)  # Base -> SSAValue
    exits: tuple = ()

    def copy(self) -> ViewState:
        return ViewState(self.table, dict(self.bases), self.exits)


class Views:
    """The aliasing and view part of one ArrayLowering (`al`)."""

    def __init__(self, al) -> None:
        self.al = al
        self.derived: dict[SSAValue, tuple[SSAValue, object]] = {}  # view value -> (source, step)
        self.bases = 0

    @property
    def env(self) -> dict:
        return self.al.fl.env

    @property
    def state(self) -> ViewState:
        return self.al.fl.path.views

    @property
    def table(self) -> Table:
        return self.state.table

    # ---- views made by expressions ---------------------------------------------
    def derive(self, result: SSAValue, source: SSAValue, step) -> SSAValue:
        """Record that `result` is the view `step` of `source` (numpy returns a view)."""
        if result is not source and is_array(source) and not self._derives_from(source, result):
            self.derived[result] = (source, step)
        return result

    def _derives_from(self, value: SSAValue, ancestor: SSAValue) -> bool:
        """Is `value` a view (of a view...) of `ancestor`? Folding can give back an
        ancestor (a reshape of a reshape to the original shape is the original
        value): that one is already known, and recording it would make a cycle."""
        while value in self.derived:
            value = self.derived[value][0]
            if value is ancestor:
                return True
        return False

    def reshape_is_view(self, source: SSAValue, dims) -> bool:
        """Would numpy's reshape of `source` be a view? Only where its strides allow,
        found by doing the same on a stand-in array with the source's layout."""
        found = self._trace(source)
        if found is None:
            return True  # a name's own array, or a temporary: contiguous
        root, chain = found
        layout = np.zeros(T.shape(root), np.int8)
        for step in chain:
            layout = step.layout(layout)
        return np.may_share_memory(layout.reshape(tuple(dims)), layout) or layout.size == 0

    def _trace(self, value: SSAValue):
        """(the array `value` is a view of, the chain to it), without changing the table."""
        holder, root, steps = self._walk(value)
        if holder in self.table.members:
            m = self.table.members[holder]
            return self.state.bases[m.base], m.chain + steps
        return (root, steps) if steps else None

    def _walk(self, value: SSAValue):
        """Follow the views `value` was made by back to a value a name or a base
        holds: (its holder or None, that value, the steps from it to `value`)."""
        steps, v = [], value
        while True:
            holder = self._holder(v)
            if holder is not None or v not in self.derived:
                return holder, v, tuple(steps)
            v, step = self.derived[v]
            steps.insert(0, step)

    def _holder(self, value: SSAValue) -> str | None:
        """A base of the current table, or a name, whose current value is `value`.
        (A base another path dissolved stays among the bases: not a holder.)"""
        table = self.table
        names = [k for k, v in self.env.items() if v is value]
        for name in names:
            if name in table.members:
                return name
        bases = [k for k, v in self.state.bases.items() if v is value and k in table.origins]
        return bases[0] if bases else (names[0] if names else None)

    # ---- binding a name -----------------------------------------------------------
    def bind(self, name: str, value) -> None:
        """`name = value`: `name` leaves its base and joins the one `value` belongs to."""
        table = self.table
        conflicted = any(name in pair for pair in table.conflicts)
        if not is_array(value) and name not in table.members and not conflicted:
            return  # nothing shared before or after: the table stays the same object
        members, origins = dict(self.table.members), dict(self.table.origins)
        conflicts = {k: v for k, v in self.table.conflicts.items() if name not in k}
        place = self._locate(value, members, origins) if is_array(value) else None
        old = members.pop(name, None)
        if place is not None:
            members[name] = place
        if old is not None:
            self._dissolve_if_trivial(old.base, members, origins)
        self.state.table = Table(members, origins, conflicts)

    def _locate(self, value: SSAValue, members, origins) -> Member | None:
        """The base and chain `value` is reached by, making a base for the array
        it is a view of (or an alias of) if that array had none."""
        holder, root, steps = self._walk(value)
        if holder in members:
            m = members[holder]
            return Member(m.base, m.chain + steps)
        if isinstance(holder, Base):
            return Member(holder, steps)
        if holder is None and not steps:
            return None  # a new array of its own
        base = self._new_base(root, origins)
        if holder is not None:
            members[holder] = Member(base)
        return Member(base, steps)

    def _new_base(self, value: SSAValue, origins) -> Base:
        key = self._fresh_key()
        self.state.bases[key] = value
        origins[key] = self._origin(value)
        return key

    def _origin(self, value: SSAValue):
        if isinstance(value, BlockArgument) and value.owner is self.al.fl.block:
            label = self.al.fl.hidden.name_of(value)
            return (ARGUMENT, value.name_hint) if label is None else (GLOBAL, label)
        return (FRESH, None) if value in self.al.fresh else (OPAQUE, None)

    def argument_at(self, value: SSAValue, where: str):
        """(kind, name, where) if `value` is an argument or global array itself."""
        if not is_array(value):
            return None
        kind, argument = self._origin(value)
        return (kind, argument, where) if kind in (ARGUMENT, GLOBAL) else None

    def _dissolve_if_trivial(self, base: Base, members, origins) -> None:
        """A base with no member left, or one member that is all of it, is no longer shared."""
        names = [n for n, m in members.items() if m.base == base]
        if len(names) == 1 and members[names[0]].chain == ():
            origin = origins[base]
            value = self.env.get(names[0])
            if origin[0] == FRESH and value is not None:
                self.al.fresh.add(value)
            del members[names[0]]
            names = []
        if not names:
            origins.pop(base, None)
            self.state.bases.pop(base, None)

    # ---- in-place writes ----------------------------------------------------------------
    def refusal(self, name: str) -> tuple[str, str] | None:
        """(message, hint) when numpy's in-place write to `name` cannot be followed."""
        table = self.table
        member = table.members.get(name)
        group = [n for n, m in table.members.items() if member is not None and m.base == member.base]
        for pair, message in table.conflicts.items():
            if pair & {name, *group}:
                return message, "make the names share arrays the same way on every path (copy with np.copy)"
        value = self.env.get(name)
        if member is None:
            kind, argument = self._origin(value)
        else:
            kind, argument = table.origins[member.base]
        joined = self.al.joined_arguments.get(value) if kind == OPAQUE and member is None else None
        if joined is not None:  # an argument on one path into a branch or loop
            kind, argument, where = joined
        if kind in (ARGUMENT, GLOBAL):
            what = f"the {kind} array '{argument}'"
            if joined is not None:
                what = f"'{name}', which may be {what} (it is on one path into {where})"
            elif member is not None and member.chain:
                what = f"'{name}', which is a view of {what}"
            elif argument != name:
                what = f"'{name}', which is another name for {what}"
            owner = "the caller's array" if kind == ARGUMENT else "global arrays (it reads them at each call)"
            return (f"in-place write to {what}",
                    f"copy it first: {name} = np.copy({name}) (irad would not update {owner}, "
                    "so this is rejected rather than differentiated differently from numpy)")
        if kind == OPAQUE:
            return (f"in-place write to '{name}', which may be a view of another array",
                    "a function's result is writable where the function returns a new array of its own "
                    "(not an argument, a global, a view of one, or an array it returns twice); irad cannot "
                    f"tell which array a conditional expression gives; copy it first: {name} = np.copy({name})")
        shared = {value} | {self.env.get(n) for n in group}
        for k, v in self.env.items():
            if isinstance(v, (tuple, MappingValue)) and any(self._reaches(e, shared) for e in _inside(v)):
                kind = "list" if isinstance(v, ListValue) else "tuple" if type(v) is tuple else v.cls.__name__
                return (f"in-place write to '{name}', whose array the {kind} '{k}' also holds",
                        f"copy the array with np.copy where it goes into the {kind}, or unpack the {kind} into names")
        return None

    def own_results(self, leaves) -> tuple[bool, ...]:
        """Per leaf a function returns: is it an array of its own (one it created,
        whole, not a view), whose array no other leaf shares? Its caller may then
        write into it, as into an array it created (numpy's result is that new array)."""
        places = [self._place(v) if is_array(v) else None for v in leaves]
        bases = [p[0] for p in places if p is not None]
        return tuple(
            place is not None and v in self.al.fresh and place[1] and bases.count(place[0]) == 1
            for v, place in zip(leaves, places)
        )

    def _place(self, value: SSAValue) -> tuple[object, bool]:
        """(the array `value` lives in, and whether it is all of an array the function made)."""
        holder, root, steps = self._walk(value)
        member = self.table.members.get(holder)
        if member is not None:
            whole = not member.chain and not steps and self.table.origins[member.base][0] == FRESH
            return member.base, whole
        if isinstance(holder, Base):
            return holder, not steps and self.table.origins[holder][0] == FRESH
        return ("value", id(root)), not steps

    def _reaches(self, value, targets) -> bool:
        while value is not None:
            if value in targets:
                return True
            value = self.derived.get(value, (None,))[0]
        return False

    def write(self, name: str, value: SSAValue) -> None:
        """`name`'s array now holds `value` (an in-place write already checked by `refusal`):
        scatter it into its base and re-derive every name sharing the base."""
        em, env, bases = self.al.em, self.env, self.state.bases
        member = self.table.members.get(name)
        value.name_hint = value_name(name)
        if member is None:
            env[name] = self.al.new(value)
            return
        path = [bases[member.base]]
        for step in member.chain[:-1]:
            path.append(step.read(em, path[-1]))
        new = value
        for step, source in reversed(list(zip(member.chain, path))):
            new = step.write(em, source, new)
        bases[member.base] = self.al.new(new)
        for other, m in self.table.members.items():
            if m.base != member.base or other not in env:
                continue
            if other == name:
                env[other] = self.al.new(value)
                continue
            v = new
            for step in m.chain:
                v = step.read(em, v)
            v.name_hint = value_name(other)
            env[other] = self.al.new(v)

    # ---- joins ----------------------------------------------------------------------------
    def join_branches(self, paths: tuple, emitters, jumped: tuple[bool, bool], where: str) -> None:
        """Before an `if`'s variables merge: give both arms' paths (control_state.Path)
        one table. An arm that returned or broke out does not reach the join, so the
        other arm's table holds."""
        then_path, else_path = paths
        exits = tuple(dict.fromkeys([*then_path.views.exits, *else_path.views.exits]))
        then_path.views.exits = else_path.views.exits = exits
        a, b = then_path.views.table, else_path.views.table
        if a is b:
            return
        if jumped[0] != jumped[1]:
            live, dead = (1, 0) if jumped[0] else (0, 1)
            kept = (a, b)[live]
            bases = [p.views.bases for p in paths]
            for base in kept.origins:  # the arm that jumped yields a stand-in for a base it lacks
                if base in bases[live] and base not in bases[dead]:
                    like = bases[live][base]
                    bases[dead][base] = T.dense(emitters[dead], 0.0 if is_float(T.element(like)) else 0, like.type)
            then_path.views.table = else_path.views.table = kept
            return
        common = [n for n in then_path.env if n in else_path.env]
        then_path.views.table = else_path.views.table = self._join(then_path, else_path, common,
                                                                   f"the `if` at {where}")

    def join_loop(self, start_path, body_path, where: str) -> Table:
        """At the end of a loop body: the table the next iteration starts from, the
        join of the body's start and end (the body's bases renamed to the start's)
        and of the body's `continue` exits."""
        start, end = start_path.views.table, body_path.views.table
        names = [n for n in start_path.env if n in body_path.env]
        joined = start if end is start else self._join(start_path, body_path, names, f"the loop at {where}",
                                                      prune_first=False)
        continues = [e for e in body_path.views.exits if not e.broke]
        joined = _with_exits(joined, continues, names, f"the loop at {where}")
        return start if joined.same_as(start) else joined

    def exit(self, broke: bool) -> None:
        """A `break` (`broke`) or `continue`: remember the sharing it leaves with."""
        self.state.exits += (Exit(self.table, frozenset(self.env), broke),)

    def after_exits(self, exits, where: str) -> None:
        """Where the paths of `exits` meet the current one again (after a loop;
        an unrolled loop's next item): names whose sharing differs conflict."""
        self.state.table = _with_exits(self.table, exits, list(self.env), where)

    def _join(self, a_path, b_path, names, where: str, prune_first: bool = True) -> Table:
        """The table after a join of the view states of two paths over the variables
        `names`. Names stay together where they share a base through the same chains
        on both paths (the second path's base renamed to the first's); each pair of
        names whose sharing differs becomes a conflict. Bases no name reaches are
        dropped (from the first path only if `prune_first`: a loop's start keeps its
        variables)."""
        a, a_env, a_bases = a_path.views.table, a_path.env, a_path.views.bases
        b, b_env, b_bases = b_path.views.table, b_path.env, b_path.views.bases
        buckets: dict[tuple[str, str], list[str]] = {}
        for n in names:
            ma, mb = a.members.get(n), b.members.get(n)
            if ma is not None and mb is not None and ma.key() == mb.key():
                buckets.setdefault((ma.base, mb.base), []).append(n)
        members, origins, conflicts = {}, {}, {}
        for t in (a, b):
            conflicts.update({pair: m for pair, m in t.conflicts.items() if pair <= set(names)})
        a_values, b_values = {}, {}
        for (base_a, base_b), group in buckets.items():
            if len(group) == 1 and a.members[group[0]].chain == ():
                continue  # one name that is all of its base shares nothing
            key = base_a if base_a not in origins else self._fresh_key()
            a_values[key], b_values[key] = a_bases[base_a], b_bases[base_b]
            origins[key] = max(a.origins[base_a], b.origins[base_b], key=lambda o: _RANK[o[0]])
            members.update({n: Member(key, a.members[n].chain) for n in group})
        for bases, values, t in ((a_bases, a_values, a), (b_bases, b_values, b)):
            for old in t.origins:
                if old not in values and (bases is b_bases or prune_first):
                    bases.pop(old, None)  # a base no name reaches after the join
            bases.update(values)
        formerly = [n for n in names if n in a.members or n in b.members]
        for n in formerly:
            for m in names:
                if m != n and _relation(a, n, m) != _relation(b, n, m):
                    pair = sorted((n, m), key=names.index)
                    conflicts.setdefault(frozenset(pair), self._conflict(*pair, where))
            if n in members:
                continue
            # a name left with an array of its own may be written if it was writable on both paths
            sides = [(t, env[n]) for t, env in ((a, a_env), (b, b_env)) if is_array(env.get(n))]
            if all((t.origins[t.members[n].base][0] if n in t.members else self._origin(v)[0]) == FRESH
                   for t, v in sides):
                self.al.fresh.update(v for _, v in sides)
        return Table(members, origins, conflicts)

    def _fresh_key(self) -> Base:
        self.bases += 1
        return Base(self.bases)

    @staticmethod
    def _conflict(name: str, other: str, where: str) -> str:
        return (f"{_shown(name)} and {_shown(other)} share one array on one path into {where} "
                "but not on the other (or through a different view); numpy would make the write "
                "visible through the other name on one path only")


def _with_exits(table: Table, exits: tuple, names: list, where: str) -> Table:
    """`table` with a conflict for each pair of `names` that shares an array
    differently there and where one of `exits` left (and the exits' conflicts)."""
    conflicts = dict(table.conflicts)
    for ex in exits:
        common = [n for n in names if n in ex.names]
        conflicts.update({pair: m for pair, m in ex.table.conflicts.items() if pair <= set(common)})
        for i, n in enumerate(common):
            for m in common[i + 1:]:
                if (n in table.members or n in ex.table.members) and _relation(ex.table, n, m) != _relation(table, n, m):
                    conflicts.setdefault(frozenset((n, m)), Views._conflict(n, m, where))
    return table if conflicts == table.conflicts else Table(table.members, table.origins, conflicts)


def _shown(name: str) -> str:
    """A name as a message shows it: the hidden name that holds the array a `for`
    loop iterates over (`iter.<n>`, iteration.py) by what it is."""
    return "the array a `for` loop iterates over" if name.startswith("iter.") else f"'{name}'"


def _relation(t: Table, n: str, m: str):
    """How `n` and `m` share an array in `t`: their chains from one base, or None."""
    a, b = t.members.get(n), t.members.get(m)
    if a is None or b is None or a.base != b.base:
        return None
    return a.key(), b.key()


__all__ = ["Base", "ViewState", "Views", "Slice", "Transpose", "Reshape"]
