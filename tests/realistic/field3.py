"""Thirty more programs of domains the other modules do not cover, written first
as a numpy/JAX user writes them (issue 32): a hidden Markov model's forward
algorithm in log space, a Hawkes process likelihood, a stochastic-volatility
particle filter with its noise given, a zero-inflated Poisson GLM, an elastic-net
path, an orthogonal Procrustes alignment by SVD, a linear SVM, a t-SNE objective,
an LQR rollout, a 1-D finite-element bar, a two-compartment pharmacokinetic
model, an inverse-kinematics arm, optimisation test functions chosen by name, a
beta-VAE's KL term, a mixture of experts, focal, Dice and triplet losses, an
RBM's free energy, an implicit-Euler state-space model, a total-variation
Poisson denoiser, Kuramoto oscillators, a graph attention layer, a small 1-D
U-Net, a Bradley-Terry ranking model, a von Mises mixture, volume rendering, a
sliced Wasserstein distance, a multivariate Student-t likelihood by Cholesky,
and an SIR epidemic."""

import dataclasses
import functools
import math
from typing import NamedTuple

import numpy as np
import scipy.linalg
from scipy.special import expit, gammaln, i0e, log_softmax, logsumexp, softmax, xlogy

EPS = 1e-8


# ---- a hidden Markov model: the forward algorithm in log space ---------------------------------------
def hmm_log_likelihood(params, observations):
    """log p(observations) of a discrete HMM whose parameters are unconstrained logits."""
    log_pi = log_softmax(params["initial"])
    log_A = log_softmax(params["transition"], axis=1)
    log_B = log_softmax(params["emission"], axis=1)
    log_alpha = log_pi + log_B[:, observations[0]]
    for obs in observations[1:]:
        log_alpha = logsumexp(log_alpha[:, None] + log_A, axis=0) + log_B[:, obs]
    return logsumexp(log_alpha)


def hmm_loss(params, sequences):
    return -sum(hmm_log_likelihood(params, seq) for seq in sequences) / len(sequences)


# ---- a self-exciting (Hawkes) process with an exponential kernel -------------------------------------
def hawkes_nll(log_params, times, horizon):
    mu, alpha, beta = np.exp(log_params)
    assert alpha < beta, f"the process must be stationary: alpha={alpha} >= beta={beta}"
    log_lik = 0.0
    excitation = 0.0
    prev = 0.0
    for t in times:
        excitation = excitation * np.exp(-beta * (t - prev))
        log_lik += np.log(mu + alpha * excitation)
        excitation += 1.0
        prev = t
    compensator = mu * horizon + alpha / beta * np.sum(1 - np.exp(-beta * (horizon - times)))
    return -(log_lik - compensator)


# ---- a stochastic-volatility model: a bootstrap particle filter with fixed noise ------------------------
class SVParams(NamedTuple):
    mu: float
    phi: float
    sigma: float


def sv_particle_loglik(theta, returns, noise):
    p = SVParams(theta[0], np.tanh(theta[1]), np.exp(theta[2]))
    n_particles = noise.shape[1]
    h = p.mu + p.sigma / np.sqrt(1 - p.phi ** 2) * noise[0]
    log_weights = np.full(n_particles, -np.log(n_particles))
    total = 0.0
    for t, r in enumerate(returns):
        if t > 0:
            h = p.mu + p.phi * (h - p.mu) + p.sigma * noise[t]
        log_obs = -0.5 * (np.log(2 * np.pi) + h + r ** 2 * np.exp(-h))
        log_weights = log_weights + log_obs
        step = logsumexp(log_weights)
        total += step
        log_weights = log_weights - step          # normalised; no resampling keeps it smooth
    return total


def sv_loss(theta, returns, noise):
    return -sv_particle_loglik(theta, returns, noise)


# ---- a zero-inflated Poisson GLM ------------------------------------------------------------------------
def zip_nll(params, X, y):
    rate = np.exp(X @ params["beta"])
    pi = expit(X @ params["gamma"])
    log_poisson = xlogy(y, rate) - rate - gammaln(y + 1)
    zero = np.log(pi + (1 - pi) * np.exp(-rate))
    nonzero = np.log1p(-pi) + log_poisson
    return -np.sum(np.where(y == 0, zero, nonzero))


