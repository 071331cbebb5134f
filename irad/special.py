"""scipy.special's functions and scipy.stats.norm's, written in irad's Python subset.

A program's call to scipy.special.ndtri, say, lowers to a call to `ndtri` here
(irad/frontend/scipy_special.py binds scipy's arguments, brings them to float64
and back to float32 where scipy returns float32, as scipy computes its float32
loops in double). Each function takes numbers or float64 arrays and has no
branches: np.where picks, and each branch gets inputs where it is finite, so
one body serves numbers and arrays and no NaN reaches a derivative from a
branch np.where discards. They run as plain numpy too; erf and erfc are
scipy's, which irad lowers to math.erf and math.erfc.

The rule table (irad/frontend/scipy_rules.py) holds a rule for the functions
whose body would differentiate to something else than their derivative: the
inverses erfinv and ndtri and the approximations gammaln, digamma and
log_ndtr (their rules use closed forms: digamma, trigamma, pdf / cdf); xlogy
and xlog1py, whose derivative in x at x = 0 is log(y), not the 0 of the branch
that gives their value there. The others (expit, logit, ndtr, trigamma) are
differentiated through their bodies, which are exact or accurate series.
"""

import math

import numpy as np
import scipy.special

from irad import numerics

SQRT1_2 = 0.7071067811865476  # 1 / sqrt(2)
SQRT2 = 1.4142135623730951
SQRT_PI_2 = 0.886226925452758  # sqrt(pi) / 2, 1 / erf'(0)
SQRT_2PI = 2.5066282746310002
LOG_SQRT_2PI = 0.9189385332046728  # log(sqrt(2 pi))


# ---- the logistic function ---------------------------------------------------------
def expit(x):
    """1 / (1 + exp(-x)), from exp(-|x|) <= 1: no overflow, and the tiny values
    of large negative x keep their relative precision."""
    positive = x >= 0.0
    e = np.exp(np.where(positive, -x, x))
    return np.where(positive, 1.0 / (1.0 + e), e / (1.0 + e))


def log_expit(x):
    """log(expit(x)) = -log1p(exp(-x)), from exp(-|x|) <= 1: x - log1p(exp(x))
    below 0, where it keeps the precision of large negative x (log_expit(-40) is
    -40 - 4.2e-18), and no overflow above."""
    negative = x < 0.0
    e = np.exp(np.where(negative, x, -x))  # not -|x|: its derivative at 0 would be 0
    return np.where(negative, x - np.log1p(e), -np.log1p(e))


def logit(p):
    """log(p / (1 - p)); around 1/2, where that quotient is 1 + a rounding error,
    log1p(s) - log1p(-s) with s = 2p - 1 (exact there)."""
    middle = (p >= 0.3) & (p <= 0.65)
    s = 2.0 * (np.where(middle, p, 0.5) - 0.5)
    q = np.where(middle, 0.25, p)
    return np.where(middle, np.log1p(s) - np.log1p(-s), np.log(q / (1.0 - q)))


# ---- the normal distribution -----------------------------------------------------------
def ndtr(x):
    """The standard normal cdf, from erfc: accurate in the lower tail."""
    return 0.5 * scipy.special.erfc(-x * SQRT1_2)


def _tail_series(t):
    """sum_k>=1 (-1)^k (2k-1)!! / t^2k: ndtr(t) = pdf(t) / -t * (1 + this) for t
    <= -20, where its first ten terms reach double precision."""
    f = 1.0 / (t * t)
    total = 654729075.0
    for c in (-34459425.0, 2027025.0, -135135.0, 10395.0, -945.0, 105.0, -15.0, 3.0, -1.0):
        total = c + f * total
    return f * total


