"""Any callable a user hands to a transformation, and the argument boundary.

functools.partial objects, bound methods and callable objects at top level;
two lambdas on one line; late-binding lambdas in comprehensions; irad.jvp
inside a differentiated program; has_aux on jvp; objects with __array__
(JAX arrays) as arguments; a wrong call named at the user's line. Values are
checked against numpy, gradients against central differences in float64 or
JAX in float64 (tests/reference.py), following JAX's semantics where JAX has
them.
"""

from __future__ import annotations

import dataclasses
import functools
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irad
from irad.base.errors import IradError, UnsupportedError
from tests.backends.test_backend_native import needs_native
from tests.reference import central_difference

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

BACKENDS = ["python", pytest.param("native", marks=[pytest.mark.native, needs_native])]
X = np.array([0.3, -1.2, 0.7])
HERE = __file__


def loss(x, y=1.5, k=2.0, act=np.tanh):
    return k * np.sum(act(x) * y) + y**2


# ---- functools.partial --------------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_partial_with_keywords(backend):
    p = functools.partial(loss, k=0.5, act=np.sin)
    g = irad.grad(p, argnums=(0, 1), backend=backend)(X, 2.0)
    plain = lambda x, y: loss(x, y, 0.5, np.sin)  # noqa: E731
    np.testing.assert_allclose(g[0], central_difference(plain, (X, 2.0), 0), rtol=1e-7)
    np.testing.assert_allclose(g[1], central_difference(plain, (X, 2.0), 1), rtol=1e-7)


def test_partial_argnums_count_the_remaining_parameters():
    p = functools.partial(loss, X)  # x bound: argnums 0 is y, as in JAX
    value, g = irad.value_and_grad(p)(2.0)
    expected = jax.value_and_grad(functools.partial(lambda x, y: 2.0 * jnp.sum(jnp.tanh(x) * y) + y**2, X))(2.0)
    np.testing.assert_allclose([value, g], [float(expected[0]), float(expected[1])], rtol=1e-12)


def test_partial_reads_its_arrays_at_each_call():
    data = X.copy()
    g = irad.grad(functools.partial(loss, data), argnums=0)  # d/dy
    first = g(2.0)
    data[0] = 4.0  # written in place: read at the next call
    assert first == pytest.approx(central_difference(lambda y: loss(X, y), (2.0,), 0), rel=1e-7)
    assert g(2.0) == pytest.approx(central_difference(lambda y: loss(data, y), (2.0,), 0), rel=1e-7)
    assert "%partial.args.0" in str(irad.lower(functools.partial(loss, data), 2.0))


def three(a, b, c):
    return np.sin(a) * b**2 + a * c**3


@settings(deadline=None, derandomize=True, database=None, max_examples=8,
          suppress_health_check=[HealthCheck.too_slow])
@given(bound=st.integers(0, 2), values=st.lists(st.floats(-2.0, 2.0), min_size=3, max_size=3),
       keyword=st.booleans())
def test_partial_gradients_are_the_remaining_arguments_gradients(bound, values, keyword):
    """grad(partial(f, *first)) of the rest is f's gradient's rest, as in JAX,
    whether the bound ones are given by position or (the last) by keyword."""
    full = jax.grad(lambda a, b, c: jnp.sin(a) * b**2 + a * c**3, argnums=(0, 1, 2))(*values)
    if keyword and bound:  # the last parameter bound by keyword instead: the first ones stay
        p = functools.partial(three, c=values[2])
        kept = [0, 1]
    else:
        p = functools.partial(three, *values[:bound])
        kept = list(range(bound, 3))
    rest = [values[i] for i in kept]
    got = irad.grad(p, argnums=tuple(range(len(kept))))(*rest)
    np.testing.assert_allclose(got, [float(full[i]) for i in kept], rtol=1e-12, atol=1e-14)


