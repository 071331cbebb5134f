"""Programs of domains the other modules do not cover, written the way a JAX or
autograd user writes them: a REINFORCE policy gradient, a Sinkhorn transport
loss, a linear-chain CRF, a Matern Gaussian process, a small conv/pool network
built by reshapes, a Hamiltonian Monte Carlo leapfrog, a B-spline fit, a
spring chain solved until it converges, a learning-rate schedule with int step
counters, masked multi-head attention by np.einsum, a Poisson GLM with exposure
offsets, a Gaussian copula's log-density, an MLP over a list of (W, b) pairs,
a residual net sized by a config NamedTuple default, hierarchical and robust
models with scipy.stats distributions, a first-passage simulation that returns
from inside its while loop, and a spectral penalty sized by int(math.sqrt)."""

import math
from typing import NamedTuple

import numpy as np
from scipy.special import betaln, gammaln, logsumexp, log_softmax
from scipy.stats import gamma, norm, poisson, t as student_t

import irad


# ---- REINFORCE: a softmax policy's surrogate loss over an episode ------------------------
def discounted_returns(rewards, gamma):
    returns = []
    running = 0.0
    for r in reversed(rewards):
        running = r + gamma * running
        returns.append(running)
    return np.array(returns[::-1])


def reinforce_loss(theta, states, actions, rewards, gamma=0.99):
    logits = states @ theta
    logp = log_softmax(logits, axis=-1)
    chosen = logp[np.arange(len(actions)), actions]
    G = discounted_returns(rewards, gamma)
    advantages = (G - G.mean()) / (G.std() + 1e-8)
    entropy = -np.sum(np.exp(logp) * logp, axis=-1).mean()
    return -np.mean(chosen * advantages) - 0.01 * entropy


# ---- Sinkhorn: an entropic optimal-transport loss in the log domain ------------------------
def sinkhorn_loss(x, y, eps=0.1, n_iters=50):
    n, m = x.shape[0], y.shape[0]
    C = np.sum((x[:, None, :] - y[None, :, :]) ** 2, axis=-1)
    log_a, log_b = np.full(n, -np.log(n)), np.full(m, -np.log(m))
    f, g = np.zeros(n), np.zeros(m)
    for _ in range(n_iters):
        f = -eps * logsumexp((g[None, :] - C) / eps + log_b[None, :], axis=1)
        g = -eps * logsumexp((f[:, None] - C) / eps + log_a[:, None], axis=0)
    P = np.exp((f[:, None] + g[None, :] - C) / eps + log_a[:, None] + log_b[None, :])
    return np.sum(P * C)


# ---- a linear-chain CRF: the forward algorithm against the gold path ---------------------
class CRFParams(NamedTuple):
    W: np.ndarray            # (features, tags)
    transitions: np.ndarray  # (tags, tags)
    start: np.ndarray        # (tags,)


def crf_log_partition(emissions, params):
    alpha = params.start + emissions[0]
    for t in range(1, emissions.shape[0]):
        alpha = logsumexp(alpha[:, None] + params.transitions, axis=0) + emissions[t]
    return logsumexp(alpha)


def crf_path_score(emissions, tags, params):
    score = params.start[tags[0]] + emissions[0, tags[0]]
    for t, (prev, cur) in enumerate(zip(tags[:-1], tags[1:]), start=1):
        score += params.transitions[prev, cur] + emissions[t, cur]
    return score


def crf_nll(params, X, tags):
    emissions = X @ params.W
    return crf_log_partition(emissions, params) - crf_path_score(emissions, tags, params)


# ---- a Gaussian process with a Matern-5/2 kernel ---------------------------------------
def matern52(X1, X2, lengthscale, variance):
    d = np.sqrt(np.sum((X1[:, None, :] - X2[None, :, :]) ** 2, axis=-1) + 1e-12) / lengthscale
    s5 = np.sqrt(5.0) * d
    return variance * (1.0 + s5 + 5.0 / 3.0 * d ** 2) * np.exp(-s5)


