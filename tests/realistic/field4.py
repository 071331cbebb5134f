"""More programs of kinds the other modules do not cover, written as a numpy/JAX
user writes them (issue 32), with the Python idioms such code carries (generator
helpers, `nonlocal` counters, `for ... else` searches, `np.vectorize` of a scalar
helper, f-string asserts): a Metropolis-adjusted Langevin step, a proximal
(ISTA) Poisson GLM with an offset, Heun's method for Michaelis-Menten kinetics, an
IRLS Huber regression, a soft decision tree, polynomial-chaos features, minibatch
losses from a generator, a backtracking line search inside a loss, a PPO clipped
objective with generalised advantages, a WGAN gradient penalty, a leave-one-out
kernel density bandwidth, neighbourhood components analysis, a conditional logit
over choice sets, a mean-field Bayesian linear regression ELBO, a Tukey biweight
by `np.vectorize`, and a differentiable ray-sphere renderer."""

import math

import numpy as np
from scipy.special import expit, gammaln, logsumexp, log_softmax, softmax

import irad


# ---- a Metropolis-adjusted Langevin step: the log acceptance with its noise given -------------------
def log_target(x, precision):
    return -0.5 * x @ precision @ x - 0.25 * np.sum(x ** 4)


def grad_log_target(x, precision):
    return -precision @ x - x ** 3


def mala_log_accept(x, noise, log_step, precision):
    h = np.exp(log_step)
    drift = x + 0.5 * h * grad_log_target(x, precision)
    proposal = drift + np.sqrt(h) * noise
    back = proposal + 0.5 * h * grad_log_target(proposal, precision)
    log_q_forward = -np.sum((proposal - drift) ** 2) / (2 * h)
    log_q_backward = -np.sum((x - back) ** 2) / (2 * h)
    log_ratio = log_target(proposal, precision) - log_target(x, precision) + log_q_backward - log_q_forward
    return np.minimum(0.0, log_ratio)


# ---- a Poisson GLM with an exposure offset, fitted by proximal-gradient (ISTA) steps -------------------
def soft_threshold(w, t):
    return np.sign(w) * np.maximum(np.abs(w) - t, 0.0)


def poisson_glm_grad(w, X, y, log_exposure):
    rate = np.exp(X @ w + log_exposure)
    return X.T @ (rate - y) / len(y)


def ista_validation_nll(w0, X, y, log_exposure, X_val, y_val, lam=0.05, step=0.1, n_steps=8):
    w = w0
    for _ in range(n_steps):
        w = soft_threshold(w - step * poisson_glm_grad(w, X, y, log_exposure), step * lam)
    eta = X_val @ w
    return np.mean(np.exp(eta) - y_val * eta + gammaln(y_val + 1))


# ---- Heun's method for Michaelis-Menten kinetics, with a counter of right-hand-side calls ----------------
def simulate_enzyme(log_k, s0, dt, n_steps):
    k_cat, k_m = np.exp(log_k)
    calls = 0

    def rate(s):
        nonlocal calls
        calls += 1
        return -k_cat * s / (k_m + s)

    s = s0
    trajectory = [s]
    for _ in range(n_steps):
        slope = rate(s)
        predicted = s + dt * slope
        s = s + 0.5 * dt * (slope + rate(predicted))
        trajectory.append(s)
    assert calls == 2 * n_steps, f"Heun's method calls the rate twice a step, got {calls}"
    return np.array(trajectory)


def enzyme_fit_loss(log_k, s0, observed, dt=0.25):
    predicted = simulate_enzyme(log_k, s0, dt, len(observed) - 1)
    return np.sum((predicted - observed) ** 2)


# ---- a Huber regression by iteratively reweighted least squares ---------------------------------------
def huber_weights(r, delta):
    a = np.abs(r)
    return np.where(a <= delta, 1.0, delta / np.maximum(a, 1e-12))


def irls_huber(X, y, delta, n_iter=5):
    w = np.linalg.solve(X.T @ X, X.T @ y)
    for _ in range(n_iter):
        weights = huber_weights(y - X @ w, delta)
        XtW = X.T * weights
        w = np.linalg.solve(XtW @ X, XtW @ y)
    return w


