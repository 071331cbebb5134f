"""Programs built of Python's own constructs around run-time values: checks
that raise, and the values Python gives where they do not.

`f(x, k)` (x a float array of 4, k a small int) reads run-time numbers from x
(`p = float(x[0])`, `n = int(np.argmax(x))`, `b = x[1] > 0.5`, numpy's bool)
and runs a random list of blocks (`blocks`), each adding to a float `s`:

* checks: `if c: raise ValueError(f"... {n!r} {p:.3f}")` (f-strings with
  `!r`, `!s` and format specs), a helper every path of which raises called as
  a statement (`if c: fail(n)`), `assert c, f"..."` alone or in a branch that
  changes no variable, a check in a helper the block calls;
* `isinstance(v, bool / int / float / (int, float))` of a `v` that is a
  bool, an int, a float or numpy's bool on different paths (branches, a loop,
  a helper's return, a helper's parameter), then perhaps through arithmetic
  (`v * 2`, `v + 1`, `-v`, `v / 2`, `abs(v)`): irad answers as Python or refuses
  (those lines end in `# may refuse`);
* `import math as m` and `from math import ...` inside the function body;
* lazy `and`/`or` whose right operand would raise if evaluated, in `while`
  conditions (`while i < len(x) and x[i] > c`) and in `if` conditions
  guarding an index read; chained comparisons of run-time values
  (`a < p <= b`, `0 <= n + j < len(x)`).

test_python_fuzz.py runs each against CPython: where CPython raises, irad
raises the same class (also an irad.base.errors.RuntimeCheckError) at the same
line, with the same message for a `raise`; otherwise irad's value is CPython's
and its gradient in x central differences'. The x values and constants keep
every comparison away from its boundary, so differences see one path."""

from __future__ import annotations

from hypothesis import strategies as st

XS = [-1.5, -0.5, 0.25, 0.75, 1.5, 2.5]  # x's entries: comparisons below are at the midpoints
CUTS = ["-1.0", "0.0", "0.5", "1.0", "2.0"]
MAY_REFUSE = "  # may refuse"

HELPERS = '''def fail(v):
    raise ValueError(f"failed at {v!r}")


def checked(x, i):
    if i >= len(x):
        raise IndexError(f"index {i!r} past the end")
    return x[i] * 2.0


def pick(c, a):
    if c > 0.5:
        return True
    if c > 0.0:
        return 3
    return a


def kind_factor(v):
    return 1.5 if isinstance(v, bool) else (2.5 if isinstance(v, int) else 3.5)  # may refuse
'''

_cut = st.sampled_from(CUTS)
_int = st.integers(-1, 4)
# run-time comparisons (x's entries are never at a cut)
_cond = st.one_of(
    st.builds(lambda c, op: f"p {op} {c}", _cut, st.sampled_from(["<", ">", "<=", ">="])),
    st.builds(lambda c: f"x[2] > {c}", _cut),
    st.builds(lambda j, op: f"n {op} {j}", _int, st.sampled_from(["==", "!=", "<", ">="])),
    st.builds(lambda a, b: f"{a} < p <= {b}", _cut, _cut),  # chained
    st.builds(lambda j: f"0 <= n + {j} < len(x)", _int),
    st.just("b"), st.just("not b"), st.just("k > 1"),
    st.builds(lambda c, j: f"p > {c} and n != {j}", _cut, _int),
    st.builds(lambda c, j: f"p > {c} or k == {j}", _cut, _int),
)
_message = st.sampled_from(['f"bad n={n!r}"', 'f"p is {p:.3f}"', 'f"k {k!s} and {n:>3}"', '"plain"',
                            'f"{p!r}, {k}"', 'f"{b}"'])
_exception = st.sampled_from(["ValueError", "RuntimeError", "IndexError"])
_class = st.sampled_from(["bool", "int", "float", "(int, float)"])
_value = st.sampled_from(["True", "False", "3", "0", "1.5", "p", "n", "k", "b", "(p > 0.5)", "k > 1", "2.0 * p"])


def _indent(lines: list[str], by: int = 1) -> list[str]:
    return ["    " * by + line for line in lines]


@st.composite
def _raise(draw):
    c, e, m = draw(_cond), draw(_exception), draw(_message)
    return [f"if {c}:", f"    raise {e}({m})", "s = s + p"]


@st.composite
def _fail_helper(draw):
    return [f"if {draw(_cond)}:", "    fail(n)", "s = s + 0.5 * p"]


@st.composite
def _assert(draw):
    c, m = draw(_cond), draw(_message)
    if draw(st.booleans()):
        return [f"assert {c}, {m}", "s = s * 1.5"]
    return [f"if {draw(_cond)}:", f"    assert {c}, {m}", "s = s - p"]


@st.composite
def _checked_call(draw):
    return [f"s = s + checked(x, n + {draw(_int)})"]


@st.composite
def _isinstance(draw):
    a, b, cls = draw(_value), draw(_value), draw(_class)
    how = draw(st.sampled_from(["if", "loop", "pick", "helper"]))
    if how == "if":
        head = [f"v = {a}", f"if {draw(_cond)}:", f"    v = {b}"]
    elif how == "loop":
        head = [f"v = {a}", "for i in range(n):", f"    v = {b}"]
    elif how == "pick":
        head = [f"v = pick(x[{draw(st.integers(0, 3))}], {a})"]
    else:
        head = [f"v = {a}", f"if {draw(_cond)}:", f"    v = {b}", "s = s + kind_factor(v) * p" + MAY_REFUSE]
        return head
    step = draw(st.sampled_from([[], [], ["v = v * 2"], ["v = v + 1"], ["v = -v"], ["v = v / 2"], ["v = abs(v)"]]))
    return head + step + [f"s = s + (1.0 if isinstance(v, {cls}) else 2.0) * p" + MAY_REFUSE]


