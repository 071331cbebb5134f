"""More programs of domains the other modules do not cover, written the way a JAX
or autograd user writes them: a RealNVP-style affine-coupling flow with a planar
layer, a skip-gram negative-sampling loss over integer index arrays, a Cox
proportional-hazards partial likelihood over sorted risk sets, a Weibull
survival model with censoring in a dataclass, a GARCH(1,1) log-likelihood, a
factorisation machine, a pairwise ranking hinge, an InfoNCE contrastive loss
with a keyword-only temperature, a Gumbel-softmax relaxation with its noise
given, a Bayesian linear regression's evidence, a Lotka-Volterra fit with
params in a NamedTuple and RK4 through functools.partial, an EM-style
responsibilities step inside a Poisson-mixture loss, a label-smoothing
cross-entropy with one-hot rows by np.eye(k)[labels], a 2-D Poisson solver by
Jacobi sweeps until a tolerance, a quantile regression with np.where, and an
ARMA(1, 1) conditional sum of squares."""

import functools
import math
from typing import NamedTuple

import numpy as np
import scipy.linalg
from scipy.special import digamma, expit, gammaln, logsumexp, log_softmax, xlogy
from scipy.stats import norm

from tests.realistic.records import WeibullParams

N_NEGATIVE = 3          # a global constant the loss reads
EPS = 1e-12


# ---- a normalizing flow: two affine coupling layers and a planar layer ------------------------------
def coupling(params, x, i, *, flip=False):
    """One RealNVP coupling layer: half of the features scale and shift the other half."""
    d = x.shape[1] // 2
    x1, x2 = (x[:, d:], x[:, :d]) if flip else (x[:, :d], x[:, d:])
    h = np.tanh(x1 @ params[f"W{i}"] + params[f"b{i}"])
    log_s = np.tanh(h @ params[f"S{i}"])
    t = h @ params[f"T{i}"]
    y2 = x2 * np.exp(log_s) + t
    y = np.concatenate([y2, x1], axis=1) if flip else np.concatenate([x1, y2], axis=1)
    return y, log_s.sum(axis=1)


def planar(u, w, b, z):
    a = np.tanh(z @ w + b)
    psi = (1 - a ** 2)[:, None] * w[None, :]
    log_det = np.log(np.abs(1 + psi @ u) + EPS)
    return z + np.outer(a, u), log_det


def flow_nll(params, x, n_layers=2):
    z, total = x, np.zeros(x.shape[0])
    for i in range(n_layers):
        z, log_det = coupling(params, z, i, flip=i % 2 == 1)
        total += log_det
    z, log_det = planar(params["u"], params["w"], params["b"], z)
    total = total + log_det
    A = params["A"]
    sign, logdet_A = np.linalg.slogdet(A)       # a final invertible linear layer
    z = z @ A.T
    log_base = -0.5 * np.sum(z ** 2, axis=1) - 0.5 * z.shape[1] * np.log(2 * np.pi)
    return -np.mean(log_base + total + logdet_A)


# ---- word2vec: the skip-gram negative-sampling loss --------------------------------------------------
def skipgram_loss(embeddings, centers, contexts, negatives):
    W_in, W_out = embeddings["in"], embeddings["out"]
    v = W_in[centers]                                  # (B, d)
    u_pos = W_out[contexts]                            # (B, d)
    u_neg = W_out[negatives.reshape(-1)].reshape(len(centers), N_NEGATIVE, -1)
    pos = np.log(expit(np.sum(v * u_pos, axis=1)))
    neg = np.log(expit(-np.einsum("bkd,bd->bk", u_neg, v))).sum(axis=1)
    return -(pos + neg).mean()


# ---- Cox proportional hazards: the partial likelihood over risk sets ------------------------------------
def cox_partial_nll(beta, X, times, events):
    order = np.argsort(-times)                         # descending times: risk sets are prefixes
    eta = (X @ beta)[order]
    log_risk = np.log(np.cumsum(np.exp(eta)))
    return -np.sum((eta - log_risk) * events[order]) / events.sum()


# ---- a Weibull survival model with right censoring ---------------------------------------------------
def weibull_nll(p: WeibullParams, X, t, observed):
    k = np.exp(p.log_shape)
    lam = np.exp(X @ p.coef)                           # the scale
    z = (t / lam) ** k
    log_h = np.log(k) - np.log(lam) + (k - 1) * np.log(t / lam)
    return -np.sum(observed * log_h - z)


