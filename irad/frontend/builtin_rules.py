"""irad's built-in table entries, written with the same rrule/frule users write.

Each function's reverse rule sits beside its forward rule, as ChainRules groups them.

The rules for the stable helpers in irad/numerics.py keep the helper's own
stable body as the primal and give the closed-form derivative, which is exact
at the kinks where AD through max/abs would pick a one-sided slope:
softplus'(0) = 1/2, and logaddexp splits a tie 1/2 : 1/2. lgamma and gamma
(Lanczos' approximation in numerics.py) differentiate to the digamma function,
not to the derivative of the approximation.
"""

from __future__ import annotations

import math

from irad import markers, numerics
from irad.frontend.registration import frule, rrule
from irad.rules.registry import non_differentiable
from irad.rules.table import RuleTable


# ---- sigmoid -------------------------------------------------------------------
def sigmoid_rule(x):
    y = numerics.sigmoid(x)

    def pullback(dy):
        return dy * (y * (1.0 - y))

    return y, pullback


def sigmoid_frule(x, dx):
    y = numerics.sigmoid(x)
    return y, dx * (y * (1.0 - y))


# ---- softplus ------------------------------------------------------------------
def softplus_rule(x):
    y = numerics.softplus(x)

    def pullback(dy):
        # sigmoid(x) = 1/2 + tanh(x/2)/2: no overflow for any x
        return dy * (0.5 * math.tanh(0.5 * x) + 0.5)

    return y, pullback


def softplus_frule(x, dx):
    return numerics.softplus(x), dx * (0.5 * math.tanh(0.5 * x) + 0.5)


# ---- logaddexp -----------------------------------------------------------------
def logaddexp_rule(a, b):
    y = numerics.logaddexp(a, b)

    def pullback(dy):
        # the softmax weights sigmoid(a - b), sigmoid(b - a); exactly 1/2 on a tie
        t = 0.5 * math.tanh(0.5 * (a - b))
        return dy * (0.5 + t), dy * (0.5 - t)

    return y, pullback


def logaddexp_frule(a, b, da, db):
    t = 0.5 * math.tanh(0.5 * (a - b))
    return numerics.logaddexp(a, b), da * (0.5 + t) + db * (0.5 - t)


# ---- hypot ---------------------------------------------------------------------
def hypot_rule(x, y):
    h = math.hypot(x, y)

    def pullback(dh):
        # at the kink (0, 0), the subgradient 0 rather than 0/0: a zero dh gives zeros
        s = dh / h if h != 0.0 else 0.0
        return s * x, s * y

    return h, pullback


def hypot_frule(x, y, dx, dy):
    h = math.hypot(x, y)
    return h, ((x * dx + y * dy) / h if h != 0.0 else 0.0)


# ---- lgamma and gamma ------------------------------------------------------------
def lgamma_rule(x):
    y = math.lgamma(x)

    def pullback(dy):
        return dy * numerics.digamma(x)

    return y, pullback


def lgamma_frule(x, dx):
    return math.lgamma(x), dx * numerics.digamma(x)


def gamma_rule(x):
    y = math.gamma(x)

    def pullback(dy):
        return dy * (y * numerics.digamma(x))

    return y, pullback


def gamma_frule(x, dx):
    y = math.gamma(x)
    return y, dx * (y * numerics.digamma(x))


def install(table: RuleTable) -> None:
    for target, types, reverse, forward in (
        (numerics.sigmoid, (float,), sigmoid_rule, sigmoid_frule),
        (numerics.softplus, (float,), softplus_rule, softplus_frule),
        (numerics.logaddexp, (float, float), logaddexp_rule, logaddexp_frule),
        (math.hypot, (float, float), hypot_rule, hypot_frule),
        (math.lgamma, (float,), lgamma_rule, lgamma_frule),
        (math.gamma, (float,), gamma_rule, gamma_frule),
    ):
        rrule(target, types=types, table=table)(reverse)
        frule(target, types=types, table=table)(forward)
    non_differentiable(markers.stop_gradient, table=table)