def test_partial_under_every_transformation():
    p = functools.partial(loss, k=0.5, act=np.sin)
    f = lambda x, y: 0.5 * jnp.sum(jnp.sin(x) * y) + y**2  # noqa: E731
    primal, tangent = irad.jvp(p, (X, 2.0), (np.ones(3), 0.0))
    jp, jt = jax.jvp(f, (X, 2.0), (np.ones(3), 0.0))
    np.testing.assert_allclose([primal, tangent], [jp, jt], rtol=1e-12)
    out, pullback = irad.vjp(p, X, 2.0)
    np.testing.assert_allclose(pullback(1.0)[0], jax.grad(f)(X, 2.0), rtol=1e-12)
    np.testing.assert_allclose(irad.hessian(p)(X, 2.0), jax.hessian(f)(X, 2.0), rtol=1e-12)
    np.testing.assert_allclose(irad.jacrev(p, argnums=1)(X, 2.0), jax.jacrev(f, argnums=1)(X, 2.0), rtol=1e-12)


def test_a_partial_keyword_given_again_at_the_call_replaces_it():
    p = functools.partial(loss, k=0.5)  # as Python's partial does (tests/api/test_keyword_only_arguments.py)
    np.testing.assert_allclose(irad.grad(p)(X, 2.0, k=1.0), 2.0 / np.cosh(X) ** 2, rtol=1e-14)


# ---- bound methods and callable objects ----------------------------------------------
class Model:
    def __init__(self):
        self.w = np.array([1.0, 3.0, -2.0])
        self.scale = 2.0

    def loss(self, x):
        return self.scale * np.sum(self.w * np.sin(x))

    def __call__(self, x):
        return np.sum(self.w * x**3)


@dataclasses.dataclass
class Quadratic:  # unhashable (eq=True): compiled code is keyed by identity
    a: np.ndarray

    def __call__(self, x, y):
        return np.sum(self.a * x**2) * y


@pytest.mark.parametrize("backend", BACKENDS)
def test_bound_method(backend):
    model = Model()
    g = irad.grad(model.loss, backend=backend)
    np.testing.assert_allclose(g(X), central_difference(model.loss, (X,), 0), rtol=1e-7)


def test_bound_method_reads_its_arrays_at_each_call():
    model = Model()
    g = irad.grad(model.loss)
    g(X)
    model.w[0] = 10.0  # written in place
    np.testing.assert_allclose(g(X), 2.0 * model.w * np.cos(X), rtol=1e-12)
    model.w = np.array([5.0, 5.0, 5.0])  # rebound
    np.testing.assert_allclose(g(X), 2.0 * model.w * np.cos(X), rtol=1e-12)
    assert "%self.w" in str(irad.lower(model.loss, X))


@pytest.mark.parametrize("backend", BACKENDS)
def test_callable_objects(backend):
    model = Model()
    np.testing.assert_allclose(irad.grad(model, backend=backend)(X), central_difference(model, (X,), 0), rtol=1e-7)
    q = Quadratic(np.array([1.0, 2.0, 3.0]))
    value, (gx, gy) = irad.value_and_grad(q, argnums=(0, 1), backend=backend)(X, 2.0)
    assert value == pytest.approx(q(X, 2.0), rel=1e-12)
    np.testing.assert_allclose(gx, central_difference(q, (X, 2.0), 0), rtol=1e-7)
    assert gy == pytest.approx(central_difference(q, (X, 2.0), 1), rel=1e-7)


def test_partial_of_a_bound_method():
    model = Model()
    p = functools.partial(Model.loss, model)
    np.testing.assert_allclose(irad.grad(p)(X), central_difference(model.loss, (X,), 0), rtol=1e-7)


# ---- lambdas ------------------------------------------------------------------------------
def test_two_lambdas_on_one_line():
    g1, g2 = irad.grad(lambda x: x**2), irad.grad(lambda x: x**3)
    assert (g1(2.0), g2(2.0)) == (4.0, 12.0)
    h1, h2 = irad.grad(lambda x: np.sin(x)), irad.grad(lambda x: np.sin(x) * 2.0)
    assert (h1(0.5), h2(0.5)) == pytest.approx((np.cos(0.5), 2 * np.cos(0.5)), rel=1e-14)