# ---- a GARCH(1,1) log-likelihood --------------------------------------------------------------------
def garch_nll(theta, returns):
    omega, alpha, beta = np.exp(theta[0]), expit(theta[1]), expit(theta[2])
    sigma2 = np.var(returns)
    nll = 0.0
    variances = []
    for r in returns:
        nll += 0.5 * (np.log(2 * np.pi * sigma2) + r ** 2 / sigma2)
        variances.append(sigma2)
        sigma2 = omega + alpha * r ** 2 + beta * sigma2
    return nll + 1e-3 * np.std(np.array(variances))


# ---- a factorisation machine -----------------------------------------------------------------------
def fm_predict(w0, w, V, X):
    linear = w0 + X @ w
    interactions = 0.5 * np.sum((X @ V) ** 2 - (X ** 2) @ (V ** 2), axis=1)
    return linear + interactions


def fm_loss(params, X, y, l2=1e-3):
    w0, w, V = params
    pred = fm_predict(w0, w, V, X)
    return np.mean(np.logaddexp(0.0, -y * pred)) + l2 * (np.sum(w ** 2) + np.sum(V ** 2))


# ---- a pairwise ranking hinge over the outer difference of scores ---------------------------------------
def ranking_loss(w, X, relevance, margin=1.0):
    s = X @ w
    diff = s[:, None] - s[None, :]
    better = (relevance[:, None] > relevance[None, :]).astype(float)
    hinge = np.maximum(0.0, margin - diff)
    return np.sum(better * hinge) / better.sum()


# ---- InfoNCE with a temperature -------------------------------------------------------------------
def normalize(x, axis=-1):
    return x / np.linalg.norm(x, axis=axis, keepdims=True)


def info_nce(W, x_a, x_b, *, temperature=0.1):
    za, zb = normalize(x_a @ W), normalize(x_b @ W)
    logits = za @ zb.T / temperature
    n = logits.shape[0]
    labels = np.arange(n)
    loss_ab = -log_softmax(logits, axis=1)[labels, labels]
    loss_ba = -log_softmax(logits.T, axis=1)[labels, labels]
    return (loss_ab.mean() + loss_ba.mean()) / 2


def contrastive_loss(W, x_a, x_b):
    return info_nce(W, x_a, x_b, temperature=0.5)


# ---- a Gumbel-softmax relaxation with its uniform noise given ------------------------------------------
def gumbel_softmax(logits, u, tau=0.5):
    g = -np.log(-np.log(u))
    y = (logits + g) / tau
    y = y - y.max(axis=-1, keepdims=True)
    e = np.exp(y)
    return e / e.sum(axis=-1, keepdims=True)


def relaxed_choice_loss(logits, u, values):
    samples = gumbel_softmax(logits, u)
    rewards = samples @ values
    probs = np.exp(log_softmax(logits))
    kl = np.sum(probs * (np.log(probs + EPS) + np.log(len(values))))
    return -rewards.mean() + 0.1 * kl


# ---- Bayesian linear regression: the log evidence in its precisions -----------------------------------
def neg_log_evidence(log_hyper, Phi, t):
    alpha, beta = np.exp(log_hyper)
    N, M = Phi.shape
    A = alpha * np.eye(M) + beta * Phi.T @ Phi
    m = beta * np.linalg.solve(A, Phi.T @ t)
    E = beta / 2 * np.sum((t - Phi @ m) ** 2) + alpha / 2 * m @ m
    _, logdet = np.linalg.slogdet(A)
    return -(M / 2 * np.log(alpha) + N / 2 * np.log(beta) - E - 0.5 * logdet - N / 2 * np.log(2 * np.pi))


# ---- Lotka-Volterra with params in a NamedTuple, RK4 through functools.partial ----------------------
class LVParams(NamedTuple):
    alpha: float
    beta: float
    gamma: float
    delta: float


def lv_rhs(state, p: LVParams):
    prey, pred = state
    return np.array([p.alpha * prey - p.beta * prey * pred, p.delta * prey * pred - p.gamma * pred])


def rk4_solve(f, y0, dt, n):
    ys = [y0]
    y = y0
    for _ in range(n):
        k1 = f(y)
        k2 = f(y + dt / 2 * k1)
        k3 = f(y + dt / 2 * k2)
        k4 = f(y + dt * k3)
        y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        ys.append(y)
    return np.stack(ys)


