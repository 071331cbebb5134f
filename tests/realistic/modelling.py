"""Probabilistic models and a simulation, written as a JAX user writes them: a
Bernoulli VAE's ELBO with scipy.special and a keyword-only beta, a Gaussian
process with ARD length scales in a params dict, and a projectile with drag
whose trajectory grows as a list and is resampled by np.interp."""

import numpy as np
from scipy.special import expit, xlog1py, xlogy
from scipy.stats import norm


# ---- a Bernoulli VAE: the negative beta-ELBO of binary data --------------------------
def encode(params, x):
    h = np.tanh(x @ params["enc_W"] + params["enc_b"])
    return h @ params["mu_W"], h @ params["logsig_W"]


def decode(params, z):
    return np.tanh(z @ params["dec_W1"]) @ params["dec_W2"] + params["dec_b"]


def bernoulli_log_likelihood(x, logits):
    p = expit(logits)
    return np.sum(xlogy(x, p) + xlog1py(1.0 - x, -p))


def negative_elbo(params, x, eps, *, beta=1.0):
    mu, log_sigma = encode(params, x)
    z = mu + np.exp(log_sigma) * eps
    kl = 0.5 * np.sum(np.exp(2 * log_sigma) + mu ** 2 - 1.0 - 2 * log_sigma)
    return -(bernoulli_log_likelihood(x, decode(params, z)) - beta * kl) / x.shape[0]


def vae_loss(params, x, eps):
    decay = {k: 1e-3 * np.sum(w ** 2) for k, w in params.items() if k.endswith("W") or k.endswith("W1")}
    return negative_elbo(params, x, eps, beta=0.5) + sum(decay.values())


# ---- a Gaussian process with ARD length scales and a log-normal prior ----------------
def ard_kernel(X1, X2, lengthscales, signal):
    d = (X1[:, None, :] - X2[None, :, :]) / lengthscales
    return signal * np.exp(-0.5 * np.sum(d ** 2, axis=-1))


def gp_posterior_objective(log_params, X, y):
    p = {name: np.exp(value) for name, value in log_params.items()}
    n = len(y)
    K = ard_kernel(X, X, p["lengthscales"], p["signal"]) + (p["noise"] + 1e-6) * np.eye(n)
    L = np.linalg.cholesky(K)
    alpha = np.linalg.solve(L.T, np.linalg.solve(L, y))
    nll = 0.5 * y @ alpha + np.sum(np.log(np.diag(L))) + 0.5 * n * np.log(2 * np.pi)
    log_prior = sum(np.sum(norm.logpdf(v, 0.0, 1.5)) for v in log_params.values())
    return nll - log_prior


# ---- a projectile with quadratic drag, fitted to heights observed at distances ----------
def simulate(theta, n_steps, dt):
    v0, angle, log_drag = theta
    pos = np.array([0.0, 0.0])
    vel = v0 * np.array([np.cos(angle), np.sin(angle)])
    gravity = np.array([0.0, -9.81])
    trajectory = [pos]
    for _ in range(n_steps):
        speed = np.sqrt(vel @ vel)
        vel = vel + dt * (gravity - np.exp(log_drag) * speed * vel)
        pos = pos + dt * vel
        trajectory.append(pos)
    return np.stack(trajectory)


def projectile_loss(theta, x_obs, y_obs):
    path = simulate(theta, 30, 0.04)
    heights = np.interp(x_obs, path[:, 0], path[:, 1])
    return np.mean((heights - y_obs) ** 2)
