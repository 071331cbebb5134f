"""Random programs on numpy's integer and bool dtypes, checked against numpy
(issue 33, item 1).

Every program defines `f(x, a, b, m, n, k)`: x a float, a and b int arrays of
one dtype (every numpy integer width, signed and unsigned), m and n bool
arrays, k a small Python int, all of shape (4,). It computes with int and
bool arrays as numpy does (`+ - * // %` and unary `-` wrapping in the dtype's
width, NEP 50's promotion (a Python int takes the array's dtype and must fit
it), `//` and `%` by 0 giving 0, `INT64_MIN // -1` wrapping; comparisons; `+`
of bools is `or`, `*` is `and`; `& | ^ ~`; `np.where`, `np.maximum`,
`np.minimum`, `np.add`, `np.abs`, `np.square`, `np.clip`; `np.sum`,
`np.prod`, `np.max`, `np.min` of int64 conversions; in-place `op=` on
copies, which numpy casts back 'same_kind') and returns
`(x * float(total), ints, mask)`.

`check` runs it both ways. Where numpy computes the program, irad's value
must equal numpy's exactly: the float, the int array, the bool array (dtypes
included), and the gradient in x (float(total)); or irad refuses it by name
(NARROW_REFUSALS: a number of a narrow dtype, a uint's uint64 sum, ...).
Where numpy raises (a Python int out of a dtype's bounds, an in-place result
it does not cast back), irad raises too. uint64 is refused where it enters.
"""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import strategies as st

import irad
from irad.base.errors import IradError, UnsupportedError

DTYPES = ["int64"] * 4 + ["int8", "int16", "int32", "uint8", "uint16", "uint32", "uint64"]
LITERALS = ["0", "1", "3", "-2", "7", "100", "2**62", "-(2**62)", "k"]
INT64_EDGES = [0, 1, -1, 2, -2, 2**62, -(2**62), 2**63 - 1, -(2**63), 12345, -977]


@st.composite
def int_expressions(draw, depth: int = 3) -> str:
    """An int64 array expression of shape (4,)."""
    leaves = ["a", "b", "c", "(m * 3)", "(n + a)"]
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(leaves))
    kind = draw(st.sampled_from(["binary", "binary", "literal", "negate", "where", "function", "reduced"]))
    left = draw(int_expressions(depth - 1))
    if kind == "negate":
        return f"(-{left})"
    if kind == "function":
        fn = draw(st.sampled_from(["np.maximum({}, {})", "np.minimum({}, {})", "np.add({}, {})", "np.abs({})",
                                   "np.square({})", "np.clip({}, -5, {})"]))
        return fn.format(left, draw(int_expressions(depth - 1)))
    if kind == "reduced":  # a reduction of an int array: an int64 number broadcast against an array
        fn = draw(st.sampled_from(["np.sum", "np.prod", "np.max", "np.min"]))
        return f"({left} + {fn}({draw(int_expressions(depth - 1))}.astype(np.int64)))"
    if kind == "where":
        return f"np.where({draw(bool_expressions(depth - 1))}, {left}, {draw(int_expressions(depth - 1))})"
    op = draw(st.sampled_from(["+", "-", "*", "//", "%"]))
    right = draw(st.sampled_from(LITERALS)) if kind == "literal" else draw(int_expressions(depth - 1))
    if draw(st.booleans()) and kind == "literal":
        return f"({right} {op} {left})"
    return f"({left} {op} {right})"


@st.composite
def bool_expressions(draw, depth: int = 2) -> str:
    """A bool array expression of shape (4,)."""
    if depth == 0 or draw(st.integers(0, 2)) == 0:
        return draw(st.sampled_from(["m", "n", "mask"]))
    kind = draw(st.sampled_from(["compare", "logic", "not", "arith"]))
    if kind == "compare":
        op = draw(st.sampled_from(["<", "<=", ">", ">=", "==", "!="]))
        return f"({draw(int_expressions(depth - 1))} {op} {draw(int_expressions(depth - 1))})"
    if kind == "not":
        return f"(~{draw(bool_expressions(depth - 1))})"
    op = draw(st.sampled_from(["&", "|", "^"] if kind == "logic" else ["+", "*"]))  # numpy: + is or, * is and
    return f"({draw(bool_expressions(depth - 1))} {op} {draw(bool_expressions(depth - 1))})"


@st.composite
def int_programs(draw) -> str:
    lines = ["import numpy as np", "", "", "def f(x, a, b, m, n, k):", "    c = a.copy()", "    mask = m.copy()"]
    for _ in range(draw(st.integers(1, 4))):
        if draw(st.booleans()):
            op = draw(st.sampled_from(["+=", "-=", "*=", "//=", "%="]))
            lines.append(f"    c {op} {draw(int_expressions(2))}")
        else:
            op = draw(st.sampled_from(["+=", "*=", "&=", "|=", "^="]))
            lines.append(f"    mask {op} {draw(bool_expressions(2))}")
    lines.append(f"    ints = {draw(int_expressions())}")
    lines.append(f"    total = np.sum(np.where({draw(bool_expressions())}, ints % 100, c % 7).astype(np.int64))")
    lines.append("    return x * float(total), ints, mask")
    return "\n".join(lines) + "\n"


@st.composite
def int_arguments(draw) -> tuple:
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    info = np.iinfo(dtype)
    values = st.one_of(st.sampled_from([v for v in INT64_EDGES if info.min <= v <= info.max]),
                       st.integers(int(info.min), int(info.max)))
    ints = [np.array(draw(st.lists(values, min_size=4, max_size=4)), dtype=dtype) for _ in range(2)]
    masks = [np.array(draw(st.lists(st.booleans(), min_size=4, max_size=4))) for _ in range(2)]
    return (draw(st.sampled_from([1.5, -0.25])), *ints, *masks, draw(st.integers(0, 5)))


# what irad may answer, by name, where numpy computes a narrow dtype's program
NARROW_REFUSALS = ("a number of dtype", "array is uint64 in numpy", "computed in floating point",
                   "Python integer", "does not cast back")


def check(f, args: tuple, backend: str = "python") -> None:
    """irad's value and gradient of `f` are numpy's, or irad refuses by name
    what numpy computes differently, or raises where numpy does."""
    dtype = args[1].dtype
    if dtype == np.uint64:
        try:
            irad.vjp(f, *args, backend=backend)
        except UnsupportedError as error:
            assert "is an array of dtype uint64" in str(error) and ".astype(np.int64)" in str(error), str(error)
            return
        raise AssertionError("a uint64 array was taken")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy warns of // 0 and INT64_MIN // -1
        try:
            expected = f(*args)
        except (OverflowError, TypeError) as numpys:  # a Python int out of bounds, a cast numpy refuses
            try:
                irad.vjp(f, *args, backend=backend)
            except IradError:
                return
            raise AssertionError(f"numpy raises {numpys!r}, irad computed a value") from None
    try:
        (value, ints, mask), pullback = irad.vjp(f, *args, backend=backend)
    except IradError as error:
        assert dtype != np.int64 and any(r in str(error) for r in NARROW_REFUSALS), str(error)
        return
    assert value == expected[0], (value, expected[0])
    for mine, numpys in ((ints, expected[1]), (mask, expected[2])):
        assert mine.dtype == numpys.dtype and np.array_equal(mine, numpys), (mine, numpys)
    assert pullback((1.0, None, None))[0] == expected[0] / args[0]
