"""Random well-typed programs in irad's documented subset, built by hypothesis
(so a failure shrinks to a small program).

Every program defines `f(x, w, u, A, B, k)`: x a float, w, u, A, B float
arrays of shapes (3,), (4,), (2, 3), (3, 3) (each float64 or float32), k a
small int, and returns a float. The generator is typed: it knows the type
(float, int, or an array shape) of every name and writes only expressions that
numpy and irad agree on. Programs mix

* scalar and array arithmetic, math functions and numpy ufuncs, full and axis
  reductions (`axis=`, `keepdims=True`), `@`/`np.dot`/`np.matmul`, `.T`,
  `np.outer`, `np.stack`, `np.concatenate`, broadcasting of numbers, rows and
  columns against 2-D arrays, float32 and float64 together;
* item reads and basic slices with constant or run-time (int arithmetic)
  indices, rows and columns, and views of views;
* in-place item, row, column and slice writes and `op=` on arrays the program
  made, and names aliasing or viewing them (two at a time, `b, c = a, a[1:]`,
  and swapped, `a, b = b, a`);
* numbers and arrays mixed across control flow: a float that a loop makes an
  array (`s = x; for i in range(2): s = s * np.tanh(w)`, the case irad keeps
  exact, docs/control-flow.md "Numbers held as arrays"), and an int that a loop
  or a branch may make a float (an int after it on the paths that did not);
* `if`/`elif`/`else` chains, nested `for` loops over `range` with int trip
  counts, `while` loops on data-dependent conditions (bounded by a counter),
  `break`/`continue`, and `return` inside branches and loops;
* generated helpers taking and returning floats, ints, arrays and tuples, one
  of them recursive, called positionally, by keyword, through `*args` or a
  `functools.partial`;
* the issue-14 frontend: `for` over `reversed(range(...))`, array elements and
  rows, `zip`, `enumerate` and tuples; `sum` of generators and list
  comprehensions (with `if` and a start); `np.array([...])`/`np.stack([...])`
  of comprehensions; lambdas (called at once or bound to a name), nested
  `def`s and `functools.partial` of lambdas closing over the function's
  names; array methods (`.clip`, `.max(axis=)`, `.mean()`, `.copy()`,
  `.ravel()`, `.reshape`, `.T`); slices with run-time starts and lengths
  known while lowering (`u[s:s + 2]`, `u[b * 2:(b + 1) * 2]`,
  `u[b * (len(u) // 2):(b + 1) * (len(u) // 2)]`);
* with `programs(lists=True)`, lists grown by `append` (and `pop`) in loops over
  ranges of known length and read after them (`sum`, `np.stack`, indexing,
  iteration);
* with `programs(static=True)`, calls to helpers taking an axis, a count or a
  length known while lowering (STATIC_HELPERS: `np.sum(a, axis=axis)`,
  `v[:n]`, `np.zeros(n)` filled in a loop, a comprehension over `range(deg)`),
  which irad specialises on those values;
* with `programs(guards=True)`, ops valid only where their guard holds (an
  int division behind `if n > 0`, `math.sqrt(a)` behind `if a > 0.0`, an
  item behind a bounds check, `range(n, len(v))`), and calls of helpers that
  check their guard (GUARDED_HELPERS: an assert, a raise, their own branches
  and loops) behind a branch or in a loop that keeps them valid: what vmap
  must not run for the elements the guard stops (tests/fuzz/vmap_checks.py);
* with `programs(aliases=True)`, blocks that keep a helper's result which may
  be the array it was given (ALIAS_HELPERS: the array, a view, a tuple's
  item, or a copy) through nested loops, while loops, branches, lists, dicts
  and tuples, then write through the array or the result (`_alias_block`):
  numpy's value, or a refusal at a line of the block.

With `programs(with_modes=True)` the entry varies too (`Mode`, recorded in
the source's `# FUZZ` line): it may return an array, a (float, array) tuple or
a {"s": float, "v": array} dict, take its arguments as trees (`f(p, m, k)`
with a dict holding a tuple, and a NamedTuple), and return aux values beside
its result (`(out, {"n": int, "t": float})`); the mode names the
transformation checked (tests/fuzz/checks.py).

Domains are safe (log(1 + a*a), exp of a tanh, divisions by 1 + a*a), so values
stay finite. Kinks (abs, max, branch conditions) are allowed; the checks compare
gradients only where one-sided differences agree.

Sharing is tracked as irad documents it (docs/arrays.md, "Views and
aliasing"), so the generator writes only through names irad accepts: never
through an argument, a call's or conditional expression's result, or names
that may share an array on one path and not on another. Inside a loop, names
that share an array at the loop's entry are not rebound, and other arrays are
rebound only to fresh ones, so every iteration starts from the same sharing;
or a shared name is left free to be rebound, and then nothing sharing its
array is written in the loop (its sharing may differ between iterations). An
array a `for` loop walks (its elements, rows, `enumerate`, `zip`) is shared
with the loop, which holds it to the end: so it is either not rebound in the
loop or not written through (irad refuses both at once, as numpy would write
into the walked array on the first iteration only).
"""

from __future__ import annotations

import itertools
import re
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

import numpy as np
from hypothesis import strategies as st

# The arguments of f: name -> "float", "int" or an array shape.
PARAMETERS = {"x": "float", "w": (3,), "u": (4,), "A": (2, 3), "B": (3, 3), "k": "int"}
SHAPES = [(3,), (2,), (4,), (2, 3), (3, 2), (3, 3)]
CONSTANTS = ["0.5", "1.5", "-0.75", "2.0", "0.25", "-1.0"]

SCALAR_UNARY = ["math.sin({})", "math.cos({})", "math.tanh({})", "math.exp(math.tanh({}))",
                "math.log(1.0 + {0} * {0})", "math.sqrt(1.0 + {0} * {0})", "abs({})", "(-{})",
                "math.atan({})", "math.log1p({0} * {0})", "(({}) ** 2)", "((1.0 + {0} * {0}) ** 0.5)",
                "math.expm1(math.tanh({}))", "math.erf({})", "math.sinh(math.tanh({}))"]
SCALAR_BINARY = ["({0} + {1})", "({0} - {1})", "({0} * {1})", "({0} / (1.0 + {1} * {1}))",
                 "max({0}, {1})", "min({0}, {1})", "math.atan2({0}, 1.5 + {1} * {1})",
                 "math.hypot({0}, {1})"]
ARRAY_UNARY = ["np.sin({})", "np.cos({})", "np.tanh({})", "np.exp(np.tanh({}))",
               "np.log(1.0 + {0} * {0})", "np.sqrt(1.0 + {0} * {0})", "np.abs({})", "(-{})",
               "np.arctan({})", "np.log1p({0} * {0})", "np.square({})", "(({}) ** 2)",
               "np.clip({}, -1.0, 1.0)", "np.expm1(np.tanh({}))", "abs({})", "({}).clip(-0.5, 1.0)",
               "({}).copy()", "({}).clip(max=0.75)"]
ARRAY_BINARY = ["({0} + {1})", "({0} - {1})", "({0} * {1})", "({0} / (1.0 + {1} * {1}))",
                "np.add({0}, {1})", "np.multiply({0}, {1})", "np.maximum({0}, {1})",
                "np.minimum({0}, {1})", "np.where({0} > {1}, {0}, {1})", "np.arctan2({0}, 1.5 + {1} * {1})"]
FULL_REDUCTIONS = ["np.sum({})", "np.mean({})", "np.max({})", "np.min({})", "({}).sum()",
                   "np.prod(1.0 + 0.25 * np.tanh({}))", "np.amax({})", "({}).mean()", "({}).max()",
                   "({}).min()", "(1.0 + 0.25 * np.tanh({})).prod()", "sum(({}).ravel())"]
AXIS_REDUCTIONS = ["np.sum({0}, axis={1})", "np.mean({0}, axis={1})", "np.max({0}, axis={1})",
                   "np.min({0}, axis={1})", "({0}).sum(axis={1})", "np.prod(1.0 + 0.25 * np.tanh({0}), axis={1})",
                   "({0}).mean(axis={1})", "({0}).max(axis={1})", "({0}).min(axis={1})"]
MATMUL = ["({0} @ {1})", "np.dot({0}, {1})", "np.matmul({0}, {1})"]
AUGMENT = ["+=", "-=", "*="]
# Ending a line the generator writes where irad may refuse what numpy computes (a
# float written into an int numpy keeps and irad computes in float; numpy's bool
# scalars where irad cannot tell them from Python's): the check accepts a refusal
# naming that line, with a hint, or else the value and derivative must be numpy's.
MAY_REFUSE = "# may refuse"


# ---- what the entry takes and returns, and which transformation checks it ----
@dataclass(frozen=True)
class Mode:
    """How `f` is called and checked, written into the source's `# FUZZ` line (so
    a saved case keeps it). `results`: "float", a shape, ("tuple", shape) (a
    float and an array) or ("dict", shape) ({"s": float, "v": array}); `entry`:
    "flat" (`f(x, w, u, A, B, k)`) or "tree" (`f(p, m, k)` with p = {"x": x,
    "vs": (w, u)} and m = Mats(A, B), a NamedTuple); `aux`: f returns `(out,
    {"n": int, "t": float})` and is checked with has_aux=True; `api`: the
    transformation checked against finite differences ("value_and_grad",
    "grad", "vjp" for float results; "vjp", "jacrev", "jacfwd" for any)."""

    results: object = "float"
    entry: str = "flat"
    aux: bool = False
    api: str = "value_and_grad"

    def header(self) -> str:
        if self == Mode():
            return ""
        return f"# FUZZ results={_shape_text(self.results)} entry={self.entry} aux={int(self.aux)} api={self.api}\n"

    @staticmethod
    def of(source: str) -> "Mode":
        for line in source.splitlines():
            if line.startswith("# FUZZ "):
                fields = dict(part.split("=", 1) for part in line[len("# FUZZ "):].split())
                return Mode(_parse_shape(fields["results"]), fields["entry"], fields["aux"] == "1", fields["api"])
        return Mode()


def _shape_text(results) -> str:
    if results == "float":
        return "float"
    if is_shape(results):
        return "x".join(map(str, results))
    return f"{results[0]}:{_shape_text(results[1])}"


def _parse_shape(text: str):
    if text == "float":
        return text
    if ":" in text:
        kind, shape = text.split(":")
        return (kind, _parse_shape(shape))
    return tuple(int(n) for n in text.split("x"))


TREE_PROLOGUES = [
    ['x = p["x"]', 'w, u = p["vs"]', "A = m.A", "B = m.B"],
    ['x = p["x"]', 'w = p["vs"][0]', 'u = p["vs"][-1]', "A, B = m"],
    ['w, u = p["vs"]', "A, B = m.A, m[1]", 'x = p["x"] + 0.0'],
]


# ---- types and sharing ----
def is_shape(t) -> bool:
    return isinstance(t, tuple) and all(isinstance(n, int) for n in t)


@dataclass(frozen=True)
class Info:
    """Which array a name holds: a base (one id per array the program made or
    was given) and the view steps from it. `made` tells views made by different
    statements apart."""

    base: int
    path: tuple = ()
    writable: bool = False
    made: int = 0


@dataclass(frozen=True)
class Arr:
    """An array expression: its text and whether it is a fresh array, a view of
    a name (`source`, through `path`), or opaque (a call's or conditional
    expression's result, which irad may not write through)."""

    text: str
    kind: str  # "fresh", "view", "opaque"
    source: str | None = None
    path: tuple = ()
    writable_view: bool = True  # False for reshapes: a view numpy may or may not make


@dataclass(frozen=True)
class Helper:
    name: str
    params: tuple  # ((name, type), ...)
    returns: object  # "float", a shape, or ("tuple", shape): a float and an array
    recursive: bool = False

    @property
    def pair(self) -> bool:
        return isinstance(self.returns, tuple) and self.returns[0] == "tuple"

    def gives_float(self) -> bool:
        """Is a float its result, or the first of its results?"""
        return self.returns == "float" or self.pair

    def gives_array(self, shape) -> bool:
        return self.returns == shape or (self.pair and self.returns[1] == shape)


