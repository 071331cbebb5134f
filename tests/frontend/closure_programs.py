"""Closures and functions as values (docs/python-subset.md, "Functions as
values"). Each program runs as plain numpy too; PROGRAMS pairs it with a maker
of example arguments."""

import functools
import math
import time
from dataclasses import dataclass

import numpy as np


# ---- helpers that take functions ----------------------------------------------------------
def apply(f, x):
    return f(x)


def apply_twice(f, x):
    return f(f(x))


def compose(f, g, x):
    return f(g(x))


def fold(f, items, start):
    acc = start
    for item in items:
        acc = f(acc, item)
    return acc


def square(v):
    return v * v


def scaled_sum(k, a, b=0.5):
    return k * a + b


PARTIAL_GLOBAL = functools.partial(scaled_sum, 3.0, b=1.0)
CUBE = lambda t: t * t * t  # noqa: E731


# ---- lambdas and nested defs closing over run-time values ----------------------------------
def lambda_closure(x, y):
    f = lambda t: t * y + x  # noqa: E731
    return f(x) * f(2.0)


def late_binding(x, y):
    f = lambda t: t * y  # noqa: E731
    y = y * 3.0  # Python reads y when f runs, not where it is defined
    return f(x)


def nested_def_closure(X, w):
    def layer(h):
        return np.tanh(h @ X + w)

    return np.sum(layer(layer(w)))


def nested_def_default(x, y):
    def g(t, k=y * 2.0):  # the default is evaluated at the def
        return t * k

    y = y + 1.0
    return g(x) + g(x, y)


def lambdas_with_defaults(x):
    fs = [lambda t, i=i: t ** i for i in range(1, 4)]
    return sum(f(x) for f in fs)


def recursive_nested(x, n):
    def power(t, k):
        if k == 0:
            return 1.0
        return t * power(t, k - 1)

    return power(x, n)


def closure_in_loop(x):
    s = 0.0
    for i in range(3):
        f = lambda t: t * i  # noqa: E731  (reads the loop's i)
        s += f(x)
    return s


def nested_closures(x, y):
    def outer(a):
        def inner(b):
            return a * b + y

        return inner(a + x)

    return outer(y)


def closure_over_array(x, W):
    project = lambda v: W @ v  # noqa: E731
    return np.sum(project(x) ** 2) + np.sum(project(np.sin(x)))


def keyword_only_and_varargs(x, y):
    def total(*vs, scale=1.0):
        return scale * sum(vs)

    return total(x, y, x * y, scale=0.5) + total(x)


# ---- functions handed to helpers, specialised while lowering ------------------------------
def function_arguments(x, y):
    return apply(lambda t: t * y, x) + apply(np.sin, x) + apply(math.cos, y) + apply(CUBE, y)


def helpers_of_helpers(x):
    return compose(np.tanh, lambda t: t * t + x, x) + apply_twice(square, x)


def fold_with_lambda(x):
    return fold(lambda a, b: a * b + 1.0, (x, 2.0 * x, x * x), 0.5)


def partials(x, y):
    f = functools.partial(scaled_sum, 2.0)
    g = functools.partial(scaled_sum, y, b=x)  # holds run-time values
    return f(x, y) + PARTIAL_GLOBAL(x) + apply(g, x)


def kwargs_forwarding(x, y):
    def call(fn, *args, **kwargs):
        return fn(*args, **kwargs)

    return call(scaled_sum, x, y, b=y) + call(square, x)


# ---- methods of objects known while lowering ---------------------------------------------
@dataclass
class Dense:
    W: np.ndarray
    b: np.ndarray

    def __call__(self, x):
        return np.tanh(self.W @ x + self.b)


class MLP:
    def __init__(self, layers):
        self.layers = layers

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def loss(self, x, y):
        return np.mean((self.forward(x) - y) ** 2)


