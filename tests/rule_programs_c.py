"""A program calling a C function (no Python source), for tests/test_rules.py."""

import operator


def uses_builtin(x):
    return operator.mul(x, x)


def uses_erf_like(x):
    return operator.mul(x, x) + x
