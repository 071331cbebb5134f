"""The realistic programs with example arguments, the transformations each is run
through, and what checks them (JAX's twin in float64, or central differences
where the program writes into arrays, which JAX cannot run)."""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np
import pytest

from irad import IradError

from tests.realistic import factories as fac
from tests.realistic import field as fl
from tests.realistic import field2 as f2
from tests.realistic import field3 as fl3
from tests.realistic import field4 as fl4
from tests.realistic import learning as ml
from tests.realistic import modelling as mod
from tests.realistic import science as sci
from tests.realistic.records import WeibullParams


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    f: Callable
    args: Callable[[], tuple]          # fresh example arguments
    argnums: int | tuple = 0
    transforms: tuple = ("value_and_grad",)
    reference: str = "jax"             # "jax": the JAX twin; "fd": numpy + central differences
    static_argnums: tuple = ()
    refused: str | None = None         # the class of problem, while irad refuses the program
    native: bool = True                # False: its native compile is long (the python backend checks it)


def marked(case: Case, refused: str | None):
    """The case as a pytest param; while `refused`, a strict xfail that only an
    irad refusal satisfies (a wrong value, an AssertionError, still fails), and
    that fails as XPASS once the program runs right."""
    marks = [pytest.mark.xfail(strict=True, reason=refused, raises=(IradError, TypeError))] if refused else []
    return pytest.param(case, id=case.name, marks=marks)


def rng(seed):
    return np.random.default_rng(seed)


def mlp_args():
    r = rng(0)
    params = {"W1": r.normal(size=(3, 8)) * 0.5, "b1": np.zeros(8),
              "W2": r.normal(size=(8, 1)) * 0.5, "b2": np.zeros(1)}
    x = r.normal(size=(16, 3))
    return params, x, np.sin(x[:, :1]) + 0.5 * x[:, 1:2]


def logistic_args():
    r = rng(1)
    X = r.normal(size=(40, 3))
    y = (X @ np.array([1.5, -2.0, 0.5]) + 0.3 * r.normal(size=40) > 0).astype(float)
    return r.normal(size=4) * 0.1, X, y, 0.01


def softmax_args():
    r = rng(2)
    X = r.normal(size=(30, 4))
    labels = np.argmax(X @ r.normal(size=(4, 3)), axis=1)
    return {"W": r.normal(size=(4, 3)) * 0.1, "b": np.zeros(3)}, X, np.eye(3)[labels]


def poly_args():
    r = rng(3)
    x = np.linspace(-1, 1, 25)
    return r.normal(size=4), x, np.sin(2 * x)


def ridge_args():
    r = rng(4)
    X, X_val = r.normal(size=(20, 5)), r.normal(size=(10, 5))
    w = r.normal(size=5)
    return 0.3, X, X @ w + 0.5 * r.normal(size=20), X_val, X_val @ w


def poisson_args():
    r = rng(5)
    X = np.column_stack([np.ones(30), r.normal(size=(30, 2))])
    counts = r.poisson(np.exp(X @ np.array([0.5, 0.3, -0.2]))).astype(float)
    return np.array([0.1, 0.0, 0.1]), X, counts


def negbin_args():
    w, X, counts = poisson_args()
    return {"w": w, "log_r": 0.4}, X, counts


def cnn_args():
    r = rng(6)
    params = {"w1": r.normal(size=(4, 2, 3)) * 0.4, "b1": np.zeros(4) + 0.1,
              "w2": r.normal(size=(3, 4, 3)) * 0.4, "b2": np.zeros(3) + 0.1,
              "head": r.normal(size=3)}
    return params, r.normal(size=(3, 2, 12)), r.normal(size=3)


def gru_args():
    r = rng(7)
    n_in, n_h = 3, 4
    shapes = [(n_h, n_in), (n_h, n_h), (n_h,)] * 3
    p = ml.GRUParams(*[r.normal(size=s) * 0.4 for s in shapes])
    return p, r.normal(size=(6, n_in)), r.normal(size=6)


def lstm_args():
    r = rng(8)
    n_in, n_h = 2, 3
    params = {"W": r.normal(size=(4 * n_h, n_in + n_h)) * 0.4, "b": np.zeros(4 * n_h),
              "V": r.normal(size=(1, n_h))}
    return params, r.normal(size=(5, n_in)), r.normal(size=(5, 1))


def transformer_args():
    r = rng(9)
    d, f = 4, 8
    params = {"Wq": r.normal(size=(d, d)) * 0.4, "Wk": r.normal(size=(d, d)) * 0.4,
              "Wv": r.normal(size=(d, d)) * 0.4, "Wo": r.normal(size=(d, d)) * 0.4,
              "g1": np.ones(d), "be1": np.zeros(d), "g2": np.ones(d), "be2": np.zeros(d),
              "W1": r.normal(size=(d, f)) * 0.4, "W2": r.normal(size=(f, d)) * 0.4}
    return params, r.normal(size=(5, d))


def vae_args():
    r = rng(10)
    d, h, z = 4, 5, 2
    params = {"enc_W": r.normal(size=(d, h)) * 0.4, "enc_b": np.zeros(h),
              "mu_W": r.normal(size=(h, z)) * 0.4, "lv_W": r.normal(size=(h, z)) * 0.4,
              "dec_W1": r.normal(size=(z, h)) * 0.4, "dec_W2": r.normal(size=(h, d)) * 0.4}
    return params, r.normal(size=(8, d)), r.normal(size=(8, z))


def tree_args():
    r = rng(11)
    d = 3
    tree = ((0, 1), (2, (3, 4)))
    return r.normal(size=(d, 2 * d)) * 0.5, np.zeros(d), r.normal(size=(5, d)), tree, r.normal(size=d)


def gmm_args():
    r = rng(12)
    X = np.concatenate([r.normal(size=(10, 2)) - 1.5, r.normal(size=(10, 2)) + 1.5])
    params = {"means": r.normal(size=(3, 2)), "log_sd": np.zeros((3, 2)), "logits": np.zeros(3)}
    return params, X


def huber_args():
    r = rng(13)
    X = r.normal(size=(20, 3))
    return r.normal(size=3), X, X @ np.array([1.0, -1.0, 2.0]) + r.standard_t(2, size=20)


def gp_args():
    r = rng(14)
    X = r.uniform(-2, 2, size=(12, 1))
    return np.log(np.array([0.8, 1.2, 0.1])), X, np.sin(2 * X[:, 0]) + 0.1 * r.normal(size=12)