def log_ndtr(x):
    """log(ndtr(x)): log1p(-ndtr(-x)) above -1, log(ndtr(x)) down to -20, below
    that the asymptotic series (ndtr underflows from -38 on)."""
    far = x < -20.0
    t = np.where(far, x, -20.0)
    tail = -0.5 * t * t - np.log(-t) - LOG_SQRT_2PI + np.log1p(_tail_series(t))
    v = np.where(far, -20.0, x)
    upper = np.log1p(-0.5 * scipy.special.erfc(np.maximum(v, -1.0) * SQRT1_2))
    lower = np.log(0.5 * scipy.special.erfc(-np.minimum(v, -1.0) * SQRT1_2))
    return np.where(far, tail, np.where(v > -1.0, upper, lower))


def log_ndtr_slope(x):
    """The derivative of log_ndtr, pdf(x) / ndtr(x): exp(log pdf - log_ndtr), or
    -x / (1 + series) where log_ndtr takes the asymptotic series (the exponent
    would lose digits to cancellation there)."""
    far = x < -20.0
    t = np.where(far, x, -20.0)
    v = np.where(far, 0.0, x)
    near = np.exp(-0.5 * v * v - LOG_SQRT_2PI - log_ndtr(v))
    return np.where(far, -t / (1.0 + _tail_series(t)), near)


# ---- inverses of erf, erfc and ndtr ------------------------------------------------------
def _erfinv_small(y):
    """erfinv(y) for |y| <= 1/2: its Taylor polynomial (within 1e-3), then Newton's
    method on erf, quadratic: three steps reach double precision."""
    y2 = y * y
    x = SQRT_PI_2 * y * (1.0 + y2 * (math.pi / 12.0 + y2 * (7.0 * math.pi ** 2 / 480.0)))
    for _ in range(3):
        x = x - (scipy.special.erf(x) - y) * SQRT_PI_2 * np.exp(x * x)
    return x


def _ndtri_lower(p):
    """ndtri(p) for 0 < p <= 1/4 (x <= -0.67): Newton's method on log_ndtr(x) =
    log(p), which is nearly quadratic in x and concave, so it converges from any
    start; from the root of log(p) ~ -x^2/2 - log(-x sqrt(2 pi)). log(p) keeps
    the tail down to the smallest subnormal p."""
    log_p = np.log(p)
    a = -2.0 * log_p
    x = -np.sqrt(np.maximum(a - np.log(2.0 * math.pi * a), 0.25))
    for _ in range(5):
        x = x - (log_ndtr(x) - log_p) / log_ndtr_slope(x)
    return x


def erfinv(y):
    """The inverse of erf on [-1, 1]: ±inf at ±1, NaN outside. Beyond |y| = 1/2,
    erfinv(y) = erfcinv(1 - |y|) = -ndtri((1 - |y|) / 2) / sqrt(2), and 1 - |y| is
    exact there."""
    a = np.abs(y)
    small = a <= 0.5
    inside = (a > 0.5) & (a < 1.0)
    near = _erfinv_small(np.where(small, y, 0.0))
    far = -SQRT1_2 * _ndtri_lower(np.where(inside, 0.5 * (1.0 - a), 0.25))
    far = np.where(inside, far, np.where(a == 1.0, np.inf, np.nan))
    return np.where(small, near, np.where(y < 0.0, -far, far))


def ndtri(p):
    """The inverse of ndtr on [0, 1]: -inf at 0, inf at 1, NaN outside. Within
    [1/4, 3/4], -sqrt(2) erfinv(1 - 2p) (1 - 2p is exact there); above 3/4,
    -ndtri(1 - p) (exact too)."""
    middle = (p >= 0.25) & (p <= 0.75)
    low = (p > 0.0) & (p < 0.25)
    high = (p > 0.75) & (p < 1.0)
    near = -SQRT2 * _erfinv_small(np.where(middle, 1.0 - 2.0 * p, 0.0))
    far = _ndtri_lower(np.where(low, p, np.where(high, 1.0 - p, 0.25)))
    edge = np.where(p == 0.0, -np.inf, np.where(p == 1.0, np.inf, np.nan))
    return np.where(middle, near, np.where(low, far, np.where(high, -far, edge)))