@dataclass
class Scope:
    scalars: list
    ints: list
    arrays: dict  # name -> shape
    info: dict  # array name -> Info
    helpers: list  # the helpers this function may call
    returns: object
    fixed_ints: set = field(default_factory=set)  # loop variables and counters: never rebound
    frozen: set = field(default_factory=set)  # arrays a loop body may not rebind
    fresh_only: set = field(default_factory=set)  # arrays a loop body rebinds only to fresh ones
    loop: bool = False
    lines: list = field(default_factory=list)
    aux: bool = False  # returns (out, aux): see Mode
    functions: list = field(default_factory=list)  # (name, "float" or a shape): local lambdas and defs
    maybe_int: set = field(default_factory=set)  # scalars that may hold an int (see _int_then_float)

    def snapshot(self):
        return (list(self.scalars), list(self.ints), dict(self.arrays), dict(self.info),
                set(self.frozen), set(self.fresh_only), self.loop, list(self.functions))

    def restore(self, saved) -> None:
        (self.scalars[:], self.ints[:], arrays, info, frozen, fresh_only, self.loop, self.functions[:]) = saved
        self.arrays.clear()
        self.arrays.update(arrays)
        self.info.clear()
        self.info.update(info)
        self.frozen, self.fresh_only = set(frozen), set(fresh_only)

    def of_shape(self, shape) -> list:
        return [n for n, s in self.arrays.items() if s == shape]

    def writable(self) -> list:
        return sorted(n for n in self.arrays if self.info[n].writable)

    def group(self, base) -> set:
        return {n for n, i in self.info.items() if i.base == base}


def slices(n: int) -> list:
    """Basic slices of an axis of length n, with their lengths."""
    texts = [":", "1:", ":2", "0:2", "1:3", "::2", "-2:", ":-1", "1::2", "0:3", "2:"]
    out = []
    for t in texts:
        parts = [int(p) if p else None for p in t.split(":")]
        length = len(range(n)[slice(*parts)])
        if length >= 1 and (t, length) not in out:
            out.append((t, length))
    return out