def test_lambda_beside_a_lambda_inside_it():
    outer = lambda x: (lambda x: x * 5.0)(x) * x  # noqa: E731
    assert irad.grad(outer)(3.0) == pytest.approx(30.0)


def test_comprehension_lambdas_at_top_level():
    bound = [lambda x, i=i: x * i for i in range(3)]
    late = [lambda x: x * i for i in range(3)]  # noqa: B023 (Python's late binding: i is 2)
    assert [irad.grad(f)(1.0) for f in bound] == [0.0, 1.0, 2.0]
    assert [irad.grad(f)(1.0) for f in late] == [2.0, 2.0, 2.0]


def late_binding(x):
    fs = [lambda z: z * i for i in range(3)]  # noqa: B023
    return fs[0](x) + fs[1](x) * x


def late_binding_loop(x):
    total = 0.0
    for f in [lambda z, i=i: z * i for i in range(3)]:
        total = total + f(x) * x
    return total


def late_binding_run_twice(x):
    kept = ()
    for n in (1, 3):  # unrolled: the comprehension runs twice, each run with its own i
        kept = kept + ([lambda z: z * i for i in range(n)][0],)  # noqa: B023
    return kept[0](x) * x + kept[1](x) * 10.0  # i is 0 in the first, 2 in the second


@pytest.mark.parametrize("backend", BACKENDS)
def test_comprehension_lambdas_in_a_program(backend):
    for fn in (late_binding, late_binding_loop, late_binding_run_twice):
        assert irad.grad(fn, backend=backend)(1.5) == pytest.approx(central_difference(fn, (1.5,), 0), rel=1e-8)
        assert irad.value_and_grad(fn)(1.5)[0] == pytest.approx(fn(1.5), rel=1e-14)


# ---- irad.jvp inside a program, has_aux -----------------------------------------------
def scaled_sin(y, w):
    return np.sin(y) * w


def uses_jvp(x):
    out, tangent = irad.jvp(scaled_sin, (x, 2.0), (1.0, 0.0))
    return out * tangent


def uses_jvp_of_a_closure(x):
    a = 3.0 * x
    out, tangent = irad.jvp(lambda y: np.sum(np.tanh(y * a)), (x,), (np.ones(3),))
    return tangent + out


def uses_jvp_with_aux(x):
    out, tangent, aux = irad.jvp(lambda y: (y**3, {"n": 2}), (x,), (1,), has_aux=True)
    return tangent * aux["n"] + out


@pytest.mark.parametrize("backend", BACKENDS)
def test_jvp_inside_a_program(backend):
    def reference(x):
        out, tangent = jax.jvp(lambda y, w: jnp.sin(y) * w, (x, 2.0), (1.0, 0.0))
        return out * tangent

    assert irad.grad(uses_jvp, backend=backend)(0.7) == pytest.approx(float(jax.grad(reference)(0.7)), rel=1e-12)

    def closure_reference(x):
        a = 3.0 * x
        out, tangent = jax.jvp(lambda y: jnp.sum(jnp.tanh(y * a)), (x,), (jnp.ones(3),))
        return tangent + out

    np.testing.assert_allclose(irad.grad(uses_jvp_of_a_closure, backend=backend)(X), jax.grad(closure_reference)(X),
                               rtol=1e-12)


def test_jvp_with_aux_inside_a_program():
    assert irad.value_and_grad(uses_jvp_with_aux)(2.0) == pytest.approx((2 * 12.0 + 8.0, 2 * 12.0 + 12.0))


def uses_vjp(x):
    return irad.vjp(np, x)[0]  # E:vjp


def bad_tangent(x):
    return irad.jvp(np.sin, (x,), (np.ones(2),))[1]  # E:tangent


def test_vjp_and_bad_tangents_in_a_program_are_refused_at_their_line():
    for fn, tag, message in ((uses_vjp, "vjp", "irad.vjp inside a program differentiates a function, not the module"),
                             (bad_tangent, "tangent", r"the tangent of primal 0 of irad.jvp is float64 array "
                                                      r"of shape \(2,\).*its primal is float")):
        with pytest.raises(UnsupportedError, match=message) as info:
            irad.grad(fn)(1.0)
        assert f"{HERE}:{_line(tag)}:" in str(info.value)


