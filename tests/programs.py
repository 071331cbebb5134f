"""Small programs shared by the tests (they must live in a file: irad lowers source)."""

import math

from irad import numerics

SCALE = 3.0


def square(x):
    return x * x


def helper(a, b=2.0):
    return a * b + math.sin(a), a - b


def uses_helper(x, y):
    u, v = helper(x, b=y)
    return u * v + square(u)


def twice(x):
    return square(square(x))


def mixed(x, n):
    return x * n + n // 2 + SCALE * x


def conditional(x):
    return math.sin(x) if x > 0.0 else x * x


def chain1(x):
    return math.sin(x) + x


def chain2(x):
    return chain1(x) * 1.5


def chain3(x):
    return math.exp(chain2(x) * 0.1)


def chain4(x):
    return chain3(x) + square(x)


def chain5(x):
    return math.tanh(chain4(x))


def chain6(x):
    return chain5(x) * chain5(x) + x


def with_rule(x):
    return numerics.softplus(x) + numerics.sigmoid(x)


def closure_factory(k):
    def scaled(x):
        return k * x * x

    return scaled


def two_outputs(x, y):
    return x * y, x + y


def helper_sum(a, b=2.0):
    u, v = helper(a, b)
    return u + v
