"""Shape arithmetic while lowering (folded ints and floats from literals, shapes
and len; slices whose length follows; np.newaxis, `...`, negative steps; a
conditional expression with a known condition) and array methods/attributes,
views included. Values against the programs run as numpy, gradients against
central differences in float64, on both backends."""

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irad
from tests.generated_programs import load
from tests.frontend import shape_programs as sp
from tests.reference import BACKENDS, check_against_numpy, check_refused, lowered_text



@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", sp.PROGRAMS, ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(sp.PROGRAMS)])
def test_shapes_and_methods_match_numpy(case, backend):
    f, make = case
    check_against_numpy(f, make(np.random.default_rng(3)), backend)


def test_a_known_condition_lowers_only_the_arm_taken():
    def pick(x):
        return x[0] if x.ndim == 1 else x[5, 5]  # the other arm would be an error for a vector

    assert irad.grad(pick)(np.array([2.0, 3.0])).tolist() == [1.0, 0.0]
    assert "scf.if" not in lowered_text(pick, np.ones(2))


def test_shape_arithmetic_leaves_no_ops():
    def f(x):
        n, = x.shape
        return np.sum(np.zeros(2 * n + 1)[n:] + 1.0 + len(x) * 0.5)

    text = lowered_text(f, np.ones(3))
    assert "arith.muli" not in text and "arith.addi" not in text
    assert "tensor<4xf64>" in text
    assert irad.grad(f)(np.ones(3)).tolist() == [0.0, 0.0, 0.0]


def test_negative_steps_are_strided_slices():
    text = lowered_text(sp.reverse, np.ones(4))
    assert re.search(r"tensor.extract_slice %x\[3\] \[4\] \[-1\]", text), text


def test_block_slice_length_is_found_through_the_arithmetic():
    text = lowered_text(sp.block_slices, np.ones(9), 1)
    assert "tensor.extract_slice %x[%" in text and "[3] [1]" in text


# ---- refused ------------------------------------------------------------------------------
def zero_step(x):
    return np.sum(x[::0])  # <- refused


def runtime_length(x, n):
    return np.sum(x[1:n])  # <- refused


def runtime_length_from_a_variable(x, i, n):
    return np.sum(x[i:i + n])  # <- refused


def runtime_shape(x, n):
    return np.sum(np.zeros(n + 1))  # <- refused


def item_of_a_vector(x):
    return x.item()  # <- refused


def clip_without_bounds(x):
    return np.sum(x.clip())  # <- refused


def unknown_method(x):
    return x.byteswap()  # <- refused


def two_ellipses(x):
    return np.sum(x[..., ...])  # <- refused


def reversed_runtime_start(x, i):
    return np.sum(x[i::-1])  # <- refused


REFUSED = [
    (zero_step, (np.ones(3),), "a slice step must be a nonzero int known while lowering"),
    (runtime_length, (np.ones(3), 2), "a slice with a run-time start must have a length known while lowering"),
    (runtime_length_from_a_variable, (np.ones(3), 0, 2), "a length known while lowering"),
    (runtime_shape, (np.ones(3), 2), "a shape must be known while lowering"),
    (item_of_a_vector, (np.ones(3),), r"x.item\(\) needs an array of size 1 \(this one has 3\)"),
    (clip_without_bounds, (np.ones(3),), "clip needs a lower or an upper bound"),
    (unknown_method, (np.ones(3),), r"the array attribute or method `.byteswap` is not supported"),
    (two_ellipses, (np.ones((2, 2)),), r"an index can only have a single ellipsis"),
    (reversed_runtime_start, (np.ones(3), 1), "a slice with a run-time bound must give both bounds"),
]


@pytest.mark.parametrize("f, args, message", REFUSED, ids=[c[0].__name__ for c in REFUSED])
def test_refused_shapes_name_the_line(f, args, message):
    check_refused(f, args, message)


# ---- random slices, any step: reads, writes and views against numpy ------------------------------
@st.composite
def _slice(draw):
    bounds = ["" if b is None else str(b) for b in (draw(st.one_of(st.none(), st.integers(-8, 8))) for _ in range(2))]
    step = draw(st.one_of(st.none(), st.sampled_from([-3, -2, -1, 1, 2, 3])))
    return ":".join(bounds) + ("" if step is None else f":{step}")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(read=_slice(), write=_slice(), view=_slice())
def test_random_slices_match_numpy(tmp_path_factory, read, write, view):
    source = (
        "import numpy as np\n\n\n"
        "def program(x):\n"
        "    y = x * 1.0\n"
        f"    v = y[{view}]\n"
        f"    y[{write}] = y[{write}] * 2.0 + x[{write}] ** 2\n"
        "    v *= 1.5\n"
        f"    return np.sum(y * x) + np.sum(v * v) + np.sum(x[{read}] ** 2)\n"
    )
    module = load(source, f"slices_{abs(hash(source))}", tmp_path_factory.mktemp("slices"))
    check_against_numpy(module.program, (np.linspace(-1.0, 1.5, 7),))