class Generator:
    def __init__(self, draw, int_arrays: bool = False, lists: bool = False, static: bool = False,
                 aliases: bool = False, guards: bool = False) -> None:
        self.draw = draw
        self.int_arrays = int_arrays  # a third of all statements are int-array ones (_int_array)
        self.lists = lists  # lists grown in loops (_grow_list) among the statements
        self.static = static  # calls to STATIC_HELPERS (_static_call) among the statements
        self.aliases = aliases  # results of ALIAS_HELPERS kept, then their argument written (_alias_block)
        self.guards = guards  # ops valid only behind their branch or loop bound (_guarded)
        self.names = itertools.count(1)
        self.bases = itertools.count(1)

    # ---- drawing ----
    def pick(self, options):
        return self.draw(st.sampled_from(list(options)))

    def chance(self) -> bool:
        return self.draw(st.booleans())

    def name(self, prefix: str) -> str:
        return f"{prefix}{next(self.names)}"

    @staticmethod
    def floaty(s: Scope, text: str) -> str:
        """`text`, made a float where it may be an int: a number that makes an
        array's dtype (np.full, np.array) or a helper's float parameter."""
        if s.maybe_int and re.search(r"\b(" + "|".join(sorted(s.maybe_int)) + r")\b", text):
            return f"float({text})"
        return text

    def fresh_info(self, writable: bool = True) -> Info:
        return Info(next(self.bases), (), writable, 0)

    # ---- int expressions: small, so trip counts and indices stay in range ----
    def int_expr(self, s: Scope, depth: int = 1) -> str:
        options = ["var", "literal"]
        if depth > 0:
            options += ["add", "mul", "sub", "floordiv", "len", "from_float"]
        kind = self.pick(options)
        if kind == "var":
            return self.pick(s.ints)
        if kind == "literal":
            return str(self.pick([1, 2, 0, 3]))
        if kind == "add":
            return f"({self.int_expr(s, depth - 1)} + {self.int_expr(s, depth - 1)})"
        if kind == "mul":
            return f"({self.int_expr(s, depth - 1)} * {self.pick([2, 3])})"
        if kind == "sub":
            return f"({self.int_expr(s, depth - 1)} - {self.pick([1, 2])})"
        if kind == "floordiv":
            return f"({self.int_expr(s, depth - 1)} // 2)"
        if kind == "len":
            name = self.pick(sorted(s.arrays))
            return self.pick([f"len({name})", f"{name}.shape[0]", f"({name}.size // 2)"])
        # a float feeding an int: bounded, so it never overflows
        return self.pick(["int(2.0 + 2.0 * math.tanh({}))", "math.floor(1.5 + math.sin({}))"]).format(
            self.scalar_expr(s, 0))

    def index(self, s: Scope, n: int) -> str:
        """An int index valid on an axis of length n (negative ones wrap, as in Python)."""
        kind = self.pick(["literal", "mod", "negative"])
        if kind == "literal":
            return str(self.pick(list(range(n)) + list(range(-n, 0))))
        if kind == "mod":
            return f"{self.int_expr(s)} % {n}"
        return f"-1 - {self.int_expr(s)} % {n}"

    def trip(self, s: Scope) -> str:
        var = self.pick(s.ints)
        return self.pick(["3", var, f"{var} + 1", f"{self.int_expr(s)} % 4", "2",
                          f"len({self.pick(sorted(s.arrays))})"])

    # ---- float expressions ----
    def scalar_expr(self, s: Scope, depth: int = 2) -> str:
        options = ["var", "const", "var"]  # names more often than constants, which fold away
        if depth > 0:
            options += ["unary", "binary", "reduce", "item", "from_int", "ifexp", "dot", "sum", "lambda"]
            if any(h.gives_float() for h in s.helpers):
                options.append("call")
            if any(kind == "float" for _, kind in s.functions):
                options.append("local")
        kind = self.pick(options)
        if kind == "sum":
            return self._generator_sum(s, depth - 1)
        if kind == "lambda":
            t = self.name("t")
            with self.bound(s, scalars=[t]):
                body = self.scalar_expr(s, depth - 1)
            return f"(lambda {t}: {body})({self.floaty(s, self.scalar_expr(s, depth - 1))})"
        if kind == "local":
            name = self.pick([n for n, kind in s.functions if kind == "float"])
            return f"{name}({self.floaty(s, self.scalar_expr(s, depth - 1))})"
        if kind == "var":
            return self.pick(s.scalars)
        if kind == "const":
            return self.pick(CONSTANTS)
        if kind == "unary":
            return self.pick(SCALAR_UNARY).format(self.scalar_expr(s, depth - 1))
        if kind == "binary":
            return self.pick(SCALAR_BINARY).format(self.scalar_expr(s, depth - 1), self.scalar_expr(s, depth - 1))
        if kind == "reduce":
            shape = self.pick(SHAPES)
            text = self.array_expr(s, shape, depth - 1).text
            if shape == (3, 3) and self.chance():
                return f"np.trace({text})"
            return self.pick(FULL_REDUCTIONS).format(text)
        if kind == "dot":
            shape = self.pick(SHAPES[:3])
            a, b = self.array_expr(s, shape, depth - 1).text, self.array_expr(s, shape, depth - 1).text
            return self.pick(["np.dot({0}, {1})", "({0} @ {1})"]).format(a, b)
        if kind == "item":
            name = self.pick(sorted(s.arrays))
            shape = s.arrays[name]
            if len(shape) == 1:
                return f"{name}[{self.index(s, shape[0])}]"
            i, j = self.index(s, shape[0]), self.index(s, shape[1])
            return self.pick([f"{name}[{i}, {j}]", f"{name}[{i}][{j}]", f"{name}.T[{j}, {i}]"])
        if kind == "from_int":
            return self.pick(["float({})", "(0.5 * ({}))", "(({}) * -0.25)"]).format(self.int_expr(s))
        if kind == "ifexp":
            return f"({self.scalar_expr(s, depth - 1)} if {self.condition(s)} else {self.scalar_expr(s, depth - 1)})"
        helper = self.pick([h for h in s.helpers if h.gives_float()])
        call = self.call(s, helper)
        return f"{call}[0]" if helper.pair else call

    @contextmanager
    def bound(self, s: Scope, scalars=(), ints=(), rows=None):
        """Names bound for one expression (a comprehension's or lambda's variables):
        rows are read-only views of the array they come from."""
        s.scalars.extend(scalars)
        s.ints.extend(ints)
        s.fixed_ints |= set(ints)
        for row, (shape, source) in (rows or {}).items():
            s.arrays[row] = shape
            s.info[row] = Info(s.info[source].base, s.info[source].path + ("row",), False, next(self.names))
        try:
            yield
        finally:
            for name in scalars:
                s.scalars.remove(name)
            for name in ints:
                s.ints.remove(name)
            s.fixed_ints -= set(ints)
            for row in rows or {}:
                del s.arrays[row], s.info[row]

    def clause(self, s: Scope, known_length: bool = False):
        """A comprehension's `for` clause, and the names it binds: (text, scalars,
        ints, rows). `known_length`: only iterables whose length is known while
        lowering (elements and rows of arrays, range of a constant)."""
        ones = sorted(n for n, shape in s.arrays.items() if len(shape) == 1)
        twos = sorted(n for n, shape in s.arrays.items() if len(shape) == 2)
        kinds = ["range"] + ["elements", "enumerate", "zip"] * bool(ones) + ["rows"] * bool(twos)
        kind = self.pick(kinds)
        i, a, b = self.name("i"), self.name("v"), self.name("v")
        if kind == "range":
            trip = self.pick(["3", "2"]) if known_length else self.trip(s)
            return f"for {i} in {self.pick(['range({})', 'reversed(range({}))'])}".format(trip), [], [i], None
        if kind == "elements":
            return f"for {a} in {self.pick(ones)}", [a], [], None
        if kind == "enumerate":
            return f"for {i}, {a} in enumerate({self.pick(ones)}{self.pick(['', ', 1'])})", [a], [i], None
        if kind == "zip":
            return f"for {a}, {b} in zip({self.pick(ones)}, {self.pick(ones)})", [a, b], [], None
        matrix = self.pick(twos)
        return f"for {a} in {matrix}", [], [], {a: ((s.arrays[matrix][1],), matrix)}

    def _generator_sum(self, s: Scope, depth: int) -> str:
        """`sum` of a generator or list comprehension, with an `if` and a start."""
        clause, scalars, ints, rows = self.clause(s)
        with self.bound(s, scalars, ints, rows):
            item = self.scalar_expr(s, depth)
            condition = f" if {self.condition(s)}" if self.chance() else ""
        start = self.pick(["", "", ", 0.5", f", {self.scalar_expr(s, 0)}"])
        if condition and not start:
            start = ", 0.0"  # a filter may select nothing: Python's sum is then the int 0, not a float
        return self.pick(["sum(({} {}{}){})", "sum([{} {}{}]{})"]).format(item, clause, condition, start)

    def _comprehension(self, s: Scope, shape, depth) -> Arr:
        """An array built from a comprehension whose length is known while lowering."""
        n = shape[0]
        source = self.pick([None] + [a for a, have in sorted(s.arrays.items()) if have[0] == n])
        i, v = self.name("i"), self.name("v")
        scalars, ints, rows = [], [], None
        if source is None:
            clause, ints = f"for {i} in range({n})", [i]
        else:
            clause = f"for {v} in {source}"
            have = s.arrays[source]
            if len(have) == 1:
                scalars = [v]
            else:
                rows = {v: ((have[1],), source)}
        with self.bound(s, scalars, ints, rows):
            if len(shape) == 1:
                item = self.floaty(s, self.scalar_expr(s, depth))
            else:
                item = self.array_expr(s, shape[1:], depth).text
        if len(shape) == 1:
            return Arr(f"np.array([{item} {clause}])", "fresh")
        return Arr(f"np.stack([{item} {clause}])", "fresh")

    def condition(self, s: Scope) -> str:
        kind = self.pick(["compare", "compare", "chained", "int", "not", "and", "or"])
        if kind == "compare":
            return f"{self.scalar_expr(s, 1)} {self.pick(['>', '<', '>=', '<='])} {self.pick(['0.0', '0.5', '-0.5', '1.0'])}"
        if kind == "chained":
            return f"-0.5 < {self.scalar_expr(s, 1)} < 0.5"
        if kind == "int":
            return self.pick(["{} % 2 == 0", "{} > 1", "{} != 2"]).format(self.int_expr(s))
        if kind == "not":
            return f"not {self.scalar_expr(s, 1)} > 0.0"
        return f"{self.scalar_expr(s, 1)} > 0.0 {kind} {self.scalar_expr(s, 1)} < 0.5"

    # ---- array expressions of a given shape ----
    def array_expr(self, s: Scope, shape: tuple, depth: int = 2) -> Arr:
        producers = self._array_producers(s, shape, depth)
        return self.pick(producers)()

    def _array_producers(self, s: Scope, shape, depth):
        """Closures, each building an expression of `shape`; the simplest first
        (hypothesis shrinks towards them)."""
        out = []
        names = s.of_shape(shape)
        if names:
            out.append(lambda: self._name(s, names))
        out.append(lambda: self._constant(s, shape))
        out += self._views(s, shape)
        if depth <= 0:
            return out
        sub = depth - 1
        out.append(lambda: Arr(self.pick(ARRAY_UNARY).format(self.array_expr(s, shape, sub).text), "fresh"))
        out.append(lambda: self._binary(s, shape, sub))
        out.append(lambda: Arr(f"np.copy({self.array_expr(s, shape, sub).text})", "fresh"))
        out.append(lambda: Arr(f"({self.array_expr(s, shape, sub).text} if {self.condition(s)} else "
                               f"{self.array_expr(s, shape, sub).text})", "opaque"))
        out.append(lambda: Arr(f"({self.array_expr(s, shape, sub).text}).astype(np.{self.pick(['float32', 'float64'])})",
                               "fresh"))
        if len(shape) == 1:
            n = shape[0]
            sources = [(r, n) for r in (2, 3) if (r, n) in SHAPES]
            sources += [(n, c) for c in (2, 3) if (n, c) in SHAPES]
            if sources:
                out.append(lambda: self._axis_reduction(s, n, sources, sub))
            products = [(m, (n, m)) for m in (2, 3) if (n, m) in SHAPES] + [(m, (m, n)) for m in (2, 3) if (m, n) in SHAPES]
            if products:
                out.append(lambda: self._matvec(s, products, sub))
            out.append(lambda: Arr("np.array([{}])".format(", ".join(self.floaty(s, self.scalar_expr(s, sub))
                                                                     for _ in range(n))), "fresh"))
            if n == 4:
                out.append(lambda: Arr(self.pick([
                    "np.concatenate(({}, {}))".format(self.array_expr(s, (2,), sub).text, self.array_expr(s, (2,), sub).text),
                    "np.concatenate([{}, ({})[0:1]])".format(self.array_expr(s, (3,), sub).text, self.array_expr(s, (3,), sub).text),
                ]), "fresh"))
        else:
            r, c = shape
            out.append(lambda: self._broadcast(s, shape, sub))
            out.append(lambda: Arr(f"np.outer({self.array_expr(s, (r,), sub).text}, {self.array_expr(s, (c,), sub).text})", "fresh"))
            out.append(lambda: Arr("np.stack([{}])".format(", ".join(self.array_expr(s, (c,), sub).text for _ in range(r))), "fresh"))
            inner = [m for m in (2, 3) if (r, m) in SHAPES and (m, c) in SHAPES]
            if inner:
                out.append(lambda: self._matmul(s, shape, inner, sub))
            if (c, r) != (r, c) and (c, r) in SHAPES:
                out.append(lambda: self._reshape(s, shape, sub))
        helpers = [h for h in s.helpers if h.gives_array(shape)]
        if helpers:
            out.append(lambda: self._call_array(s, helpers))
        out.append(lambda: self._comprehension(s, shape, sub))
        out.append(lambda: Arr(self.pick(["({}).T.T", "({}).reshape{}".format("{}", shape)]).format(
            self.array_expr(s, shape, sub).text), "opaque"))
        local = [n for n, kind in s.functions if kind == shape]
        if local:
            out.append(lambda: Arr(f"{self.pick(local)}({self.array_expr(s, shape, sub).text})", "opaque"))
        return out

    def _name(self, s: Scope, names) -> Arr:
        name = self.pick(names)
        return Arr(name, "view", name, ())

    def _constant(self, s: Scope, shape) -> Arr:
        dims = f"({shape[0]},)" if len(shape) == 1 else f"{shape}"
        dtype = self.pick(["", "", ", dtype=np.float32"])
        options = [f"np.zeros({dims}{dtype})", f"np.ones({dims}{dtype})",
                   f"np.full({dims}, {self.floaty(s, self.scalar_expr(s, 0))}{dtype})"]
        names = s.of_shape(shape)
        if names:
            name = self.pick(names)
            options += [f"np.zeros_like({name})", f"np.ones_like({name})", f"np.full_like({name}, {self.scalar_expr(s, 0)})"]
        if shape == (3, 3):
            options.append("np.eye(3)")
        if len(shape) == 2 and shape != (3, 3):
            options.append(f"np.eye({shape[0]}, {shape[1]})")
        if len(shape) == 1:
            options.append(f"(np.arange({shape[0]}) * {self.floaty(s, self.scalar_expr(s, 0))})")
        return Arr(self.pick(options), "fresh")

    def _views(self, s: Scope, shape):
        """Basic views of names giving `shape`: slices, rows, columns, transposes."""
        out = []
        for name, have in sorted(s.arrays.items()):
            for text, step in self._view_steps(have, shape):
                out.append((name, text, step))
        if not out:
            return []

        def view():
            name, text, step = self.pick(out)
            return Arr(self._fill(s, text, name, have_of(name)), "view", name, (step,))

        def have_of(name):
            return s.arrays[name]

        return [view]

    def _fill(self, s, template, name, have) -> str:
        """A view template with its name and run-time indices filled in: `{i}` an
        index on its axis, `{s}` a start leaving room for `{m}` items on axis 0,
        `{b}` the number of a block of `{m}` items."""
        fills = {"name": name, "i": "", "s": "", "b": ""}
        if "{i}" in template:
            fills["i"] = self.index(s, have[1 if template.startswith("{name}[:,") else 0])
        m = int(template.split("|")[1]) if "|" in template else 0
        if "{s}" in template:
            fills["s"] = f"({self.int_expr(s)} % {have[0] - m + 1})"
        if "{b}" in template:
            fills["b"] = f"({self.int_expr(s)} % {have[0] // m})"
        return template.split("|")[0].format(**fills)

    @staticmethod
    def _view_steps(have, want):
        """(template, step) pairs reading a view of shape `want` from one of shape `have`."""
        out = []
        if have == want:
            out.append(("{name}[:]", "[:]"))
        if len(have) == 1 and len(want) == 1:
            out += [(f"{{name}}[{t}]", f"[{t}]") for t, n in slices(have[0]) if n == want[0] and t != ":"]
            n, m = have[0], want[0]
            if m < n:  # run-time starts, lengths known while lowering (docs/python-subset.md)
                out.append((f"{{name}}[{{s}}:{{s}} + {m}]|{m}", f"[s:s+{m}]"))
                if n % m == 0:
                    out.append((f"{{name}}[{{b}} * {m}:({{b}} + 1) * {m}]|{m}", f"[b*{m}]"))
                if n == 2 * m:
                    out.append((f"{{name}}[{{b}} * (len({{name}}) // 2):({{b}} + 1) * (len({{name}}) // 2)]|{m}",
                                f"[b*{m}]"))
        if len(have) == 2 and len(want) == 1:
            r, c = have
            if c == want[0]:
                out += [("{name}[{i}]", "row"), ("{name}[{i}, :]", "row")]
            if r == want[0]:
                out.append(("{name}[:, {i}]", "column"))
            out += [(f"{{name}}[{{i}}, {t}]", f"row[{t}]") for t, n in slices(c) if n == want[0] and t != ":"]
        if len(have) == 2 and len(want) == 2:
            r, c = have
            if (c, r) == want:
                out += [("{name}.T", ".T"), ("np.transpose({name})", ".T")]
            if c == want[1] and r != want[0]:
                out += [(f"{{name}}[{t}]", f"[{t}]") for t, n in slices(r) if n == want[0]]
                if want[0] < r:
                    out.append((f"{{name}}[{{s}}:{{s}} + {want[0]}]|{want[0]}", f"[s:s+{want[0]}]"))
            if r == want[0] and c != want[1]:
                out += [(f"{{name}}[:, {t}]", f"[:, {t}]") for t, n in slices(c) if n == want[1]]
        return out

    def _binary(self, s: Scope, shape, depth) -> Arr:
        a = self.array_expr(s, shape, depth).text
        b = self.pick([lambda: self.array_expr(s, shape, depth).text, lambda: self.scalar_expr(s, depth)])()
        if self.chance():
            a, b = b, a
        return Arr(self.pick(ARRAY_BINARY).format(a, b), "fresh")

    def _broadcast(self, s: Scope, shape, depth) -> Arr:
        """A 2-D array against a row, a column, or a keepdims reduction."""
        r, c = shape
        full = self.array_expr(s, shape, depth).text
        kind = self.pick(["row", "column", "keepdims_row", "keepdims_column"])
        if kind == "row":
            other = self.array_expr(s, (c,), depth).text
        elif kind == "column":
            v = self.array_expr(s, (r,), depth).text
            other = self.pick([f"({v})[:, None]", f"np.expand_dims({v}, 1)", f"({v}).reshape({r}, 1)"])
        elif kind == "keepdims_row":
            source = self.pick([(m, c) for m in (2, 3) if (m, c) in SHAPES])
            other = f"{self.pick(['np.mean', 'np.sum', 'np.max'])}({self.array_expr(s, source, depth).text}, axis=0, keepdims=True)"
        else:
            source = self.pick([(r, m) for m in (2, 3) if (r, m) in SHAPES])
            other = f"{self.pick(['np.mean', 'np.sum', 'np.min'])}({self.array_expr(s, source, depth).text}, axis=1, keepdims=True)"
        op = self.pick(ARRAY_BINARY[:4])
        return Arr(op.format(*((full, other) if self.chance() else (other, full))), "fresh")

    def _axis_reduction(self, s: Scope, n, sources, depth) -> Arr:
        source = self.pick(sources)
        if source[0] == source[1]:
            axis = self.pick([0, 1])
        else:
            axis = 0 if source[1] == n else 1
        axis_text = self.pick([str(axis), str(axis - 2)])
        return Arr(self.pick(AXIS_REDUCTIONS).format(self.array_expr(s, source, depth).text, axis_text), "fresh")

    def _matvec(self, s: Scope, products, depth) -> Arr:
        m, matrix = self.pick(products)
        a, v = self.array_expr(s, matrix, depth).text, self.array_expr(s, (m,), depth).text
        left = matrix[1] == m  # matrix @ vector
        if len(set(matrix)) == 1 and self.chance():
            left = False
        return Arr(self.pick(MATMUL).format(*((a, v) if left else (v, a))), "fresh")

    def _matmul(self, s: Scope, shape, inner, depth) -> Arr:
        m = self.pick(inner)
        a, b = self.array_expr(s, (shape[0], m), depth).text, self.array_expr(s, (m, shape[1]), depth).text
        return Arr(self.pick(MATMUL + ["({0}).dot({1})"]).format(a, b), "fresh")

    def _reshape(self, s: Scope, shape, depth) -> Arr:
        source = self.array_expr(s, (shape[1], shape[0]), depth)
        text = self.pick([f"({source.text}).reshape{shape}", f"np.reshape({source.text}, {shape})"])
        if source.kind == "view":
            return Arr(text, "view", source.source, source.path + (f"reshape{shape}",), writable_view=False)
        return Arr(text, "fresh" if source.kind == "fresh" else "opaque")

    def _call_array(self, s: Scope, helpers) -> Arr:
        helper = self.pick(helpers)
        call = self.call(s, helper)
        return Arr(f"{call}[1]" if helper.pair else call, "opaque")

    def call(self, s: Scope, helper: Helper, depth_arg: str | None = None) -> str:
        """A call of `helper`; a recursive one gets a small depth (or `depth_arg`)."""
        args = []
        for _, t in helper.params:
            if t == "float":
                args.append(self.floaty(s, self.scalar_expr(s, 1)))
            elif t == "int" and helper.recursive:
                args.append(depth_arg or self.pick([self.pick(s.ints), "2", f"{self.int_expr(s)} % 3"]))
            elif t == "int":
                args.append(self.int_expr(s))
            else:
                args.append(self.array_expr(s, t, 1).text)
        style = self.pick(["positional", "positional", "keywords", "partial", "star"])
        if style == "keywords":
            return f"{helper.name}({args[0]}, " + ", ".join(f"{n}={a}" for (n, _), a in zip(helper.params[1:], args[1:])) + ")"
        if style == "partial":
            return f"functools.partial({helper.name}, {args[0]})({', '.join(args[1:])})"
        if style == "star":
            return f"{helper.name}(*({', '.join(args)},))"
        return f"{helper.name}({', '.join(args)})"

    # ---- statements ----
    def block(self, s: Scope, indent: str, depth: int, count: tuple = (1, 3)) -> None:
        for _ in range(self.draw(st.integers(*count))):
            self.statement(s, indent, depth)

    def statement(self, s: Scope, indent: str, depth: int) -> None:
        if self.int_arrays and self.draw(st.integers(0, 2)) == 0:
            return self._int_statement(s, indent, depth)
        kinds = ["new_scalar", "new_array", "rebind_scalar", "augment_scalar", "rebind_array", "new_int", "alias",
                 "swap"]
        if s.writable():
            kinds += ["write", "augment_array"] * 3  # writes are what aliasing is about
        if self.tuple_helpers(s):
            kinds.append("unpack")
        if depth > 0:
            kinds += ["if", "elif", "for", "while", "while_data", "number_then_array", "int_then_float",
                      "int_statement"]
        if depth > 0 and self.lists:
            kinds += ["grow_list"] * 4
        if self.static:
            kinds += ["static_call"] * 4
        if self.aliases:
            kinds += ["alias_block"] * 4
        if self.guards:
            kinds += ["guarded"] * 3
        if s.loop:
            kinds.append("jump")
        kinds += ["return", "local_function"]
        kind = self.pick(kinds)
        getattr(self, f"_{kind}")(s, indent, depth)

    def _local_function(self, s, indent, depth):
        """A lambda, a nested def or a functools.partial of a lambda, closing over
        the function's names (read when it is called, as Python does)."""
        name, t = self.name("g"), self.name("t")
        shape = self.pick(["float"] + sorted(set(s.arrays.values())))
        if shape == "float":
            with self.bound(s, scalars=[t]):
                body = self.scalar_expr(s, 2)
        else:
            s.arrays[t], s.info[t] = shape, self.fresh_info(writable=False)  # a parameter
            body = self.array_expr(s, shape, 1).text
            del s.arrays[t], s.info[t]
        style = self.pick(["lambda", "def", "partial"])
        if style == "lambda":
            s.lines.append(f"{indent}{name} = lambda {t}: {body}")
        elif style == "def":
            s.lines.append(f"{indent}def {name}({t}):")
            s.lines.append(f"{indent}    return {body}")
        else:
            c = self.name("c")
            s.lines.append(f"{indent}{name} = functools.partial(lambda {c}, {t}: {body} * {c}, "
                           f"{self.scalar_expr(s, 1)})")
        s.functions.append((name, shape))

    def _static_call(self, s, indent, depth):
        """A call to one of STATIC_HELPERS with an axis, a count or a length
        known while lowering (a literal), positionally or by keyword."""
        two_d = sorted(n for n, t in s.arrays.items() if len(t) == 2)
        one_d = sorted(n for n, t in s.arrays.items() if len(t) == 1 and t[0] >= 2)
        kinds = ["ramp", "power_sum"] + ["axis"] * bool(two_d) + ["head"] * bool(one_d)
        kind = self.pick(kinds)
        if kind == "power_sum":
            name = self.name("s")
            deg = self.pick([1, 2, 3])
            by = self.pick([f"{deg}", f"deg={deg}"])
            s.lines.append(f"{indent}{name} = _power_sum({self.scalar_expr(s, 1)}, {by})")
            s.scalars.append(name)
            return
        if kind == "axis":
            a = self.pick(two_d)
            axis = self.pick([0, 1, -1])
            shape = tuple(d for i, d in enumerate(s.arrays[a]) if i != axis % 2)
            call = f"_sum_axis({a}, {self.pick([f'{axis}', f'axis={axis}'])})"
        elif kind == "head":
            v = self.pick(one_d)
            n = self.pick(list(range(2, s.arrays[v][0] + 1)))
            shape, call = (n,), f"_head({v}, {n})"
        else:
            n = self.pick([2, 3, 4])
            shape, call = (n,), f"_ramp({self.scalar_expr(s, 1)}, {n})"
        name = self.name("a")
        s.lines.append(f"{indent}{name} = {call}")
        self.bind(s, name, shape, Arr(call, "opaque"))

    # ---- a helper's result that may be its argument, kept, then the argument written ----
    def _alias_block(self, s, indent, depth):
        """An array made here (`w`), a helper's result on it (ALIAS_CALLS: `w`
        itself, a view, a tuple's item, a copy, ...) kept through nested loops,
        while loops, branches, lists, dicts and tuples (`_keep`), then writes
        through `w` or the result, in place or by slices, some under a branch or
        in a loop; `w` may be an array the program made before, and then the
        writes may go through the names sharing it too. numpy shows a write
        through every name sharing the array;
        irad must give numpy's value or refuse: every line of the block is
        marked MAY_REFUSE. After it both names are only read."""
        first = len(s.lines)
        kept = self.name("a")
        made = [n for n in s.writable() if s.arrays[n] == (4,)]
        if made and self.chance():  # an array the program made, perhaps shared with other names
            w = self.pick(made)
        else:
            w = self.name("w")
            s.lines.append(f"{indent}{w} = 1.0 * ({self.array_expr(s, (4,), 1).text})")
            self.bind(s, w, (4,), Arr(w, "fresh"))
        shape = self.pick(sorted(ALIAS_CALLS))

        def call() -> str:
            return self.pick(ALIAS_CALLS[shape]).format(w)

        self._keep(s, indent, kept, shape, call, w, depth)
        sharing = sorted(n for n in s.group(s.info[w].base) if len(s.arrays[n]) == 1 and s.info[n].writable)
        for _ in range(self.draw(st.integers(1, 3))):
            if self.chance():
                target = self.pick(sharing)
                self._alias_write(s, indent, target, s.arrays[target])
            else:
                self._alias_write(s, indent, kept, shape)
            if self.pick([False, False, True]):
                name = self.name("s")
                s.lines.append(f"{indent}{name} = np.sum({kept} * {kept}) + np.sum({w})")
                s.scalars.append(name)
        s.lines[first:] = [f"{line}  {MAY_REFUSE}" for line in s.lines[first:]]
        for name in s.group(s.info[w].base):  # only read from now on
            s.info[name] = replace(s.info[name], writable=False)
        self.bind(s, kept, shape, Arr(kept, "opaque"))

    def _keep(self, s, indent, target, shape, call, w, depth):
        """Lines that bind `target` to a result of `call()`, through a carrier,
        nested `depth` deep."""
        kinds = ["direct", "direct", "tuple", "dict", "again"]
        if depth > 0:
            kinds += ["loop", "loop", "while", "branch", "branch", "list", "sum"]
        kind = self.pick(kinds)
        if kind == "direct":
            s.lines.append(f"{indent}{target} = {call()}")
        elif kind == "again":  # a kept result passed through a helper again
            s.lines.append(f"{indent}{target} = {call()}")
            s.lines.append(f"{indent}{target} = {self.pick(['_same({})', '_first({})', '_either({})'])}".format(target))
        elif kind == "tuple":
            t = self.name("t")
            s.lines.append(f"{indent}{t} = ({call()}, {self.scalar_expr(s, 1)})")
            s.lines.append(f"{indent}{target} = {t}[0]")
        elif kind == "dict":
            p = self.name("p")
            s.lines.append(f"{indent}{p} = {{'a': {call()}, 'b': {self.scalar_expr(s, 1)}}}")
            s.lines.append(f"{indent}{target} = {p}['a']")
        elif kind in ("loop", "while", "sum"):
            var = self.name("i" if kind != "while" else "j")
            s.lines.append(f"{indent}{target} = {call()} * 0.0")
            if kind == "while":
                s.lines.append(f"{indent}{var} = 0")
                s.lines.append(f"{indent}while {var} < {self.pick(['2', '1', self.pick(s.ints)])}:")
                s.lines.append(f"{indent}    {var} += 1")
            else:
                s.lines.append(f"{indent}for {var} in range({self.trip(s)}):")
            with self.bound(s, ints=[var]):
                if kind == "sum":
                    s.lines.append(f"{indent}    {target} = {target} + {call()}")
                else:
                    self._keep(s, indent + "    ", target, shape, call, w, depth - 1)
                if self.pick([False, False, True]):  # written while a result may share it
                    self._alias_write(s, indent + "    ", w, (4,))
        elif kind == "branch":
            s.lines.append(f"{indent}if {self.condition(s)}:")
            self._keep(s, indent + "    ", target, shape, call, w, depth - 1)
            s.lines.append(f"{indent}else:")
            if self.chance():
                self._keep(s, indent + "    ", target, shape, call, w, depth - 1)
            else:
                s.lines.append(f"{indent}    {target} = {call()} * 1.0")
        else:  # a list grown in a loop, one of its items read
            items, var, item = self.name("L"), self.name("i"), self.name("a")
            s.lines.append(f"{indent}{items} = []")
            s.lines.append(f"{indent}for {var} in range({self.pick([1, 2, 3])}):")
            with self.bound(s, ints=[var]):
                self._keep(s, indent + "    ", item, shape, call, w, depth - 1)
                s.lines.append(f"{indent}    {items}.append({item})")
            s.lines.append(f"{indent}{target} = {items}[{self.pick(['0', '-1'])}]")

    def _alias_write(self, s, indent, name, shape):
        """A write through `name` (of `shape`, 1-D): an item, a slice, all of it
        by `op=`; alone, under a branch or in a loop."""
        n = shape[0]
        where = self.pick(["", "", "if", "for"])
        if where == "if":
            s.lines.append(f"{indent}if {self.condition(s)}:")
            indent += "    "
        elif where == "for":
            s.lines.append(f"{indent}for {self.name('i')} in range({self.pick([1, 2])}):")
            indent += "    "
        kind = self.pick(["item", "slice", "all", "array"])
        if kind == "item":
            s.lines.append(f"{indent}{name}[{self.index(s, n)}] {self.pick(['=', '+=', '*='])} {self.scalar_expr(s, 1)}")
        elif kind == "slice":
            text, _ = self.pick(slices(n))
            s.lines.append(f"{indent}{name}[{text}] {self.pick(['=', '+=', '*='])} {self.scalar_expr(s, 1)}")
        elif kind == "all":
            s.lines.append(f"{indent}{name} {self.pick(['+=', '-=', '*='])} {self.scalar_expr(s, 1)}")
        else:
            value = self.array_expr(s, shape, 1).text if shape in SHAPES else self.scalar_expr(s, 1)
            s.lines.append(f"{indent}{name}[:] = {value}")

    def _new_scalar(self, s, indent, depth):
        name = self.name("s")
        s.lines.append(f"{indent}{name} = {self.scalar_expr(s)}")
        s.scalars.append(name)

    def _guarded(self, s, indent, depth):
        """An op valid only where its guard holds: an int division behind `if
        n > 0`, a square root or log behind `if a > 0.0`, an item behind a
        bounds check, items from a run-time start to the end. Where the guard
        varies along a vmap batch, the op must not fail, nor its infinite
        derivative leak, for the elements it does not run for."""
        name, n, a = self.name("s"), self.int_expr(s), self.scalar_expr(s, 1)
        vectors = sorted(v for v, t in s.arrays.items() if len(t) == 1)
        kind = self.pick(["div", "root", "log", "call_div", "call_log"]
                         + ["index", "range_from", "call_item", "call_tail", "call_loop", "call_while"] * bool(vectors))
        if kind.startswith("call_"):
            return self._guarded_call(s, indent, kind, name, n, a, vectors)
        if kind == "div":
            s.lines += [f"{indent}{name} = 0.5", f"{indent}if {n} > 0:",
                        f"{indent}    {name} = {a} * ({self.pick([6, 7])} // ({n}))"]
        elif kind in ("root", "log"):
            fn = "math.sqrt" if kind == "root" else "math.log"
            s.lines += [f"{indent}if {a} > 0.0:", f"{indent}    {name} = {fn}({a})", f"{indent}else:",
                        f"{indent}    {name} = {a} * 0.5"]
        elif kind == "index":
            v = self.pick(vectors)
            s.lines += [f"{indent}{name} = {a}", f"{indent}if {n} >= 0 and {n} < {s.arrays[v][0]}:",
                        f"{indent}    {name} = {name} * {v}[{n}]"]
        else:
            v, j = self.pick(vectors), self.name("i")
            s.lines += [f"{indent}{name} = {a}", f"{indent}for {j} in range({n}, {s.arrays[v][0]}):",
                        f"{indent}    {name} = {name} + {v}[{j}] * {j}"]
        s.scalars.append(name)

    def _guarded_call(self, s, indent, kind, name, n, a, vectors):
        """A call of one of GUARDED_HELPERS (a check, a raise, their own
        branches and loops, a nested helper) where its guard holds: behind a
        branch, or in a loop whose bounds keep it valid. Under vmap the call
        runs under the mask of that branch or loop (BatchBuilder.call): its
        checks must not fail for the elements that do not take it."""
        if kind == "call_div":
            s.lines += [f"{indent}{name} = 0.5", f"{indent}if ({n}) > 0:",
                        f"{indent}    {name} = _checked_div({a}, {n})"]
        elif kind == "call_log":
            fn = self.pick(["_checked_log", "_checked_root"])
            s.lines += [f"{indent}if {a} > 0.0:", f"{indent}    {name} = {fn}({a})", f"{indent}else:",
                        f"{indent}    {name} = {a} * 0.5"]
        elif kind == "call_item":
            v = self.pick(vectors)
            s.lines += [f"{indent}{name} = {a}", f"{indent}if ({n}) >= 0 and ({n}) < {s.arrays[v][0]}:",
                        f"{indent}    {name} = {name} * _checked_item({v}, {n})"]
        elif kind == "call_tail":
            v = self.pick(vectors)
            s.lines += [f"{indent}{name} = {a}", f"{indent}if ({n}) >= 0:",
                        f"{indent}    {name} = {name} + _checked_tail({v}, {n})"]
        elif kind == "call_loop":
            v, j = self.pick(vectors), self.name("i")
            s.lines += [f"{indent}{name} = {a}", f"{indent}for {j} in range(max({n}, 0), {s.arrays[v][0]}):",
                        f"{indent}    {name} = {name} + _checked_item({v}, {j}) * _checked_div(1.0, {j} + 1)"]
        else:
            v, j = self.pick(vectors), self.name("j")
            s.lines += [f"{indent}{name} = {a}", f"{indent}{j} = max({n}, 0)",
                        f"{indent}while {j} < {s.arrays[v][0]}:",
                        f"{indent}    {name} = {name} + _checked_root(1.0 + _checked_item({v}, {j}) ** 2)",
                        f"{indent}    {j} = {j} + 1"]
        s.scalars.append(name)

    def _new_int(self, s, indent, depth):
        name = self.name("n")
        s.lines.append(f"{indent}{name} = {self.int_expr(s)} % {self.pick([3, 4, 5])}")
        s.ints.append(name)

    def _rebind_scalar(self, s, indent, depth):
        targets = s.scalars
        if self.chance() and len(targets) >= 2:
            a = self.pick(targets)
            b = self.pick([t for t in targets if t != a])
            s.lines.append(f"{indent}{a}, {b} = {self.scalar_expr(s)}, {self.scalar_expr(s)}")
        else:
            s.lines.append(f"{indent}{self.pick(targets)} = {self.scalar_expr(s)}")
        rebindable = [n for n in s.ints if n not in s.fixed_ints]
        if rebindable and self.chance():
            s.lines.append(f"{indent}{self.pick(rebindable)} = ({self.int_expr(s)}) % 4")

    def _augment_scalar(self, s, indent, depth):
        op = self.pick(["+=", "-=", "*=", "/= 1.0 + 0.5 *"])
        if op.startswith("/="):
            value = self.scalar_expr(s, 1)
            s.lines.append(f"{indent}{self.pick(s.scalars)} /= 1.0 + {value} * {value}")
        else:
            s.lines.append(f"{indent}{self.pick(s.scalars)} {op} {self.scalar_expr(s, 1)}")

    def _new_array(self, s, indent, depth):
        shape = self.pick(SHAPES)
        name = self.name("a")
        value = self.array_expr(s, shape)
        if value.kind != "fresh" and self.chance():
            value = Arr(f"np.copy({value.text})", "fresh")
        s.lines.append(f"{indent}{name} = {value.text}")
        self.bind(s, name, shape, value)

    def bind(self, s: Scope, name: str, shape, value: Arr) -> None:
        s.arrays[name] = shape
        if value.kind == "fresh":
            s.info[name] = self.fresh_info()
        elif value.kind == "view":
            source = s.info[value.source]
            s.info[name] = Info(source.base, source.path + value.path,
                                source.writable and value.writable_view, next(self.names))
        else:
            s.info[name] = self.fresh_info(writable=False)

    def _rebind_array(self, s, indent, depth):
        targets = [n for n in s.arrays if n not in s.frozen]
        if not targets:
            return self._new_array(s, indent, depth)
        name = self.pick(sorted(targets))
        value = self.array_expr(s, s.arrays[name])
        if name in s.fresh_only and value.kind != "fresh":
            value = Arr(f"np.copy({value.text})", "fresh")
        s.lines.append(f"{indent}{name} = {value.text}")
        self.bind(s, name, s.arrays[name], value)

    def _alias(self, s, indent, depth):
        """A name for an array or a view of it; or two at once (`b, c = a, a[1:]`)."""
        made = []
        for _ in range(self.pick([1, 1, 2])):
            source = self.pick(sorted(s.arrays))
            have = s.arrays[source]
            options = [(have, "{name}", ()), (have, "np.asarray({name})", ())]
            for want in SHAPES:
                options += [(want, text, (step,)) for text, step in self._view_steps(have, want)]
            shape, template, path = self.pick(options)
            made.append((self.name(f"{source}_"), shape, self._fill(s, template, source, have), source, path))
        s.lines.append(f"{indent}{', '.join(m[0] for m in made)} = {', '.join(m[2] for m in made)}")
        for name, shape, text, source, path in made:
            self.bind(s, name, shape, Arr(text, "view", source, path))

    def _swap(self, s, indent, depth):
        """`a, b = b, a`: two names exchange their arrays (and what shares them)."""
        free = [n for n in sorted(s.arrays) if n not in s.frozen and n not in s.fresh_only]
        pairs = [(a, b) for a in free for b in free if a < b and s.arrays[a] == s.arrays[b]]
        if not pairs:
            return self._alias(s, indent, depth)
        a, b = self.pick(pairs)
        s.lines.append(f"{indent}{a}, {b} = {b}, {a}")
        s.info[a], s.info[b] = s.info[b], s.info[a]

    def _write(self, s, indent, depth):
        name = self.pick(s.writable())
        shape = s.arrays[name]
        op = self.pick(["=", "=", "+=", "-=", "*="])
        if len(shape) == 1:
            n = shape[0]
            kind = self.pick(["item", "slice", "all"])
            if kind == "item":
                target, value = f"[{self.index(s, n)}]", self.scalar_expr(s, 1)
            elif kind == "slice":
                text, length = self.pick(slices(n))
                if self.chance() and length < n:
                    start = f"({self.int_expr(s)} % {n - length + 1})"
                    text = f"{start}:{start} + {length}"
                target = f"[{text}]"
                value = self.scalar_expr(s, 1) if (length,) not in SHAPES or self.chance() else self.array_expr(s, (length,), 1).text
            else:
                target, value = "[:]", self.array_expr(s, shape, 1).text
        else:
            r, c = shape
            kind = self.pick(["item", "row", "column", "block"])
            if kind == "item":
                target, value = f"[{self.index(s, r)}, {self.index(s, c)}]", self.scalar_expr(s, 1)
            elif kind == "row":
                target = f"[{self.index(s, r)}]"
                value = self.scalar_expr(s, 1) if self.chance() else self.array_expr(s, (c,), 1).text
            elif kind == "column":
                target = f"[:, {self.index(s, c)}]"
                value = self.scalar_expr(s, 1) if self.chance() else self.array_expr(s, (r,), 1).text
            else:
                (rows, nr), (cols, nc) = self.pick(slices(r)), self.pick(slices(c))
                target = f"[{rows}, {cols}]"
                value = self.scalar_expr(s, 1)
                if (nr, nc) in SHAPES and self.chance():
                    value = self.array_expr(s, (nr, nc), 1).text
                elif (nc,) in SHAPES and self.chance():
                    value = self.array_expr(s, (nc,), 1).text  # broadcast along the rows
        s.lines.append(f"{indent}{name}{target} {op} {value}")

    def _augment_array(self, s, indent, depth):
        name = self.pick(s.writable())
        shape = s.arrays[name]
        op = self.pick(AUGMENT + ["/=", "**="])
        if op == "**=":
            s.lines.append(f"{indent}{name} **= 2")
            return
        kind = self.pick(["scalar", "same", "row", "column"] if len(shape) == 2 else ["scalar", "same"])
        if kind == "scalar":
            value = self.scalar_expr(s, 1)
        elif kind == "same":
            value = self.array_expr(s, shape, 1).text
        elif kind == "row":
            value = self.array_expr(s, (shape[1],), 1).text
        else:
            value = f"({self.array_expr(s, (shape[0],), 1).text})[:, None]"
        if op == "/=":
            value = f"(1.0 + {value} * {value})"
        s.lines.append(f"{indent}{name} {op} {value}")

    def _unpack(self, s, indent, depth):
        helper = self.pick(self.tuple_helpers(s))
        scalar, array = self.name("s"), self.name("a")
        s.lines.append(f"{indent}{scalar}, {array} = {self.call(s, helper)}")
        s.scalars.append(scalar)
        self.bind(s, array, helper.returns[1], Arr(array, "opaque"))

    @staticmethod
    def tuple_helpers(s: Scope) -> list:
        return [h for h in s.helpers if h.pair]

    def _jump(self, s, indent, depth):
        s.lines.append(f"{indent}if {self.condition(s)}:")
        s.lines.append(f"{indent}    {self.pick(['break', 'continue'])}")

    def _return(self, s, indent, depth):
        s.lines.append(f"{indent}if {self.condition(s)}:")
        s.lines.append(f"{indent}    return {self.result(s)}")

    def result(self, s: Scope) -> str:
        """An expression of the function's return type."""
        if s.returns == "float":
            out = self.scalar_expr(s, 1)
        elif is_shape(s.returns):
            out = self.array_expr(s, s.returns, 1).text
        else:
            out = self.pair(s.returns, self.scalar_expr(s, 1), self.array_expr(s, s.returns[1], 1).text)
        return self.with_aux(s, out)

    @staticmethod
    def pair(returns, scalar: str, array: str) -> str:
        if returns[0] == "dict":
            return f'{{"s": {scalar}, "v": {array}}}'
        return f"{scalar}, {array}"

    def with_aux(self, s: Scope, out: str) -> str:
        """`out`, or `(out), aux` where the function returns auxiliary values too."""
        if not s.aux:
            return out
        return f'({out}), {{"n": {self.int_expr(s)}, "t": {self.scalar_expr(s, 1)}}}'

    # ---- blocks, and how sharing joins after them ----
    def arm(self, s: Scope, indent: str, depth: int, may_end: bool):
        """Lower one arm; return the sharing it leaves (None if it always jumps)."""
        saved = s.snapshot()
        outer = set(s.arrays)
        self.block(s, indent, depth - 1)
        ends = None
        if may_end and self.pick([False, False, True]):
            ends = self.pick(["return"] + (["break", "continue"] if s.loop else []))
            s.lines.append(f"{indent}{ends}" + (f" {self.result(s)}" if ends == "return" else ""))
        left = None if ends else {n: s.info[n] for n in outer}
        s.restore(saved)
        return left

    def join(self, s: Scope, arms: list) -> None:
        """The sharing after a branch whose fall-through arms left `arms`."""
        arms = [a for a in arms if a is not None]
        if not arms:
            return
        unknown = set()
        for name in list(s.info):
            infos = [a[name] for a in arms]
            if all(i == infos[0] for i in infos):
                s.info[name] = infos[0]
                continue
            groups = [{n for n, i in a.items() if i.base == a[name].base} for a in arms]
            alone = all(g == {name} and a[name].path == () for g, a in zip(groups, arms))
            if alone and all(a[name].writable for a in arms):
                s.info[name] = self.fresh_info()
            else:
                unknown |= set().union(*groups) | {name}
        for name in unknown:
            s.info[name] = self.fresh_info(writable=False)

    def _if(self, s, indent, depth):
        before = dict(s.info)
        s.lines.append(f"{indent}if {self.condition(s)}:")
        arms = [self.arm(s, indent + "    ", depth, may_end=True)]
        if self.chance():
            s.lines.append(f"{indent}else:")
            arms.append(self.arm(s, indent + "    ", depth, may_end=False))
        else:
            arms.append(before)
        self.join(s, arms)

    def _elif(self, s, indent, depth):
        before = dict(s.info)
        s.lines.append(f"{indent}if {self.condition(s)}:")
        arms = [self.arm(s, indent + "    ", depth, may_end=True)]
        for _ in range(self.draw(st.integers(1, 2))):
            s.lines.append(f"{indent}elif {self.condition(s)}:")
            arms.append(self.arm(s, indent + "    ", depth, may_end=True))
        if self.chance():
            s.lines.append(f"{indent}else:")
            arms.append(self.arm(s, indent + "    ", depth, may_end=False))
        else:
            arms.append(before)
        self.join(s, arms)

    def loop_body(self, s: Scope, indent: str, depth: int, fixed: list, scalars=(), rows=None,
                  iterated=()) -> None:
        """A loop body: names sharing an array at the loop's entry stay bound to it,
        others are rebound only to fresh arrays (see the module docstring); or a
        shared name is left free, and nothing sharing its array is written.
        `iterated`: the arrays the loop walks. The loop holds each (as numpy's
        iterator does), so they share it with the loop: never alone."""
        saved = s.snapshot()
        before = dict(s.info)
        walked = {s.info[n].base for n in iterated}
        alone = {n for n, i in s.info.items() if len(s.group(i.base)) == 1 and i.path == () and i.base not in walked}
        shared = set(s.info) - alone
        loose = {n for n in sorted(shared - s.frozen) if self.pick([False, False, True])}
        for name in loose:
            for member in s.group(before[name].base):
                s.info[member] = replace(s.info[member], writable=False)
        s.frozen |= shared - loose
        s.fresh_only |= alone - s.frozen
        s.loop = True
        s.ints.extend(fixed)
        s.fixed_ints |= set(fixed)
        s.scalars.extend(scalars)  # loop variables: the body may rebind them, as Python allows
        for row, (shape, source) in (rows or {}).items():
            # rows are views: writable where the array is (docs/python-subset.md,
            # "Iteration"), and then the array is not rebound in the body, so every
            # iteration starts with the row sharing it
            writable = s.info[source].writable
            s.arrays[row] = shape
            s.info[row] = Info(s.info[source].base, s.info[source].path + ("row",), writable, next(self.names))
            s.frozen.add(row)
            if writable:
                s.frozen.add(source)
        self.block(s, indent, depth - 1)
        changed = {n for n in before if s.info[n] != before[n]}
        s.restore(saved)
        s.fixed_ints -= set(fixed)
        unknown = set()
        for name in changed:
            if name in alone and name not in s.frozen:  # rebound to fresh arrays: alone either way
                s.info[name] = self.fresh_info(writable=before[name].writable)
            else:  # its sharing may differ between iterations (a branch inside made it unknown)
                unknown |= {n for n, i in before.items() if i.base == before[name].base}
        for name in unknown:
            s.info[name] = self.fresh_info(writable=False)

    def _for(self, s, indent, depth):
        var = self.name("i")
        kind = self.pick(["range", "range", "start", "step", "reversed", "elements", "rows", "enumerate",
                          "zip", "tuple"])
        ones = sorted(n for n, shape in s.arrays.items() if len(shape) == 1)
        twos = sorted(n for n, shape in s.arrays.items() if len(shape) == 2)
        if kind in ("elements", "enumerate", "zip") and ones:
            a, b = self.name("v"), self.name("v")
            if kind == "elements":
                walked = [self.pick(ones)]
                s.lines.append(f"{indent}for {a} in {walked[0]}:")
                return self.loop_body(s, indent + "    ", depth, [], scalars=[a], iterated=walked)
            if kind == "enumerate":
                start, walked = self.pick(["", ", 1"]), [self.pick(ones)]
                s.lines.append(f"{indent}for {var}, {a} in enumerate({walked[0]}{start}):")
                return self.loop_body(s, indent + "    ", depth, [var], scalars=[a], iterated=walked)
            walked = [self.pick(ones), self.pick(ones)]
            s.lines.append(f"{indent}for {a}, {b} in zip({walked[0]}, {walked[1]}):")
            return self.loop_body(s, indent + "    ", depth, [], scalars=[a, b], iterated=walked)
        if kind == "rows" and twos:
            writable = [n for n in twos if s.info[n].writable]  # rows that may be written through
            matrix, row = self.pick(writable if writable and self.chance() else twos), self.name("r")
            s.lines.append(f"{indent}for {row} in {matrix}:")
            return self.loop_body(s, indent + "    ", depth, [], rows={row: ((s.arrays[matrix][1],), matrix)},
                                  iterated=[matrix])
        if kind == "tuple":
            items = ", ".join(self.scalar_expr(s, 1) for _ in range(self.draw(st.integers(1, 3))))
            s.lines.append(f"{indent}for {var} in ({items},):")
            return self.loop_body(s, indent + "    ", depth, [], scalars=[var])
        if kind == "reversed":
            s.lines.append(f"{indent}for {var} in reversed(range({self.trip(s)})):")
            return self.loop_body(s, indent + "    ", depth, [var])
        if kind == "range":
            bounds = self.trip(s)
        elif kind == "start":
            bounds = f"{self.pick(['1', self.pick(s.ints)])}, {self.trip(s)}"
        elif kind == "step":
            bounds = self.pick(["{} + 1, -1, -1", "0, {} + 2, 2", "{}, 0, -1"]).format(self.trip(s))
        else:
            bounds = self.trip(s)
        s.lines.append(f"{indent}for {var} in range({bounds}):")
        self.loop_body(s, indent + "    ", depth, [var])

    def _grow_list(self, s, indent, depth):
        """A list grown in a `for` loop over a range of known length, then read
        (docs/python-subset.md, "Lists that grow"): floats or arrays of one shape,
        appended once per iteration (one scf.for, the items in a buffer), on both
        paths of a branch, or with pops between (then unrolled). Items are fresh
        values no later write reaches (Python's list would hold the array itself)."""
        name, var, scalar = self.name("L"), self.name("i"), self.name("s")
        shape = self.pick(["float"] + SHAPES)
        trips = self.pick([1, 2, 3, 4])

        def item() -> str:
            if shape == "float":
                return self.scalar_expr(s, 1)
            return f"1.0 * ({self.array_expr(s, shape, 1).text})"

        first = self.chance()
        s.lines.append(f"{indent}{name} = [{item()}]" if first else f"{indent}{name} = []")
        s.lines.append(f"{indent}for {var} in range({trips}):")
        with self.bound(s, ints=[var]):
            style = self.pick(["append", "append", "branch", "pop"])
            if style == "branch":
                s.lines.append(f"{indent}    if {self.condition(s)}:")
                s.lines.append(f"{indent}        {name}.append({item()})")
                s.lines.append(f"{indent}    else:")
                s.lines.append(f"{indent}        {name}.append({item()})")
            elif style == "pop":
                s.lines.append(f"{indent}    {name}.append({item()})")
                s.lines.append(f"{indent}    {name}.append({item()})")
                s.lines.append(f"{indent}    {name}.pop({self.pick(['', '0', '-2'])})")
            else:
                s.lines.append(f"{indent}    {name}.append({item()})")
        total = "np.sum({})" if shape != "float" else "{}"
        reads = [total.format(f"sum({name})"), total.format(f"{name}[-1]"), f"len({name}) * {total.format(name + '[0]')}",
                 f"sum({total.format('v * v')} for v in {name})"]
        reads.append(f"np.sum(np.stack({name}))" if shape != "float" else f"np.sum(np.array({name}))")
        s.lines.append(f"{indent}{scalar} = {self.pick(reads)}")
        s.scalars.append(scalar)

    def _number_then_array(self, s, indent, depth):
        """A float that a loop makes an array (numpy: `s = x; s = s * w` gives an
        array). The loop's trip count is known and positive, and the body's first
        statement makes it an array from one of its full shape, the one case
        irad keeps exact (docs/control-flow.md, "Numbers held as arrays")."""
        name, var, shape = self.name("s"), self.name("i"), self.pick(SHAPES)
        s.lines.append(f"{indent}{name} = {self.scalar_expr(s)}")
        trips = self.pick(["range(1)", "range(2)", "range(3)", "reversed(range(2))", "range(1, 3)"])
        other = self.pick(ARRAY_UNARY[:9]).format(self.array_expr(s, shape, 1).text)  # an array, never a splat
        op = self.pick(["{0} + {1}", "{0} * {1}", "{1} - {0}", "{0} / (1.0 + {1} * {1})"])
        s.lines.append(f"{indent}for {var} in {trips}:")
        s.lines.append(f"{indent}    {name} = {op.format(name, other)}")
        self.loop_body(s, indent + "    ", depth, [var])
        s.arrays[name], s.info[name] = shape, self.fresh_info(writable=False)

    def _int_then_float(self, s, indent, depth):
        """An int that a loop (or a branch) may make a float: afterwards an int on
        the paths that did not (numpy keeps it), a float in irad. They agree
        wherever it is used as a number; where it would make an array's dtype
        the generator writes float(...) (Generator.floaty)."""
        name = self.name("s")
        s.lines.append(f"{indent}{name} = {self.int_expr(s)}")
        if self.chance():
            var = self.name("i")
            s.lines.append(f"{indent}for {var} in range({self.trip(s)}):")
            s.lines.append(f"{indent}    {name} = {name} {self.pick(['+', '-', '*'])} {self.scalar_expr(s, 1)}")
            self.loop_body(s, indent + "    ", depth, [var])
        else:
            s.lines.append(f"{indent}if {self.condition(s)}:")
            s.lines.append(f"{indent}    {name} = {name} {self.pick(['+', '*'])} {self.scalar_expr(s, 1)}")
        s.scalars.append(name)
        s.maybe_int.add(name)

    # ---- int arrays: numpy's int64 through the ops that keep it ----
    def int_array_expr(self, s: Scope, n: int, depth: int = 2) -> tuple[str, bool]:
        """An int64 array (in numpy) of shape (n,), and whether irad holds it as
        int64 (`exact`) or computes it as floats (np.maximum, np.abs, ... of int
        arrays: docs/arrays.md, "Ints irad holds as floats"), which is never
        written into (irad refuses it); `.astype(int)` makes one exact again."""
        arrays = sorted(name for name, shape in s.arrays.items() if shape == (n,))
        floats = (lambda: self.array_expr(s, (n,), 0).text)
        leaves = [
            lambda: (f"np.arange({n})", True),
            lambda: (f"(np.arange({n}) - {self.pick([1, 2])})", True),
            lambda: (f"np.zeros({n}, dtype={self.pick(['int', 'np.int64'])})", True),
            lambda: ("np.array([{}])".format(", ".join(self.int_expr(s) for _ in range(n))), True),
            lambda: (f"np.full({n}, {self.int_expr(s)})", True),
            lambda: (f"(2.0 * {floats()}).astype({self.pick(['int', 'np.int64'])})", True),
            lambda: (f"np.argsort({floats()})", True),
        ]
        if arrays:
            leaves.append(lambda: (f"(3.0 * np.tanh({self.pick(arrays)})).astype(int)", True))
        if depth <= 0:
            return self.pick(leaves)()
        sub = depth - 1
        a, exact_a = self.int_array_expr(s, n, sub)
        kind = self.pick(["leaf", "add", "sub", "mul", "neg", "copy", "times", "held", "held2", "astype",
                          "axis", "where", "divide"])
        if kind == "leaf":
            return self.pick(leaves)()
        if kind in ("add", "sub", "times"):
            b, exact_b = self.int_array_expr(s, n, sub)
            op = {"add": "+", "sub": "-", "times": "*"}[kind]
            return f"({a} {op} {b})", exact_a and exact_b
        if kind == "mul":
            return f"({a} * {self.pick([2, -1, 3])})", exact_a
        if kind == "neg":
            return f"(-{a})", exact_a
        if kind == "divide":  # numpy's floored int `//` and `%` (0 for a zero divisor)
            b, exact_b = self.int_array_expr(s, n, sub) if self.chance() else (str(self.pick([2, 3, -2])), True)
            return self.pick(["({0} % {1})", "({0} // {1})", "np.remainder({0}, {1})",
                              "np.floor_divide({0}, {1})"]).format(a, b), exact_a and exact_b
        if kind == "copy":
            return f"np.copy({a})", exact_a
        if kind == "held":  # numpy keeps the int; irad computes a float
            return self.pick(["np.abs({})", "np.sign({})", "np.square({})", "(({}) ** 2)", "np.clip({}, 0, 2)",
                              "np.maximum({}, 1)", "np.minimum({}, 0)", "abs({})"]).format(a), False
        if kind == "held2":
            b, _ = self.int_array_expr(s, n, sub)
            return self.pick(["np.maximum({0}, {1})", "np.minimum({0}, {1})",
                              f"np.where({floats()} > 0.0, {{0}}, {{1}})"]).format(a, b), False
        if kind == "astype":
            return f"({a}).astype({self.pick(['int', 'np.int64'])})", True
        if kind == "where":
            return f"np.where({floats()} > 0.0, {a}, {self.pick([0, 1, -2])})", False
        c = self.pick([2, 3])  # an axis reduction of an int matrix
        m = self.pick([f"np.arange({n * c}).reshape({c}, {n})", "np.stack([{}])".format(", ".join([a] * c)),
                       f"np.outer(np.arange({c}), {a})"])
        return self.pick(["np.sum({}, axis=0)", "np.max({}, axis=0)", "({}).min(axis=0)"]).format(m), False

    def _int_array(self, s, indent, depth):
        """An int array (numpy's int64) made through ops that keep ints, written
        with floats where irad holds it as ints (numpy casts toward zero: `i[0] =
        x` stores int(x)), then used with floats: a float array or a float."""
        name, n = self.name("i"), self.pick([2, 3, 4])
        text, exact = self.int_array_expr(s, n)
        s.lines.append(f"{indent}{name} = {text}")
        if self.pick([False, False, True]):  # a float array on the paths a loop or a branch makes it one
            head = (f"for {self.name('i')} in range({self.trip(s)}):" if self.chance()
                    else f"if {self.condition(s)}:")
            s.lines.append(f"{indent}{head}")
            s.lines.append(f"{indent}    {name} = {name} {self.pick(['*', '+'])} {self.scalar_expr(s, 1)}")
            exact = False  # an int array on one path: irad holds it as floats
        if not exact and self.chance():  # numpy's int, irad's float: refused (or numpy's float after a join)
            self._write_float(s, indent, name, n)
        if exact and self.chance():
            text, length = self.pick(slices(n))
            value = self.scalar_expr(s, 1)
            if self.chance():  # an element: `op=` reads, converts and writes back, as `=`
                s.lines.append(f"{indent}{name}[{self.index(s, n)}] {self.pick(['=', '+=', '*='])} {value}")
            else:  # a slice: numpy's `op=` would be an in-place ufunc, which refuses to cast to int
                if (length,) in SHAPES and self.chance():
                    value = self.array_expr(s, (length,), 1).text
                s.lines.append(f"{indent}{name}[{text}] = {value}")
        floats = self.array_expr(s, (n,), 1).text
        if self.chance():
            array = self.name("a")
            use = self.pick(["{0} * {1}", "{1} - {0}", "np.sin({0}) + {1}", "{0} / (1.0 + {1} * {1})",
                             "np.where({0} > 0, {1}, -{1})", "np.maximum({0}, {1})"])
            s.lines.append(f"{indent}{array} = {use.format(name, floats)}")
            self.bind(s, array, (n,), Arr(array, "fresh"))
        else:
            scalar = self.name("s")
            use = self.pick(["np.sum({0} * {1})", "float(np.sum({0})) * {2}", "np.dot({0}, {1})",
                             f"{{0}}[{self.index(s, n)}] * {{2}}", "np.max({0}) + {2}", "np.mean({0}) * {2}"])
            s.lines.append(f"{indent}{scalar} = {use.format(name, floats, self.scalar_expr(s, 1))}")
            s.scalars.append(scalar)

    def _write_float(self, s, indent, name, n):
        """A float written into `name`, an array numpy may keep as ints where irad
        computes floats: numpy truncates it, so irad must refuse (MAY_REFUSE) or
        match. Elements with `=` and `op=`; slices with `=` only (numpy's in-place
        `op=` of a slice refuses to cast a float to int)."""
        value = self.scalar_expr(s, 1)
        if self.chance():
            s.lines.append(f"{indent}{name}[{self.index(s, n)}] {self.pick(['=', '+=', '*='])} {value}  {MAY_REFUSE}")
        else:
            text, _ = self.pick(slices(n))
            s.lines.append(f"{indent}{name}[{text}] = {value}  {MAY_REFUSE}")

    def _int_statement(self, s, indent, depth):
        """One of the int statements `--int-arrays` draws: int arrays, a local
        function returning one, an int a join may make a float written into an
        array, numpy's bool scalars."""
        kind = self.pick(["array", "array", "helper", "join", "bools", "bools"])
        if kind == "array":
            return self._int_array(s, indent, depth)
        if kind == "helper":
            return self._int_helper(s, indent, depth)
        if kind == "join":
            return self._int_join_written(s, indent, depth)
        return self._numpy_bools(s, indent, depth)

    def _int_helper(self, s, indent, depth):
        """A nested def returning an int array numpy keeps and irad computes in
        float (np.maximum, np.abs, ... of ints), or a float array when its
        argument is a float; a copy of its result written with a float."""
        g, t, n, name = self.name("g"), self.name("t"), self.pick([2, 3, 4]), self.name("i")
        body = self.pick(["np.maximum(np.arange({n}) - 1, {t})", "np.abs(np.arange({n}) - {t})",
                          "np.where(np.arange({n}) > 1, {t}, np.arange({n}))", "np.sign(np.arange({n}) - {t}) * {t}",
                          "np.minimum(np.arange({n}), {t}) + np.arange({n})"]).format(n=n, t=t)
        s.lines.append(f"{indent}def {g}({t}):")
        s.lines.append(f"{indent}    return {body}")
        argument = self.int_expr(s) if self.pick([True, True, False]) else self.scalar_expr(s, 1)
        s.lines.append(f"{indent}{name} = np.copy({g}({argument}))")
        self._write_float(s, indent, name, n)
        self._use_int_array(s, indent, name, n)

    def _int_join_written(self, s, indent, depth):
        """An int that a loop or branch may make a float, made an array without
        float(...) (numpy's dtype is the path's), written with a float."""
        number, name, n = self.name("s"), self.name("i"), self.pick([2, 3, 4])
        s.lines.append(f"{indent}{number} = {self.int_expr(s)}")
        if self.chance():
            s.lines.append(f"{indent}for {self.name('i')} in range({self.trip(s)}):")
        else:
            s.lines.append(f"{indent}if {self.condition(s)}:")
        s.lines.append(f"{indent}    {number} = {number} {self.pick(['+', '*'])} {self.scalar_expr(s, 1)}")
        s.lines.append(f"{indent}{name} = " + self.pick([f"np.full({n}, {number})",
                                                          "np.array([{}])".format(", ".join([number] * n))]))
        self._write_float(s, indent, name, n)
        self._use_int_array(s, indent, name, n)

    def _use_int_array(self, s, indent, name, n):
        scalar = self.name("s")
        s.lines.append(f"{indent}{scalar} = np.sum({name} * {self.array_expr(s, (n,), 1).text})")
        s.scalars.append(scalar)

    def bool_expr(self, s: Scope, masks: list, depth: int = 2) -> tuple[str, bool]:
        """A bool, and whether it is surely one (not an int): numpy's (an element
        of a mask, a comparison of an element or a reduction, `np.bool_(...)`) or Python's (a
        literal, `not`, a comparison of a Python float), through the operators
        numpy's and Python's bools give different results for (`+` is `or` for
        numpy's, a count for Python's), none that numpy raises on."""
        if depth <= 0 or (depth < 2 and self.chance()):  # an operator at the top
            mask, n = self.pick(masks)
            return self.pick([
                lambda: f"{mask}[{self.index(s, n)}]",
                lambda: f"{mask}[{self.index(s, n)}]",
                lambda: f"{mask}[{self.index(s, n)}]",
                lambda: f"({mask}[{self.index(s, n)}] and {mask}[{self.index(s, n)}])",
                lambda: f"(not {mask}[{self.index(s, n)}])",
                lambda: f"({self.scalar_expr(s, 1)} > {self.pick(CONSTANTS)})",
                lambda: f"(np.sum({self.array_expr(s, (n,), 0).text}) > 0.0)",
                lambda: self.pick(["True", "False", "(1.0 > 0.5)"]),
                lambda: f"np.bool_({self.scalar_expr(s, 1)} > {self.pick(CONSTANTS)})",
                lambda: f"np.bool_({self.pick(['True', 'False', self.scalar_expr(s, 1)])})",
            ])(), True
        (a, a_bool), (b, b_bool) = self.bool_expr(s, masks, depth - 1), self.bool_expr(s, masks, depth - 1)
        ops = [("({0} + {1})", False)] * 3 + [("({0} * {1})", False), ("abs({0})", a_bool), ("max({0}, {1})", a_bool and b_bool),
               ("min({0}, {1})", a_bool and b_bool), ("({0} + 1)", False), ("(2 * {0})", False),
               (f"({{0}} if {self.condition(s)} else {{1}})", a_bool and b_bool)]
        if a_bool and b_bool:
            ops += [("({0} | {1})", True), ("({0} & {1})", True)]
        op, surely = self.pick(ops)
        return op.format(a, b), surely

    def _numpy_bools(self, s, indent, depth):
        """numpy's bool scalars: added, multiplied, joined, carried by a loop;
        then used as a number. Refused where irad cannot tell numpy's from
        Python's (MAY_REFUSE), else numpy's value."""
        masks = []
        for _ in range(self.pick([1, 2])):
            mask, n = self.name("m"), self.pick([2, 3, 4])
            s.lines.append(f"{indent}{mask} = {self.array_expr(s, (n,), 1).text} > {self.pick(['-0.5', '0.0', '0.25'])}")
            masks.append((mask, n))
        b = self.name("b")
        text, surely = self.bool_expr(s, masks)
        s.lines.append(f"{indent}{b} = {text}  {MAY_REFUSE}")
        if self.chance():
            more, more_bool = self.bool_expr(s, masks, 1)
            ops = ["{0} + {1}", "{0} * {1}"] + (["{0} | {1}"] if surely and more_bool else [])
            s.lines.append(f"{indent}for {self.name('i')} in range({self.trip(s)}):")
            s.lines.append(f"{indent}    {b} = {self.pick(ops).format(b, more)}  {MAY_REFUSE}")
        scalar = self.name("s")
        s.lines.append(f"{indent}{scalar} = {self.scalar_expr(s, 1)} * {b}  {MAY_REFUSE}")
        s.scalars.append(scalar)

    def _while(self, s, indent, depth):
        counter = self.name("j")
        s.lines.append(f"{indent}{counter} = 0")
        s.lines.append(f"{indent}while {counter} < {self.pick(['3', '2', self.pick(s.ints)])}:")
        s.lines.append(f"{indent}    {counter} += 1")
        self.loop_body(s, indent + "    ", depth, [counter])

    def _while_data(self, s, indent, depth):
        """A data-dependent condition, bounded by a counter."""
        counter = self.name("j")
        s.lines.append(f"{indent}{counter} = 0")
        bound = f"{counter} < {self.pick(['4', '3', self.pick(s.ints) + ' + 2'])}"
        cond = self.condition(s)
        s.lines.append(f"{indent}while {self.pick([f'{bound} and ({cond})', f'({cond}) and {bound}'])}:")
        s.lines.append(f"{indent}    {counter} += 1")
        self.loop_body(s, indent + "    ", depth, [counter])

    # ---- functions ----
    def function(self, name: str, params: dict, returns, helpers: list, recursive: Helper | None = None,
                 mode: Mode | None = None) -> str:
        """A function of `params`; `mode` (for the entry f) says how it takes them
        (flat or as trees) and whether it returns aux values."""
        s = Scope(
            scalars=[p for p, t in params.items() if t == "float"],
            ints=[p for p, t in params.items() if t == "int"],
            arrays={p: t for p, t in params.items() if is_shape(t)},
            info={p: self.fresh_info(writable=False) for p, t in params.items() if is_shape(t)},
            helpers=list(helpers),
            returns=returns,
            aux=mode is not None and mode.aux,
        )
        indent = "    "
        signature = ", ".join(params)
        if mode is not None and mode.entry == "tree":
            signature = "p, m, k"
            s.lines += [indent + line for line in self.pick(TREE_PROLOGUES)]
        if recursive is not None:
            s.fixed_ints.add("d")  # rebinding it could recurse forever
            s.lines.append(f"{indent}if d <= 0:")
            s.lines.append(f"{indent}    return {self.result(s)}")
        if name == "f":
            self.block(s, indent, 2, (1, 5))
        elif recursive is None:
            self.block(s, indent, 1, (1, 3))
        else:
            self.block(s, indent, 1, (0, 2))
            self._recursive_call(s, indent, recursive)
            self.block(s, indent, 1, (0, 2))
        s.lines.append(f"{indent}return {self.with_aux(s, self.final(s))}")
        return f"def {name}({signature}):\n" + "\n".join(s.lines) + "\n"

    def _recursive_call(self, s: Scope, indent: str, helper: Helper) -> None:
        call = self.call(s, helper, depth_arg="d - 1")
        if helper.returns == "float":
            name = self.name("s")
            s.lines.append(f"{indent}{name} = {call}")
            s.scalars.append(name)
        elif is_shape(helper.returns):
            name = self.name("a")
            s.lines.append(f"{indent}{name} = {call}")
            self.bind(s, name, helper.returns, Arr(name, "opaque"))
        else:
            scalar, array = self.name("s"), self.name("a")
            s.lines.append(f"{indent}{scalar}, {array} = {call}")
            s.scalars.append(scalar)
            self.bind(s, array, helper.returns[1], Arr(array, "opaque"))

    def final(self, s: Scope) -> str:
        """The function's result, reading (for a float) every name it made."""
        if s.returns == "float":
            return " + ".join(s.scalars + [f"np.sum({a})" for a in sorted(s.arrays)])
        scalar = " + ".join(s.scalars)
        shape = s.returns if is_shape(s.returns) else s.returns[1]
        array = self.array_expr(s, shape, 1).text
        return f"{array} * ({scalar})" if is_shape(s.returns) else self.pair(s.returns, scalar, array)


