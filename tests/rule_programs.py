"""Programs and rules for tests/test_rules.py (irad lowers them from source)."""

import math

import irad


def cube(x):
    return x * x * x


def scaled(x, n):
    return x * n


def two_outputs(x, y):
    return x * y, x + y


def uses_cube(x, y):
    return cube(x) * y + cube(y)


def uses_scaled(x, k):
    return scaled(x, k) + scaled(x, 2.0)


def uses_two_outputs(x, y):
    a, b = two_outputs(x, y)
    return a * b


def rounds(x):
    return math.floor(x)


def stopped(x, y):
    return irad.stop_gradient(x * y) * x + y


def uses_sin(x):
    return math.sin(x) * x


def uses_hypot(x, y):
    return math.hypot(x, y) * x


# ---- rules ------------------------------------------------------------------
def cube_rule(x):
    y = cube(x)

    def pullback(dy):
        return dy * 3.0 * x * x

    return y, pullback


def cube_rule_scaled(x):
    """A deliberately wrong rule (tenfold), to tell which rule fired."""
    y = cube(x)

    def pullback(dy):
        return dy * 30.0 * x * x

    return y, pullback


def scaled_rule(x, n):
    y = scaled(x, n)

    def pullback(dy):
        if isinstance(n, int):
            return dy * n, None
        return dy * n, dy * x

    return y, pullback


def scaled_declines_for_floats(x, n):
    if isinstance(n, float):
        return None
    y = scaled(x, n)

    def pullback(dy):
        return 100.0 * dy, None  # wrong on purpose: shows when the rule is used

    return y, pullback


def two_outputs_rule(x, y):
    a, b = two_outputs(x, y)

    def pullback(da, db):
        return da * y + db, None  # only x gets a cotangent; y's is declared zero

    return (a, b), pullback


def sin_rule(x):
    y = math.sin(x)
    c = math.cos(x)

    def pullback(dy):
        return 2.0 * dy * c  # twice the truth: shows the rule replaced the op's adjoint

    return y, pullback


def wrong_count_rule(x):
    y = cube(x)

    def pullback(dy):
        return dy, dy

    return y, pullback


def int_cotangent_rule(x, n):
    y = scaled(x, n)

    def pullback(dy):
        return dy * n, dy

    return y, pullback


def wrong_type_rule(x):
    y = cube(x)

    def pullback(dy):
        return 3

    return y, pullback


def bad_shape_rule(x):
    return cube(x)


def tanh_helper(x):
    return math.tanh(x)


def helper_rule(x):
    y = cube(x)
    t = tanh_helper(x)

    def pullback(dy):
        # uses a Python helper in the pullback: the pass copies it into the module
        return dy * (3.0 * x * x) + 0.0 * tanh_helper(t)

    return y, pullback


# ---- forward rules ----------------------------------------------------------------
def cube_frule_scaled(x, dx):
    """Tenfold, to tell that it fired."""
    return cube(x), 30.0 * x * x * dx


def scaled_frule(x, n, dx, dn):
    if isinstance(n, int):
        return scaled(x, n), dx * n
    return scaled(x, n), dx * n + x * dn


def cube_frule_declines_for_ints(x, dx):
    if isinstance(x, int):
        return None
    return cube(x), 30.0 * x * x * dx


def cube_frule_bad(x, dx):
    return cube(x), (dx, dx)


def cube_rule_from_value(x):
    """Tenfold, and its pullback reads the primal value (30 y / x = 30 x^2)."""
    y = cube(x)

    def pullback(dy):
        return dy * 30.0 * y / x

    return y, pullback