def aux_function(x):
    return np.sin(x) * 2.0, {"n": 3, "c": np.cos(x)}


def test_jvp_has_aux_follows_jax():
    primal, tangent, aux = irad.jvp(aux_function, (X,), (np.ones(3),), has_aux=True)
    jp, jt, jaux = jax.jvp(lambda x: (jnp.sin(x) * 2.0, {"n": 3, "c": jnp.cos(x)}), (X,), (np.ones(3),), has_aux=True)
    np.testing.assert_allclose(primal, jp, rtol=1e-14)
    np.testing.assert_allclose(tangent, jt, rtol=1e-14)
    assert aux["n"] == 3 and set(aux) == set(jaux)
    np.testing.assert_allclose(aux["c"], jaux["c"], rtol=1e-14)
    with pytest.raises(IradError, match="must return a pair"):
        irad.jvp(np.sin, (X,), (np.ones(3),), has_aux=True)


def test_vjp_and_jacobians_has_aux_follow_jax():
    out, pullback, aux = irad.vjp(aux_function, X, has_aux=True)
    np.testing.assert_allclose(pullback(np.ones(3))[0], 2.0 * np.cos(X), rtol=1e-14)
    assert aux["n"] == 3
    for irad_jac, jax_jac in ((irad.jacfwd, jax.jacfwd), (irad.jacrev, jax.jacrev)):
        jac, aux = irad_jac(aux_function, has_aux=True)(X)
        expected, _ = jax_jac(lambda x: (jnp.sin(x) * 2.0, {"n": 3}), has_aux=True)(X)
        np.testing.assert_allclose(jac, expected, rtol=1e-14)
        assert aux["n"] == 3


# ---- objects with __array__ -----------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_jax_arrays_are_taken_as_numpy_takes_them(backend):
    f = lambda w, p: np.sum(np.sin(w) * p["a"])  # noqa: E731
    w, params = jnp.array([1.0, 2.0]), {"a": jnp.array([3.0, -1.0])}
    gw, gp = irad.grad(f, argnums=(0, 1), backend=backend)(w, params)
    jw, jp = jax.grad(lambda w, p: jnp.sum(jnp.sin(w) * p["a"]), argnums=(0, 1))(w, params)
    assert type(gw) is np.ndarray and type(gp["a"]) is np.ndarray
    np.testing.assert_allclose(gw, jw, rtol=1e-14)
    np.testing.assert_allclose(gp["a"], jp["a"], rtol=1e-14)


def test_jax_arrays_as_tangents_and_cotangents():
    w = jnp.array([1.0, 2.0])
    _, pullback = irad.vjp(np.sin, w)
    np.testing.assert_allclose(pullback(jnp.ones(2))[0], np.cos([1.0, 2.0]), rtol=1e-14)
    assert irad.vjp(lambda s: s**2, 3.0)[1](jnp.array(1.0))[0] == 6.0
    np.testing.assert_allclose(irad.jvp(np.sin, (w,), (jnp.ones(2),))[1], np.cos([1.0, 2.0]), rtol=1e-14)


class Refusing:
    def __array__(self, dtype=None, copy=None):
        raise RuntimeError("Can't call numpy() on Tensor that requires grad")


class Foreign:
    pass


def test_objects_irad_cannot_take_are_refused_by_name():
    f = lambda w: np.sum(w**2)  # noqa: E731
    with pytest.raises(UnsupportedError, match=r"w is a Refusing, which np.asarray refuses \(Can't call numpy"):
        irad.grad(f)(Refusing())
    with pytest.raises(UnsupportedError, match=r"w is a Foreign \(.*\n.*\n  hint: irad takes .*such as JAX arrays"):
        irad.grad(f)(Foreign())
    with pytest.raises(UnsupportedError, match=r"w is a _StringList \(.*\), which np.asarray makes a numpy array of dtype <U1"):
        irad.grad(f)(_StringList(["a"]))


