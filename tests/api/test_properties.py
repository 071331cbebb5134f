"""Property tests: random scalar programs, written to a module on disk (irad
lowers from source), differentiated by irad and checked against finite
differences of the same program run as plain Python.

A program is a list of assignments `tK = <op>(operands)` over the float
arguments x0.., an int argument k and earlier temporaries, using smooth
domain-safe ops (log(1 + a*a), sqrt(1 + a*a), a / (1 + b*b), ...), calls to
generated helper functions (some returning tuples, some called by keyword),
irad.numerics helpers, min/max and conditional expressions. Kinks are
allowed: an argument is only compared where the one-sided finite differences
agree, i.e. where the program is differentiable.
"""

from __future__ import annotations

import importlib.util
import itertools
import math
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, assume, event, given, note, settings
from hypothesis import strategies as st

import irad

# derandomize: the same examples on every run, so a failure is reproducible.
# No shrinking: it can take a minute on a failure; the failing program (at
# most a dozen lines) is printed in full by `note` instead.
SETTINGS = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    derandomize=True,
    database=None,
    phases=(Phase.explicit, Phase.generate),
)

# ---------------------------------------------------------------------------
# Program generation
# ---------------------------------------------------------------------------

# op templates: (arity, format string); operands are names or literals
UNARY = [
    "math.sin({0})",
    "math.cos({0})",
    "math.tanh({0})",
    "math.atan({0})",
    "math.erf({0})",
    "math.exp(math.tanh({0}))",
    "math.expm1(math.sin({0}))",
    "math.log(1.0 + {0} * {0})",
    "math.log1p({0} * {0})",
    "math.log2(2.0 + {0} * {0})",
    "math.sqrt(1.0 + {0} * {0})",
    "math.sinh(math.sin({0}))",
    "math.cosh(math.cos({0}))",
    "math.asin(0.5 * math.tanh({0}))",
    "{0} ** 2",
    "{0} ** 3",
    "(1.0 + {0} * {0}) ** -2",
    "(2.0 + {0} * {0}) ** 0.5",
    "2.0 ** math.sin({0})",
    "-{0}",
    "numerics.sigmoid({0})",
    "numerics.softplus({0})",
    "abs({0})",
    "math.hypot({0}, 0.75)",
]
BINARY = [
    "{0} + {1}",
    "{0} - {1}",
    "{0} * {1}",
    "{0} * math.tanh({1})",
    "{0} / (1.0 + {1} * {1})",
    "math.atan2({0}, 1.5 + {1} * {1})",
    "(1.0 + {0} * {0}) ** math.tanh({1})",
    "numerics.logaddexp({0}, {1})",
    "max({0}, {1})",
    "min({0}, {1})",
    "math.hypot({0}, {1} + 2.0)",
]
TERNARY = [
    "({0} if {1} > {2} else {1} * {2})",
    "({0} * {1} if {1} < {2} else math.sin({0}))",
    "({0} if {1} > {2} else {2}) if {0} > 0.0 else {1}",
    "max({0}, {1}, {2})",
]


@dataclass
class Program:
    source: str
    n_float: int
    helpers: list[str] = field(default_factory=list)


@st.composite
def operand(draw, names: list[str]) -> str:
    if draw(st.integers(0, 9)) == 0:
        literals = ["0.5", "1.5", "-0.75", "2"] + (["k"] if "k" in names else [])
        return draw(st.sampled_from(literals))
    return draw(st.sampled_from(names))


@st.composite
def body(draw, names: list[str], helpers: list[tuple[str, int]], n_statements: int,
         prefix: str) -> tuple[list[str], list[str]]:
    """Statements over `names`; returns (lines, every name defined)."""
    names = list(names)
    lines: list[str] = []
    counter = itertools.count()
    for _ in range(n_statements):
        kind = draw(st.sampled_from(["unary", "binary", "binary", "ternary", "call"]))
        if kind == "call" and not helpers:
            kind = "binary"
        target = f"{prefix}{next(counter)}"
        if kind == "unary":
            template = draw(st.sampled_from(UNARY))
            lines.append(f"{target} = {template.format(draw(operand(names)))}")
        elif kind == "binary":
            template = draw(st.sampled_from(BINARY))
            a, b = draw(operand(names)), draw(operand(names))
            lines.append(f"{target} = {template.format(a, b)}")
        elif kind == "ternary":
            template = draw(st.sampled_from(TERNARY))
            a, b, c = (draw(operand(names)) for _ in range(3))
            lines.append(f"{target} = {template.format(a, b, c)}")
        else:
            helper, n_out = draw(st.sampled_from(helpers))
            a, b = draw(operand(names)), draw(operand(names))
            style = draw(st.sampled_from(["positional", "keyword", "default", "in_conditional"]))
            call = {
                "positional": f"{helper}({a}, {b})",
                "keyword": f"{helper}(b={b}, a={a})",
                "default": f"{helper}({a})",
                "in_conditional": f"{helper}({a}, {b})",
            }[style]
            if n_out == 2 and style == "in_conditional":
                lines.append(f"{target} = {call}[1] if {a} > {b} else {a} * 0.5")
            elif n_out == 2:
                second = f"{target}b"
                lines.append(f"{target}, {second} = {call}")
                names.append(second)
            elif style == "in_conditional":
                lines.append(f"{target} = {call} if {a} > {b} else math.cos({b})")
            else:
                lines.append(f"{target} = {call}")
        names.append(target)
    return lines, names