_R = np.random.default_rng(7)
MODEL = MLP((Dense(_R.normal(size=(4, 3)), _R.normal(size=4)), Dense(_R.normal(size=(2, 4)), _R.normal(size=2))))


class Scaler:
    def __init__(self, k):
        self.k = k

    def scale(self, v):
        return self.k * v

    @property
    def double(self):
        return 2.0 * self.k

    @staticmethod
    def shift(v):
        return v + 1.0


SCALER = Scaler(1.5)


def model_forward(x):
    return np.sum(MODEL.forward(x) ** 2)


def model_method_calls_method(x, y):
    return MODEL.loss(x, y)


def object_methods(x):
    return SCALER.scale(x) * SCALER.double + SCALER.shift(x) + apply(SCALER.scale, x)


# ---- decorated functions -------------------------------------------------------------------
def logged(f):
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        print("calling", f.__name__)
        return f(*args, **kwargs)

    return wrapper


def doubled(f):
    @functools.wraps(f)
    def wrapper(x):
        return 2.0 * f(x)  # irad lowers the wrapper, so the gradient doubles too

    return wrapper


def timed(f):
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        start = time.perf_counter()  # irad cannot lower this: it falls back on __wrapped__
        out = f(*args, **kwargs)
        wrapper.seconds = time.perf_counter() - start
        return out

    return wrapper


@logged
def logged_poly(x, y):
    return x * x * y


@doubled
def doubled_sin(x):
    return math.sin(x)


@timed
def timed_exp(x):
    return math.exp(x) * x


@functools.lru_cache(maxsize=None)
def cached_sq(x):
    return x * x


def calls_decorated(x, y):
    return logged_poly(x, y) + doubled_sin(y) + cached_sq(x)


# ---- one `def` run again on another path (each unrolled iteration runs it) -----------------
B = np.array([1.0, 2.0])


def def_in_tuple_loop_with_return(x):
    # found by the fuzzer (seed 3957266662): the return's join met the `g` of
    # each iteration, two runs of one def reading the same variables: one function
    for i in (x, 2.0 * x):
        def g(t):
            return B[0] * t * i

        if i > 5.0:
            return x
    return x * g(x)


def def_with_defaults_in_tuple_loop(x):
    # defaults evaluated at each run of the def differ: joined as run-time values
    for i in (x, 2.0 * x):
        def g(t, a=i * i, *, b=i):
            return a * t + b

        if i > 1.5:
            break
    return x * g(x)


def lambda_and_partial_in_tuple_loop(x):
    for i in (x, 3.0 * x):
        g = lambda t, a=i: a * t  # noqa: E731
        h = functools.partial(np.multiply, i)
        pair = (g, i)
        if i > 2.0:
            break
    return g(x) + h(x) + pair[0](pair[1])


# ---- a function the body of an scf loop binds anew -----------------------------------------
def def_rebound_in_range_loop(x):
    # the body binds `g` before reading it, and runs (range(3) is known to be
    # non-empty): after the loop `g` is the body's (reading `x` when called)
    def g(t):
        return t

    s = 0.0
    for i in range(3):
        def g(t):
            return t * x

        s = s + g(x)
        x = x * 1.5
    return s + g(x)


def lambda_rebound_in_while_loop(x):
    g = lambda t: t  # noqa: E731
    j = 0
    s = 0.0
    while j < 3:
        j += 1
        g = lambda t: t * t * x  # noqa: E731
        s = s + g(x)
    return s


# ---- nonlocal: a nested def writing its definer's variables (irad/frontend/nonlocal_writes.py) ----
def nonlocal_counter_in_loops(x, n):
    calls = 0
    total = 0.0

    def rate(s):
        nonlocal calls
        calls += 1
        return -s / (1.0 + s * s)

    for _ in range(n):              # an scf.for around the call: it carries `calls`
        total = total + rate(x)
    k = 0
    while k < 2:                    # an scf.while
        x = x + 0.1 * rate(x)
        k += 1
    assert calls == n + 2, f"rate ran {calls} times"
    return total * x + calls