# ---- the gamma function ---------------------------------------------------------------
# Lanczos' approximation for x >= 1/2 (irad/numerics.py's sum: arithmetic alone,
# it takes arrays too), Euler's reflection below.
def _reduced(x):
    """x - round(x), in [-1/2, 1/2], exact: sin(pi x) and tan(pi x) from it are
    exact at the integers, where the reflections have their poles."""
    return x - np.rint(x)


def gammaln(x):
    """log|Gamma(x)|: inf at the poles 0, -1, -2, ..."""
    reflect = x < 0.5
    z = np.where(reflect, 1.0 - x, x) - 1.0
    z = np.where(np.abs(z) < np.inf, z, 0.0)
    t = z + 7.5
    above = LOG_SQRT_2PI + (z + 0.5) * np.log(t) - t + np.log(numerics.lanczos_sum(z))
    s = np.abs(np.sin(math.pi * _reduced(x)))
    pole = reflect & (s == 0.0)
    below = np.log(math.pi / np.where(s == 0.0, 1.0, s)) - above
    value = np.where(reflect, np.where(pole, np.inf, below), above)
    return np.where(np.abs(x) < np.inf, value, x)  # scipy's: inf at inf, -inf at -inf


def digamma(x):
    """d/dx log|Gamma(x)|: psi(x) = psi(x + 10) - sum 1/(x + k), then the
    asymptotic series; reflected below 0: psi(x) = psi(1 - x) - pi / tan(pi x).
    -inf at 0 (inf at -0.0), NaN at -1, -2, ... (scipy's values)."""
    reflect = x <= 0.0
    y = np.where(reflect, 1.0 - x, x)
    shift = y < 10.0
    steps = 1.0 / y
    for k in range(1, 10):
        steps = steps + 1.0 / (y + k)
    up = np.where(shift, y + 10.0, y)
    f = 1.0 / (up * up)
    tail = f * (1.0 / 12.0 - f * (1.0 / 120.0 - f * (1.0 / 252.0 - f * (1.0 / 240.0 - f * (
        1.0 / 132.0 - f * (691.0 / 32760.0 - f / 12.0))))))
    value = np.log(up) - 0.5 / up - tail - np.where(shift, steps, 0.0)
    r = _reduced(x)
    pole = reflect & (r == 0.0)
    cot = np.cos(math.pi * r) / np.sin(math.pi * np.where(r == 0.0, 0.5, r))
    value = np.where(reflect, value - math.pi * cot, value)
    return np.where(pole, np.where(x == 0.0, np.copysign(np.inf, -x), np.nan), value)


def trigamma(x):
    """psi'(x) = psi'(x + 10) + sum 1/(x + k)^2, then the asymptotic series;
    reflected below 0: psi'(x) = pi^2 / sin^2(pi x) - psi'(1 - x). inf at the
    poles 0, -1, -2, ..."""
    reflect = x <= 0.0
    y = np.where(reflect, 1.0 - x, x)
    shift = y < 10.0
    steps = 1.0 / (y * y)
    for k in range(1, 10):
        steps = steps + 1.0 / ((y + k) * (y + k))
    up = np.where(shift, y + 10.0, y)
    u = 1.0 / up
    f = u * u
    series = u * (1.0 + u * (0.5 + u * (1.0 / 6.0 - f * (1.0 / 30.0 - f * (1.0 / 42.0 - f * (
        1.0 / 30.0 - f * (5.0 / 66.0 - f * (691.0 / 2730.0 - f * (7.0 / 6.0)))))))))
    value = series + np.where(shift, steps, 0.0)
    s = np.sin(math.pi * _reduced(x))
    pole = reflect & (s == 0.0)
    s = np.where(s == 0.0, 1.0, s)
    value = np.where(reflect, math.pi * math.pi / (s * s) - value, value)
    return np.where(pole, np.inf, value)