def irls_prediction_error(y, X, X_test, y_test, delta=1.0):
    w = irls_huber(X, y, delta)
    return np.mean((X_test @ w - y_test) ** 2)


# ---- a soft decision tree of stumps, depth given as an int -----------------------------------------
def soft_tree(params, x, node=0, depth=2):
    if depth == 0:
        return params["leaves"][node - (2 ** 2 - 1)]
    gate = expit((x @ params["w"][node] + params["b"][node]) / params["temperature"])
    left = soft_tree(params, x, 2 * node + 1, depth - 1)
    right = soft_tree(params, x, 2 * node + 2, depth - 1)
    return gate * left + (1 - gate) * right


def soft_tree_loss(params, X, y):
    return np.mean((soft_tree(params, X) - y) ** 2)


# ---- polynomial-chaos features: probabilists' Hermite polynomials from a generator ---------------------
def hermite_polynomials(x, degree):
    """He_0, He_1, ..., He_degree at x, by the three-term recurrence."""
    previous, current = np.ones_like(x), x
    yield previous
    yield current
    for n in range(1, degree):
        previous, current = current, x * current - n * previous
        yield current


def chaos_surrogate_loss(coef, xi, y):
    degree = len(coef) - 1
    features = np.stack(list(hermite_polynomials(xi, degree)), axis=1)
    norms = np.array([math.factorial(n) for n in range(degree + 1)], dtype=float)
    prediction = features @ coef
    variance = np.sum(coef[1:] ** 2 * norms[1:])       # the surrogate's variance, in closed form
    return np.mean((prediction - y) ** 2) + 1e-2 * variance


# ---- minibatch losses from a generator of slices --------------------------------------------------------
def minibatches(X, y, size):
    for start in range(0, len(X), size):
        yield X[start:start + size], y[start:start + size]


def batched_logistic_loss(w, X, y, batch_size=4):
    total = 0.0
    n_batches = 0
    for xb, yb in minibatches(X, y, batch_size):
        logits = xb @ w
        total = total + np.mean(np.logaddexp(0.0, logits) - yb * logits)
        n_batches += 1
    return total / n_batches


# ---- a backtracking (Armijo) line search inside a loss, the search by `for ... else` -------------------
def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def rosenbrock_grad(x):
    g = np.zeros_like(x)
    g[:-1] = -400.0 * x[:-1] * (x[1:] - x[:-1] ** 2) - 2 * (1 - x[:-1])
    g[1:] += 200.0 * (x[1:] - x[:-1] ** 2)
    return g


def line_search_step(x, c=1e-4, shrink=0.5, max_halvings=30):
    g = rosenbrock_grad(x)
    f0 = rosenbrock(x)
    t = 1.0
    for _ in range(max_halvings):
        candidate = x - t * g
        if rosenbrock(candidate) <= f0 - c * t * (g @ g):
            break
        t = t * shrink
    else:
        raise ValueError(f"no sufficient decrease after {max_halvings} halvings")
    return candidate


def after_two_steps(x):
    return rosenbrock(line_search_step(line_search_step(x)))


# ---- PPO's clipped surrogate with generalised advantage estimates ----------------------------------------
def gae(rewards, values, gamma=0.99, lam=0.95):
    advantages = []
    running = 0.0
    for t in reversed(range(len(rewards))):
        delta = rewards[t] + gamma * values[t + 1] - values[t]
        running = delta + gamma * lam * running
        advantages.append(running)
    return np.array(advantages[::-1])


def ppo_loss(theta, states, actions, old_log_probs, rewards, values, clip=0.2):
    log_probs = log_softmax(states @ theta, axis=1)
    chosen = log_probs[np.arange(len(actions)), actions]
    ratio = np.exp(chosen - old_log_probs)
    adv = gae(rewards, values)
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    surrogate = np.minimum(ratio * adv, np.clip(ratio, 1 - clip, 1 + clip) * adv)
    entropy = -np.sum(np.exp(log_probs) * log_probs, axis=1)
    return -np.mean(surrogate) - 0.01 * np.mean(entropy)