@st.composite
def modes(draw) -> Mode:
    """How f is called and checked: mostly a float from flat arguments, by
    value_and_grad (the simplest first, so failures shrink towards it)."""
    results = draw(st.sampled_from(["float", "float", "shape", "tuple", "dict"]))
    if results != "float":
        results = draw(st.sampled_from(SHAPES)) if results == "shape" else (results, draw(st.sampled_from(SHAPES)))
    entry = draw(st.sampled_from(["flat", "flat", "tree"]))
    aux = draw(st.sampled_from([False, False, True]))
    apis = ["value_and_grad", "grad", "vjp"] if results == "float" else ["vjp", "jacrev", "jacfwd"]
    return Mode(results, entry, aux, draw(st.sampled_from(apis)))


# Helpers taking values known while lowering (an axis, a count, a length): the
# frontend specialises each call on them (docs/python-subset.md).
STATIC_HELPERS = """\
def _sum_axis(a, axis):
    return np.sum(a, axis=axis)


def _head(v, n):
    return v[:n] * 1.0


def _ramp(t, n):
    out = np.zeros(n)
    for i in range(n):
        out[i] = t * (i + 1.0)
    return out


def _power_sum(t, deg):
    return sum([math.tanh(t) ** p for p in range(deg)])
"""


# Helpers valid only where their guard holds, each checking it (an assert, a
# raise), some with their own branches, loops and a nested call: the calls
# `_guarded_call` makes behind a branch or in a loop that keeps them valid.
GUARDED_HELPERS = """\
def _checked_log(t):
    assert t > 0.0, "t must be positive"
    return math.log(t)


def _checked_div(t, n):
    if n <= 0:
        raise ValueError("n must be positive")
    return t * (7 // n)


def _checked_item(v, n):
    assert n >= 0 and n < len(v), "n out of range"
    return v[n] * 1.0


def _checked_tail(v, n):
    s = 0.0
    for j in range(n, len(v)):
        s = s + _checked_item(v, j) * j
    return s


def _checked_root(t):
    if t > 1.0:
        r = math.sqrt(t - 1.0)
    else:
        r = 0.5 * t
    return r + _checked_log(t)
"""


