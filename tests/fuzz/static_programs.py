"""Programs that compute with values known while lowering (ints, bools, None,
strs, tuples, float literals) the way Python does: `and`/`or` give an operand,
not a bool, and stop at the first that decides; `not`, comparisons, `is`,
`in`, conditional expressions, `+` and `*`. A helper takes three such values
(by default, by position or by keyword at the call) and turns the result into
a factor on an array's sum, by its type and value (a float's sign too: 0.0
and -0.0, NaNs of two signs), so that any value Python would not give changes
the program's result. The helper also names values
known only at run time, read from `x` (`p` a truthy float, `q` a zero float,
`m` a false bool, `n` a truthy int), where `and`/`or` choose by selects,
and two run-time reads that raise where Python evaluates them (`x[n + 1]` is
out of bounds, `int(p / q)` divides by zero, where irad converts inf to an int): an operand that Python skips must
not raise in irad either.

`expressions` is a hypothesis strategy of expression sources over `a`, `b`,
`c` and the run-time `p`, `q`, `m`, `n`; `program` wraps one into a module whose `f(x)` calls the helper three
ways. A program whose expression raises in Python is not a case."""

from __future__ import annotations

from hypothesis import strategies as st

LITERALS = ["None", "True", "False", "0", "1", "2", "-3", "0.0", "2.5", "''", "'s'", "'mean'", "()", "(1, 2)"]
PARAMETERS = ["None", "True", "False", "0", "1", "2", "-3", "''", "'s'", "'mean'", "()", "(1, 2)",
              "0.5", "0.0", "-0.0", "float('inf')", "float('nan')", "-float('nan')"]  # floats specialise by their bits
NAMES = ["a", "b", "c", "p", "q", "m", "n"]
RUNTIME = "    p = float(x[0])\n    q = float(x[1]) - 2.0\n    m = p > 1.0\n    n = int(np.argmax(x))\n"

RAISING = ["x[n + 1]", "int(p / q)"]  # where evaluated: IndexError, ZeroDivisionError (irad: int of inf)
# run-time operands that decide `and`/`or` before a raising one (half of them each way)
GUARDS = ["p", "q", "m", "n", "(n < 1)", "(n > 0)", "(p > 1.0)", "(q == 0.0)"]

_leaf = st.sampled_from(NAMES + LITERALS + RAISING)


def _extend(inner):
    return st.one_of(
        st.builds(lambda e: f"(not {e})", inner),
        st.builds(lambda l, op, r: f"({l} {op} {r})", inner, st.sampled_from(["and", "or"]), inner),
        st.builds(lambda l, op, m, r: f"({l} {op} {m} {op} {r})", inner, st.sampled_from(["and", "or"]), inner, inner),
        st.builds(lambda l, op, r: f"({l} {op} {r})", inner, st.sampled_from(["==", "!=", "<", "<=", "in", "not in"]),
                  inner),
        st.builds(lambda l, op: f"({l} {op} None)", inner, st.sampled_from(["is", "is not"])),
        st.builds(lambda b, c, e: f"({b} if {c} else {e})", inner, inner, inner),
        st.builds(lambda l, op, r: f"({l} {op} {r})", inner, st.sampled_from(["+", "*"]), inner),
        _guarded(inner),
    )


def _guarded(inner):
    """`guard and/or operand`: a run-time guard that may decide before an operand that may raise."""
    return st.builds(lambda g, op, r: f"({g} {op} {r})", st.sampled_from(GUARDS), st.sampled_from(["and", "or"]),
                     st.one_of(st.sampled_from(RAISING), inner))


_expressions = st.recursive(_leaf, _extend, max_leaves=6)
expressions = st.one_of(_expressions, _guarded(_expressions))
parameters = st.tuples(*[st.sampled_from(PARAMETERS)] * 3)

USE = '''def use(v):
    if isinstance(v, float):  # the sign of a zero or a NaN changes the result
        sign = 0.25 if math.copysign(1.0, v) < 0 else 0.0
        if v != v:
            return 7.0 + sign
        if abs(v) == math.inf:
            return 5.0 + sign
        return v + sign
    if v is None:
        return 1.5
    if isinstance(v, bool):
        return 3.0 if v else 4.0
    if isinstance(v, str):
        return 10.0 + len(v) + (0.5 if v == "mean" else 0.0)
    if isinstance(v, tuple):
        return 20.0 + len(v)
    return float(v)
'''


def program(expression: str, defaults: tuple, given: tuple) -> str:
    """`f(x)`: the helper at its defaults, with `given` by position, and by keyword."""
    a, b, c = defaults
    ga, gb, gc = given
    return (f"import math\n\nimport numpy as np\n\n\n{USE}\n\n"
            f"def helper(x, a={a}, b={b}, c={c}):\n{RUNTIME}    v = {expression}\n    return np.sum(x) * use(v)\n\n\n"
            f"def f(x):\n    return helper(x) + 2.0 * helper(x, {ga}, {gb}, {gc}) + 4.0 * helper(x, c={gc}, a={gb})\n")