# ---- an elastic-net objective along a path of penalties ----------------------------------------------------
def elastic_net(w, X, y, lam, l1_ratio=0.5):
    resid = y - X @ w
    smooth_l1 = np.sum(np.sqrt(w ** 2 + 1e-6))          # a smoothed |w|
    return 0.5 * np.mean(resid ** 2) + lam * (l1_ratio * smooth_l1 + (1 - l1_ratio) / 2 * np.sum(w ** 2))


def elastic_net_path(W, X, y, lambdas=(1.0, 0.3, 0.1, 0.03)):
    assert W.shape[0] == len(lambdas), f"one row of weights per penalty, got {W.shape[0]} for {len(lambdas)}"
    losses = [elastic_net(w, X, y, lam) for w, lam in zip(W, lambdas)]
    return np.sum(np.stack(losses))


# ---- orthogonal Procrustes: the best rotation by SVD ------------------------------------------------------
def procrustes_residual(A, B):
    """min over orthogonal R of ||A R - B||^2, as a function of A."""
    A0 = A - A.mean(axis=0)
    B0 = B - B.mean(axis=0)
    U, s, Vt = np.linalg.svd(A0.T @ B0)
    R = U @ Vt
    return np.sum((A0 @ R - B0) ** 2)


# ---- a linear SVM: squared-hinge loss with L2 ----------------------------------------------------------------
def svm_objective(params, X, y, C=1.0):
    w, b = params
    margins = y * (X @ w + b)
    hinge = np.maximum(0.0, 1.0 - margins)
    return 0.5 * w @ w + C * np.mean(hinge ** 2)


# ---- the t-SNE objective ---------------------------------------------------------------------------------
def pairwise_sq_dists(Y):
    sq = np.sum(Y ** 2, axis=1)
    return sq[:, None] + sq[None, :] - 2 * Y @ Y.T


def tsne_kl(Y, P):
    n = Y.shape[0]
    num = 1.0 / (1.0 + pairwise_sq_dists(Y))
    num = num * (1 - np.eye(n))
    Q = num / num.sum()
    mask = ~np.eye(n, dtype=bool)
    return np.sum(P[mask] * np.log(P[mask] / np.maximum(Q[mask], 1e-12)))


# ---- an LQR rollout: the cost of a linear feedback gain -------------------------------------------------------
def lqr_cost(K, A, B, x0, horizon=20, q=1.0, r=0.1):
    x = x0
    cost = 0.0
    states = []
    for _ in range(horizon):
        u = -K @ x
        cost = cost + q * x @ x + r * u @ u
        x = A @ x + B @ u
        states.append(x)
    terminal = np.stack(states)[-1]
    return cost + 10.0 * terminal @ terminal


# ---- a 1-D finite-element bar: compliance of a stiffness assembled element by element --------------------------
def bar_compliance(log_E, load, length=1.0):
    n_el = len(log_E)
    h = length / n_el
    K = np.zeros((n_el + 1, n_el + 1))
    for e in range(n_el):
        k = np.exp(log_E[e]) / h
        K[e:e + 2, e:e + 2] += k * np.array([[1.0, -1.0], [-1.0, 1.0]])
    K_free = K[1:, 1:]                                # node 0 is clamped
    u = np.linalg.solve(K_free, load)
    return load @ u + 0.01 * np.sum(np.diff(log_E) ** 2)


# ---- a two-compartment pharmacokinetic model fitted to concentrations ---------------------------------------------
def pk_rhs(state, p):
    central, peripheral = state
    flow = p["k12"] * central - p["k21"] * peripheral
    return np.array([-p["k10"] * central - flow, flow])


def pk_simulate(p, dose, dt, n_steps):
    state = np.array([dose, 0.0])
    trajectory = [state]
    for _ in range(n_steps):
        state = state + dt * pk_rhs(state, p)
        trajectory.append(state)
    return np.stack(trajectory)


def pk_loss(log_rates, dose, observed, sample_every=5, dt=0.05):
    p = dict(zip(("k10", "k12", "k21"), np.exp(log_rates)))
    volume = 2.0
    traj = pk_simulate(p, dose, dt, sample_every * (len(observed) - 1))
    conc = traj[::sample_every, 0] / volume
    return np.sum((np.log(conc) - np.log(observed)) ** 2)