# ---- a WGAN critic with a gradient penalty (irad.grad of the critic inside the loss) ---------------------
def critic(params, x):
    h = np.tanh(params["W"] @ x + params["b"])
    return params["v"] @ h


def critic_loss(params, real, fake, mix, penalty=10.0):
    score_real = np.mean(np.array([critic(params, x) for x in real]))
    score_fake = np.mean(np.array([critic(params, x) for x in fake]))
    grad_x = irad.grad(critic, argnums=1)
    gp = 0.0
    for x_r, x_f, t in zip(real, fake, mix):
        g = grad_x(params, t * x_r + (1 - t) * x_f)
        gp = gp + (np.sqrt(g @ g + 1e-12) - 1.0) ** 2
    return score_fake - score_real + penalty * gp / len(mix)


# ---- a kernel density estimate's leave-one-out log likelihood in its bandwidth ----------------------------
def loo_kde_loglik(log_bandwidth, x):
    h = np.exp(log_bandwidth)
    n = len(x)
    d2 = (x[:, None] - x[None, :]) ** 2
    log_k = -0.5 * d2 / h ** 2 - 0.5 * np.log(2 * np.pi) - np.log(h)
    log_k = np.where(np.eye(n, dtype=bool), -np.inf, log_k)
    return -np.mean(logsumexp(log_k, axis=1) - np.log(n - 1))


# ---- neighbourhood components analysis: a learned linear metric ---------------------------------------------
def nca_objective(A, X, labels):
    Z = X @ A.T
    sq = np.sum(Z ** 2, axis=1)
    d2 = sq[:, None] + sq[None, :] - 2 * Z @ Z.T
    logits = -d2 - 1e6 * np.eye(len(X))               # a point is not its own neighbour
    p = softmax(logits, axis=1)
    same = labels[:, None] == labels[None, :]
    return -np.sum(np.sum(p * same, axis=1))


# ---- a conditional logit over choice sets of different sizes --------------------------------------------------
def choice_nll(beta, choice_sets):
    """choice_sets: a list of (attributes of the alternatives, index chosen)."""
    nll = 0.0
    for attributes, chosen in choice_sets:
        utilities = attributes @ beta
        nll = nll - (utilities[chosen] - logsumexp(utilities))
    return nll


# ---- a mean-field variational Bayesian linear regression (noise given) ------------------------------------------
def bayes_linreg_elbo(q, X, y, eps, noise_sd=0.5, prior_sd=1.0):
    mean, sd = q["mean"], np.exp(q["log_sd"])
    samples = mean + sd * eps                              # (n_samples, d)
    residuals = y[None, :] - samples @ X.T
    log_lik = -0.5 * np.sum(residuals ** 2, axis=1) / noise_sd ** 2 - len(y) * np.log(noise_sd * np.sqrt(2 * np.pi))
    kl = np.sum(np.log(prior_sd / sd) + (sd ** 2 + mean ** 2) / (2 * prior_sd ** 2) - 0.5)
    return -(np.mean(log_lik) - kl)


# ---- a Tukey biweight regression, the scalar rho vectorised -------------------------------------------------
def tukey_rho(r, c=4.685):
    if abs(r) <= c:
        return c ** 2 / 6 * (1 - (1 - (r / c) ** 2) ** 3)
    return c ** 2 / 6


def tukey_regression_loss(w, X, y):
    rho = np.vectorize(tukey_rho)
    return np.sum(rho(y - X @ w))


# ---- a differentiable ray-sphere renderer: the silhouette's soft coverage ------------------------------------------
def ray_sphere_distance(origin, direction, center, radius):
    """The signed distance from the sphere to the ray's closest point."""
    oc = center - origin
    t = oc @ direction
    closest = origin + t * direction
    return np.linalg.norm(closest - center) - radius


def render_silhouette(center, radius, directions, sharpness=20.0):
    origin = np.zeros(3)
    image = []
    for d in directions:
        image.append(expit(-sharpness * ray_sphere_distance(origin, d, center, radius)))
    return np.array(image)


def silhouette_loss(center, log_radius, directions, target):
    image = render_silhouette(center, np.exp(log_radius), directions)
    return np.sum((image - target) ** 2)