def matern_gp_nll(log_params, X, y):
    lengthscale, variance, noise = np.exp(log_params)
    n = len(y)
    K = matern52(X, X, lengthscale, variance) + noise * np.eye(n)
    L = np.linalg.cholesky(K)
    alpha = np.linalg.solve(L.T, np.linalg.solve(L, y))
    return 0.5 * alpha.dot(y) + np.log(np.diag(L)).sum() + 0.5 * n * np.log(2 * np.pi)


# ---- a conv layer by im2col and a 2x2 max-pool by reshape -------------------------------
def conv2d(x, w):
    """x: (C, H, W), w: (F, C, k, k) -> (F, H-k+1, W-k+1), 'valid'."""
    F, C, k, _ = w.shape
    _, H, W = x.shape
    Ho, Wo = H - k + 1, W - k + 1
    patches = []
    for i in range(k):
        for j in range(k):
            patches.append(x[:, i:i + Ho, j:j + Wo])
    cols = np.stack(patches, axis=1).reshape(C * k * k, Ho * Wo)
    return (w.reshape(F, -1) @ cols).reshape(F, Ho, Wo)


def max_pool(x, size=2):
    C, H, W = x.shape
    return x.reshape(C, H // size, size, W // size, size).max(axis=(2, 4))


def convnet_loss(params, images, labels):
    losses = []
    for img, label in zip(images, labels):
        h = np.maximum(conv2d(img, params["conv"]) + params["bias"][:, None, None], 0.0)
        h = max_pool(h).ravel()
        logits = h @ params["dense"]
        losses.append(logsumexp(logits) - logits[label])
    return np.mean(np.array(losses))


# ---- Hamiltonian Monte Carlo: the acceptance log-ratio of one leapfrog trajectory -------------
def banana_log_density(q):
    return -0.5 * (q[0] ** 2 / 4.0 + (q[1] - 0.5 * q[0] ** 2) ** 2)


def hamiltonian(q, p, log_density):
    return -log_density(q) + 0.5 * p @ p


def leapfrog_trajectory(q, p, step_size, n_steps, log_density):
    grad_log_density = irad.grad(log_density)
    p = p + 0.5 * step_size * grad_log_density(q)
    for i in range(n_steps):
        q = q + step_size * p
        if i != n_steps - 1:
            p = p + step_size * grad_log_density(q)
    p = p + 0.5 * step_size * grad_log_density(q)
    return q, -p


def hmc_log_accept(log_step, q0, p0):
    q, p = leapfrog_trajectory(q0, p0, np.exp(log_step), 8, banana_log_density)
    log_ratio = hamiltonian(q0, p0, banana_log_density) - hamiltonian(q, p, banana_log_density)
    return np.minimum(0.0, log_ratio)


# ---- a B-spline fit: Cox-de Boor recursion over the degree --------------------------------
def bspline_basis(x, knots, i, k):
    if k == 0:
        return np.where((knots[i] <= x) & (x < knots[i + 1]), 1.0, 0.0)
    left_den = knots[i + k] - knots[i]
    right_den = knots[i + k + 1] - knots[i + 1]
    left = np.zeros_like(x) if left_den == 0 else (x - knots[i]) / left_den * bspline_basis(x, knots, i, k - 1)
    right = np.zeros_like(x) if right_den == 0 else (knots[i + k + 1] - x) / right_den * bspline_basis(x, knots, i + 1, k - 1)
    return left + right


def bspline_fit_loss(coef, x, y, degree=3):
    n_basis = len(coef)
    knots = np.concatenate([np.zeros(degree), np.linspace(0.0, 1.0, n_basis - degree + 1), np.ones(degree)])
    B = np.stack([bspline_basis(x, knots, i, degree) for i in range(n_basis)], axis=1)
    smooth = np.diff(coef, n=2)
    return np.mean((B @ coef - y) ** 2) + 1e-3 * smooth @ smooth


# ---- a chain of springs under gravity, relaxed by Newton until it converges -------------------
def spring_forces(x, k, rest, m, g=9.81):
    ext = np.diff(np.concatenate([np.zeros(1), x])) - rest
    tension = k * ext
    return np.append(tension[1:], 0.0) - tension + m * g


def spring_equilibrium(log_k, rest, m, tol=1e-10, max_iter=50):
    k = np.exp(log_k)
    x = np.cumsum(rest)
    n = x.shape[0]
    it = 0
    residual = spring_forces(x, k, rest, m)
    while np.max(np.abs(residual)) > tol and it < max_iter:
        J = np.diag(-k - np.append(k[1:], 0.0)) + np.diag(k[1:], 1) + np.diag(k[1:], -1)
        x = x - np.linalg.solve(J, residual)
        residual = spring_forces(x, k, rest, m)
        it += 1
    return x[-1] + 0.1 * np.sum(x) / n


# ---- SGD with a warm-up and step-decay schedule, differentiated in its hyperparameters ----------
def learning_rate(step, base_lr, warmup=5, decay_every=10):
    if step < warmup:
        return base_lr * (step + 1) / warmup
    return base_lr * 0.5 ** ((step - warmup) // decay_every)


def trained_validation_loss(hyper, X, y, X_val, y_val, n_steps=25):
    base_lr, l2 = np.exp(hyper[0]), np.exp(hyper[1])
    w = np.zeros(X.shape[1])
    for step in range(n_steps):
        grad = X.T @ (X @ w - y) / len(y) + l2 * w
        w -= learning_rate(step, base_lr) * grad
    r = X_val @ w - y_val
    return float(0.5) * np.mean(r ** 2)


# ---- masked multi-head attention by einsum -------------------------------------------
def split_heads(x, n_heads):
    B, T, D = x.shape
    return x.reshape(B, T, n_heads, D // n_heads).transpose(0, 2, 1, 3)


def masked_attention_loss(params, x, lengths, n_heads=2):
    B, T, D = x.shape
    q, k, v = (split_heads(x @ params[name], n_heads) for name in ("Wq", "Wk", "Wv"))
    scores = np.einsum("bhqd,bhkd->bhqk", q, k) / np.sqrt(D // n_heads)
    causal = np.triu(np.ones((T, T), dtype=bool), k=1)
    padding = np.arange(T)[None, :] >= lengths[:, None]
    mask = causal[None, None, :, :] | padding[:, None, None, :]
    scores = np.where(mask, -1e9, scores)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    out = np.einsum("bhqk,bhkd->bhqd", weights, v).transpose(0, 2, 1, 3).reshape(B, T, D)
    valid = (~padding).astype(float)
    return np.sum((out @ params["Wo"]) ** 2 * valid[..., None]) / valid.sum()


# ---- a Poisson GLM with exposure offsets and a clipped linear predictor -------------------------
def poisson_offset_nll(beta, X, counts, exposure):
    eta = (X @ beta[1:] + beta[0] + np.log(exposure)).clip(-20.0, 20.0)
    mu = np.exp(eta)
    return np.sum(mu - counts * eta) / counts.size + 0.5 * 1e-2 * np.linalg.norm(beta[1:]) ** 2


# ---- a Gaussian copula with normal marginals: the negative log-density of data ---------------
def copula_nll(params, U):
    d = U.shape[1]
    L = np.zeros((d, d))
    rows, cols = np.tril_indices(d, -1)
    L[rows, cols] = params["offdiag"]
    L[np.diag_indices(d)] = np.exp(params["log_diag"])
    corr_chol = L / np.linalg.norm(L, axis=1, keepdims=True)
    R = corr_chol @ corr_chol.T
    z = norm.ppf(U)
    sign, logdet = np.linalg.slogdet(R)
    quad = np.einsum("ni,ij,nj->n", z, np.linalg.inv(R) - np.eye(d), z)
    return 0.5 * (U.shape[0] * logdet + quad.sum())


# ---- an MLP over a list of (W, b) pairs with dropout masks given as input ---------------------------
def mlp_forward(params, x, masks):
    *hidden, (W_out, b_out) = params
    h = x
    for i, (W, b) in enumerate(hidden):
        h = np.maximum(h @ W + b, 0) * masks[i]
    return h @ W_out + b_out


def dropout_mlp_loss(params, x, y, masks):
    pred = mlp_forward(params, x, masks).squeeze(-1)
    return ((pred - y) ** 2).mean() + 1e-4 * sum((W ** 2).sum() for W, _ in params)


# ---- a residual net whose depth and width come from a config default -------------------------------
class Config(NamedTuple):
    n_layers: int = 2
    width: int = 4


def residual_net_loss(params, x, y, cfg=Config()):
    assert x.ndim == 2, "a batch of vectors"
    h = x
    for layer in range(cfg.n_layers):
        h = h + np.tanh(h @ params[f"W{layer}"] + params[f"b{layer}"]) / math.sqrt(cfg.width)
    return 0.5 * np.sum((h @ params["head"] - y) ** 2) / x.shape[0]


# ---- a Poisson-gamma model of counts with exposures (scipy.stats distributions) ----------------------
def poisson_gamma_nll(theta, counts, exposure):
    log_rates, log_shape, log_scale = theta[:-2], theta[-2], theta[-1]
    rates = np.exp(log_rates)
    ll = poisson.logpmf(counts, rates * exposure).sum()
    ll += gamma.logpdf(rates, np.exp(log_shape), scale=np.exp(log_scale)).sum()
    return -ll - np.sum(log_rates)  # the Jacobian of rates = exp(log_rates)


# ---- a Student-t regression with a learned scale and degrees of freedom -------------------------------
def student_t_nll(params, X, y):
    resid = y - X @ params["w"]
    df = 2.0 + np.exp(params["log_df"])
    return -np.sum(student_t.logpdf(resid, df, scale=np.exp(params["log_scale"])))


# ---- a beta-binomial model of success counts ------------------------------------------------------------
def beta_binomial_nll(log_ab, k, n):
    a, b = np.exp(log_ab)
    log_choose = gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)
    return -np.sum(log_choose + betaln(k + a, n - k + b) - betaln(a, b))


# ---- a random walk's first passage, returned from inside the while loop -------------------------------
def first_passage_cost(params, shocks, n_max=30, barrier=1.0):
    x = 0.0
    t = 0
    total = 0.0
    while t < n_max:
        x = x + shocks[t] * params[0] + params[1]
        total += x ** 2
        if x > barrier:
            return total / (t + 1)
        t += 1
    return total / n_max


# ---- a spectral penalty on a square matrix given flat, sized by int(math.sqrt) ---------------------------
def spectral_loss(a_flat, target):
    n = int(math.sqrt(a_flat.size))
    A = a_flat.reshape(n, n)
    S = 0.5 * (A + A.T)
    M = S @ S.T + np.eye(n)
    evals = np.linalg.eigh(M)[0]
    sign, logdet = np.linalg.slogdet(M)
    return np.sum((evals - target) ** 2) + sign * logdet


# ---- a piecewise response by np.select, smoothed with an edge-padded moving average ----------------------
def piecewise_smooth_loss(w, x, y):
    raw = np.select([x < -1, x > 1], [w[0] * x, w[1] * x ** 2], default=w[2] * np.sin(x))
    padded = np.pad(raw, (1, 1), mode="edge")
    smooth = (padded[:-2] + padded[1:-1] + padded[2:]) / 3
    return np.sum((smooth - y) ** 2) + 1e-3 * np.cumsum(np.flip(smooth))[-1] ** 2