class _StringList(list):  # a list subclass is no pytree node; its __array__ gives strings
    def __array__(self, dtype=None, copy=None):
        return np.array(list(self))


# ---- a wrong call is named at the user's line ------------------------------------------
def two(x, y):
    return x * y


@pytest.mark.parametrize("call, message", [
    (lambda g: g(1.0, z=3.0), r"two\(\) got an unexpected keyword argument 'z'"),
    (lambda g: g(1.0), r"two\(\) missing a required argument: 'y'"),
    (lambda g: g(1.0, 2.0, 3.0), r"two\(\) takes 2 positional arguments but 3 were given"),
    (lambda g: g(1.0, 2.0, x=3.0), r"two\(\) multiple values for argument 'x'"),
])
def test_a_wrong_call_names_what_is_wrong_at_the_call(call, message):
    with pytest.raises(UnsupportedError) as info:
        call(irad.grad(two))
    text = str(info.value)
    assert re.match(rf"{re.escape(HERE)}:\d+: {message}", text), text
    line = int(text.split(":")[1])
    assert "(lambda g: g(1.0" in open(HERE).read().splitlines()[line - 1]  # the call, not the `def`
    assert "(tests.api.test_callables.two is defined at" in text and "hint: call it as two(x, y)" in text


@pytest.mark.parametrize("make", [irad.value_and_grad, irad.jacfwd, irad.jacrev, irad.hessian,
                                  lambda f: functools.partial(irad.lower, f)])
def test_every_transformation_names_a_wrong_keyword(make):
    with pytest.raises(UnsupportedError, match=rf"^{re.escape(HERE)}:\d+: two\(\) got an unexpected keyword argument 'z'"):
        make(two)(1.0, z=3.0)


def keyword_only(x, *, k):
    return k * np.sin(x)


def test_a_required_keyword_only_argument_and_its_rewrite():
    with pytest.raises(UnsupportedError, match=r"keyword_only\(\) missing a required argument: 'k'\n.*\n"
                                               r"  hint: pass it by keyword, keyword_only\(\.\.\., k=\.\.\.\), or .*"
                                               r"functools.partial\(keyword_only, k=\.\.\.\)"):
        irad.grad(keyword_only)(0.5)
    assert irad.grad(keyword_only)(0.5, k=3.0) == pytest.approx(3.0 * np.cos(0.5), rel=1e-14)
    assert irad.grad(functools.partial(keyword_only, k=3.0))(0.5) == pytest.approx(3.0 * np.cos(0.5), rel=1e-14)


def test_a_wrong_call_of_a_method_or_partial():
    model = Model()
    with pytest.raises(UnsupportedError, match=r"Model.loss\(\) takes 1 positional argument but 2 were given"):
        irad.grad(model.loss)(X, X)
    with pytest.raises(UnsupportedError, match=r"got an unexpected keyword argument 'q'"):
        irad.grad(functools.partial(loss, k=1.0))(X, q=1)
    primal, tangent = irad.jvp(functools.partial(loss, k=1.0), (X,), (np.ones(3),))  # y takes its default
    assert tangent == pytest.approx(1.5 * np.sum(1 - np.tanh(X) ** 2), rel=1e-12)
    _, pullback = irad.vjp(loss, X)  # one cotangent per primal given, as in JAX
    (only,) = pullback(1.0)
    np.testing.assert_allclose(only, 2.0 * 1.5 * (1 - np.tanh(X) ** 2), rtol=1e-12)


W_JAX = jnp.array([1.0, 2.0])


def reads_a_jax_global(x):
    return np.sum(W_JAX * x)  # E:jax_global


def test_a_global_jax_array_is_refused_with_the_rewrite():
    with pytest.raises(UnsupportedError, match=r"a ArrayImpl object cannot be used as a number or an array.*\n"
                                               r"  hint: make it a numpy array where it is defined"):
        irad.grad(reads_a_jax_global)(np.ones(2))


def _line(tag: str) -> int:
    lines = open(HERE).read().splitlines()
    return next(i for i, text in enumerate(lines, 1) if text.endswith(f"# E:{tag}"))
