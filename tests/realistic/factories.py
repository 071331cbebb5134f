"""Programs that build their pieces inside, as a JAX user writes them: a Kalman
smoother whose predict and update steps come from factories that return
closures, a mixture density network whose heads a helper gathers into a dict
and whose likelihood is scipy.special.logsumexp of scipy.stats.norm.logpdf, a
neural ODE whose vector field `make_dynamics(params)` returns and an RK4
integrator takes, and a Bayesian logistic regression whose Laplace evidence
finds the mode by Newton's method with irad.grad and irad.hessian of a lambda."""

import numpy as np
from scipy.special import logsumexp
from scipy.stats import norm

import irad


# ---- a Kalman filter and Rauch-Tung-Striebel smoother, constant-velocity model --------
def make_predict(dt, q):
    F = np.array([[1.0, dt], [0.0, 1.0]])
    Q = q * np.array([[dt ** 3 / 3, dt ** 2 / 2], [dt ** 2 / 2, dt]])

    def predict(m, P):
        return F @ m, F @ P @ F.T + Q

    return predict, F


def make_update(r):
    H = np.array([1.0, 0.0])

    def update(m, P, y):
        S = H @ P @ H + r
        K = P @ H / S
        innovation = y - H @ m
        return m + K * innovation, P - np.outer(K, K) * S, -0.5 * (np.log(2 * np.pi * S) + innovation ** 2 / S)

    return update


def kalman_smoother_loss(theta, ys, dt):
    log_q, log_r, v0 = theta
    predict, F = make_predict(dt, np.exp(log_q))
    update = make_update(np.exp(log_r))
    m, P = np.array([ys[0], v0]), np.eye(2)
    filtered, predicted = [], []
    loglik = 0.0
    for y in ys:
        m_pred, P_pred = predict(m, P)
        m, P, ll = update(m_pred, P_pred, y)
        loglik += ll
        predicted.append((m_pred, P_pred))
        filtered.append((m, P))
    m_s, P_s = filtered[-1]
    smoothed = [m_s[0]]
    for t in range(len(ys) - 2, -1, -1):
        m_f, P_f = filtered[t]
        m_p, P_p = predicted[t + 1]
        G = P_f @ F.T @ np.linalg.inv(P_p)
        m_s = m_f + G @ (m_s - m_p)
        smoothed.append(m_s[0])
    positions = np.array(smoothed[::-1])
    return -loglik + 0.5 * np.sum((positions - ys) ** 2)


# ---- a mixture density network ---------------------------------------------------------------
def dense(params, name, x):
    return x @ params[f"{name}_W"] + params[f"{name}_b"]


def mixture_heads(params, h):
    heads = {}
    for name in ("logits", "mu", "log_sigma"):
        heads[name] = dense(params, name, h)
    return heads


def mdn_nll(params, x, y):
    h = np.tanh(dense(params, "hidden", x))
    out = mixture_heads(params, h)
    log_pi = out["logits"] - logsumexp(out["logits"], axis=1, keepdims=True)
    log_components = norm.logpdf(y[:, None], out["mu"], np.exp(out["log_sigma"]))
    return -np.mean(logsumexp(log_pi + log_components, axis=1))


# ---- a neural ODE integrated by RK4 --------------------------------------------------------
def make_dynamics(params):
    def dynamics(t, y):
        h = np.tanh(params["W1"] @ y + params["b1"] + t * params["wt"])
        return params["W2"] @ h

    return dynamics


def rk4_step(f, t, y, dt):
    k1 = f(t, y)
    k2 = f(t + dt / 2, y + dt / 2 * k1)
    k3 = f(t + dt / 2, y + dt / 2 * k2)
    k4 = f(t + dt, y + dt * k3)
    return y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def odeint(f, y0, ts):
    ys = [y0]
    for i in range(len(ts) - 1):
        ys.append(rk4_step(f, ts[i], ys[-1], ts[i + 1] - ts[i]))
    return np.stack(ys)


def neural_ode_loss(params, y0, ts, targets):
    trajectory = odeint(make_dynamics(params), y0, ts)
    return np.mean((trajectory - targets) ** 2) + 1e-3 * sum(np.sum(w ** 2) for w in params.values())


# ---- Bayesian logistic regression: the Laplace approximation of the evidence ------------
def log_joint(w, X, y, log_alpha):
    logits = X @ w
    return np.sum(y * logits - np.logaddexp(0.0, logits)) - 0.5 * np.exp(log_alpha) * (w @ w)


def negative_laplace_evidence(log_alpha, X, y):
    d = X.shape[1]
    w = np.zeros(d)
    negative = lambda v: -log_joint(v, X, y, log_alpha)  # noqa: E731
    gradient, hessian = irad.grad(negative), irad.hessian(negative)
    for _ in range(6):  # Newton's method to the mode
        w = w - np.linalg.solve(hessian(w), gradient(w))
    L = np.linalg.cholesky(hessian(w))
    return -(log_joint(w, X, y, log_alpha) + 0.5 * d * log_alpha - np.sum(np.log(np.diag(L))))
