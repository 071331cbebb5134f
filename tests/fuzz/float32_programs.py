"""Random float32 programs over arrays of 10^6 elements, for the long sums
of issue 33: each program is a sum or mean (over everything, over rows, over
columns) of an elementwise expression of two float32 arrays, with
reductions inside it too (a mean subtracted, a column sum dividing).

`check` runs the value and gradient on a backend and compares them with the
same program in float64 on the float64 copies of the inputs. The value must
be as close as numpy's own float32 run of the program (pairwise sums) within
a factor of 16, or within 16 float32 roundings of the sum of the terms'
magnitudes (`magnitude`, the program with |terms|), or within the random
rounding of its intermediate values (16 roundings of `size`, the program on
their sizes, where a difference that cancels keeps its operands' size, over
the square root of the number of terms); each gradient element
within 64 roundings of the gradient's largest element (or of a term's share
of that magnitude, where the gradient cancels to nothing). One float32 sum of
10^6 terms added in order is off by 60 to 2000 roundings, so a backend that
adds a long reduction in order fails here, in the value or the gradient (a
broadcast's adjoint is a long sum of the cotangent).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

ROWS, COLS = 1000, 1000
EPS32 = float(np.finfo(np.float32).eps)

UNARY = {
    "tanh": "np.tanh({})",
    "sin": "np.sin({})",
    "square": "({}) ** 2",
    "exp": "np.exp(0.5 * {})",
    "softplus": "np.log1p(np.exp({}))",
}
BINARY = ("+", "-", "*")
OUTER = {
    "sum": "np.sum({})",
    "mean": "np.mean({})",
    "row sums": "np.sum(np.sum({}, axis=1) ** 2) / {rows}",
    "column means": "np.sum(np.mean({}, axis=0) ** 2)",
}
INNER = {  # a reduction inside the expression, broadcast back: (the form, its magnitude's)
    "centred": ("({0} - np.mean({0}))", "({1} + np.mean({1}))"),
    "row centred": ("({0} - np.mean({0}, axis=1, keepdims=True))", "({1} + np.mean({1}, axis=1, keepdims=True))"),
    "column scaled": ("({0} / np.sum(np.abs({0}), axis=0) * {rows})", "({1} / np.sum(np.abs({0}), axis=0) * {rows})"),
}


@st.composite
def expressions(draw, depth: int = 0) -> tuple[str, str]:
    """An expression, and one for the size of its intermediate values (each
    element's, in float64): sums and differences add their operands' sizes,
    so a difference that cancels still has the size its rounding errors have."""
    choice = draw(st.integers(0, 9 if depth < 3 else 1))
    if choice <= 1:
        leaf = draw(st.sampled_from(["x", "y"]))
        return leaf, f"np.abs({leaf})"
    if choice <= 4:
        form = draw(st.sampled_from(list(UNARY.values())))
        inner, size = draw(expressions(depth + 1))
        return form.format(inner), f"(np.abs({form.format(inner)}) + {size})"
    if choice <= 7:
        op = draw(st.sampled_from(BINARY))
        (left, left_size), (right, right_size) = draw(expressions(depth + 1)), draw(expressions(depth + 1))
        return f"({left} {op} {right})", f"({left_size} {'*' if op == '*' else '+'} {right_size})"
    form, size_form = draw(st.sampled_from(list(INNER.values())))
    inner, size = draw(expressions(depth + 1))
    return form.format(inner, rows=ROWS), size_form.format(inner, size, rows=ROWS)


@st.composite
def programs(draw) -> str:
    """A module defining `f(x, y)`, `magnitude(x, y)` (f's outer reduction of
    |terms|) and `size(x, y)` (of the size of its intermediate values,
    `expressions`)."""
    body, size = draw(expressions())
    outer = draw(st.sampled_from(list(OUTER.values())))
    return (f"import numpy as np\n\n\ndef f(x, y):\n    return {outer.format(body, rows=ROWS)}\n\n\n"
            f"def magnitude(x, y):\n    return {outer.format(f'np.abs({body})', rows=ROWS)}\n\n\n"
            f"def size(x, y):\n    return {outer.format(size, rows=ROWS)}\n")


def arguments(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Two float32 arrays of ROWS x COLS, in [0.5, 1.5) (x) and [-1, 1) (y)."""
    rng = np.random.default_rng(seed)
    x = (rng.random((ROWS, COLS)) + 0.5).astype(np.float32)
    y = (2 * rng.random((ROWS, COLS)) - 1).astype(np.float32)
    return x, y


def check(module, x: np.ndarray, y: np.ndarray, backend: str) -> None:
    """The value and gradient of module.f on `backend` (float32) against f in
    float64 (module doc)."""
    import irad

    f = module.f
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    with np.errstate(all="ignore"):
        exact, numpy32, size = f(x64, y64), f(x, y), module.magnitude(x64, y64)
        intermediates = module.size(x64, y64)
    if not all(np.isfinite(v) and abs(v) < 1e30 for v in (exact, numpy32, size, intermediates)):
        return  # outside what the generator means to test
    value, (gx, gy) = irad.value_and_grad(f, argnums=(0, 1), backend=backend)(x, y)
    assert gx.dtype == np.float32 and gy.dtype == np.float32
    error, numpy_error = abs(float(value) - exact), abs(float(numpy32) - exact)
    # the elementwise ops round each intermediate value once or so, at random:
    # in a sum of n terms those errors grow like sqrt(n), not n
    elementwise = 16 * EPS32 * intermediates / np.sqrt(x.size)
    assert error <= max(16 * numpy_error, 16 * EPS32 * size, elementwise), \
        f"value {float(value)!r}, float64 {exact!r}: error {error:.3g}, numpy float32's {numpy_error:.3g}"
    exact_gx, exact_gy = irad.grad(f, argnums=(0, 1), backend="python")(x64, y64)
    for name, got, want in (("x", gx, exact_gx), ("y", gy, exact_gy)):
        worst = float(np.max(np.abs(got.astype(np.float64) - want)))
        # the scale of a gradient element: its largest, or what each term's share of
        # the sum is (a gradient that cancels to zero is float32 noise of that size)
        scale = max(float(np.max(np.abs(want))), size / want.size, intermediates / want.size)
        assert worst <= 64 * EPS32 * scale, f"gradient of {name}: error {worst:.3g}, scale {scale:.3g}"