def lv_fit_loss(log_theta, y0, observed):
    p = LVParams(*np.exp(log_theta))
    path = rk4_solve(functools.partial(lv_rhs, p=p), y0, 0.1, len(observed) - 1)
    return np.sum((np.log(path) - np.log(observed)) ** 2)


# ---- EM responsibilities inside a Poisson-mixture loss ----------------------------------------------
def poisson_mixture_loss(log_rates, logit_weights, counts, n_em=3):
    rates = np.exp(log_rates)
    log_w = log_softmax(logit_weights)
    log_pmf = counts[:, None] * np.log(rates)[None, :] - rates[None, :] - gammaln(counts + 1)[:, None]
    for _ in range(n_em):          # a few EM steps on the weights; the rates are learned by gradient
        joint = log_pmf + log_w
        resp = np.exp(joint - logsumexp(joint, axis=1, keepdims=True))
        log_w = np.log(resp.mean(axis=0))
    return -logsumexp(log_pmf + log_w, axis=1).sum()


# ---- label smoothing cross-entropy ---------------------------------------------------------------------
def smoothed_targets(labels, k, smoothing):
    one_hot = np.eye(k)[labels]
    return one_hot * (1 - smoothing) + smoothing / k


def label_smoothing_loss(params, X, labels, smoothing=0.1):
    logits = np.tanh(X @ params["W1"] + params["b1"]) @ params["W2"]
    k = logits.shape[-1]
    targets = smoothed_targets(labels, k, smoothing)
    return -np.sum(targets * log_softmax(logits, axis=-1)) / len(labels)


# ---- a 2-D Poisson equation by Jacobi sweeps until a tolerance ---------------------------------------
def jacobi_poisson(source, h, tol=1e-6, max_sweeps=400):
    n = source.shape[0]
    u = np.zeros((n + 2, n + 2))
    for sweep in range(max_sweeps):
        interior = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] + h ** 2 * source)
        change = np.max(np.abs(interior - u[1:-1, 1:-1]))
        u = np.pad(interior, 1)
        if change < tol:
            break
    return u[1:-1, 1:-1]


def poisson_inverse_loss(amplitudes, basis, target):
    source = np.einsum("k,kij->ij", amplitudes, basis)
    u = jacobi_poisson(source, 1.0 / (source.shape[0] + 1))
    return np.sum((u - target) ** 2) + 1e-4 * np.sum(amplitudes ** 2)


# ---- quantile regression: the pinball loss at several quantiles -----------------------------------------
def pinball(r, q):
    return np.where(r >= 0, q * r, (q - 1) * r)


def quantile_loss(W, X, y, quantiles=(0.1, 0.5, 0.9)):
    preds = X @ W                                       # one column per quantile
    total = 0.0
    for j, q in enumerate(quantiles):
        total = total + pinball(y - preds[:, j], q).mean()
    crossing = np.maximum(0.0, preds[:, :-1] - preds[:, 1:]).sum()
    return total + 10.0 * crossing


# ---- ARMA(1, 1): the conditional sum of squares -------------------------------------------------------
def arma_css(params, y):
    mu, phi, theta = params
    errors = np.zeros_like(y)
    e_prev = 0.0
    for t in range(1, len(y)):
        e = y[t] - mu - phi * (y[t - 1] - mu) - theta * e_prev
        errors[t] = e
        e_prev = e
    return 0.5 * np.sum(errors[1:] ** 2) / (len(y) - 1)

# ---- Kepler's equation by Newton until converged: a radial-velocity fit ---------------------
def eccentric_anomaly(M, e, tol=1e-12, max_iter=50):
    E = M + e * np.sin(M)
    for _ in range(max_iter):
        delta = (E - e * np.sin(E) - M) / (1 - e * np.cos(E))
        E = E - delta
        if np.max(np.abs(delta)) < tol:
            break
    return E


def radial_velocity(params, t):
    K, log_P, e_logit, omega, t0 = params
    P, e = np.exp(log_P), expit(e_logit)
    M = 2 * math.pi * (t - t0) / P
    E = eccentric_anomaly(M, e)
    nu = 2 * np.arctan2(np.sqrt(1 + e) * np.sin(E / 2), np.sqrt(1 - e) * np.cos(E / 2))
    return K * (np.cos(nu + omega) + e * np.cos(omega))


