"""numpy's aliasing and views: names sharing one array see each other's writes,
in values and in gradients (irad/frontend/views.py). Every program runs as
plain numpy too; gradients are checked against central differences in float64."""

import importlib.util
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irad
from irad.backends.native import compile as native
from tests import view_programs as vp
from tests.reference import check_against_numpy, float_positions as _floats

NATIVE_MISSING = native.unavailable_reason()


def _id(case):
    return case[0].__name__


@pytest.mark.parametrize("case", vp.PROGRAMS, ids=[_id(c) for c in vp.PROGRAMS])
def test_views_match_numpy(case):
    f, make = case
    check_against_numpy(f, make(np.random.default_rng(0)))


@pytest.mark.native
@pytest.mark.skipif(NATIVE_MISSING is not None, reason=NATIVE_MISSING or "")
@pytest.mark.parametrize("case", vp.PROGRAMS, ids=[_id(c) for c in vp.PROGRAMS])
def test_views_match_numpy_natively(case):
    f, make = case
    check_against_numpy(f, make(np.random.default_rng(0)), backend="native")


def test_the_issue_repros_give_numpy_values():
    # the values the issue lists, independent of any helper
    value, grad = irad.value_and_grad(vp.alias_add)(np.array([1.0, 2.0]))
    assert value == 15.0 and list(grad) == [6.0, 12.0]
    assert irad.value_and_grad(vp.row_of_zeros)(np.array([1.0, 2.0]))[0] == 5.0
    assert irad.value_and_grad(vp.row_sees_base_write)(np.array([[1.0, 2.0], [3.0, 4.0]]))[0] == 401.0


def test_float32_augmented_assignment_stays_float32():
    x = np.ones(3, dtype=np.float32)
    value, grad = irad.value_and_grad(vp.float32_aug_stays_float32)(x)
    assert grad.dtype == np.float32
    assert "f64" not in str(irad.grad(vp.float32_alias).lower(x)).split("func.func")[1].split("{")[0]


@pytest.mark.parametrize("f, args, message", vp.REFUSED, ids=[c[0].__name__ for c in vp.REFUSED])
def test_refused_writes_name_the_line_and_the_names(f, args, message):
    with pytest.raises(irad.UnsupportedError, match=message) as info:
        irad.grad(f, _floats(args))(*args)
    assert re.search(r"view_programs\.py:\d+:\d+: ", str(info.value)), str(info.value)


def test_a_join_conflict_is_only_an_error_when_written():
    # sharing that differs between paths is fine while nobody writes
    def read_only(x, c):
        y = x * 1.0
        z = y * 2.0
        if c > 0.0:
            z = y
        return np.sum(z * x)

    check_against_numpy(read_only, (np.array([1.0, 2.0]), 1.0))
    check_against_numpy(read_only, (np.array([1.0, 2.0]), -1.0))


# ---- random programs: view creations and writes on one buffer, against numpy -------------------
_VIEWS = ["Y[{i}]", "Y[:, {j}]", "Y[{i}, 1:]", "Y[::2]", "Y.T", "Y.reshape(-1)", "Y[1:].T", "Y[:, ::2]"]
_WRITES = ["{v} += x[{j}]", "{v} *= 1.5", "{v} -= {v} * 0.5", "{v}[:] = x[{i}] * 2.0",
           "Y[{i}, {j}] = x[{j}] * x[{i}]", "{v} **= 2",
           "if x[{i}] > 0.0:\n        {v} *= x[{j}]\n    else:\n        Y[{j}] += x[{i}]",
           "for k in range(2):\n        {v} += 0.5 * x[{j}]"]


@st.composite
def _program(draw):
    lines = ["    Y = np.outer(x[:3], x[1:]) + 1.0"]
    views = []
    for _ in range(draw(st.integers(1, 5))):
        i, j = draw(st.integers(0, 2)), draw(st.integers(0, 2))
        if not views or draw(st.booleans()):
            name = f"v{len(views)}"
            lines.append(f"    {name} = " + draw(st.sampled_from(_VIEWS)).format(i=i, j=j))
            views.append(name)
        v = draw(st.sampled_from(views))
        move = draw(st.sampled_from(["write"] * 4 + ["alias", "rebind"]))
        if move == "alias":  # another name for the same array
            w = draw(st.sampled_from(views))
            lines.append(f"    {v} = {w}")
        elif move == "rebind":  # a new array: later writes to it are not seen elsewhere
            lines.append(f"    {v} = {v} * 1.0")
        lines.append("    " + draw(st.sampled_from(_WRITES)).format(v=v, i=i, j=j))
    returned = " + ".join(f"np.sum({v} * {v})" for v in views)
    lines.append(f"    return np.sum(Y * Y) + {returned}")
    return "import numpy as np\n\n\ndef program(x):\n" + "\n".join(lines) + "\n"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(source=_program())
def test_random_view_programs_match_numpy(tmp_path_factory, source):
    path = tmp_path_factory.mktemp("views") / "generated.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"generated_{abs(hash(source))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x = np.array([0.3, -0.7, 0.9, 0.4])
    # every view here has 3 or more elements, so x[...] with 0..2 stays in bounds
    check_against_numpy(module.program, (x,))


@pytest.mark.parametrize("f", [vp.transpose_round_trip, vp.alias_through_loop, vp.view_of_view],
                         ids=lambda f: f.__name__)
def test_forward_mode_sees_writes_through_views(f):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(3, 3)) if f is vp.view_of_view else rng.normal(size=3)
    direction = rng.normal(size=x.shape)
    value, tangent = irad.jvp(f, (x,), (direction,))
    eps = 1e-6
    expected = (f(x + eps * direction) - f(x - eps * direction)) / (2 * eps)
    assert value == pytest.approx(f(np.copy(x)), rel=1e-12)
    assert tangent == pytest.approx(expected, rel=1e-6, abs=1e-8)
