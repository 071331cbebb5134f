"""Machine-learning programs, written as a numpy user writes them (params dicts,
NamedTuples, helpers taking ints and axes, lists that grow, scipy.special)."""

from functools import partial
from typing import NamedTuple

import numpy as np

import irad
from scipy.special import expit, gammaln, logsumexp


# ---- an MLP on a params dict, trained by SGD in the test ---------------------------
def mlp(params, x):
    h = np.tanh(x @ params["W1"] + params["b1"])
    return h @ params["W2"] + params["b2"]


def mlp_loss(params, x, y):
    err = mlp(params, x) - y
    return np.mean(err ** 2)


# ---- logistic regression (the test fits it with scipy's L-BFGS-B) ---------------------
def logistic_loss(w, X, y, l2):
    z = X @ w[1:] + w[0]
    nll = np.sum(np.logaddexp(0.0, z) - y * z)
    return nll / len(y) + 0.5 * l2 * np.sum(w[1:] ** 2)


# ---- softmax regression --------------------------------------------------------------
def log_softmax(z, axis=-1):
    z = z - np.max(z, axis=axis, keepdims=True)
    return z - np.log(np.sum(np.exp(z), axis=axis, keepdims=True))


def softmax_regression_loss(params, X, labels_onehot):
    logits = X @ params["W"] + params["b"]
    return -np.mean(np.sum(labels_onehot * log_softmax(logits, axis=1), axis=1))


# ---- polynomial features + ridge fit ------------------------------------------------
def features(x, deg):
    cols = []
    for d in range(deg):
        cols.append(x ** d)
    return np.stack(cols, axis=1)


def poly_fit_loss(coef, x, y):
    deg = len(coef)
    pred = features(x, deg) @ coef
    return np.mean((pred - y) ** 2) + 1e-3 * np.sum(coef ** 2)


# ---- ridge regression in closed form, differentiated in its hyperparameter -------------
def ridge_validation_loss(log_lam, X, y, X_val, y_val):
    d = X.shape[1]
    lam = np.exp(log_lam)
    w = np.linalg.solve(X.T @ X + lam * np.eye(d), X.T @ y)
    r = X_val @ w - y_val
    return r @ r / len(y_val)


# ---- Poisson and negative-binomial GLMs with gammaln ----------------------------------
def poisson_nll(w, X, counts):
    eta = X @ w
    return -np.sum(counts * eta - np.exp(eta) - gammaln(counts + 1.0))


def negbin_nll(params, X, counts):
    mu = np.exp(X @ params["w"])
    r = np.exp(params["log_r"])
    ll = (gammaln(counts + r) - gammaln(r) - gammaln(counts + 1.0)
          + r * np.log(r / (r + mu)) + counts * np.log(mu / (r + mu)))
    return -np.sum(ll)


# ---- a 1-D CNN ------------------------------------------------------------------------
def conv1d(x, w, b):
    """x: (C_in, L), w: (C_out, C_in, K) -> (C_out, L - K + 1), 'valid' cross-correlation."""
    c_out, c_in, k = w.shape
    n = x.shape[1] - k + 1
    out = np.zeros((c_out, n))
    for j in range(k):
        out = out + w[:, :, j] @ x[:, j:j + n]
    return out + b[:, None]


def relu(x):
    return np.maximum(x, 0.0)


def cnn_loss(params, signals, targets):
    total = 0.0
    for i in range(signals.shape[0]):
        h = relu(conv1d(signals[i], params["w1"], params["b1"]))
        h = relu(conv1d(h, params["w2"], params["b2"]))
        pooled = np.mean(h, axis=1)
        pred = pooled @ params["head"]
        total = total + (pred - targets[i]) ** 2
    return total / signals.shape[0]


# ---- a GRU with NamedTuple params ------------------------------------------------------
class GRUParams(NamedTuple):
    Wz: np.ndarray
    Uz: np.ndarray
    bz: np.ndarray
    Wr: np.ndarray
    Ur: np.ndarray
    br: np.ndarray
    Wh: np.ndarray
    Uh: np.ndarray
    bh: np.ndarray


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def gru_cell(p, h, x):
    z = sigmoid(p.Wz @ x + p.Uz @ h + p.bz)
    r = sigmoid(p.Wr @ x + p.Ur @ h + p.br)
    h_tilde = np.tanh(p.Wh @ x + p.Uh @ (r * h) + p.bh)
    return (1 - z) * h + z * h_tilde


def gru(p, xs):
    h = np.zeros(p.bz.shape[0])
    hs = []
    for x in xs:
        h = gru_cell(p, h, x)
        hs.append(h)
    return np.stack(hs)


def gru_loss(p, xs, targets):
    hs = gru(p, xs)
    return np.sum((hs[:, 0] - targets) ** 2)


# ---- a small LSTM (gates by np.split, scipy's expit) -------------------------------------
def lstm_step(params, h, c, x):
    z = params["W"] @ np.concatenate([x, h]) + params["b"]
    i, f, o, g = np.split(z, 4)
    c = expit(f) * c + expit(i) * np.tanh(g)
    h = expit(o) * np.tanh(c)
    return h, c


def lstm_loss(params, xs, ys):
    hidden = params["b"].shape[0] // 4
    h = np.zeros(hidden)
    c = np.zeros(hidden)
    loss = 0.0
    for t in range(xs.shape[0]):
        h, c = lstm_step(params, h, c, xs[t])
        pred = params["V"] @ h
        loss += np.sum((pred - ys[t]) ** 2)
    return loss / xs.shape[0]


