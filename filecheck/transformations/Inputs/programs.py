"""Programs the transformations' FileCheck tests lower (irad lower FILE:FUNCTION)."""
import math


def f(x, y):
    return math.sin(x) * y


def with_aux(x):
    return x * x, x + 1.0


def pair(x, y):
    return x * y, math.exp(x)