# ---- x log y ------------------------------------------------------------------------------
def xlogy(x, y):
    """x * log(y), 0 where x is 0 (unless y is NaN)."""
    zero = (x == 0.0) & (y == y)
    return np.where(zero, 0.0, x * np.log(np.where(zero, 1.0, y)))


def xlog1py(x, y):
    """x * log1p(y), 0 where x is 0 (unless y is NaN)."""
    zero = (x == 0.0) & (y == y)
    return np.where(zero, 0.0, x * np.log1p(np.where(zero, 0.0, y)))


def over_unless_zero(x, y):
    """x / y, 0 where x is 0: the derivative of xlogy in y (xlog1py's with 1 + y)."""
    zero = x == 0.0
    return np.where(zero, 0.0, x / np.where(zero, 1.0, y))


# ---- the modified Bessel functions I0 and I1 ----------------------------------------------------
# Below |x| = 30, their power series sum_k (x^2/4)^k / (k! (k + n)!) (positive
# terms: no cancellation; 48 terms reach 1e-18 of the sum at 30); above, the
# asymptotic series e^|x| / sqrt(2 pi |x|) sum_k prod_j ((2j - 1)^2 - 4n^2) /
# (8 j |x|), whose 25 terms are below 1e-19 from 30 on. Both within ~2e-15
# relative of scipy's; differentiated through the bodies (each series
# differentiates to the series of the derivative). The series branch of I1 is
# x/2 times an even series, so its slope at 0 is 1/2 (sign(x) |x| would give 0).
BESSEL_SERIES_BELOW = 30.0


def _bessel_series(q, order):
    """sum_k q^k / (k! (k + order)!) * order!, Horner's form."""
    s = 1.0
    for k in range(48, 0, -1):
        s = 1.0 + s * q / (k * (k + order))
    return s


def _bessel_asymptotic(y, order):
    """e^-y I_order(y) sqrt(2 pi y) for y >= 30."""
    mu = 4.0 * order * order
    s = 1.0
    for k in range(25, 0, -1):
        s = 1.0 + s * ((2 * k - 1) * (2 * k - 1) - mu) / (8.0 * k * y)
    return s


def _bessel_parts(x, order):
    """(series, far, inside): the power series' part (at x where |x| <= 30, else
    at 0), e^-|x| I_order(|x|) by the asymptotic series (at |x| where it is
    above 30, else at 31), and where the series applies."""
    y = np.abs(x)
    inside = y <= BESSEL_SERIES_BELOW
    near = np.where(inside, x, 0.0)
    far_y = np.where(inside, BESSEL_SERIES_BELOW + 1.0, y)
    far = _bessel_asymptotic(far_y, order) / np.sqrt(2.0 * math.pi * far_y)
    return near, _bessel_series(0.25 * near * near, order), far, inside


def _grown(x, inside, far):
    """e^|x| times the scaled far part: inf from |x| ~ 713, NaN at ±inf (scipy's)."""
    return np.exp(np.where(inside, 0.0, np.abs(x))) * far


def i0(x):
    """The modified Bessel function I0."""
    _, series, far, inside = _bessel_parts(x, 0)
    return np.where(inside, series, _grown(x, inside, far))


def i0e(x):
    """e^-|x| I0(x): 0 at ±inf."""
    near, series, far, inside = _bessel_parts(x, 0)
    return np.where(inside, np.exp(-np.abs(near)) * series, far)


def i1(x):
    """The modified Bessel function I1 (odd)."""
    near, series, far, inside = _bessel_parts(x, 1)
    return np.where(inside, 0.5 * near * series, np.sign(x) * _grown(x, inside, far))


def i1e(x):
    """e^-|x| I1(x) (odd): ±0 at ±inf."""
    near, series, far, inside = _bessel_parts(x, 1)
    return np.where(inside, np.exp(-np.abs(near)) * 0.5 * near * series, np.sign(x) * far)