def nbody_args():
    r = rng(15)
    pos = r.normal(size=(4, 2))
    return r.normal(size=(4, 2)) * 0.3, pos, np.array([1.0, 0.5, 0.8, 1.2]), pos + 0.1


def ode_args():
    theta = np.array([1.0, 0.4, 0.8, 0.3])
    y0 = np.array([2.0, 1.0])
    observed = np.array(sci.rk4(lambda y: sci.lotka_volterra(y, theta), y0, 0.1, 10))
    return theta * np.array([1.1, 0.9, 1.05, 0.95]), y0, observed + 0.01


def kalman_args():
    r = rng(16)
    F = np.array([[1.0, 0.1], [0.0, 0.95]])
    H = np.array([[1.0, 0.0]])
    return np.log(np.array([0.05, 0.2])), F, H, r.normal(size=(8, 1))


def ba_args():
    r = rng(17)
    n_cameras, n_points = 2, 5
    cameras = np.concatenate([r.normal(size=(n_cameras, 3)) * 0.1,
                              np.tile([0.0, 0.0, 5.0], (n_cameras, 1))], axis=1)
    points = r.normal(size=(n_points, 3))
    obs = np.stack([sci.project(points, cameras[c]) for c in range(n_cameras)])
    params = np.concatenate([cameras.ravel(), points.ravel()]) + 0.01 * r.normal(size=n_cameras * 6 + n_points * 3)
    return params, n_cameras, obs


def dtw_args():
    r = rng(18)
    return r.normal(size=5), r.normal(size=4)


def heat_args():
    x = np.linspace(0, 1, 16, endpoint=False)
    return np.sin(2 * np.pi * x), -2.0, 0.5 * np.sin(2 * np.pi * x)


def standardized_args():
    r = rng(20)
    X = r.integers(0, 20, size=(25, 3))
    return r.normal(size=4), X, X @ np.array([0.1, -0.2, 0.05]) + r.normal(size=25)


def maml_args():
    params, x, y = mlp_args()
    return params, x[:8], y[:8], x[8:], y[8:]


def calibration_args():
    r = rng(21)
    knots = np.linspace(0.0, 1.0, 6)
    x = r.uniform(0, 1, size=30)
    return np.sqrt(knots) + 0.1 * r.normal(size=6), knots, x, np.sqrt(x)


def lennard_jones_args():
    grid = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0]], dtype=float) * 1.12
    return (grid + 0.03 * rng(19).normal(size=grid.shape),)


def bernoulli_vae_args():
    r = rng(30)
    params = {"enc_W": r.normal(size=(6, 5)) * 0.4, "enc_b": np.zeros(5), "mu_W": r.normal(size=(5, 2)) * 0.4,
              "logsig_W": r.normal(size=(5, 2)) * 0.2, "dec_W1": r.normal(size=(2, 5)) * 0.4,
              "dec_W2": r.normal(size=(5, 6)) * 0.4, "dec_b": np.zeros(6)}
    x = (r.uniform(size=(12, 6)) < 0.4).astype(float)
    return params, x, r.normal(size=(12, 2))


def ard_gp_args():
    r = rng(31)
    X = r.uniform(-2, 2, size=(15, 2))
    y = np.sin(X[:, 0]) + 0.3 * X[:, 1] ** 2 + 0.1 * r.normal(size=15)
    return {"lengthscales": np.log(np.array([1.0, 1.5])), "signal": np.log(0.8), "noise": np.log(0.05)}, X, y


def projectile_args():
    path = mod.simulate(np.array([12.5, 0.85, np.log(0.04)]), 30, 0.04)
    x_obs = np.linspace(0.5, 0.9 * path[-1, 0], 8)  # inside the flight, off the steps' distances
    heights = np.interp(x_obs, path[:, 0], path[:, 1]) + 0.01 * rng(32).normal(size=8)
    return np.array([12.0, 0.9, np.log(0.05)]), x_obs, heights


def kalman_smoother_args():
    r = rng(40)
    t = np.arange(12) * 0.1
    return np.array([np.log(0.5), np.log(0.05), 1.0]), np.sin(3 * t) + 0.1 * r.normal(size=12), 0.1


def mdn_args():
    r = rng(41)
    params = {"hidden_W": r.normal(size=(1, 6)) * 0.5, "hidden_b": np.zeros(6)}
    for name in ("logits", "mu", "log_sigma"):
        params[f"{name}_W"], params[f"{name}_b"] = r.normal(size=(6, 3)) * 0.5, r.normal(size=3) * 0.1
    x = r.uniform(-1, 1, size=(20, 1))
    return params, x, np.sin(2 * x[:, 0]) + 0.1 * r.normal(size=20)


def neural_ode_args():
    r = rng(42)
    params = {"W1": r.normal(size=(8, 2)) * 0.5, "b1": np.zeros(8), "wt": r.normal(size=8) * 0.1,
              "W2": r.normal(size=(2, 8)) * 0.3}
    ts = np.linspace(0.0, 1.0, 9)
    return params, np.array([1.0, 0.0]), ts, np.stack([np.cos(ts), -np.sin(ts)], axis=1)


def laplace_args():
    r = rng(43)
    X = r.normal(size=(30, 3))
    return 0.3, X, (X @ np.array([1.0, -1.0, 0.5]) + r.normal(size=30) > 0).astype(float)


# ---- field.py ---------------------------------------------------------------------------------------
def reinforce_args():
    r = rng(50)
    T, n_states, n_actions = 7, 4, 3
    return (r.normal(size=(n_states, n_actions)) * 0.3, r.normal(size=(T, n_states)),
            r.integers(0, n_actions, size=T), r.normal(size=T))


def sinkhorn_args():
    r = rng(51)
    return r.normal(size=(5, 2)), r.normal(size=(4, 2)) + 0.5


def crf_args():
    r = rng(52)
    n_features, n_tags, T = 3, 3, 6
    params = fl.CRFParams(r.normal(size=(n_features, n_tags)) * 0.5, r.normal(size=(n_tags, n_tags)) * 0.5,
                          r.normal(size=n_tags) * 0.1)
    return params, r.normal(size=(T, n_features)), r.integers(0, n_tags, size=T)


def matern_args():
    r = rng(53)
    X = r.uniform(-2, 2, size=(10, 2))
    return np.log(np.array([0.9, 1.1, 0.05])), X, np.sin(X[:, 0]) * np.cos(X[:, 1])