# ---- inverse kinematics of a planar arm ------------------------------------------------------------------------
def forward_kinematics(angles, lengths):
    cumulative = np.cumsum(angles)
    x = np.sum(lengths * np.cos(cumulative))
    y = np.sum(lengths * np.sin(cumulative))
    return np.array([x, y])


def ik_loss(angles, lengths, target, reg=1e-2):
    tip = forward_kinematics(angles, lengths)
    return np.sum((tip - target) ** 2) + reg * np.sum(np.diff(angles) ** 2)


# ---- optimisation test functions chosen by name ----------------------------------------------------------------
def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def rastrigin(x, A=10.0):
    return A * len(x) + np.sum(x ** 2 - A * np.cos(2 * np.pi * x))


def ackley(x, a=20.0, b=0.2, c=2 * np.pi):
    d = len(x)
    return (-a * np.exp(-b * np.sqrt(np.sum(x ** 2) / d)) - np.exp(np.sum(np.cos(c * x)) / d)
            + a + np.e)


def benchmark(x, name):
    if name == "rosenbrock":
        return rosenbrock(x)
    elif name == "rastrigin":
        return rastrigin(x)
    elif name == "ackley":
        return ackley(x)
    raise ValueError(f"unknown benchmark {name!r}")


def benchmark_suite(x, weights={"rosenbrock": 1.0, "rastrigin": 0.1, "ackley": 1.0}):
    return sum(w * benchmark(x, name) for name, w in weights.items())


# ---- a beta-VAE's KL term with a softplus scale ------------------------------------------------------------------
def softplus(x):
    return np.logaddexp(0.0, x)


def beta_vae_kl(enc, x, beta=4.0):
    h = np.tanh(x @ enc["W"] + enc["b"])
    mu, raw = np.split(h @ enc["W_out"], 2, axis=-1)
    sigma = softplus(raw) + 1e-4
    kl = 0.5 * np.sum(mu ** 2 + sigma ** 2 - 1 - 2 * np.log(sigma), axis=-1)
    return beta * kl.mean()


# ---- a mixture of experts with softmax gating --------------------------------------------------------------------
def moe_predict(params, x):
    gates = softmax(x @ params["gate"], axis=-1)                      # (n, E)
    experts = np.stack([np.tanh(x @ W) @ v for W, v in zip(params["W"], params["v"])], axis=1)  # (n, E)
    return np.sum(gates * experts, axis=1), gates


def moe_loss(params, x, y, balance=0.01):
    pred, gates = moe_predict(params, x)
    load = gates.mean(axis=0)
    return np.mean((pred - y) ** 2) + balance * len(load) * np.sum(load ** 2)


# ---- a focal loss for imbalanced classification --------------------------------------------------------------------
def focal_loss(w, X, y, gamma=2.0, alpha=0.25):
    p = expit(X @ w)
    p_t = np.where(y == 1, p, 1 - p)
    alpha_t = np.where(y == 1, alpha, 1 - alpha)
    return -np.mean(alpha_t * (1 - p_t) ** gamma * np.log(np.clip(p_t, EPS, 1.0)))


# ---- a soft Dice loss for segmentation --------------------------------------------------------------------------------
def dice_loss(logits, target, smooth=1.0):
    probs = expit(logits)
    axes = tuple(range(1, probs.ndim))
    intersection = np.sum(probs * target, axis=axes)
    union = np.sum(probs, axis=axes) + np.sum(target, axis=axes)
    dice = (2 * intersection + smooth) / (union + smooth)
    return 1 - dice.mean()


def segmentation_loss(W, images, masks):
    logits = np.einsum("nhwc,c->nhw", images, W)
    return dice_loss(logits, masks)


# ---- a triplet loss over an embedding network --------------------------------------------------------------------------
def embed(W, x):
    z = np.tanh(x @ W)
    return z / np.linalg.norm(z, axis=-1, keepdims=True)


def triplet_loss(W, anchors, positives, negatives, margin=0.2):
    a, p, n = (embed(W, x) for x in (anchors, positives, negatives))
    d_pos = np.sum((a - p) ** 2, axis=-1)
    d_neg = np.sum((a - n) ** 2, axis=-1)
    return np.mean(np.maximum(d_pos - d_neg + margin, 0.0))