# ---- scipy.stats.norm ------------------------------------------------------------------------
# (x - loc) / scale, and NaN where scale <= 0 (scipy's invalid parameters); that
# branch divides by 1 instead, so its derivative is finite too.
def _standard(x, loc, scale):
    valid = scale > 0.0
    s = np.where(valid, scale, 1.0)
    return (x - loc) / s, s, valid


def norm_pdf(x, loc, scale):
    z, s, valid = _standard(x, loc, scale)
    return np.where(valid, np.exp(-0.5 * z * z) / (SQRT_2PI * s), np.nan)


def norm_logpdf(x, loc, scale):
    z, s, valid = _standard(x, loc, scale)
    return np.where(valid, -0.5 * z * z - LOG_SQRT_2PI - np.log(s), np.nan)


def norm_cdf(x, loc, scale):
    z, s, valid = _standard(x, loc, scale)
    return np.where(valid, ndtr(z), np.nan)


def norm_logcdf(x, loc, scale):
    z, s, valid = _standard(x, loc, scale)
    return np.where(valid, log_ndtr(z), np.nan)


def norm_sf(x, loc, scale):
    z, s, valid = _standard(x, loc, scale)
    return np.where(valid, ndtr(-z), np.nan)


def norm_logsf(x, loc, scale):
    z, s, valid = _standard(x, loc, scale)
    return np.where(valid, log_ndtr(-z), np.nan)


# the quantiles: ndtri's rule carries their derivative, loc + scale sqrt(2 pi) exp(z²/2) in q
def norm_ppf(q, loc, scale):
    valid = scale > 0.0
    return np.where(valid, loc + np.where(valid, scale, 1.0) * ndtri(q), np.nan)


def norm_isf(q, loc, scale):
    valid = scale > 0.0
    return np.where(valid, loc - np.where(valid, scale, 1.0) * ndtri(q), np.nan)


# ---- log Beta and the other scipy.stats distributions' log-densities -----------------------------
def betaln(a, b):
    """log|B(a, b)| from gammaln (scipy's is within ~1e-12 relative for a, b below ~1e4)."""
    return gammaln(a) + gammaln(b) - gammaln(a + b)


def _scaled(x, loc, scale, *shapes):
    """(x - loc) / scale, and where the parameters are valid (scale and the
    shape parameters > 0: scipy gives NaN elsewhere); invalid entries divide by 1."""
    valid = scale > 0.0
    for s in shapes:
        valid = valid & (s > 0.0)
    return (x - loc) / np.where(valid, scale, 1.0), np.where(valid, scale, 1.0), valid


def poisson_logpmf(k, mu, loc):
    """-inf off the support (k - loc not a nonnegative integer), NaN for mu < 0."""
    j = k - loc
    support = (j >= 0.0) & (j == np.floor(j))
    value = xlogy(j, mu) - mu - gammaln(np.where(support, j, 0.0) + 1.0)
    return np.where(mu >= 0.0, np.where(support, value, -np.inf), np.nan)


def poisson_pmf(k, mu, loc):
    return np.exp(poisson_logpmf(k, mu, loc))


def gamma_logpdf(x, a, loc, scale):
    y, s, valid = _scaled(x, loc, scale, a)
    inside = y >= 0.0
    safe_a = np.where(valid, a, 1.0)
    value = xlogy(safe_a - 1.0, np.where(inside, y, 1.0)) - y - gammaln(safe_a) - np.log(s)
    return np.where(valid, np.where(inside, value, -np.inf), np.nan)


def t_logpdf(x, df, loc, scale):
    y, s, valid = _scaled(x, loc, scale, df)
    r = np.where(valid, df, 1.0)
    value = (gammaln(0.5 * (r + 1.0)) - gammaln(0.5 * r) - 0.5 * np.log(r * np.pi)
             - 0.5 * (r + 1.0) * np.log1p(y * y / r) - np.log(s))
    return np.where(valid, value, np.nan)


