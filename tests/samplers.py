"""Samplers for derivative sweeps: `sampler(rng, shape)` draws points where a
function is smooth (tests/passes/test_op_sweep.py, tests/frontend/test_numpy_sweep.py)."""


def uniform(lo: float, hi: float):
    return lambda rng, shape: rng.uniform(lo, hi, shape)


def away_from_zero(lo: float, hi: float):
    """|x| in [lo, hi], either sign (functions with a kink or pole at 0)."""
    return lambda rng, shape: rng.uniform(lo, hi, shape) * rng.choice([-1.0, 1.0], shape)


WIDE = uniform(-2.0, 2.0)
NONZERO = away_from_zero(0.2, 2.0)
POSITIVE = uniform(0.2, 3.0)
UNIT = uniform(-0.9, 0.9)