# ---- a restricted Boltzmann machine: contrastive divergence on free energies --------------------------------------------
@dataclasses.dataclass
class RBM:
    W: np.ndarray
    b_visible: np.ndarray
    b_hidden: np.ndarray


def free_energy(rbm, v):
    return -v @ rbm.b_visible - np.sum(np.logaddexp(0, v @ rbm.W + rbm.b_hidden), axis=-1)


def cd_loss(rbm: RBM, v_data, v_model):
    return np.mean(free_energy(rbm, v_data)) - np.mean(free_energy(rbm, v_model))


# ---- a linear state-space model stepped by implicit Euler (np.linalg.solve) -------------------------------------------------
def implicit_euler(A, x0, dt, n_steps):
    I = np.eye(A.shape[0])
    M = I - dt * A
    xs = [x0]
    for _ in range(n_steps):
        xs.append(np.linalg.solve(M, xs[-1]))
    return np.stack(xs)


def ssm_fit(theta, x0, observed, dt=0.1):
    a, b, c, d = theta
    A = np.array([[a, b], [c, d]])
    path = implicit_euler(A, x0, dt, observed.shape[0] - 1)
    return np.sum((path[:, 0] - observed) ** 2)


# ---- total-variation Poisson image denoising ----------------------------------------------------------------------------------
def tv_poisson_loss(log_image, counts, lam=0.5, eps=1e-3):
    image = np.exp(log_image)
    data = np.sum(image - counts * log_image)
    dx = np.diff(log_image, axis=1)[:-1, :]
    dy = np.diff(log_image, axis=0)[:, :-1]
    tv = np.sum(np.sqrt(dx ** 2 + dy ** 2 + eps ** 2))
    return data + lam * tv


# ---- Kuramoto oscillators: the order parameter after a simulation -----------------------------------------------------------------
def kuramoto_step(theta, omega, K, dt):
    diff = theta[None, :] - theta[:, None]
    coupling = K / len(theta) * np.sum(np.sin(diff), axis=1)
    return theta + dt * (omega + coupling)


def kuramoto_order(K, omega, theta0, dt=0.05, n_steps=40):
    theta = theta0
    for _ in range(n_steps):
        theta = kuramoto_step(theta, omega, K, dt)
    re, im = np.mean(np.cos(theta)), np.mean(np.sin(theta))
    return np.sqrt(re ** 2 + im ** 2)


# ---- a graph attention layer over an adjacency mask ---------------------------------------------------------------------------------
def leaky_relu(x, slope=0.2):
    return np.where(x > 0, x, slope * x)


def gat_layer(params, H, adj):
    Wh = H @ params["W"]                                 # (n, f)
    f = Wh.shape[1]
    a_src, a_dst = params["a"][:f], params["a"][f:]
    e = leaky_relu((Wh @ a_src)[:, None] + (Wh @ a_dst)[None, :])
    e = np.where(adj > 0, e, -1e9)
    attn = softmax(e, axis=1)
    return np.tanh(attn @ Wh)


def gat_loss(params, H, adj, labels):
    out = gat_layer(params, H, adj) @ params["readout"]
    return -np.mean(log_softmax(out, axis=1)[np.arange(len(labels)), labels])


# ---- a small 1-D U-Net with skip connections ----------------------------------------------------------------------------------------
def conv1d(x, w, b):
    """'same' convolution of x (length, c_in) with w (k, c_in, c_out)."""
    k = w.shape[0]
    pad = k // 2
    xp = np.pad(x, ((pad, pad), (0, 0)))
    out = sum(xp[i:i + x.shape[0]] @ w[i] for i in range(k))
    return out + b


def unet_1d(params, x):
    e1 = np.maximum(conv1d(x, *params["enc1"]), 0)       # (L, c)
    down = e1[::2]                                       # stride-2 downsampling
    e2 = np.maximum(conv1d(down, *params["enc2"]), 0)
    up = np.repeat(e2, 2, axis=0)                        # nearest-neighbour upsampling
    merged = np.concatenate([up, e1], axis=-1)           # the skip connection
    return conv1d(merged, *params["dec"])