def beta_logpdf(x, a, b, loc, scale):
    y, s, valid = _scaled(x, loc, scale, a, b)
    inside = (y >= 0.0) & (y <= 1.0)
    pa, pb = np.where(valid, a, 1.0), np.where(valid, b, 1.0)
    yi = np.where(inside, y, 0.5)
    value = xlogy(pa - 1.0, yi) + xlog1py(pb - 1.0, -yi) - betaln(pa, pb) - np.log(s)
    return np.where(valid, np.where(inside, value, -np.inf), np.nan)


def expon_logpdf(x, loc, scale):
    y, s, valid = _scaled(x, loc, scale)
    return np.where(valid, np.where(y >= 0.0, -y - np.log(s), -np.inf), np.nan)


def laplace_logpdf(x, loc, scale):
    y, s, valid = _scaled(x, loc, scale)
    return np.where(valid, -np.abs(y) - np.log(2.0 * s), np.nan)


def cauchy_logpdf(x, loc, scale):
    y, s, valid = _scaled(x, loc, scale)
    return np.where(valid, -np.log(np.pi) - np.log1p(y * y) - np.log(s), np.nan)


def logistic_logpdf(x, loc, scale):
    """Symmetric, so in |y|: exp never overflows."""
    y, s, valid = _scaled(x, loc, scale)
    a = np.abs(y)
    return np.where(valid, -a - 2.0 * np.log1p(np.exp(-a)) - np.log(s), np.nan)


def lognorm_logpdf(x, shape, loc, scale):
    y, s, valid = _scaled(x, loc, scale, shape)
    inside = y > 0.0
    sigma = np.where(valid, shape, 1.0)
    log_y = np.log(np.where(inside, y, 1.0))
    value = -log_y - np.log(sigma) - LOG_SQRT_2PI - 0.5 * (log_y / sigma) ** 2 - np.log(s)
    return np.where(valid, np.where(inside, value, -np.inf), np.nan)


def uniform_logpdf(x, loc, scale):
    y, s, valid = _scaled(x, loc, scale)
    return np.where(valid, np.where((y >= 0.0) & (y <= 1.0), -np.log(s), -np.inf), np.nan)


def chi2_logpdf(x, df, loc, scale):
    """gamma's with a = df / 2 and twice the scale."""
    return gamma_logpdf(x, 0.5 * df, loc, 2.0 * scale)


def halfnorm_logpdf(x, loc, scale):
    y, s, valid = _scaled(x, loc, scale)
    value = 0.5 * np.log(2.0 / np.pi) - 0.5 * y * y - np.log(s)
    return np.where(valid, np.where(y >= 0.0, value, -np.inf), np.nan)


def binom_logpmf(k, n, p, loc):
    """-inf off the support (k - loc not an integer in [0, n]), NaN for p outside
    [0, 1] or n not a nonnegative integer."""
    j = k - loc
    valid = (p >= 0.0) & (p <= 1.0) & (n >= 0.0) & (n == np.floor(n))
    support = (j >= 0.0) & (j <= n) & (j == np.floor(j))
    jj, nn = np.where(support, j, 0.0), np.where(valid, n, 0.0)
    value = (gammaln(nn + 1.0) - gammaln(jj + 1.0) - gammaln(nn - jj + 1.0)
             + xlogy(jj, p) + xlog1py(nn - jj, -p))
    return np.where(valid, np.where(support, value, -np.inf), np.nan)


def binom_pmf(k, n, p, loc):
    return np.exp(binom_logpmf(k, n, p, loc))


def bernoulli_logpmf(k, p, loc):
    return binom_logpmf(k, 1.0, p, loc)


def bernoulli_pmf(k, p, loc):
    return np.exp(binom_logpmf(k, 1.0, p, loc))