def convnet_args():
    r = rng(54)
    params = {"conv": r.normal(size=(2, 1, 3, 3)) * 0.5, "bias": np.full(2, 0.1), "dense": r.normal(size=(8, 3)) * 0.5}
    return params, r.normal(size=(3, 1, 6, 6)), np.array([0, 2, 1])


def bspline_args():
    r = rng(55)
    x = np.sort(r.uniform(0, 0.999, size=30))
    return r.normal(size=7) * 0.3, x, np.sin(2 * np.pi * x)


def schedule_args():
    r = rng(56)
    X, X_val = r.normal(size=(20, 3)), r.normal(size=(10, 3))
    w = np.array([1.0, -0.5, 2.0])
    return np.log(np.array([0.1, 0.01])), X, X @ w + 0.1 * r.normal(size=20), X_val, X_val @ w


def masked_attention_args():
    r = rng(57)
    return ({name: r.normal(size=(4, 4)) * 0.5 for name in ("Wq", "Wk", "Wv", "Wo")}, r.normal(size=(2, 5, 4)),
            np.array([5, 3]))


def poisson_offset_args():
    r = rng(58)
    X, exposure = r.normal(size=(25, 2)), r.uniform(0.5, 2, size=25)
    counts = r.poisson(exposure * np.exp(0.3 + X @ np.array([0.4, -0.3]))).astype(float)
    return np.array([0.1, 0.2, -0.1]), X, counts, exposure


def copula_args():
    r = rng(59)
    return {"offdiag": r.normal(size=3) * 0.3, "log_diag": np.zeros(3)}, r.uniform(0.05, 0.95, size=(15, 3))


def dropout_mlp_args():
    r = rng(60)
    params = [(r.normal(size=(3, 5)) * 0.5, np.zeros(5)), (r.normal(size=(5, 5)) * 0.5, np.full(5, 0.1)),
              (r.normal(size=(5, 1)) * 0.5, np.zeros(1))]
    return params, r.normal(size=(6, 3)), r.normal(size=6), (r.uniform(size=(2, 6, 5)) > 0.2) * 1.25


def residual_net_args():
    r = rng(61)
    params = {"W0": r.normal(size=(4, 4)) * 0.3, "b0": np.zeros(4), "W1": r.normal(size=(4, 4)) * 0.3,
              "b1": np.full(4, 0.1), "head": r.normal(size=4)}
    return params, r.normal(size=(5, 4)), r.normal(size=5)


def poisson_gamma_args():
    r = rng(62)
    exposure = r.uniform(0.5, 2.0, size=6)
    return (np.concatenate([r.normal(size=6) * 0.2, [0.5, -0.3]]),
            r.poisson(1.5 * exposure).astype(float), exposure)


def student_t_args():
    r = rng(63)
    X = r.normal(size=(12, 2))
    y = X @ np.array([0.7, -1.1]) + r.standard_t(3, size=12) * 0.4
    return {"w": np.array([0.5, -1.0]), "log_df": 0.7, "log_scale": -0.6}, X, y