@st.composite
def programs(draw) -> Program:
    n_float = draw(st.integers(1, 3))
    params = [f"x{i}" for i in range(n_float)]
    helpers: list[tuple[str, int]] = []
    helper_sources = []
    for h in range(draw(st.integers(0, 2))):
        name = f"h{h}"
        lines, names = draw(body(["a", "b"], list(helpers), draw(st.integers(1, 3)), "u"))
        n_out = draw(st.integers(1, 2))
        last = names[-1]
        ret = f"{last}, a * {names[-2]}" if n_out == 2 else last
        default = draw(st.sampled_from(["0.25", "-1.5", "3"]))
        src = [f"def {name}(a, b={default}):", *(f"    {l}" for l in lines), f"    return {ret}"]
        helper_sources.append("\n".join(src))
        helpers.append((name, n_out))
    lines, names = draw(body(params + ["k"], helpers, draw(st.integers(1, 6)), "t"))
    # return a combination of a few values, so most of the program is live
    temps = [n for n in names if n.startswith("t")]
    picked = draw(st.lists(st.sampled_from(temps), min_size=1, max_size=3, unique=True))
    ret = " + ".join(f"{c} * {v}" for c, v in zip(("1.0", "0.5", "-0.25"), picked))
    main = [f"def f({', '.join(params)}, k):", *(f"    {l}" for l in lines), f"    return {ret}"]
    header = "import math\n\nfrom irad import numerics\n"
    source = "\n\n\n".join([header, *helper_sources, "\n".join(main)]) + "\n"
    return Program(source, n_float, [h for h, _ in helpers])


# ---------------------------------------------------------------------------
# Loading and reference derivatives
# ---------------------------------------------------------------------------

_DIR = Path(tempfile.mkdtemp(prefix="irad_properties_"))
_COUNTER = itertools.count()


