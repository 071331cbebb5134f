"""Random well-typed programs in irad's documented subset, built by hypothesis
strategies (so a failure shrinks to a small program).

Every program has the signature `f(x, w, k)`: x a float, w a float array of
shape (3,) (float64 or float32), k a small int. Its body mixes

* scalar and array arithmetic, math functions and numpy ufuncs, reductions,
  broadcasting of scalars against arrays, basic slices;
* in-place writes (`y[i] = s`, `y += a`) on arrays the program made, names
  that alias one array (`z = y`) and views (`r = y[:]`, `r = y[1:]` read only);
* if/else, `for` over `range` with `break`/`continue`, `while` with a counter;
* calls of helpers, one of them recursive.

Domains are kept safe (log(1 + a*a), exp of a tanh, divisions by 1 + a*a), so
values stay finite. Kinks (abs, max, branch conditions) are allowed; the checks
compare gradients only where one-sided differences agree.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import strategies as st

HELPERS = '''
def _h_scale(a, s):
    return a * s + np.sin(a)


def _h_mix(s, t):
    return s * t + math.sin(s) - 0.5 * t


def _h_rec(s, d):
    if d <= 0:
        return s
    return _h_rec(math.sin(s) + 0.5 * s, d - 1)
'''

SCALAR_UNARY = ["math.sin({})", "math.cos({})", "math.tanh({})", "math.exp(math.tanh({}))",
                "math.log(1.0 + {0} * {0})", "math.sqrt(1.0 + {0} * {0})", "abs({})", "(-{})"]
ARRAY_UNARY = ["np.sin({})", "np.cos({})", "np.tanh({})", "np.exp(np.tanh({}))",
               "np.log(1.0 + {0} * {0})", "np.sqrt(1.0 + {0} * {0})", "np.abs({})", "(-{})"]
REDUCTIONS = ["np.sum({})", "np.mean({})", "np.max({})", "np.min({})", "np.dot({0}, {0})"]
BINARY = ["({0} + {1})", "({0} - {1})", "({0} * {1})", "({0} / (1.0 + {1} * {1}))"]


@dataclass
class Scope:
    scalars: list[str]
    arrays: list[str]
    writable: set[str]  # arrays the program made (and names aliasing them)
    fresh: int = 0  # counter for new names
    lines: list[str] = field(default_factory=list)

    def name(self, prefix: str) -> str:
        self.fresh += 1
        return f"{prefix}{self.fresh}"


@st.composite
def scalar_expr(draw, scope: Scope, depth: int = 2) -> str:
    choice = draw(st.integers(0, 6 if depth > 0 else 1))
    if choice == 0:
        return draw(st.sampled_from(scope.scalars))
    if choice == 1:
        return repr(draw(st.sampled_from([0.5, 1.5, -0.75, 2.0, 0.25])))
    if choice == 2:
        return draw(st.sampled_from(SCALAR_UNARY)).format(draw(scalar_expr(scope, depth - 1)))
    if choice == 3:
        a, b = draw(scalar_expr(scope, depth - 1)), draw(scalar_expr(scope, depth - 1))
        return draw(st.sampled_from(BINARY)).format(a, b)
    if choice == 4:
        return draw(st.sampled_from(REDUCTIONS)).format(draw(array_expr(scope, depth - 1)))
    if choice == 5:
        return f"{draw(st.sampled_from(scope.arrays))}[{draw(st.integers(-3, 2))}]"
    return draw(st.sampled_from([
        "_h_mix({}, {})".format(draw(scalar_expr(scope, depth - 1)), draw(scalar_expr(scope, depth - 1))),
        "_h_rec({}, k)".format(draw(scalar_expr(scope, depth - 1))),
    ]))


@st.composite
def array_expr(draw, scope: Scope, depth: int = 2) -> str:
    choice = draw(st.integers(0, 4 if depth > 0 else 0))
    if choice == 0:
        return draw(st.sampled_from(scope.arrays))
    if choice == 1:
        return draw(st.sampled_from(ARRAY_UNARY)).format(draw(array_expr(scope, depth - 1)))
    if choice == 2:
        a = draw(array_expr(scope, depth - 1))
        b = draw(st.one_of(array_expr(scope, depth - 1), scalar_expr(scope, depth - 1)))
        if draw(st.booleans()):
            a, b = b, a
        return draw(st.sampled_from(BINARY)).format(a, b)
    if choice == 3:
        return "_h_scale({}, {})".format(draw(array_expr(scope, depth - 1)), draw(scalar_expr(scope, depth - 1)))
    return f"{draw(st.sampled_from(scope.arrays))}[0:3]"


@st.composite
def statement(draw, scope: Scope, indent: str, depth: int, in_loop: bool, views: bool) -> None:
    kinds = ["new_scalar", "new_array", "rebind_scalar", "rebind_array", "augment"]
    if scope.writable:
        kinds += ["item_write"]
    if views:
        kinds += ["alias"]
    if depth > 0:
        kinds += ["if", "for", "while"]
    if in_loop:
        kinds += ["jump"]
    kind = draw(st.sampled_from(kinds))
    out = scope.lines
    if kind == "new_scalar":
        name = scope.name("s")
        out.append(f"{indent}{name} = {draw(scalar_expr(scope))}")
        scope.scalars.append(name)
    elif kind == "new_array":
        name = scope.name("a")
        out.append(f"{indent}{name} = np.copy({draw(array_expr(scope))})")
        scope.arrays.append(name)
        scope.writable.add(name)
    elif kind == "rebind_scalar":
        out.append(f"{indent}{draw(st.sampled_from(scope.scalars))} = {draw(scalar_expr(scope))}")
    elif kind == "rebind_array":
        name = draw(st.sampled_from(scope.arrays))
        out.append(f"{indent}{name} = {draw(array_expr(scope))}")
        scope.writable.discard(name)  # a fresh result: writes to it are left out (may be a view)
        for alias in [a for a in scope.writable if a.startswith(f"{name}_")]:
            scope.writable.discard(alias)
    elif kind == "augment":
        if scope.writable and draw(st.booleans()):
            name = draw(st.sampled_from(sorted(scope.writable)))
            op = draw(st.sampled_from(["+=", "-=", "*="]))
            value = draw(st.one_of(array_expr(scope, 1), scalar_expr(scope, 1)))
            out.append(f"{indent}{name} {op} {value}")
        else:
            name = draw(st.sampled_from(scope.scalars))
            out.append(f"{indent}{name} {draw(st.sampled_from(['+=', '-=', '*=']))} {draw(scalar_expr(scope, 1))}")
    elif kind == "item_write":
        name = draw(st.sampled_from(sorted(scope.writable)))
        index = draw(st.sampled_from(["0", "1", "-1", "0:2", "1:"]))
        value = draw(scalar_expr(scope, 1))
        out.append(f"{indent}{name}[{index}] = {value}")
    elif kind == "alias":
        source = draw(st.sampled_from(sorted(scope.writable) or scope.arrays))
        name = scope.name(f"{source}_")
        if draw(st.booleans()):
            out.append(f"{indent}{name} = {source}")
        else:
            out.append(f"{indent}{name} = {source}[:]")
        scope.arrays.append(name)
        if source in scope.writable:
            scope.writable.add(name)
    elif kind == "jump":
        cond = f"{draw(scalar_expr(scope, 1))} > {draw(st.sampled_from([0.0, 0.5, 1.0]))!r}"
        out.append(f"{indent}if {cond}:")
        out.append(f"{indent}    {draw(st.sampled_from(['break', 'continue']))}")
    else:
        _block_statement(draw, scope, indent, depth, kind, views)


def _body(draw, scope: Scope, indent: str, depth: int, in_loop: bool, views: bool) -> None:
    """Statements of a nested block: names made inside do not outlive it."""
    saved = (list(scope.scalars), list(scope.arrays), set(scope.writable))
    for _ in range(draw(st.integers(1, 3))):
        draw(statement(scope, indent, depth - 1, in_loop, views))
    scope.scalars[:], scope.arrays[:] = saved[0], saved[1]
    scope.writable.intersection_update(saved[2])


def _block_statement(draw, scope: Scope, indent: str, depth: int, kind: str, views: bool) -> None:
    out = scope.lines
    inner = indent + "    "
    if kind == "if":
        cond = f"{draw(scalar_expr(scope, 1))} > {draw(st.sampled_from([0.0, 0.5, -0.5]))!r}"
        out.append(f"{indent}if {cond}:")
        _body(draw, scope, inner, depth, False, views)
        out.append(f"{indent}else:")
        _body(draw, scope, inner, depth, False, views)
    elif kind == "for":
        bound = draw(st.sampled_from(["k", "3", "k + 1"]))
        var = scope.name("i")
        out.append(f"{indent}for {var} in range({bound}):")
        _body(draw, scope, inner, depth, True, views)
    else:
        counter = scope.name("j")
        out.append(f"{indent}{counter} = 0")
        out.append(f"{indent}while {counter} < 3:")
        out.append(f"{inner}{counter} += 1")
        _body(draw, scope, inner, depth, True, views)


@st.composite
def programs(draw, views: bool = True) -> str:
    """The source of a module defining the helpers and `f(x, w, k)`."""
    scope = Scope(scalars=["x"], arrays=["w"], writable=set())
    for _ in range(draw(st.integers(1, 6))):
        draw(statement(scope, "    ", 2, False, views))
    result = " + ".join([*scope.scalars, *(f"np.sum({a})" for a in scope.arrays)])
    body = "\n".join(scope.lines)
    return f"import math\n\nimport numpy as np\n{HELPERS}\n\ndef f(x, w, k):\n{body}\n    return {result}\n"