def nonlocal_write_on_some_paths(x):
    total = 0.0
    largest = x[0]

    def add(v):
        nonlocal total, largest
        if v > 0:
            total = total + v * v
        if v > largest:
            largest = v
            return True
        return False

    found = 0
    for v in x:                     # rows of an array: an scf.for
        if add(v):
            found += 1
    add(x[1] * 3)
    return total + largest * found


def nonlocal_array_state(x):
    h = np.zeros(2)

    def step(v):
        nonlocal h
        h = np.tanh(h + v)
        return np.sum(h)

    out = sum(step(x[i:i + 2]) for i in range(3))
    return out + np.sum(h * h)


def nonlocal_seen_by_another_closure(x):
    scale = 1.0

    def grow():
        nonlocal scale
        scale = scale * x

    def scaled(v):
        return v * scale

    a = scaled(2.0)
    grow()
    grow()
    return a + scaled(3.0) + scale


def nonlocal_of_a_nested_helper(x):
    def outer(v):
        count = 0

        def inner():
            nonlocal count
            count += 1
            return v * count

        return inner() + inner() + count

    return outer(x) * outer(2 * x)


PROGRAMS = [
    (lambda_closure, lambda r: (0.7, -1.3)),
    (late_binding, lambda r: (0.7, -1.3)),
    (nested_def_closure, lambda r: (r.normal(size=(3, 3)), r.normal(size=3))),
    (nested_def_default, lambda r: (0.4, 1.1)),
    (lambdas_with_defaults, lambda r: (1.3,)),
    (recursive_nested, lambda r: (1.1, 4)),
    (closure_in_loop, lambda r: (0.9,)),
    (nested_closures, lambda r: (0.3, 0.8)),
    (closure_over_array, lambda r: (r.normal(size=3), r.normal(size=(2, 3)))),
    (keyword_only_and_varargs, lambda r: (0.6, 1.7)),
    (function_arguments, lambda r: (0.6, 1.2)),
    (helpers_of_helpers, lambda r: (0.45,)),
    (fold_with_lambda, lambda r: (0.8,)),
    (partials, lambda r: (0.5, 2.5)),
    (kwargs_forwarding, lambda r: (0.5, 2.5)),
    (model_forward, lambda r: (r.normal(size=3),)),
    (model_method_calls_method, lambda r: (r.normal(size=3), r.normal(size=2))),
    (object_methods, lambda r: (0.35,)),
    (logged_poly, lambda r: (0.9, 1.4)),
    (doubled_sin, lambda r: (0.3,)),
    (calls_decorated, lambda r: (0.9, 1.4)),
    (CUBE, lambda r: (1.2,)),
    (def_in_tuple_loop_with_return, lambda r: (0.9,)),
    (def_in_tuple_loop_with_return, lambda r: (3.5,)),
    (def_with_defaults_in_tuple_loop, lambda r: (0.5,)),
    (def_with_defaults_in_tuple_loop, lambda r: (1.0,)),
    (def_with_defaults_in_tuple_loop, lambda r: (2.0,)),
    (lambda_and_partial_in_tuple_loop, lambda r: (0.5,)),
    (lambda_and_partial_in_tuple_loop, lambda r: (1.5,)),
    (def_rebound_in_range_loop, lambda r: (0.7,)),
    (lambda_rebound_in_while_loop, lambda r: (0.7,)),
    (nonlocal_counter_in_loops, lambda r: (0.7, 3)),
    (nonlocal_write_on_some_paths, lambda r: (r.normal(size=5),)),
    (nonlocal_array_state, lambda r: (r.normal(size=4),)),
    (nonlocal_seen_by_another_closure, lambda r: (1.3,)),
    (nonlocal_of_a_nested_helper, lambda r: (0.6,)),
]
