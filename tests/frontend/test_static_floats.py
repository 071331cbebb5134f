"""Floats known while lowering cross calls, as ints do: a helper is specialised
on the float constants it is passed (`tail(x, 0.75)`), and a float default the
entry's call leaves out is the function's own, known (`alpha=0.9`), as JAX sees
Python floats; so a helper may compute a slice bound or a count from one.
Floats computed from arguments stay run-time values, and are differentiated.
Checked against numpy's values and central differences in float64."""

import math
import re

import numpy as np
import pytest

import irad
from tests.reference import BACKENDS, central_difference, check_against_numpy, lowered_text


def tail_mean(x, alpha):
    """The mean of the largest (1 - alpha) share of x: a slice bound from a float."""
    n_tail = int(math.ceil((1 - alpha) * len(x)))
    return np.sort(x)[-n_tail:].mean()


def literal_to_helper(x):
    return tail_mean(x, 0.75) + 2.0 * tail_mean(x ** 2, 0.5)


def default_left_out(x, alpha=0.7):
    return tail_mean(x, alpha) + np.sum(x[: int(alpha * 10)] ** 2)


def tuple_of_floats(x, quantiles=(0.2, 0.6)):
    return sum(tail_mean(x, q) for q in quantiles)


def steps(x, dt):
    for _ in range(int(round(1.0 / dt))):  # a trip count from a float
        x = x + dt * np.sin(x)
    return x


def integrate(x):
    return np.sum(steps(x, 0.25) ** 2)


X = np.array([0.3, -1.2, 2.5, 0.7, 1.9, -0.4, 1.1, 0.05])

PROGRAMS = {
    "literal_to_helper": (literal_to_helper, (X,)),
    "default_left_out": (default_left_out, (X,)),
    "tuple_of_floats": (tuple_of_floats, (X,)),
    "trip_count_from_a_float": (integrate, (X[:3],)),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_float_constants_cross_calls(name):
    f, args = PROGRAMS[name]
    check_against_numpy(f, args)


@pytest.mark.parametrize("backend", BACKENDS)
def test_both_backends(backend):
    check_against_numpy(default_left_out, (X,), backend=backend)


def test_a_float_default_given_by_the_call_is_run_time():
    """Given, alpha is an argument: a slice bound from it is refused with the rewrite."""
    with pytest.raises(irad.UnsupportedError, match=r"static_argnums=\(1,\)"):
        irad.grad(default_left_out)(X, 0.7)
    grad = irad.grad(default_left_out, static_argnums=(1,))(X, 0.5)
    np.testing.assert_allclose(grad, central_difference(default_left_out, (X, 0.5), 0), rtol=1e-6, atol=1e-8)


# ---- adversarial: what must not be merged or baked in ----------------------------------------
def signed(x, z):
    return x * np.copysign(1.0, z) + 1.0 / (z + 1.0)


def signed_zeros(x):
    """0.0 and -0.0 compare equal but are different values: two specialisations."""
    return np.sum(signed(x, 0.0)) + 3.0 * np.sum(signed(x, -0.0))


def with_nan(x):
    """A NaN constant is one specialisation (NaN != NaN), used twice."""
    return np.sum(np.where(np.isnan(x * float("nan")), x, 0.0)) + np.sum(np.where(np.isnan(signed(x, 1.0)), 0.0, x))


def scaled(x, s):
    return x * s + s ** 2


def scale_from_argument(x):
    """A float computed from an argument stays run-time: its derivative flows."""
    return np.sum(scaled(x, x[0] * 2.0)) + np.sum(scaled(x, 0.5))


def running_min(x):
    """float("inf") as a start value (it was 'a str object cannot be used as a number')."""
    best = float("inf")
    for v in x:
        best = np.minimum(best, v)
    return best * 2.0 + np.sum(np.clip(x, float("-inf"), float("1.5")))


def sign_of(x, a):
    return x * math.copysign(1.0, a)


def signed_nans(x):
    """NaNs of two signs are two values (copysign tells them apart)."""
    return np.sum(sign_of(x, float("nan"))) + 10.0 * np.sum(sign_of(x, -float("nan")))


@pytest.mark.parametrize("f", [signed_zeros, with_nan, scale_from_argument, running_min, signed_nans])
def test_adversarial(f):
    check_against_numpy(f, (X[:4],))


def test_one_specialisation_per_float_value():
    def loss(x):
        return tail_mean(x, 0.5) + tail_mean(x, 0.25) + tail_mean(2 * x, 0.5)

    text = lowered_text(loss, X)
    assert sorted(re.findall(r"func\.func private @(tail_mean\w*)", text)) == ["tail_mean", "tail_mean_1"]
    check_against_numpy(loss, (X,))


def _nan_sign_after_a_sum(x, b=-float("nan")):
    return math.copysign(1.0, b + float(x[0])) * x[1]


def test_a_negative_nan_constant_keeps_its_sign():
    # the constant was printed float('nan'), so -nan + p gave +nan (found by the static fuzzer)
    x = np.array([0.5, 2.0])
    assert irad.value_and_grad(_nan_sign_after_a_sum)(x)[0] == _nan_sign_after_a_sum(x) == -2.0
