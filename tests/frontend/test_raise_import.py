"""`raise E(...)` is a run-time check raising an exception that is both an E
and a RuntimeCheckError; checks in branches that change no variable are kept;
`import` inside a function binds names as globals of the module are. Under
vmap a check in a branch or a masked loop holds only for the elements that
take it, as in a Python loop over the batch."""

import numpy as np
import pytest

import irad
from irad.backends.native.compile import unavailable_reason
from irad.base.errors import RuntimeCheckError, UnsupportedError

NATIVE_MISSING = unavailable_reason()
BACKENDS = ["python", pytest.param("native", marks=[pytest.mark.native, pytest.mark.skipif(
    NATIVE_MISSING is not None, reason=str(NATIVE_MISSING))])]


class BadRank(ValueError):
    pass


def validated(x, k):
    if np.sum(x) < 0:
        raise ValueError(f"a negative sum of {x.shape[0]} values")
    if k > 3:
        raise BadRank("k too large")
    if k == 2:
        raise NotImplementedError
    return np.sum(x ** 3)


def helper_check(v, k):
    assert k < 3, "k out of range"
    return v * 2.0


def unused_results(x, k):
    if x[0] > 0:
        assert k < 3, "k out of range in a branch"   # the branch changes no variable
    if x[1] > 0:
        y = helper_check(x[1], k)                      # called for its check
    if x[2] > 0:
        z = x[k]                                       # an index read, never used
    return np.sum(x ** 2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_raise_is_a_check_with_the_exception_class(backend):
    g = irad.grad(validated, backend=backend)
    x = np.array([0.5, 1.0, 2.0])
    assert np.allclose(g(x, 0), 3 * x ** 2)
    with pytest.raises(ValueError, match=r"test_raise_import.py:\d+:\d+: ValueError: a negative sum of 3 values") as err:
        g(-x, 0)
    assert isinstance(err.value, RuntimeCheckError)
    with pytest.raises(BadRank, match="k too large") as err:
        g(x, 5)
    assert isinstance(err.value, RuntimeCheckError)
    with pytest.raises(NotImplementedError):
        g(x, 2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_checks_in_branches_that_change_nothing(backend):
    g = irad.grad(unused_results, backend=backend)
    x = np.array([1.0, 1.0, 1.0])
    assert np.allclose(g(x, 1), 2 * x)
    with pytest.raises(RuntimeCheckError, match="k out of range in a branch"):
        g(x, 5)
    with pytest.raises(RuntimeCheckError, match="k out of range"):
        g(np.array([-1.0, 1.0, -1.0]), 5)
    with pytest.raises(RuntimeCheckError, match="index out of bounds"):
        g(np.array([-1.0, -1.0, 1.0]), 5)
    assert np.allclose(g(-x, 5), -2 * x)   # no branch taken: nothing raises, as in Python


def raise_class_only(x):
    if x > 1.0:
        raise OverflowError
    return x * x


def raise_non_exception(x):
    if x > 1.0:
        raise 3
    return x


def raise_with_keyword(x):
    if x > 1.0:
        raise ValueError(msg="no")
    return x


def test_raise_forms():
    assert irad.grad(raise_class_only)(0.5) == 1.0
    with pytest.raises(OverflowError):
        irad.grad(raise_class_only)(2.0)
    with pytest.raises(UnsupportedError, match="raise 3"):
        irad.grad(raise_non_exception)(0.5)
    with pytest.raises(UnsupportedError, match="keyword arguments of a raised exception"):
        irad.grad(raise_with_keyword)(0.5)


def local_imports(x):
    import scipy.special as sp
    from scipy.special import expit
    import numpy.linalg
    from math import pi
    return sp.logsumexp(x) + np.sum(expit(x)) + numpy.linalg.norm(x) * pi


def test_imports_inside_a_function():
    from scipy.special import expit, logsumexp
    x = np.array([0.3, -1.2, 2.0])
    value, g = irad.value_and_grad(local_imports)(x)
    assert np.isclose(value, logsumexp(x) + np.sum(expit(x)) + np.linalg.norm(x) * np.pi)
    numeric = [(local_imports(x + e) - local_imports(x - e)) / 2e-6 for e in np.eye(3) * 1e-6]
    assert np.allclose(g, numeric, rtol=1e-6)


def missing_import(x):
    import irad_no_such_module
    return x


def test_a_failed_import_names_the_module():
    with pytest.raises(UnsupportedError, match="import of 'irad_no_such_module' failed"):
        irad.grad(missing_import)(1.0)


# ---- vmap: a check holds for the elements that take its path ----------------------------
def first_nonnegative(x):
    if x[0] < 0:
        raise ValueError("negative first entry")
    return np.sum(x ** 2)


def checked_arm(x):
    s = 0.0
    if x[0] < 0:
        assert x[1] > 5, "second too small"
        s = 1.0
    return np.sum(x ** 2) + s


def prefix_sum(x, n):
    s = 0.0
    for j in range(n):
        assert x[j] > 0, "nonpositive inside the element's range"
        s += x[j]
    return s


def until_large(x):
    i = 0
    s = 0.0
    while s < 2.0:
        assert x[i] > 0, "nonpositive before the sum is large"
        s += x[i]
        i += 1
    return s


@pytest.mark.parametrize("backend", BACKENDS)
def test_vmap_checks_follow_each_element(backend):
    X = np.array([[1.0, 2.0, -1.0], [3.0, 4.0, 1.0]])
    loop = lambda f, *args: np.array([f(*a) for a in zip(*args)])
    assert np.allclose(irad.vmap(first_nonnegative, backend=backend)(X), loop(first_nonnegative, X))
    assert np.allclose(irad.vmap(checked_arm, backend=backend)(X), loop(checked_arm, X))
    assert np.allclose(irad.vmap(irad.grad(checked_arm), backend=backend)(X), 2 * X)
    n = np.array([2, 3])
    assert np.allclose(irad.vmap(prefix_sum, backend=backend)(X, n), loop(prefix_sum, X, n))
    Y = np.array([[1.0, 1.5, -1.0], [0.5, 0.5, 1.5]])   # the first stops after 2 steps, before its -1
    assert np.allclose(irad.vmap(until_large, backend=backend)(Y), loop(until_large, Y))
    with pytest.raises(ValueError, match="negative first entry"):   # where an element takes the branch
        irad.vmap(first_nonnegative, backend=backend)(-X)
    with pytest.raises(RuntimeCheckError, match="inside the element's range"):
        irad.vmap(prefix_sum, backend=backend)(X, np.array([3, 3]))


# ---- a helper every path of which raises, for these static arguments --------------------
def activation(x, kind):
    if kind == "relu":
        return np.maximum(x, 0.0)
    if kind == "tanh":
        return np.tanh(x)
    raise ValueError(f"unknown activation {kind!r}")


def layer_loss(x, kind):
    h = activation(x, kind)
    return np.sum(h ** 2)


def guarded_layer_loss(x, kind):
    h = activation(x, kind) if x[0] > 0 else x
    return np.sum(h ** 2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_helper_that_always_raises_ends_its_callers_path(backend):
    x = np.array([0.5, -1.0])
    g = irad.grad(layer_loss, static_argnames="kind", backend=backend)
    assert np.allclose(g(x, "tanh"), 2 * np.tanh(x) / np.cosh(x) ** 2)
    with pytest.raises(ValueError, match="unknown activation 'gelu'"):
        g(x, "gelu")


def test_a_helper_that_always_raises_in_a_conditional_expression_is_refused():
    with pytest.raises(UnsupportedError, match="activation raises on every path, and this expression calls it only on some"):
        irad.grad(guarded_layer_loss, static_argnames="kind")(np.array([0.5, -1.0]), "gelu")


# ---- f-string messages: Python's formatting of known values, source text for run-time ones -----
def formatted_messages(x, name, p, width):
    n = x.shape[0]
    if np.sum(x) > 100.0:
        raise ValueError(f"{name!r} {name!s} {name!a} {p:.3f} {p!r:>12} {n:04d} {n:>{width}} {x.shape} "
                         f"{p:{width}.{n}e} {name:*^{width + 4}}")
    assert np.sum(x) < 50.0, f"{name!r}: {n:+d} values, p={p:.2%}"
    return np.sum(x)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name, p, width", [("wé", 0.5, 6), ("b", -1234.5678, 3), ("", 1e-7, 1)])
@pytest.mark.parametrize("fill", [200.0, 20.0])
def test_known_parts_of_a_message_are_formatted_as_python_formats_them(name, p, width, fill, backend):
    x = np.full(3, fill)
    with pytest.raises(Exception) as python:
        formatted_messages(x, name, p, width)
    g = irad.grad(formatted_messages, static_argnames=("name", "p", "width"), backend=backend)
    with pytest.raises(type(python.value)) as compiled:
        g(x, name, p, width)
    assert isinstance(compiled.value, RuntimeCheckError)
    prefix = "assertion failed" if isinstance(python.value, AssertionError) else type(python.value).__name__
    message = str(python.value).splitlines()[0]  # pytest explains a failed assert on the lines after
    assert str(compiled.value).endswith(f"{prefix}: {message}")


def runtime_parts(x):
    s = np.sum(x)
    if s > 1.0:
        raise ValueError(f"sum {s:.3f} of {x!r}, {s!s:>{x.shape[0]}} [{x.shape[0]:03d}]")
    return s


def test_run_time_parts_of_a_message_keep_their_source_text():
    with pytest.raises(ValueError, match=r"ValueError: sum \{s:\.3f\} of \{x!r\}, \{s!s:>3\} \[003\]$"):
        irad.grad(runtime_parts)(np.ones(3))
