"""Scientific programs, written as a numpy user writes them: simulations with
helpers taking step counts, linear algebra, scipy.stats, dynamic programmes."""

import numpy as np
from scipy.stats import norm


# ---- a Gaussian-process marginal likelihood ---------------------------------------------
def rbf_kernel(X1, X2, ell, sf2):
    d2 = np.sum((X1[:, None, :] - X2[None, :, :]) ** 2, axis=-1)
    return sf2 * np.exp(-0.5 * d2 / ell ** 2)


def gp_neg_log_marginal(log_params, X, y):
    ell, sf2, sn2 = np.exp(log_params)
    n = X.shape[0]
    K = rbf_kernel(X, X, ell, sf2) + sn2 * np.eye(n)
    L = np.linalg.cholesky(K)
    alpha = np.linalg.solve(L.T, np.linalg.solve(L, y))
    return 0.5 * y @ alpha + np.sum(np.log(np.diag(L))) + 0.5 * n * np.log(2 * np.pi)


# ---- an n-body leapfrog ----------------------------------------------------------------
def accelerations(pos, masses, softening=0.1):
    diff = pos[None, :, :] - pos[:, None, :]
    r2 = np.sum(diff ** 2, axis=-1) + softening ** 2
    inv_r3 = r2 ** -1.5
    return np.sum(masses[None, :, None] * diff * inv_r3[:, :, None], axis=1)


def leapfrog(pos, vel, masses, dt, n_steps):
    acc = accelerations(pos, masses)
    for _ in range(n_steps):
        vel = vel + 0.5 * dt * acc
        pos = pos + dt * vel
        acc = accelerations(pos, masses)
        vel = vel + 0.5 * dt * acc
    return pos, vel


def nbody_loss(vel0, pos0, masses, target):
    pos, vel = leapfrog(pos0, vel0, masses, 0.01, 20)
    return np.sum((pos - target) ** 2)


# ---- an RK4 ODE fit ---------------------------------------------------------------------
def rk4(f, y, dt, n_steps):
    ys = [y]
    for _ in range(n_steps):
        k1 = f(y)
        k2 = f(y + 0.5 * dt * k1)
        k3 = f(y + 0.5 * dt * k2)
        k4 = f(y + dt * k3)
        y = y + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        ys.append(y)
    return np.stack(ys)


def lotka_volterra(y, theta):
    prey, pred = y[0], y[1]
    a, b, c, d = theta
    return np.array([a * prey - b * prey * pred, d * prey * pred - c * pred])


def ode_final_state(theta, y0):
    return rk4(lambda y: lotka_volterra(y, theta), y0, 0.1, 10)[-1]


def ode_fit_loss(theta, y0, observed):
    traj = rk4(lambda y: lotka_volterra(y, theta), y0, 0.1, observed.shape[0] - 1)
    return np.sum((traj - observed) ** 2)


# ---- Newton's method inside the loss --------------------------------------------------
def newton_root(theta, x0, n_iter):
    """The root of x**3 + theta[0] x - theta[1] by Newton's method."""
    x = x0
    for _ in range(n_iter):
        fx = x ** 3 + theta[0] * x - theta[1]
        dfx = 3 * x ** 2 + theta[0]
        x = x - fx / dfx
    return x


def newton_loss(theta):
    root = newton_root(theta, 1.0, 12)
    return (root - 0.7) ** 2 + 0.1 * np.sum(theta ** 2)


# ---- Black-Scholes, greeks by differentiation ---------------------------------------------
def black_scholes_call(S, K, T, r, sigma):
    d1 = (np.log(S / K) + (r + 0.5 * sigma ** 2) * T) / (sigma * np.sqrt(T))
    d2 = d1 - sigma * np.sqrt(T)
    return S * norm.cdf(d1) - K * np.exp(-r * T) * norm.cdf(d2)


def call_prices(spots, strikes, T, r, sigma):
    return black_scholes_call(spots, strikes, T, r, sigma)


def call_book_value(spots, strikes, T, r, sigma):
    """The value of a book of calls: one spot per option, arrays."""
    return np.sum(black_scholes_call(spots, strikes, T, r, sigma))


# ---- a Kalman filter log-likelihood --------------------------------------------------------
def kalman_predict(m, P, F, Q):
    return F @ m, F @ P @ F.T + Q


def kalman_update(m, P, y, H, R):
    S = H @ P @ H.T + R
    K = np.linalg.solve(S, H @ P).T
    v = y - H @ m
    ll = -0.5 * (v @ np.linalg.solve(S, v) + np.log(np.linalg.det(S)) + len(y) * np.log(2 * np.pi))
    return m + K @ v, P - K @ S @ K.T, ll