# ---- a transformer block -------------------------------------------------------------
def layer_norm(x, gamma, beta, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return gamma * (x - mu) / np.sqrt(var + eps) + beta


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def attention(params, x, n_heads):
    T, d = x.shape
    dh = d // n_heads
    q = (x @ params["Wq"]).reshape(T, n_heads, dh).transpose(1, 0, 2)
    k = (x @ params["Wk"]).reshape(T, n_heads, dh).transpose(1, 0, 2)
    v = (x @ params["Wv"]).reshape(T, n_heads, dh).transpose(1, 0, 2)
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(dh)
    out = softmax(scores, axis=-1) @ v
    return out.transpose(1, 0, 2).reshape(T, d) @ params["Wo"]


def transformer_block(params, x, n_heads):
    x = x + attention(params, layer_norm(x, params["g1"], params["be1"]), n_heads)
    h = layer_norm(x, params["g2"], params["be2"])
    return x + np.maximum(h @ params["W1"], 0.0) @ params["W2"]


def transformer_loss(params, x, n_heads=2):
    return np.mean(transformer_block(params, x, n_heads) ** 2)


# ---- a VAE-style ELBO with fixed noise ----------------------------------------------------
def encode(params, x):
    h = np.tanh(x @ params["enc_W"] + params["enc_b"])
    return dict(mu=h @ params["mu_W"], logvar=h @ params["lv_W"])


def decode(params, z):
    return np.tanh(z @ params["dec_W1"]) @ params["dec_W2"]


def neg_elbo(params, x, eps):
    stats = encode(params, x)
    mu, logvar = stats["mu"], stats["logvar"]
    z = mu + np.exp(0.5 * logvar) * eps
    x_hat = decode(params, z)
    recon = 0.5 * np.sum((x - x_hat) ** 2, axis=1)
    kl = -0.5 * np.sum(1.0 + logvar - mu ** 2 - np.exp(logvar), axis=1)
    return np.mean(recon + kl)


# ---- a recursive tree RNN over a parse tree of nested tuples -----------------------------
def encode_tree(tree, W, b, E):
    if isinstance(tree, int):
        return E[tree]
    left, right = tree
    children = np.concatenate([encode_tree(left, W, b, E), encode_tree(right, W, b, E)])
    return np.tanh(W @ children + b)


def tree_rnn_loss(W, b, E, tree, target):
    return np.sum((encode_tree(tree, W, b, E) - target) ** 2)


# ---- a GMM negative log-likelihood with a logsumexp(a, axis) helper ------------------------
def my_logsumexp(a, axis):
    m = np.max(a, axis=axis, keepdims=True)
    return np.squeeze(m, axis) + np.log(np.sum(np.exp(a - m), axis=axis))


def gmm_nll(params, X):
    means, log_sd, logits = params["means"], params["log_sd"], params["logits"]
    n, d = X.shape
    diff = X[:, None, :] - means[None, :, :]
    log_dens = (-0.5 * np.sum((diff / np.exp(log_sd)[None]) ** 2, axis=2)
                - np.sum(log_sd, axis=1)[None, :] - 0.5 * d * np.log(2 * np.pi))
    log_w = logits - logsumexp(logits)
    return -np.sum(my_logsumexp(log_dens + log_w[None, :], axis=1)) / n


# ---- a robust regression whose loss parameter is bound by functools.partial --------------
def huber(r, delta):
    a = np.abs(r)
    return np.where(a <= delta, 0.5 * r ** 2, delta * (a - 0.5 * delta))


def huber_regression_loss(w, X, y, delta=1.0):
    return np.mean(huber(X @ w - y, delta))


huber_loss_tight = partial(huber_regression_loss, delta=0.3)


class LinearModel(NamedTuple):
    """A model object whose method is the loss (model.loss as a bound method)."""
    X: np.ndarray
    y: np.ndarray

    def loss(self, w):
        return np.mean((self.X @ w - self.y) ** 2)


# ---- standardised features (int data, x.std(), np.column_stack) ---------------------------
def standardized_regression_loss(w, X_counts, y):
    X = X_counts.astype("float64")
    Xs = (X - X.mean(axis=0)) / X.std(axis=0)
    design = np.column_stack([np.ones(len(y)), Xs])
    r = design @ w - y
    return r @ r / len(y)


# ---- a Poisson deviance, the data's log under np.errstate --------------------------------
def poisson_deviance(w, X, counts):
    mu = np.exp(X @ w)
    with np.errstate(divide="ignore"):
        log_counts = np.where(counts > 0, np.log(counts), 0.0)
    return 2.0 * np.sum(counts * (log_counts - np.log(mu)) - (counts - mu))


# ---- MAML: the loss after one inner SGD step taken with irad.grad ---------------------------
def maml_loss(params, x_train, y_train, x_test, y_test):
    grads = irad.grad(mlp_loss)(params, x_train, y_train)
    adapted = {k: params[k] - 0.1 * grads[k] for k in params}
    return mlp_loss(adapted, x_test, y_test)


# ---- a fitted polynomial's value at one point (np.polyval gives a 0-d result) ---------------
def polynomial_at_point(coef):
    return np.polyval(coef, 0.5)


# ---- a loss as a callable object (irad.grad(RidgeObjective(X, y))) -------------------------
class RidgeObjective:
    def __init__(self, X, y, lam=0.1):
        self.X, self.y, self.lam = X, y, lam

    def __call__(self, w):
        r = self.X @ w - self.y
        return r @ r / len(self.y) + self.lam * w @ w


# ---- causal self-attention, masked with -inf --------------------------------------------
def causal_attention_loss(params, x):
    T, d = x.shape
    scores = (x @ params["Wq"]) @ (x @ params["Wk"]).T / np.sqrt(d)
    mask = np.triu(np.ones((T, T)), 1) > 0
    scores = np.where(mask, -np.inf, scores)
    out = softmax(scores, axis=1) @ (x @ params["Wv"])
    return np.mean(out ** 2)