@st.composite
def _imports(draw):
    form = draw(st.sampled_from(["import math as m", "from math import tanh, sqrt", "import numpy"]))
    use = {"import math as m": "m.sqrt(1.0 + p * p) + m.tanh(x[3])",
           "from math import tanh, sqrt": "sqrt(1.0 + x[2] * x[2]) * tanh(p)",
           "import numpy": "numpy.sum(numpy.tanh(x))"}[form]
    return [form, f"s = s + {use}"]


@st.composite
def _lazy_while(draw):
    c, j = draw(_cut), draw(st.integers(0, 3))
    op = draw(st.sampled_from(["and", "or"]))
    if op == "and":
        return [f"i = {j}", f"while i < len(x) and x[i] > {c}:", "    s = s + x[i] * p", "    i += 1"]
    return [f"i = {j}", f"while not (i >= len(x) or x[i] <= {c}):", "    s = s + x[i]", "    i = i + 1"]


@st.composite
def _lazy_if(draw):
    j, c = draw(_int), draw(_cut)
    form = draw(st.sampled_from([
        "if n + {j} < len(x) and x[n + {j}] > {c}:",
        "if n + {j} >= len(x) or x[n + {j}] < {c}:",
        "if 0 <= n + {j} < len(x) and x[n + {j}] != {c}:",
    ]))
    head = form.format(j=j, c=c)
    body = "    s = s + x[2] * p" if "or" in head else f"    s = s + x[n + {j}] * p"
    return [head, body, "else:", "    s = s - p"]


@st.composite
def _chained_value(draw):
    a, b = sorted(draw(st.lists(_cut, min_size=2, max_size=2)), key=float)
    return [f"s = s + (x[3] if {a} < p < {b} else p * p)", f"s = s + (1.0 if 0 <= n < {draw(_int)} < 3 else 2.0) * p"]


BLOCKS = [_raise(), _fail_helper(), _assert(), _checked_call(), _isinstance(), _imports(), _lazy_while(),
          _lazy_if(), _chained_value()]
blocks = st.lists(st.one_of(BLOCKS), min_size=1, max_size=5)
arguments = st.tuples(st.lists(st.sampled_from(XS), min_size=4, max_size=4, unique=True), st.integers(0, 3))  # no ties: argmax stays


def program(drawn: list[list[str]]) -> str:
    """The module: the helpers and `f(x, k)` running the blocks in order."""
    body = ["p = float(x[0])", "n = int(np.argmax(x))", "b = x[1] > 0.5", "s = np.sum(x * x)"]
    for block in drawn:
        body += block
    body.append("return s")
    return ("import math\n\nimport numpy as np\n\n\n" + HELPERS + "\n\ndef f(x, k):\n"
            + "\n".join(_indent(body)) + "\n")


def check(source: str, args, directory, backend: str = "python") -> str:
    """Check one program against CPython (see the module doc): "ran", "raised"
    or "refused"."""
    import hashlib
    import re
    import traceback
    from pathlib import Path

    import numpy as np

    import irad
    from irad.base.errors import RuntimeCheckError
    from tests import generated_programs
    from tests.fuzz.checks import refused_where_allowed
    from tests.reference import central_difference

    name = "fuzz_python_" + hashlib.sha1(source.encode()).hexdigest()[:12]
    module = generated_programs.load(source, name, Path(directory))
    x, k = np.array(args[0], dtype=float), int(args[1])
    try:
        expected = module.f(x.copy(), k)
    except Exception as error:  # CPython raises: irad raises the same class at the same line
        line = traceback.extract_tb(error.__traceback__)[-1].lineno
        try:
            irad.value_and_grad(module.f, backend=backend)(x.copy(), k)
        except irad.UnsupportedError as refusal:
            if refused_where_allowed(refusal, source):
                return "refused"
            raise
        except Exception as got:
            assert isinstance(got, type(error)) and isinstance(got, RuntimeCheckError), \
                f"CPython raised {error!r}, irad {got!r}"
            at = re.match(r"\S+:(\d+):\d+: ", str(got))
            assert at and int(at.group(1)) == line, f"CPython raised at line {line}: {error!r}; irad: {got}"
            raised = re.match(r'\s*raise \w+\((f?)"(.*)"\)$', source.splitlines()[line - 1])
            if raised:  # run-time parts of an f-string keep their source text (docs/python-subset.md)
                text = raised.group(2)
                assert str(got).endswith(f"{type(error).__name__}: {text}"), f"CPython: {error}; irad: {got}"
            return "raised"
        raise AssertionError(f"CPython raised {error!r} at line {line}; irad returned a value")
    try:
        value, grad = irad.value_and_grad(module.f, backend=backend)(x.copy(), k)
    except irad.UnsupportedError as refusal:
        if refused_where_allowed(refusal, source):
            return "refused"
        raise
    assert value == pytest_approx(expected), f"CPython {expected!r}, irad {value!r}"
    np.testing.assert_allclose(grad, central_difference(lambda y: module.f(y, k), (x.copy(),), 0),
                               rtol=1e-5, atol=1e-6)
    return "ran"


def pytest_approx(expected):
    import pytest

    return pytest.approx(expected, rel=1e-12, abs=1e-12)


def save_regression(source: str, args, error: BaseException):
    """Keep a failing program as tests/fuzz/regressions/python_<hash>.py (test_regressions.py runs it)."""
    from tests.fuzz.hypothesis_runs import save_regression as save

    return save("python", "Python-constructs", source, (list(args[0]), args[1]), error)