# Helpers whose result may be the array they are given (a view of it, an item of
# a tuple holding it) or a new one, for `_alias_block` (call_aliases.py).
ALIAS_HELPERS = """\
def _same(v):
    return v


def _first(v):
    return (v, v * 2.0)[0]


def _either(v):
    if v[0] > 0.0:
        return v
    return v * 1.0


def _looped(v):
    out = v
    for i in range(2):
        out = out
    return out


def _stored(v):
    d = {'a': v}
    return d['a']


def _through(v):
    return _same(v)


def _pair(v):
    return v, v[1:]
"""
# the calls `_alias_block` makes on its array of shape (4,), by the result's shape
ALIAS_CALLS = {
    (4,): ["_same({})", "_first({})", "_either({})", "_looped({})", "_stored({})", "_through({})",
           "_pair({})[0]", "np.copy({})", "({} * 2.0)", "_same({})[::-1]", "np.asarray({})"],
    (3,): ["_pair({})[1]", "_same({})[1:]", "_through({}[:3])", "_first({}[1:])"],
    (2,): ["_same({})[::2]", "_either({}.reshape(2, 2)[1])", "_looped({}[2:])"],
}


@st.composite
def programs(draw, with_modes: bool = False, int_arrays: bool = False, lists: bool = False,
             static: bool = False, aliases: bool = False, guards: bool = False) -> str:
    """The source of a module defining helpers and `f(x, w, u, A, B, k)` (or, in
    other modes, `f(p, m, k)`; see Mode); `int_arrays`: int-array statements
    drawn often (a third of all); `lists`: lists grown in loops among them;
    `static`: calls to STATIC_HELPERS with values known while lowering;
    `aliases`: results of ALIAS_HELPERS kept and their argument written;
    `guards`: ops valid only behind their guard (Generator._guarded)."""
    mode = draw(modes()) if with_modes else Mode()
    gen = Generator(draw, int_arrays, lists, static, aliases, guards)
    helpers, texts = [], []
    for index in range(draw(st.integers(0, 2))):
        shape = gen.pick(SHAPES)
        returns = gen.pick(["float", shape, ("tuple", shape)])
        recursive = draw(st.booleans())
        params = {"q": "float", "v": shape, "d" if recursive else "m": "int"}
        helper = Helper(f"_h{index}", tuple(params.items()), returns, recursive)
        texts.append(gen.function(helper.name, params, returns, helpers, recursive=helper if recursive else None))
        helpers.append(helper)
    texts.append(gen.function("f", PARAMETERS, mode.results, helpers, mode=mode))
    imports = "import functools\nimport math\nfrom typing import NamedTuple\n\nimport numpy as np\n\n\n"
    mats = "class Mats(NamedTuple):\n    A: np.ndarray\n    B: np.ndarray\n\n\n"
    statics = STATIC_HELPERS + "\n\n" if static else ""
    statics += ALIAS_HELPERS + "\n\n" if aliases else ""
    statics += GUARDED_HELPERS + "\n\n" if guards else ""
    return mode.header() + imports + mats + statics + "\n\n".join(texts)


VALUES = st.integers(-150, 150).map(lambda v: v / 100)


@st.composite
def arguments(draw) -> tuple:
    """Arguments for f: the arrays all float64, all float32, or mixed; the
    numbers Python's or numpy's scalars (np.float64, np.int64), which irad
    compiles apart (pytrees.Arguments)."""
    mode = draw(st.sampled_from(["float64", "float32", "mixed"]))
    args = []
    for name, t in PARAMETERS.items():
        if t == "float":
            args.append(draw(VALUES))
        elif t == "int":
            args.append(draw(st.integers(0, 3)))
        else:
            dtype = mode if mode != "mixed" else draw(st.sampled_from(["float64", "float32"]))
            size = int(np.prod(t))
            values = draw(st.lists(VALUES, min_size=size, max_size=size))
            args.append(np.array(values, dtype=dtype).reshape(t))
    if draw(st.booleans()):  # the numbers as numpy's scalars: their comparisons' bools add as `or`
        args = [np.float64(a) if t == "float" else np.int64(a) if t == "int" else a
                for a, t in zip(args, PARAMETERS.values())]
    return tuple(args)