def load(program: Program):
    name = f"irad_prop_{next(_COUNTER)}"
    path = _DIR / f"{name}.py"
    path.write_text(program.source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _shifted(f, args, i, dx):
    a = list(args)
    a[i] = args[i] + dx
    return f(*a)


def reference_derivatives(f, args, i) -> tuple[float, ...] | None:
    """Finite-difference estimates of d f / d args[i], or None where f is not
    differentiable (the one-sided derivatives disagree: a kink or a jump).

    Two estimates: the 5-point central stencil with h ~ 1e-3 (O(h^4), very
    accurate where f is smooth), and the 2-point central one with h ~ 1e-6
    (O(h^2) even where only the first derivative is continuous, e.g. at the
    switch point of `cos(x) if x > 0 else 1.0`, where the wide stencil is
    off by O(h)). A correct gradient is close to at least one of them."""
    x = args[i]
    h = 1e-3 * max(0.1, abs(x))
    fs = {k: _shifted(f, args, i, k * h) for k in (-2, -1, 0, 1, 2)}
    scale = max(1.0, *(abs(v) for v in fs.values()))
    forward = (-3 * fs[0] + 4 * fs[1] - fs[2]) / (2 * h)
    backward = (3 * fs[0] - 4 * fs[-1] + fs[-2]) / (2 * h)
    central = (-fs[2] + 8 * fs[1] - 8 * fs[-1] + fs[-2]) / (12 * h)
    # one-sided 3-point stencils are O(h^2) accurate
    if abs(forward - backward) > 1e-4 * max(1.0, abs(central)) + 1e-9 * scale / h:
        return None
    small = 1e-6 * max(1.0, abs(x))
    fine = (_shifted(f, args, i, small) - _shifted(f, args, i, -small)) / (2 * small)
    return central, fine


def close(actual: float, references: tuple[float, ...], scale: float) -> bool:
    central, fine = references
    return math.isclose(actual, central, rel_tol=1e-6, abs_tol=1e-8 * scale) or math.isclose(
        actual, fine, rel_tol=1e-6, abs_tol=1e-7 * scale
    )


float_args = st.floats(-2.0, 2.0, allow_nan=False, allow_infinity=False, allow_subnormal=False)


def draw_point(data, n: int) -> list[float]:
    """n floats in about [-2, 2], nudged off the values hypothesis favours (0, 1,
    the literals of the programs, each other), where a branch condition can be
    exactly on its boundary: there AD follows the branch taken at that single
    point, e.g. `x if x*x > 0 else 0.0` has derivative 0 at 0 although the
    function is the identity, which no finite difference can confirm."""
    xs = data.draw(st.lists(float_args, min_size=n, max_size=n))
    return [x + (i + 1) * 1e-4 * math.pi for i, x in enumerate(xs)]


# ---------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------


@settings(SETTINGS, max_examples=40)
@given(program=programs(), data=st.data())
def test_grad_matches_finite_differences(program, data):
    note(program.source)
    module = load(program)
    f = module.f
    xs = draw_point(data, program.n_float)
    k = data.draw(st.integers(-3, 3))
    args = (*xs, k)
    expected_value = f(*args)
    assume(math.isfinite(expected_value))
    wrt = tuple(range(program.n_float))
    value, grads = irad.value_and_grad(f, argnums=wrt)(*args)
    scale = max(1.0, abs(expected_value))
    assert type(value) is float and type(grads) is tuple and len(grads) == len(wrt)
    assert math.isclose(value, expected_value, rel_tol=1e-10, abs_tol=1e-12 * scale), (
        value,
        expected_value,
    )
    for i, g in zip(wrt, grads):
        assert type(g) is float
        reference = reference_derivatives(f, args, i)
        if reference is None:
            note(f"argument {i}: not differentiable at {args}, skipped")
            event("argument skipped: not differentiable there")
            continue
        event("argument compared")
        assert close(g, reference, scale), f"d/dx{i} at {args}: irad {g!r}, fd (h=1e-3, h=1e-6) {reference!r}"


@settings(SETTINGS, max_examples=12)
@given(program=programs(), data=st.data())
def test_vjp_agrees_with_grad(program, data):
    note(program.source)
    module = load(program)
    f = module.f
    xs = draw_point(data, program.n_float)
    k = data.draw(st.integers(-3, 3))
    args = (*xs, k)
    assume(math.isfinite(f(*args)))
    ct = data.draw(st.floats(-3.0, 3.0, allow_nan=False, allow_subnormal=False))
    out, pullback = irad.vjp(f, *args)
    assert math.isclose(out, f(*args), rel_tol=1e-10, abs_tol=1e-12)
    cts = pullback(ct)
    assert len(cts) == len(args) and cts[-1] is None
    grads = irad.grad(f, argnums=tuple(range(program.n_float)))(*args)
    scale = max(1.0, abs(out))
    for c, g in zip(cts, grads):
        assert type(c) is float
        assert math.isclose(c, ct * g, rel_tol=1e-9, abs_tol=1e-12 * scale), (c, ct * g)


@settings(SETTINGS, max_examples=25)
@given(program=programs(), data=st.data())
def test_jvp_matches_finite_differences(program, data):
    """Forward mode along a random direction: the directional derivative."""
    note(program.source)
    f = load(program).f
    xs = draw_point(data, program.n_float)
    k = data.draw(st.integers(-3, 3))
    args = (*xs, k)
    expected_value = f(*args)
    assume(math.isfinite(expected_value))
    direction = [data.draw(st.floats(-2.0, 2.0, allow_nan=False)) for _ in xs]

    def along(t, k):  # f on the line through xs along `direction`
        return f(*(x + t * d for x, d in zip(xs, direction)), k)

    reference = reference_derivatives(along, (0.0, k), 0)
    assume(reference is not None)  # differentiable along the line
    value, tangent = irad.jvp(f, args, (*direction, None))
    scale = max(1.0, abs(expected_value))
    assert math.isclose(value, expected_value, rel_tol=1e-10, abs_tol=1e-12 * scale)
    assert close(tangent, reference, scale * max(1.0, sum(map(abs, direction)))), (tangent, reference)


@settings(SETTINGS, max_examples=10)
@given(program=programs(), data=st.data())
def test_hessian_is_the_jacobian_of_the_gradient(program, data):
    """Forward over reverse against reverse over reverse, and symmetric where smooth."""
    note(program.source)
    f = load(program).f
    xs = draw_point(data, program.n_float)
    args = (*xs, data.draw(st.integers(-3, 3)))
    assume(math.isfinite(f(*args)))
    wrt = tuple(range(program.n_float))
    hessian = irad.hessian(f, argnums=wrt)(*args)
    for i in wrt:
        row = irad.jacrev(irad.grad(f, argnums=i), argnums=wrt)(*args)
        for j in wrt:
            a, b = hessian[i][j], row[j]
            assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9) or (
                math.isnan(a) and math.isnan(b)
            ), (i, j, a, b)


# The generator itself: programs run as plain Python, and irad lowers them.
@settings(SETTINGS, max_examples=8)
@given(program=programs())
def test_generated_programs_lower(program):
    note(program.source)
    module = load(program)
    module.f(*([0.3] * program.n_float), 2)
    for h in program.helpers:
        assert callable(getattr(module, h))
    irad.lower(module.f, *([0.3] * program.n_float), 2).verify()


@pytest.fixture(scope="module", autouse=True)
def _cleanup_modules():
    yield
    for name in [n for n in sys.modules if n.startswith("irad_prop_")]:
        del sys.modules[name]