def kalman_loglik(log_noise, F, H, ys):
    q, r = np.exp(log_noise)
    n = F.shape[0]
    Q = q * np.eye(n)
    R = r * np.eye(H.shape[0])
    m = np.zeros(n)
    P = np.eye(n)
    total = 0.0
    for t in range(ys.shape[0]):
        m, P = kalman_predict(m, P, F, Q)
        m, P, ll = kalman_update(m, P, ys[t], H, R)
        total += ll
    return total


# ---- bundle adjustment ------------------------------------------------------------------
def rotate(points, rvec):
    """Rodrigues' rotation of each point by the axis-angle vector rvec."""
    theta = np.sqrt(np.sum(rvec ** 2))
    k = rvec / theta
    cos, sin = np.cos(theta), np.sin(theta)
    return (points * cos + np.cross(k, points) * sin
            + np.outer(points @ k, k) * (1 - cos))


def project(points, camera):
    p = rotate(points, camera[:3]) + camera[3:6]
    return p[:, :2] / p[:, 2:3]


def unpack(params, n_cameras):
    cameras = params[:n_cameras * 6].reshape(n_cameras, 6)
    points = params[n_cameras * 6:].reshape(-1, 3)
    return cameras, points


def ba_residual_norm(params, n_cameras, observations):
    cameras, points = unpack(params, n_cameras)
    total = 0.0
    for c in range(n_cameras):
        r = project(points, cameras[c]) - observations[c]
        total = total + np.sum(r ** 2)
    return total


# ---- a pendulum: energy and its drift under symplectic Euler ---------------------------
def pendulum_energy(state, m=1.0, length=1.5, g=9.81):
    theta, omega = state
    return 0.5 * m * length ** 2 * omega ** 2 + m * g * length * (1 - np.cos(theta))


def pendulum_drift(state, dt, n_steps, length=1.5, g=9.81):
    e0 = pendulum_energy(state)
    theta, omega = state
    for _ in range(n_steps):
        omega = omega - dt * g / length * np.sin(theta)
        theta = theta + dt * omega
    return (pendulum_energy(np.array([theta, omega])) - e0) ** 2


# ---- a Lennard-Jones cluster: pair energies over np.triu_indices ---------------------------
def lennard_jones_energy(positions, epsilon=1.0, sigma=1.0):
    n = positions.shape[0]
    i, j = np.triu_indices(n, k=1)
    r2 = np.sum((positions[i] - positions[j]) ** 2, axis=1)
    s6 = (sigma ** 2 / r2) ** 3
    return np.sum(4 * epsilon * (s6 ** 2 - s6))


# ---- soft-DTW, a dynamic programme ------------------------------------------------------
def softmin3(a, b, c, gamma):
    m = min(a, b, c)
    return m - gamma * np.log(np.exp(-(a - m) / gamma) + np.exp(-(b - m) / gamma)
                              + np.exp(-(c - m) / gamma))


def soft_dtw(x, y, gamma=0.5):
    n, m = len(x), len(y)
    D = (x[:, None] - y[None, :]) ** 2
    R = np.full((n + 1, m + 1), np.inf)
    R[0, 0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            R[i, j] = D[i - 1, j - 1] + softmin3(R[i - 1, j], R[i, j - 1], R[i - 1, j - 1], gamma)
    return R[n, m]


# ---- a finite-difference heat equation ----------------------------------------------------
def heat_step(u, alpha, dx, dt):
    lap = (np.roll(u, 1) - 2 * u + np.roll(u, -1)) / dx ** 2
    return u + dt * alpha * lap


def heat_loss(u0, log_alpha, target):
    alpha = np.exp(log_alpha)
    u = u0
    n = u0.shape[0]
    dx = 1.0 / n
    for _ in range(50):
        u = heat_step(u, alpha, dx, 0.2 * dx ** 2)
    return np.sum((u - target) ** 2) * dx


# ---- a piecewise-linear calibration curve -----------------------------------------------
def calibration_loss(values, knots, x, y):
    return np.mean((np.interp(x, knots, values) - y) ** 2)


# ---- a natural cubic spline's bending energy (the Thomas algorithm, in place) --------------
def spline_bending_energy(y, h):
    n = len(y)
    a, b, c, d = np.zeros(n), np.ones(n), np.zeros(n), np.zeros(n)
    for i in range(1, n - 1):
        a[i], b[i], c[i] = h / 6.0, 2 * h / 3.0, h / 6.0
        d[i] = (y[i + 1] - 2 * y[i] + y[i - 1]) / h
    for i in range(1, n):           # forward elimination
        w = a[i] / b[i - 1]
        b[i] -= w * c[i - 1]
        d[i] -= w * d[i - 1]
    m = np.zeros(n)                 # back substitution: the second derivatives
    m[n - 1] = d[n - 1] / b[n - 1]
    for i in range(n - 2, -1, -1):
        m[i] = (d[i] - c[i] * m[i + 1]) / b[i]
    return np.sum(m ** 2) * h