def rv_loss(params, t, v_obs, sigma=0.5):
    r = (radial_velocity(params, t) - v_obs) / sigma
    return 0.5 * r @ r


# ---- a continuous-time Markov chain: transition probabilities by expm -----------------------
def generator(log_rates, n):
    Q = np.zeros((n, n))
    iu = np.triu_indices(n, 1)
    il = np.tril_indices(n, -1)
    k = len(iu[0])
    Q[iu] = np.exp(log_rates[:k])
    Q[il] = np.exp(log_rates[k:])
    Q -= np.diag(Q.sum(axis=1))
    return Q


def ctmc_nll(log_rates, transitions, dts):
    n = 3
    Q = generator(log_rates, n)
    nll = 0.0
    for (i, j), dt in zip(transitions, dts):
        P = scipy.linalg.expm(Q * dt)
        nll -= np.log(P[i, j])
    return nll


# ---- Dirichlet-multinomial with digamma: Minka's fixed point as an inner loop -----------------
def dirmult_nll(log_alpha, counts):
    alpha = np.exp(log_alpha)
    A = alpha.sum()
    N = counts.sum(axis=1)
    ll = gammaln(A) - gammaln(N + A) + np.sum(gammaln(counts + alpha) - gammaln(alpha), axis=1)
    return -ll.sum()


def dirmult_after_steps(log_alpha, counts, n_steps=3):
    alpha = np.exp(log_alpha)
    for _ in range(n_steps):
        A = alpha.sum()
        num = np.sum(digamma(counts + alpha) - digamma(alpha), axis=0)
        den = np.sum(digamma(counts.sum(axis=1) + A) - digamma(A))
        alpha = alpha * num / den
    return dirmult_nll(np.log(alpha), counts)


# ---- mean-field Ising: a damped fixed point until a tolerance, config in a dict -------------
def mean_field(J, h, cfg):
    m = np.zeros_like(h)
    damping = cfg.get("damping", 0.5)
    for it in range(cfg["max_iter"]):
        m_new = np.tanh(h + J @ m)
        if np.linalg.norm(m_new - m, ord=np.inf) < cfg["tol"]:
            return m_new
        m = damping * m + (1 - damping) * m_new
    return m


def ising_free_energy(h, J):
    m = mean_field(J, h, {"max_iter": 200, "tol": 1e-10})
    p = (1 + m) / 2
    entropy = -np.sum(xlogy(p, p) + xlogy(1 - p, 1 - p))
    return -0.5 * m @ J @ m - h @ m - entropy


# ---- a Tobit model: censored normal regression -----------------------------------------------
def tobit_nll(params, X, y, lower=0.0):
    beta, log_sigma = params[:-1], params[-1]
    sigma = np.exp(log_sigma)
    mu = X @ beta
    censored = y <= lower
    ll = np.where(censored, norm.logcdf((lower - mu) / sigma), norm.logpdf(y, mu, sigma))
    return -np.sum(ll)


# ---- ordinal regression: cumulative logits with cutpoints -----------------------------------
def ordinal_nll(params, X, y):
    w, raw = params["w"], params["cuts"]
    cuts = np.cumsum(np.concatenate([raw[:1], np.exp(raw[1:])]))
    bounds = np.concatenate([[-np.inf], cuts, [np.inf]])
    eta = X @ w
    upper = expit(bounds[y + 1] - eta)
    lower_ = expit(bounds[y] - eta)
    return -np.sum(np.log(upper - lower_ + 1e-12))


# ---- a mean-variance portfolio with CVaR by sorting -----------------------------------------
def portfolio_objective(logits, returns, risk_aversion=2.0, alpha=0.9):
    w = np.exp(logits - logits.max())
    w /= w.sum()
    mu = returns.mean(axis=0)
    cov = np.cov(returns, rowvar=False)
    pnl = returns @ w
    losses = np.sort(-pnl)
    n_tail = int(math.ceil((1 - alpha) * len(losses)))
    cvar = losses[-n_tail:].mean()
    return -(mu @ w) + risk_aversion * w @ cov @ w + cvar