def unet_loss(params, signals, targets):
    preds = np.stack([unet_1d(params, s) for s in signals])
    return np.mean((preds - targets) ** 2)


# ---- a Bradley-Terry ranking model over match results ---------------------------------------------------------------------------------
def bradley_terry_nll(strength, winners, losers, prior=0.1):
    diff = strength[winners] - strength[losers]
    return np.sum(np.logaddexp(0.0, -diff)) + prior * np.sum(strength ** 2)


# ---- a mixture of von Mises distributions on angles ------------------------------------------------------------------------------------
def von_mises_logpdf(x, mu, kappa):
    # i0e(k) = exp(-k) I0(k): stable for large concentrations
    return kappa * (np.cos(x - mu) - 1) - np.log(2 * np.pi * i0e(kappa))


def von_mises_mixture_nll(params, angles):
    mus, log_kappas, logits = params["mu"], params["log_kappa"], params["logits"]
    kappas = np.exp(log_kappas)
    comp = np.stack([von_mises_logpdf(angles, m, k) for m, k in zip(mus, kappas)], axis=1)
    return -np.sum(logsumexp(comp + log_softmax(logits), axis=1))


# ---- volume rendering along rays (alpha compositing) ----------------------------------------------------------------------------------
def render_rays(densities, colors, deltas):
    alpha = 1.0 - np.exp(-densities * deltas)                      # (rays, samples)
    trans = np.cumprod(1.0 - alpha + 1e-10, axis=-1)
    trans = np.concatenate([np.ones_like(trans[:, :1]), trans[:, :-1]], axis=-1)
    weights = alpha * trans
    rgb = np.einsum("rs,rsc->rc", weights, colors)
    return rgb, weights.sum(axis=-1)


def render_loss(raw_density, colors, deltas, target_rgb):
    rgb, acc = render_rays(np.log1p(np.exp(raw_density)), colors, deltas)
    return np.mean((rgb - target_rgb) ** 2) + 1e-3 * np.mean((1 - acc) ** 2)


# ---- a sliced Wasserstein distance through sorting ---------------------------------------------------------------------------------------
def sliced_wasserstein(X, Y, directions):
    directions = directions / np.linalg.norm(directions, axis=1, keepdims=True)
    total = 0.0
    for theta in directions:
        px = np.sort(X @ theta)
        py = np.sort(Y @ theta)
        total += np.mean((px - py) ** 2)
    return total / len(directions)


# ---- a multivariate Student-t likelihood by Cholesky ------------------------------------------------------------------------------------
def mvt_nll(params, X, nu=5.0):
    n, d = X.shape
    L = np.tril(params["L"])
    L = L - np.diag(np.diag(L)) + np.diag(np.exp(np.diag(L)))    # a positive diagonal
    Sigma = L @ L.T
    C = scipy.linalg.cholesky(Sigma, lower=True)
    Z = scipy.linalg.solve_triangular(C, (X - params["loc"]).T, lower=True)
    maha = np.sum(Z ** 2, axis=0)
    log_det = 2 * np.sum(np.log(np.diag(C)))
    log_norm = gammaln((nu + d) / 2) - gammaln(nu / 2) - d / 2 * np.log(nu * np.pi) - 0.5 * log_det
    return -np.sum(log_norm - (nu + d) / 2 * np.log1p(maha / nu))


# ---- an SIR epidemic fitted to weekly case counts ------------------------------------------------------------------------------------------
def sir_incidence(beta, gamma, population, infected0, n_days, steps_per_day=4):
    s, i, r = population - infected0, infected0, 0.0
    dt = 1.0 / steps_per_day
    daily = []
    for day in range(n_days):
        new_cases = 0.0
        for _ in range(steps_per_day):
            infections = beta * s * i / population * dt
            recoveries = gamma * i * dt
            s, i, r = s - infections, i + infections - recoveries, r + recoveries
            new_cases += infections
        daily.append(new_cases)
    return np.array(daily)


def sir_poisson_nll(log_params, cases, population=1000.0):
    beta, gamma = np.exp(log_params)
    weekly = sir_incidence(beta, gamma, population, 5.0, 7 * len(cases)).reshape(-1, 7).sum(axis=1)
    return np.sum(weekly - cases * np.log(weekly) + gammaln(cases + 1))