# ---- field2.py ---------------------------------------------------------------------------------------
def flow_args():
    r = rng(70)
    d, h = 4, 5
    params = {}
    for i in range(2):
        params[f"W{i}"], params[f"b{i}"] = r.normal(size=(d // 2, h)) * 0.5, np.zeros(h)
        params[f"S{i}"], params[f"T{i}"] = r.normal(size=(h, d // 2)) * 0.3, r.normal(size=(h, d // 2)) * 0.3
    params["u"], params["w"], params["b"] = r.normal(size=d) * 0.3, r.normal(size=d) * 0.5, 0.1
    params["A"] = np.eye(d) + 0.2 * r.normal(size=(d, d))
    return params, r.normal(size=(10, d))


def skipgram_args():
    r = rng(71)
    V, d, B = 12, 4, 6
    embeddings = {"in": r.normal(size=(V, d)) * 0.3, "out": r.normal(size=(V, d)) * 0.3}
    return embeddings, r.integers(0, V, size=B), r.integers(0, V, size=B), r.integers(0, V, size=(B, f2.N_NEGATIVE))


def cox_args():
    r = rng(72)
    X = r.normal(size=(15, 3))
    times = r.exponential(np.exp(-X @ np.array([0.5, -0.3, 0.2])))
    return np.array([0.1, 0.1, -0.1]), X, times, (r.uniform(size=15) < 0.7).astype(float)


def weibull_args():
    r = rng(73)
    X = np.column_stack([np.ones(20), r.normal(size=(20, 2))])
    t = r.weibull(1.5, size=20) * np.exp(X @ np.array([0.3, 0.2, -0.1]))
    return WeibullParams(np.array([0.1, 0.0, 0.0]), 0.2), X, t, (r.uniform(size=20) < 0.8).astype(float)


def fm_args():
    r = rng(75)
    return (0.0, r.normal(size=5) * 0.1, r.normal(size=(5, 2)) * 0.3), r.normal(size=(20, 5)), np.sign(r.normal(size=20))


def infonce_args():
    r = rng(77)
    x = r.normal(size=(6, 4))
    return r.normal(size=(4, 3)), x, x + 0.1 * r.normal(size=(6, 4))


def blr_args():
    r = rng(79)
    x = r.uniform(-1, 1, size=25)
    Phi = np.stack([x ** j for j in range(4)], axis=1)
    return np.log(np.array([1.0, 10.0])), Phi, np.sin(2 * x) + 0.2 * r.normal(size=25)


def lotka_volterra_args():
    theta, y0 = np.array([1.0, 0.4, 0.8, 0.3]), np.array([2.0, 1.0])
    observed = f2.rk4_solve(lambda s: f2.lv_rhs(s, f2.LVParams(*theta)), y0, 0.1, 8)
    return (np.log(theta * np.array([1.1, 0.9, 1.05, 0.95])), y0,
            observed * (1 + 0.01 * rng(80).normal(size=observed.shape)))


def poisson_mixture_args():
    r = rng(81)
    counts = np.concatenate([r.poisson(2.0, size=10), r.poisson(9.0, size=10)]).astype(float)
    return np.log(np.array([1.5, 7.0])), np.zeros(2), counts


def label_smoothing_args():
    r = rng(82)
    params = {"W1": r.normal(size=(3, 5)) * 0.5, "b1": np.zeros(5), "W2": r.normal(size=(5, 4)) * 0.5}
    return params, r.normal(size=(10, 3)), r.integers(0, 4, size=10)


def jacobi_args():
    n = 6
    s = np.sin(np.pi * np.arange(1, n + 1) / (n + 1))
    basis = np.stack([np.outer(np.sin(np.pi * k * np.arange(1, n + 1) / (n + 1)), s) for k in (1, 2, 3)])
    return np.array([1.0, 0.5, -0.2]), basis, 0.02 * np.outer(s, s)


def quantile_args():
    r = rng(83)
    X = np.column_stack([np.ones(20), r.normal(size=20)])
    y = X @ np.array([0.5, 1.0]) + r.normal(size=20)
    return np.array([[-0.5, 0.5, 1.5], [1.0, 1.0, 1.0]]) + 0.05 * r.normal(size=(2, 3)), X, y


def arma_args():
    r = rng(84)
    e, y = r.normal(size=15), np.zeros(15)
    for t in range(1, 15):
        y[t] = 0.2 + 0.5 * (y[t - 1] - 0.2) + e[t] + 0.3 * e[t - 1]
    return np.array([0.1, 0.4, 0.2]), y


def radial_velocity_args():
    r = rng(90)
    t, p = np.sort(r.uniform(0, 20, size=15)), np.array([5.0, np.log(7.0), -0.5, 0.8, 1.0])
    return p + 0.02 * r.normal(size=5), t, f2.radial_velocity(p, t) + 0.3 * r.normal(size=15)


def ctmc_args():
    return (rng(91).normal(size=6) * 0.3, [(0, 1), (1, 2), (2, 0), (0, 0), (1, 0)],
            np.array([0.5, 1.0, 0.3, 0.7, 1.2]))


def ising_args():
    r = rng(93)
    J = r.normal(size=(5, 5)) * 0.1
    J = J + J.T - 2 * np.diag(np.diag(J))
    return r.normal(size=5) * 0.3, J


def tobit_args():
    r = rng(94)
    X = np.column_stack([np.ones(20), r.normal(size=20)])
    return np.array([0.2, 0.8, 0.1]), X, np.maximum(X @ np.array([0.3, 1.0]) + r.normal(size=20), 0)


def irt_args():
    r = rng(97)
    n_students, n_items, n = 5, 4, 20
    params = {"ability": r.normal(size=n_students) * 0.3, "log_disc": np.zeros(n_items),
              "difficulty": r.normal(size=n_items) * 0.3}
    return (params, r.integers(0, n_students, size=n), r.integers(0, n_items, size=n),
            (r.uniform(size=n) < 0.5).astype(float))


def named_mlp_args():
    r = rng(98)
    layers = [(r.normal(size=(2, 4)) * 0.5, np.zeros(4)), (r.normal(size=(4, 4)) * 0.5, np.zeros(4)),
              (r.normal(size=(4, 1)) * 0.5, np.zeros(1))]
    return layers, r.normal(size=(8, 2)), r.normal(size=8)


def kernel_ridge_args():
    r = rng(99)
    X, X_val = r.normal(size=(12, 2)), r.normal(size=(6, 2))
    return np.log(np.array([1.0, 0.1])), X, np.sin(X[:, 0]), X_val, np.sin(X_val[:, 0])


# ---- field3 -------------------------------------------------------------------------------------
def hmm_args():
    r = rng(200)
    params = {"initial": r.normal(size=3) * 0.3, "transition": r.normal(size=(3, 3)) * 0.5,
              "emission": r.normal(size=(3, 4)) * 0.5}
    return params, [r.integers(0, 4, size=8) for _ in range(3)]


def hawkes_args():
    times = np.cumsum(rng(201).exponential(0.7, size=12))
    return np.log(np.array([0.8, 0.5, 1.5])), times, float(times[-1] + 1.0)


def sv_args():
    r = rng(202)
    return np.array([-1.0, 1.2, np.log(0.3)]), r.normal(size=10) * 0.4, r.normal(size=(10, 16))


def zip_args():
    r = rng(203)
    X = np.column_stack([np.ones(25), r.normal(size=(25, 2))])
    y = np.where(r.uniform(size=25) < 0.3, 0.0, r.poisson(np.exp(X @ np.array([0.5, 0.3, -0.2]))))
    return {"beta": np.array([0.3, 0.2, 0.0]), "gamma": np.array([-0.5, 0.1, 0.1])}, X, y


def elastic_net_args():
    r = rng(204)
    X = r.normal(size=(20, 5))
    return r.normal(size=(4, 5)) * 0.5, X, X @ np.array([1.0, 0.0, -0.5, 0.0, 2.0]) + 0.1 * r.normal(size=20)


def procrustes_args():
    r = rng(205)
    A = r.normal(size=(8, 3))
    Q, _ = np.linalg.qr(r.normal(size=(3, 3)))
    return A, A @ Q + 0.1 * r.normal(size=(8, 3))


def svm_args():
    r = rng(206)
    X = r.normal(size=(30, 3))
    y = np.sign(X @ np.array([1.0, -1.0, 0.5]) + 0.3 * r.normal(size=30))
    return (r.normal(size=3) * 0.1, 0.05), X, y


def tsne_args():
    r = rng(207)
    X = r.normal(size=(7, 4))
    d = np.sum((X[:, None] - X[None]) ** 2, axis=-1)
    P = np.exp(-d) * (1 - np.eye(7))
    return r.normal(size=(7, 2)), P / P.sum()


def lqr_args():
    A = np.array([[1.0, 0.1], [0.0, 1.0]])
    B = np.array([[0.0], [0.1]])
    return np.array([[0.8, 1.2]]), A, B, np.array([1.0, -0.5])


def pk_args():
    p = np.log(np.array([0.3, 0.5, 0.2]))
    return p + np.array([0.1, -0.1, 0.05]), 100.0, np.array([50.0, 40.2, 33.0, 27.5, 23.4, 20.1])


def gat_args():
    r = rng(210)
    n, f_in, f = 6, 3, 4
    adj = (r.uniform(size=(n, n)) < 0.4).astype(float) + np.eye(n)
    params = {"W": r.normal(size=(f_in, f)) * 0.5, "a": r.normal(size=2 * f) * 0.5,
              "readout": r.normal(size=(f, 2)) * 0.5}
    return params, r.normal(size=(n, f_in)), adj, r.integers(0, 2, size=n)


def unet_args():
    r = rng(211)
    c = 3
    params = {"enc1": (r.normal(size=(3, 1, c)) * 0.5, np.zeros(c)),
              "enc2": (r.normal(size=(3, c, c)) * 0.4, np.full(c, 0.1)),
              "dec": (r.normal(size=(3, 2 * c, 1)) * 0.4, np.zeros(1))}
    signals = r.normal(size=(2, 8, 1))
    return params, signals, np.cumsum(signals, axis=1) * 0.3


def moe_args():
    r = rng(212)
    x = r.normal(size=(12, 2))
    params = {"gate": r.normal(size=(2, 3)) * 0.5, "W": [r.normal(size=(2, 4)) * 0.5 for _ in range(3)],
              "v": [r.normal(size=4) * 0.5 for _ in range(3)]}
    return params, x, np.sin(x[:, 0]) * x[:, 1]


def beta_vae_args():
    r = rng(213)
    return {"W": r.normal(size=(5, 6)) * 0.4, "b": np.zeros(6), "W_out": r.normal(size=(6, 4)) * 0.4}, r.normal(size=(9, 5))


def triplet_args():
    r = rng(214)
    a = r.normal(size=(6, 4))
    return r.normal(size=(4, 3)), a, a + 0.3 * r.normal(size=(6, 4)), r.normal(size=(6, 4))


def rbm_args():
    r = rng(215)
    rbm = fl3.RBM(r.normal(size=(5, 3)) * 0.3, r.normal(size=5) * 0.1, np.zeros(3))
    return rbm, (r.uniform(size=(8, 5)) < 0.5).astype(float), (r.uniform(size=(8, 5)) < 0.5).astype(float)


def ssm_args():
    x0 = np.array([1.0, 0.0])
    A = np.array([[0.0, 1.0], [-1.0, -0.2]])
    obs = [x0[0]]
    x = x0
    for _ in range(10):
        x = np.linalg.solve(np.eye(2) - 0.1 * A, x)
        obs.append(x[0])
    return np.array([0.05, 0.9, -1.1, -0.25]), x0, np.array(obs)


def tv_args():
    r = rng(216)
    truth = np.outer(np.linspace(1, 3, 6), np.ones(5)) + 1
    return np.log(truth) + 0.1 * r.normal(size=(6, 5)), r.poisson(truth).astype(float)


def von_mises_args():
    r = rng(217)
    angles = np.concatenate([r.vonmises(0.5, 4.0, size=10), r.vonmises(-2.0, 8.0, size=10)])
    return {"mu": np.array([0.3, -1.8]), "log_kappa": np.log(np.array([3.0, 5.0])), "logits": np.zeros(2)}, angles


def render_args():
    r = rng(218)
    return r.normal(size=(4, 6)), r.uniform(size=(4, 6, 3)), np.full((4, 6), 0.3), r.uniform(size=(4, 3))


def sliced_wasserstein_args():
    r = rng(219)
    return r.normal(size=(10, 2)), r.normal(size=(10, 2)) * 1.5 + 0.5, r.normal(size=(4, 2))


def mvt_args():
    r = rng(220)
    return {"L": np.tril(r.normal(size=(3, 3)) * 0.3), "loc": r.normal(size=3) * 0.1}, r.standard_t(5, size=(15, 3))


def sir_args():
    return np.log(np.array([0.45, 0.2])), np.array([12.0, 40.0, 95.0, 120.0, 80.0])


LINEAR_MODEL = ml.LinearModel(*huber_args()[1:])
RIDGE_OBJECTIVE = ml.RidgeObjective(*huber_args()[1:])


# ---- field4.py --------------------------------------------------------------------------------------
def mala_args():
    r = rng(301)
    A = r.normal(size=(3, 3))
    return np.array([0.4, -0.2, 0.7]), r.normal(size=3), np.log(0.8), A @ A.T / 3 + np.eye(3)


def ista_args():
    r = rng(302)
    X, X_val = r.normal(size=(30, 4)) * 0.5, r.normal(size=(10, 4)) * 0.5
    w_true = np.array([0.8, 0.0, -0.5, 0.0])
    log_exposure = np.log(r.uniform(0.5, 2.0, size=30))
    y = r.poisson(np.exp(X @ w_true + log_exposure)).astype(float)
    y_val = r.poisson(np.exp(X_val @ w_true)).astype(float)
    return np.array([0.3, 0.2, -0.1, 0.05]), X, y, log_exposure, X_val, y_val


def enzyme_args():
    t = 0.25 * np.arange(9)
    return np.log(np.array([1.2, 0.8])), 2.0, 2.0 * np.exp(-0.6 * t) + 0.01 * np.cos(7 * t)


def irls_args():
    r = rng(303)
    X, X_test = r.normal(size=(25, 3)), r.normal(size=(10, 3))
    w = np.array([1.0, -2.0, 0.5])
    y = X @ w + 0.3 * r.standard_t(2, size=25)
    return y, X, X_test, X_test @ w


def soft_tree_args():
    r = rng(304)
    X = r.normal(size=(20, 2))
    params = {"w": r.normal(size=(3, 2)), "b": r.normal(size=3) * 0.1, "leaves": r.normal(size=4),
              "temperature": 0.7}
    return params, X, np.sin(X[:, 0]) * np.cos(X[:, 1])


def chaos_args():
    r = rng(305)
    xi = r.normal(size=30)
    return r.normal(size=5) * 0.3, xi, np.exp(0.3 * xi) + 0.05 * r.normal(size=30)


def batched_args():
    r = rng(306)
    X = r.normal(size=(14, 3))
    return r.normal(size=3) * 0.2, X, (X @ np.array([1.0, -1.0, 0.5]) > 0).astype(float)


def ppo_args():
    r = rng(307)
    T = 8
    return (r.normal(size=(3, 2)) * 0.3, r.normal(size=(T, 3)), r.integers(0, 2, size=T),
            np.log(np.full(T, 0.5)) + 0.1 * r.normal(size=T), r.normal(size=T), r.normal(size=T + 1))


def wgan_args():
    r = rng(308)
    params = {"W": r.normal(size=(4, 2)) * 0.7, "b": r.normal(size=4) * 0.1, "v": r.normal(size=4) * 0.5}
    return params, r.normal(size=(5, 2)) + 1.0, r.normal(size=(5, 2)), r.uniform(size=5)


def nca_args():
    r = rng(309)
    X = r.normal(size=(10, 3))
    return np.eye(2, 3) + 0.1 * r.normal(size=(2, 3)), X, (X[:, 0] + 0.3 * X[:, 2] > 0).astype(int)


def choice_args():
    r = rng(310)
    sets = [(r.normal(size=(n, 3)), int(r.integers(0, n))) for n in (2, 4, 3, 5)]
    return np.array([0.5, -0.2, 0.1]), sets


def bayes_linreg_args():
    r = rng(311)
    X = r.normal(size=(15, 3))
    y = X @ np.array([0.7, -1.2, 0.3]) + 0.5 * r.normal(size=15)
    return {"mean": r.normal(size=3) * 0.1, "log_sd": np.full(3, -1.0)}, X, y, r.normal(size=(6, 3))


def tukey_args():
    r = rng(312)
    X = r.normal(size=(12, 2))
    y = X @ np.array([2.0, -1.0]) + np.where(np.arange(12) % 5 == 0, 8.0, 0.3 * r.normal(size=12))
    return np.array([1.5, -0.5]), X, y


def silhouette_args():
    u, v = np.meshgrid(np.linspace(-0.3, 0.3, 4), np.linspace(-0.3, 0.3, 4))
    d = np.stack([u.ravel(), v.ravel(), np.ones(16)], axis=1)
    d = d / np.linalg.norm(d, axis=1, keepdims=True)
    target = (np.linalg.norm(d[:, :2] / d[:, 2:] - np.array([0.05, -0.05]), axis=1) < 0.2).astype(float)
    return np.array([0.1, 0.0, 3.0]), np.log(0.5), d, target


CASES = [
    Case("mlp", ml.mlp_loss, mlp_args),
    Case("logistic_regression", ml.logistic_loss, logistic_args),
    Case("softmax_regression", ml.softmax_regression_loss, softmax_args),
    Case("polynomial_features", ml.poly_fit_loss, poly_args, transforms=("value_and_grad", "hessian")),
    Case("ridge_closed_form", ml.ridge_validation_loss, ridge_args, transforms=("value_and_grad", "hessian")),
    Case("poisson_glm", ml.poisson_nll, poisson_args, transforms=("value_and_grad", "hessian")),
    Case("negative_binomial_glm", ml.negbin_nll, negbin_args, transforms=("value_and_grad", "hessian")),
    Case("cnn_1d", ml.cnn_loss, cnn_args),
    Case("gru_namedtuple", ml.gru_loss, gru_args),
    Case("lstm", ml.lstm_loss, lstm_args),
    Case("transformer_block", ml.transformer_loss, transformer_args, static_argnums=(2,)),
    Case("causal_attention", ml.causal_attention_loss,
         lambda: ({k: w for k, w in zip(("Wq", "Wk", "Wv"), rng(22).normal(size=(3, 4, 4)) * 0.5)},
                  rng(23).normal(size=(5, 4)))),
    Case("vae_elbo", ml.neg_elbo, vae_args),
    Case("tree_rnn", ml.tree_rnn_loss, tree_args, argnums=(0, 1, 2)),
    Case("gmm", ml.gmm_nll, gmm_args),
    Case("huber_partial", ml.huber_loss_tight, huber_args),
    Case("bound_method", LINEAR_MODEL.loss, lambda: huber_args()[:1]),
    Case("callable_object", RIDGE_OBJECTIVE, lambda: huber_args()[:1]),
    Case("standardized_regression", ml.standardized_regression_loss, standardized_args),
    Case("poisson_deviance", ml.poisson_deviance, poisson_args),
    Case("maml", ml.maml_loss, maml_args),
    Case("polynomial_at_point", ml.polynomial_at_point, lambda: (np.array([0.5, -1.0, 2.0, 0.3]),),
         transforms=("value_and_grad", "hessian")),
    Case("gp_marginal_likelihood", sci.gp_neg_log_marginal, gp_args, transforms=("value_and_grad", "hessian")),
    Case("nbody_leapfrog", sci.nbody_loss, nbody_args),
    Case("rk4_ode_fit", sci.ode_fit_loss, ode_args),
    Case("rk4_jacobian", sci.ode_final_state, lambda: ode_args()[:2], transforms=("jacfwd",)),
    Case("newton_in_loss", sci.newton_loss, lambda: (np.array([0.5, 0.8]),), transforms=("value_and_grad", "hessian")),
    Case("black_scholes_book", sci.call_book_value,
         lambda: (np.array([95.0, 100.0, 110.0]), np.array([100.0, 100.0, 100.0]), 0.5, 0.03, 0.25),
         argnums=(0, 2, 3, 4)),
    Case("black_scholes_deltas", sci.call_prices,
         lambda: (np.array([95.0, 100.0, 110.0]), np.array([100.0, 100.0, 100.0]), 0.5, 0.03, 0.25),
         transforms=("jacfwd", "jacrev")),
    Case("kalman_filter", sci.kalman_loglik, kalman_args),
    Case("bundle_adjustment", sci.ba_residual_norm, ba_args, static_argnums=(1,)),
    Case("pendulum_drift", sci.pendulum_drift, lambda: (np.array([0.8, 0.3]), 0.01, 30),
         transforms=("value_and_grad", "hessian")),
    Case("lennard_jones", sci.lennard_jones_energy, lennard_jones_args, transforms=("value_and_grad", "hessian")),
    Case("calibration_curve", sci.calibration_loss, calibration_args),
    Case("cubic_spline", sci.spline_bending_energy, lambda: (np.sin(np.linspace(0, 3, 8)), 0.4),
         argnums=(0, 1), reference="fd"),
    Case("soft_dtw", sci.soft_dtw, dtw_args, argnums=(0, 1), reference="fd"),
    Case("heat_equation", sci.heat_loss, heat_args, argnums=(0, 1)),
    Case("bernoulli_vae", mod.vae_loss, bernoulli_vae_args),
    Case("ard_gaussian_process", mod.gp_posterior_objective, ard_gp_args),
    Case("projectile_with_drag", mod.projectile_loss, projectile_args, transforms=("value_and_grad", "jacfwd")),
    Case("kalman_smoother_factories", fac.kalman_smoother_loss, kalman_smoother_args,
         transforms=("value_and_grad", "hessian")),
    Case("mixture_density_network", fac.mdn_nll, mdn_args),
    Case("neural_ode_rk4", fac.neural_ode_loss, neural_ode_args),
    Case("laplace_evidence", fac.negative_laplace_evidence, laplace_args, transforms=("value_and_grad", "hessian")),
    Case("reinforce_policy_gradient", fl.reinforce_loss, reinforce_args),
    Case("sinkhorn_transport", fl.sinkhorn_loss, sinkhorn_args, argnums=(0, 1)),
    Case("crf_forward_algorithm", fl.crf_nll, crf_args),
    Case("matern_gaussian_process", fl.matern_gp_nll, matern_args, transforms=("value_and_grad", "hessian")),
    Case("convnet_im2col_maxpool", fl.convnet_loss, convnet_args),
    Case("hmc_leapfrog", fl.hmc_log_accept, lambda: (np.log(0.45), np.array([0.5, -0.3]), np.array([1.5, -1.0])),
         argnums=(0, 1, 2)),
    Case("bspline_fit", fl.bspline_fit_loss, bspline_args,
         native=False),  # ~25 s to compile natively (checked by hand: the same values)
    Case("spring_chain_until_converged", fl.spring_equilibrium,
         lambda: (np.log(np.array([20.0, 15.0, 25.0, 18.0])), np.array([0.5, 0.4, 0.6, 0.5]),
                  np.array([0.3, 0.2, 0.4, 0.25])), argnums=(0, 1, 2)),
    Case("lr_schedule_hyperparameters", fl.trained_validation_loss, schedule_args),
    Case("masked_multihead_attention", fl.masked_attention_loss, masked_attention_args, argnums=(0, 1)),
    Case("poisson_glm_offsets", fl.poisson_offset_nll, poisson_offset_args, transforms=("value_and_grad", "hessian")),
    Case("gaussian_copula", fl.copula_nll, copula_args, reference="fd"),
    Case("dropout_mlp_pairs", fl.dropout_mlp_loss, dropout_mlp_args),
    Case("residual_net_config", fl.residual_net_loss, residual_net_args),
    Case("poisson_gamma_counts", fl.poisson_gamma_nll, poisson_gamma_args, reference="fd"),
    Case("student_t_regression", fl.student_t_nll, student_t_args, reference="fd"),
    Case("beta_binomial", fl.beta_binomial_nll,  # scipy's betaln: JAX's is 1.5e-7 off at (9, 3)
         lambda: (np.array([0.3, 0.7]), np.array([2.0, 5.0, 1.0, 7.0]), np.array([10.0, 10.0, 8.0, 12.0])),
         reference="fd"),
    Case("first_passage_early_return", fl.first_passage_cost,
         lambda: (np.array([0.3, 0.05]), rng(64).normal(size=30))),
    Case("spectral_penalty", fl.spectral_loss, lambda: (rng(65).normal(size=9), np.array([1.0, 2.0, 3.0]))),
    Case("piecewise_smoothing", fl.piecewise_smooth_loss,
         lambda: (np.array([0.5, -0.3, 1.2]), np.linspace(-2, 2, 9), np.cos(np.linspace(-2, 2, 9)))),
    Case("affine_coupling_flow", f2.flow_nll, flow_args),
    Case("skipgram_negative_sampling", f2.skipgram_loss, skipgram_args),
    Case("cox_partial_likelihood", f2.cox_partial_nll, cox_args),
    Case("weibull_survival_dataclass", f2.weibull_nll, weibull_args, reference="fd"),  # JAX takes no dataclass
    Case("garch_11", f2.garch_nll, lambda: (np.array([np.log(0.1), -1.0, 1.0]), rng(74).standard_t(5, size=12) * 0.5),
         transforms=("value_and_grad", "hessian")),
    Case("factorisation_machine", f2.fm_loss, fm_args),
    Case("pairwise_ranking_hinge", f2.ranking_loss,
         lambda: (rng(76).normal(size=3), rng(86).normal(size=(8, 3)), rng(87).integers(0, 3, size=8).astype(float))),
    Case("info_nce", f2.contrastive_loss, infonce_args),
    Case("gumbel_softmax", f2.relaxed_choice_loss,
         lambda: (rng(78).normal(size=4), rng(88).uniform(0.01, 0.99, size=(8, 4)), np.array([1.0, -0.5, 2.0, 0.3]))),
    Case("bayesian_linear_evidence", f2.neg_log_evidence, blr_args, transforms=("value_and_grad", "hessian")),
    Case("lotka_volterra_namedtuple", f2.lv_fit_loss, lotka_volterra_args, transforms=("value_and_grad", "jacfwd")),
    Case("poisson_mixture_em_steps", f2.poisson_mixture_loss, poisson_mixture_args, argnums=(0, 1)),
    Case("label_smoothing", f2.label_smoothing_loss, label_smoothing_args),
    Case("jacobi_poisson_2d", f2.poisson_inverse_loss, jacobi_args),
    Case("quantile_regression", f2.quantile_loss, quantile_args),
    Case("arma_css", f2.arma_css, arma_args, reference="fd"),  # writes into an array
    Case("kepler_radial_velocity", f2.rv_loss, radial_velocity_args),
    Case("dirichlet_multinomial_fixed_point", f2.dirmult_after_steps,
         lambda: (np.log(np.array([1.0, 2.0, 0.5])), rng(92).integers(0, 6, size=(8, 3)).astype(float)),
         native=False),  # ~18 s to compile natively (digamma's series; checked by hand: the same values)
    Case("mean_field_ising", f2.ising_free_energy, ising_args, argnums=(0, 1)),
    Case("tobit_censored", f2.tobit_nll, tobit_args, transforms=("value_and_grad", "hessian")),
    Case("ordinal_cutpoints", f2.ordinal_nll,  # JAX's concatenate takes no lists ([-np.inf]): central differences
         lambda: ({"w": np.array([0.5, -0.5]), "cuts": np.array([-0.5, 0.0, 0.2])}, rng(95).normal(size=(15, 2)),
                  rng(85).integers(0, 4, size=15)), reference="fd"),
    Case("portfolio_cvar", f2.portfolio_objective,
         lambda: (0.1 * rng(96).normal(size=4), rng(89).normal(size=(30, 4)) * 0.02 + 0.001)),
    Case("item_response_2pl", f2.irt_nll, irt_args),
    Case("mlp_named_activations", f2.named_mlp_loss, named_mlp_args),
    Case("kernel_ridge_cho_solve", f2.kernel_ridge_loss, kernel_ridge_args, reference="fd"),  # scipy.linalg
    Case("ctmc_expm", f2.ctmc_nll, ctmc_args, reference="fd"),  # scipy.linalg.expm: JAX's twin would call scipy's
    Case("simclr_nt_xent", f2.simclr_loss,
         lambda: (rng(101).normal(size=(3, 4)) * 0.5, rng(102).normal(size=(4, 3)), rng(103).normal(size=(4, 3)))),
    Case("flat_mlp_global_layout", f2.flat_mlp_loss,
         lambda: (rng(104).normal(size=25) * 0.4, rng(105).normal(size=(12, 2)), rng(106).normal(size=12))),
    Case("pca_reconstruction", f2.pca_reconstruction,
         lambda: (rng(100).normal(size=(12, 4)) @ np.diag([3.0, 2.0, 1.0, 0.5]),)),
    Case("wave_on_a_ring", f2.wave_energy, lambda: (np.sin(2 * np.pi * np.linspace(0, 1, 16, endpoint=False)), 1.0),
         argnums=(0, 1)),
    Case("hmm_forward_log_space", fl3.hmm_loss, hmm_args),
    Case("hawkes_process", fl3.hawkes_nll, hawkes_args),  # its assert on a value: jax.jit (the hessian) refuses it
    Case("stochastic_volatility_particle_filter", fl3.sv_loss, sv_args),
    Case("zero_inflated_poisson", fl3.zip_nll, zip_args),
    Case("elastic_net_path", fl3.elastic_net_path, elastic_net_args),
    Case("procrustes_svd", fl3.procrustes_residual, procrustes_args),
    Case("squared_hinge_svm", fl3.svm_objective, svm_args),
    Case("tsne_objective", fl3.tsne_kl, tsne_args),
    Case("lqr_rollout", fl3.lqr_cost, lqr_args, transforms=("value_and_grad", "hessian")),
    Case("finite_element_bar", fl3.bar_compliance,  # writes into an array
         lambda: (np.log(np.array([1.0, 2.0, 1.5, 0.8])), np.array([0.0, 0.1, 0.0, 1.0])), reference="fd"),
    Case("two_compartment_pk", fl3.pk_loss, pk_args),
    Case("inverse_kinematics_arm", fl3.ik_loss,
         lambda: (np.array([0.3, 0.5, -0.2]), np.array([1.0, 0.8, 0.5]), np.array([1.2, 1.1])),
         transforms=("value_and_grad", "hessian")),
    Case("benchmark_functions_by_name", fl3.benchmark_suite, lambda: (np.array([0.5, -0.3, 1.2, 0.8]),),
         transforms=("value_and_grad", "hessian")),
    Case("beta_vae_kl_softplus", fl3.beta_vae_kl, beta_vae_args),
    Case("mixture_of_experts", fl3.moe_loss, moe_args),
    Case("focal_loss", fl3.focal_loss,
         lambda: (rng(221).normal(size=3) * 0.5, rng(222).normal(size=(20, 3)),
                  (rng(223).uniform(size=20) < 0.2).astype(float))),
    Case("dice_segmentation", fl3.segmentation_loss,
         lambda: (rng(224).normal(size=3), rng(225).normal(size=(2, 4, 4, 3)),
                  (rng(226).uniform(size=(2, 4, 4)) < 0.4).astype(float))),
    Case("triplet_embedding", fl3.triplet_loss, triplet_args),
    Case("rbm_contrastive_divergence", fl3.cd_loss, rbm_args, reference="fd"),  # JAX takes no dataclass
    Case("implicit_euler_state_space", fl3.ssm_fit, ssm_args),
    Case("tv_poisson_denoising", fl3.tv_poisson_loss, tv_args),
    Case("kuramoto_oscillators", fl3.kuramoto_order,
         lambda: (1.5, rng(227).normal(size=5) * 0.5, rng(228).uniform(0, 2 * np.pi, size=5)), argnums=(0, 1)),
    Case("graph_attention", fl3.gat_loss, gat_args),
    Case("unet_1d_skip", fl3.unet_loss, unet_args),
    Case("bradley_terry", fl3.bradley_terry_nll,
         lambda: (np.zeros(5) + 0.1 * rng(229).normal(size=5), np.array([0, 1, 2, 0, 3, 4, 1, 2]),
                  np.array([1, 2, 3, 4, 0, 1, 3, 4])), transforms=("value_and_grad", "hessian")),
    Case("von_mises_mixture", fl3.von_mises_mixture_nll, von_mises_args),
    Case("volume_rendering", fl3.render_loss, render_args),
    Case("sliced_wasserstein_sort", fl3.sliced_wasserstein, sliced_wasserstein_args, argnums=(0, 1)),
    Case("multivariate_t_cholesky", fl3.mvt_nll, mvt_args, reference="fd"),  # scipy.linalg
    Case("sir_epidemic", fl3.sir_poisson_nll, sir_args),
    Case("mala_log_accept", fl4.mala_log_accept, mala_args, argnums=(0, 2), transforms=("value_and_grad", "jacfwd")),
    Case("ista_poisson_offset", fl4.ista_validation_nll, ista_args),
    Case("heun_enzyme_nonlocal_counter", fl4.enzyme_fit_loss, enzyme_args, transforms=("value_and_grad", "hessian")),
    Case("irls_huber_regression", fl4.irls_prediction_error, irls_args),
    Case("soft_decision_tree_recursive", fl4.soft_tree_loss, soft_tree_args,
         refused="a recursive helper's int arguments are run-time values: its leaf returns a number, the other "
                 "path an array"),
    Case("polynomial_chaos_generator", fl4.chaos_surrogate_loss, chaos_args, refused="a generator function"),
    Case("minibatches_from_a_generator", fl4.batched_logistic_loss, batched_args, refused="a generator function"),
    Case("armijo_line_search_for_else", fl4.after_two_steps, lambda: (np.array([-1.2, 1.0, 0.5]),),
         reference="fd"),  # writes into an array
    Case("ppo_clipped_gae", fl4.ppo_loss, ppo_args),
    Case("wgan_gradient_penalty", fl4.critic_loss, wgan_args),
    Case("loo_kde_bandwidth", fl4.loo_kde_loglik, lambda: (np.log(0.4), rng(313).normal(size=12)),
         transforms=("value_and_grad", "hessian")),
    Case("neighbourhood_components", fl4.nca_objective, nca_args),
    Case("conditional_logit_choice_sets", fl4.choice_nll, choice_args, transforms=("value_and_grad", "hessian")),
    Case("bayesian_linreg_mean_field_elbo", fl4.bayes_linreg_elbo, bayes_linreg_args),
    Case("tukey_biweight_vectorize", fl4.tukey_regression_loss, tukey_args,
         reference="fd"),  # jnp.vectorize is a vmap, whose trace cannot branch on the residual
    Case("ray_sphere_silhouette", fl4.silhouette_loss, silhouette_args, argnums=(0, 1)),
]