# ---- a 2PL item response model --------------------------------------------------------------
def irt_nll(params, students, items, correct):
    ability, log_disc, difficulty = params["ability"], params["log_disc"], params["difficulty"]
    logit = np.exp(log_disc[items]) * (ability[students] - difficulty[items])
    ll = correct * logit - np.logaddexp(0, logit)
    prior = 0.5 * np.sum(ability ** 2) + 0.5 * np.sum(log_disc ** 2)
    return -ll.sum() + prior


# ---- an MLP whose activations are named by strings -----------------------------------------
def activate(x, kind):
    if kind == "relu":
        return np.maximum(x, 0)
    elif kind == "gelu":
        return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    elif kind == "softplus":
        return np.logaddexp(0, x)
    raise ValueError(f"unknown activation {kind}")


def named_mlp_loss(layers, x, y, activations=("gelu", "softplus")):
    h = x
    for (W, b), kind in zip(layers[:-1], activations):
        h = activate(h @ W + b, kind)
    W, b = layers[-1]
    return np.mean((h @ W + b - y[:, None]) ** 2)


# ---- kernel ridge via a Cholesky factor -----------------------------------------------------
def kernel_ridge_loss(log_params, X, y, X_val, y_val):
    ell, lam = np.exp(log_params)
    sq = lambda A, B: np.sum(A ** 2, 1)[:, None] + np.sum(B ** 2, 1)[None, :] - 2 * A @ B.T
    K = np.exp(-0.5 * sq(X, X) / ell ** 2)
    c, low = scipy.linalg.cho_factor(K + lam * np.eye(len(y)))
    coef = scipy.linalg.cho_solve((c, low), y)
    pred = np.exp(-0.5 * sq(X_val, X) / ell ** 2) @ coef
    return np.mean((pred - y_val) ** 2)


# ---- a PCA reconstruction with the top-k eigenvectors -----------------------------------------
def pca_reconstruction(X, k=2):
    Xc = X - X.mean(axis=0)
    C = Xc.T @ Xc / (X.shape[0] - 1)
    evals, evecs = np.linalg.eigh(C)
    idx = np.argsort(evals)[::-1][:k]
    V = evecs[:, idx]
    return np.sum((Xc - Xc @ V @ V.T) ** 2)


# ---- a wave equation on a ring with np.roll and its energy by np.trapz ----------------------
def wave_energy(u0, c, n_steps=20, dt=0.02):
    n = u0.shape[0]
    dx = 1.0 / n
    u_prev, u = u0.copy(), u0.copy()
    for _ in range(n_steps):
        lap = (np.roll(u, 1) - 2 * u + np.roll(u, -1)) / dx ** 2
        u_prev, u = u, 2 * u - u_prev + (c * dt) ** 2 * lap
    v = (u - u_prev) / dt
    return np.trapezoid(v ** 2 + c ** 2 * np.gradient(u, dx) ** 2, dx=dx)


# ---- SimCLR's NT-Xent: two views, the positives off the diagonal by a mask of constants --------------
def nt_xent(z1, z2, temperature=0.5):
    z = np.concatenate([z1, z2], axis=0)
    z = z / np.linalg.norm(z, axis=1, keepdims=True)
    n = z1.shape[0]
    sim = z @ z.T / temperature
    off_diagonal = sim[~np.eye(2 * n, dtype=bool)].reshape(2 * n, 2 * n - 1)
    positives = np.concatenate([np.diag(sim, n), np.diag(sim, -n)])
    return np.mean(logsumexp(off_diagonal, axis=1) - positives)


def simclr_loss(W, x1, x2):
    return nt_xent(np.tanh(x1 @ W), np.tanh(x2 @ W))


# ---- an MLP on a flat parameter vector (as scipy.optimize takes it), unflattened by a global layout ---------
LAYOUT = {"W1": (2, 6), "b1": (6,), "W2": (6, 1), "b2": (1,)}


def unflatten(theta):
    params, start = {}, 0
    for name, shape in LAYOUT.items():
        size = math.prod(shape)
        params[name] = theta[start:start + size].reshape(shape)
        start += size
    return params


def flat_mlp_loss(theta, X, y):
    p = unflatten(theta)
    pred = (np.tanh(X @ p["W1"] + p["b1"]) @ p["W2"] + p["b2"]).ravel()
    largest = -float("inf")
    for name in ("W1", "W2"):
        largest = max(largest, np.abs(p[name]).max())
    return np.mean((pred - y) ** 2) + 1e-3 * largest
