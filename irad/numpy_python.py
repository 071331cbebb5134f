"""numpy functions irad lowers from its own Python source (irad's subset),
composed of the numpy operations irad lowers directly; their derivatives come
from differentiating these bodies. rules/keys.py's IMPLEMENTED_IN_PYTHON maps
numpy's function to its implementation here; each takes numpy's parameters
(the ones it does not take are named by the call's error, and so are the
values of its parameters LIMITS lists that it does not implement) and gives numpy's
values, checked against numpy in tests/frontend/test_numpy_python.py.
"""

import numpy as np

_EPS = float(np.finfo(np.float64).eps)


def cov(m, y=None, rowvar=True, bias=False, ddof=None):
    """np.cov without weights: the rows (or, rowvar=False, the columns) are variables."""
    X = np.atleast_2d(m) * 1.0
    if y is not None:
        Y = np.atleast_2d(y) * 1.0
        if not rowvar and Y.shape[0] != 1:
            Y = Y.T
        if not rowvar and X.shape[0] != 1:
            X = X.T
        X = np.concatenate((X, Y), axis=0)
    elif not rowvar and X.shape[0] != 1:
        X = X.T
    if ddof is None:
        ddof = 0 if bias else 1
    centred = X - np.mean(X, axis=1, keepdims=True)
    c = centred @ centred.T / (X.shape[1] - ddof)
    return np.squeeze(c)


def corrcoef(x, y=None, rowvar=True):
    """np.corrcoef: the covariance scaled by the standard deviations, clipped to [-1, 1]."""
    c = np.atleast_2d(cov(x, y, rowvar))
    d = np.sqrt(np.diag(c))
    r = c / d[:, None] / d[None, :]
    return np.squeeze(np.clip(r, -1.0, 1.0))


def convolve(a, v, mode="full"):
    """np.convolve of two 1-D arrays: each output is a window of `a` (zero-padded)
    times `v` reversed, gathered with indices known while lowering."""
    a = np.ravel(a) * 1.0
    v = np.ravel(v) * 1.0
    if v.shape[0] > a.shape[0]:
        a, v = v, a
    n = a.shape[0]
    m = v.shape[0]
    padded = np.concatenate((np.zeros(m - 1), a, np.zeros(m - 1)))
    windows = padded[np.arange(n + m - 1)[:, None] + np.arange(m)[None, :]]
    full = windows @ v[::-1]
    if mode == "full":
        return full
    if mode == "same":
        start = (m - 1) // 2
        return full[start:start + n]
    return full[m - 1:n]  # mode "valid" (LIMITS refuses any other at the call)


def quantile(a, q, axis=None, keepdims=False, method="linear"):
    """np.quantile with numpy's default (linear) interpolation between the two
    sorted values around q * (n - 1); q is a float, or a tuple or list of them,
    known while lowering (their positions pick the elements)."""
    x = np.asarray(a) * 1.0
    if axis is None:
        x = np.ravel(x)
        axis = 0
    ordered = np.moveaxis(np.sort(x, axis=axis), axis, -1)
    n = ordered.shape[-1]
    several = isinstance(q, (tuple, list))
    values = []
    for p in (q if several else (q,)):
        position = p * (n - 1)
        low = int(position)
        high = min(low + 1, n - 1)
        frac = position - low
        values.append(ordered[..., low] * (1.0 - frac) + ordered[..., high] * frac)
    result = np.stack(values) if several else values[0]
    if keepdims:
        result = np.expand_dims(result, axis + 1 if several else axis)
    return result


def percentile(a, q, axis=None, keepdims=False, method="linear"):
    """np.percentile: np.quantile at q / 100."""
    if isinstance(q, (tuple, list)):
        return quantile(a, [p / 100.0 for p in q], axis, keepdims, method)
    return quantile(a, q / 100.0, axis, keepdims, method)


def lstsq(a, b, rcond=None):
    """np.linalg.lstsq: the minimum-norm least-squares solution (the pseudo-inverse,
    singular values below rcond times the largest dropped; numpy's default rcond
    is eps * max(M, N)), the residuals' sums of squares (b's columns; empty
    unless M > N), the rank and a's singular values. numpy's residuals are empty
    where the rank is below N, which is known only at run time: irad gives NaN
    there (its shape is fixed while lowering)."""
    a = np.asarray(a) * 1.0
    m = a.shape[0]
    n = a.shape[1]
    if rcond is None:
        rcond = _EPS * max(m, n)
    elif rcond < 0:
        rcond = _EPS  # LAPACK's gelsd: machine precision
    s = np.linalg.svdvals(a)
    x = np.linalg.pinv(a, rcond=rcond) @ b
    rank = np.sum(s > rcond * s[0]) if min(m, n) > 0 else 0
    if m > n:
        r = b - a @ x
        residuals = np.sum(np.reshape(r * r, (m, -1)), axis=0)
        residuals = np.where(rank == n, residuals, np.nan)
    else:
        residuals = np.zeros((0,))
    return x, residuals, rank, s


def _before(a, v, side):
    """a[..., i] sorts before v (side='left') or not after it (side='right') in
    numpy's order, where NaN is the largest value."""
    if side == "left":
        return (a < v) | (np.isnan(v) & ~np.isnan(a))
    return (a <= v) | np.isnan(v)


def searchsorted(a, v, side="left", sorter=None):
    """np.searchsorted: for each element of v, the number of elements of the
    sorted 1-D a before it (side='left') or not after it (side='right'); an int
    array of v's shape, an int for a number. O(len(a) * v.size) comparisons."""
    if sorter is not None:
        a = np.take(a, sorter)
    if isinstance(v, (int, float)):
        return np.sum(_before(np.asarray(a), v, side))
    return np.sum(_before(np.asarray(a), np.asarray(v)[..., None], side), axis=-1)


def digitize(x, bins, right=False):
    """np.digitize: the index of the bin each element of x falls in, for bins
    increasing (numpy's searchsorted of x in bins) or decreasing (the count
    from the end), which bins[0] <= bins[-1] decides at run time."""
    bins = np.asarray(bins)
    side = "left" if right else "right"
    rising = searchsorted(bins, x, side)
    falling = bins.shape[0] - searchsorted(bins[::-1], x, side)
    if bins.shape[0] < 2:
        return rising
    return np.where(bins[0] <= bins[-1], rising, falling)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """np.isclose: |a - b| <= atol + rtol |b| where b is finite, and a == b
    (equal infinities); NaN equals NaN only with equal_nan."""
    a = np.asarray(a)
    b = np.asarray(b)
    close = ((np.abs(a - b) <= atol + rtol * np.abs(b)) & np.isfinite(b)) | (a == b)
    if equal_nan:
        close = close | (np.isnan(a) & np.isnan(b))
    return close


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """np.allclose: every element of np.isclose, a bool."""
    close = isclose(a, b, rtol, atol, equal_nan)
    if np.size(close) == 0:
        return True  # all of nothing
    return np.all(close)


def _depth(arrays):
    if isinstance(arrays, list):
        return 1 + _depth(arrays[0])
    return 0


def _ndim(arrays):
    """The largest rank among the arrays of the nested lists."""
    if isinstance(arrays, list):
        return max([_ndim(part) for part in arrays])
    return np.ndim(arrays)


def _blocks(arrays, rank):
    """np.block below the top: `rank` is an array whose number of axes is the
    result's (a shape specialises a recursive call; a number would not)."""
    if isinstance(arrays, (int, float)):
        return np.full((1,) * len(rank.shape), arrays)  # an int stays an int
    if not isinstance(arrays, list):
        array = np.asarray(arrays)
        return np.reshape(array, (1,) * (len(rank.shape) - len(array.shape)) + array.shape)
    return np.concatenate([_blocks(part, rank) for part in arrays], axis=-_depth(arrays))


def block(arrays):
    """np.block: the innermost lists joined along the last axis, the lists of
    those along the one before, ...; each array first given leading axes of
    length 1 up to the nesting depth or the largest rank."""
    return _blocks(arrays, np.zeros((1,) * max(_depth(arrays), _ndim(arrays))))


def _running(a, axis, pick):
    """The element `pick` (np.argmax or np.argmin) chooses among a's first i + 1
    along axis, for each i: the first on a tie, as numpy's argmax, so the
    derivative goes to the element that is the running extreme; ints stay
    ints. O(n^2)."""
    a = np.moveaxis(np.asarray(a), axis, -1)
    n = a.shape[-1]
    if n == 0:
        return np.moveaxis(a, -1, axis)
    seen = np.arange(n)[None, :] <= np.arange(n)[:, None]
    # beyond the prefix, the first element again: the first of equals, it never changes the choice
    prefixes = np.where(seen, a[..., None, :], a[..., None, :1])
    chosen = pick(prefixes, axis=-1)
    return np.moveaxis(np.take_along_axis(a, chosen, axis=-1), -1, axis)


def maximum_accumulate(a, axis=0):
    """np.maximum.accumulate: the running maximum (NaN from the first NaN on)."""
    return _running(a, axis, np.argmax)


def minimum_accumulate(a, axis=0):
    """np.minimum.accumulate: the running minimum (NaN from the first NaN on)."""
    return _running(a, axis, np.argmin)


def logaddexp_accumulate(a, axis=0):
    """np.logaddexp.accumulate: the log of the running sum of exp(a), shifted by
    the running maximum. O(n^2)."""
    a = np.moveaxis(np.asarray(a) * 1.0, axis, -1)
    n = a.shape[-1]
    if n == 0:
        return np.moveaxis(a, -1, axis)
    seen = np.arange(n)[None, :] <= np.arange(n)[:, None]
    prefixes = np.where(seen, a[..., None, :], -np.inf)
    top = np.max(prefixes, axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    total = np.log(np.sum(np.where(seen, np.exp(prefixes - top), 0.0), axis=-1)) + top[..., 0]
    return np.moveaxis(total, -1, axis)


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """np.apply_along_axis: func1d of each 1-D slice along axis (a loop over the
    other axes, known while lowering); the result's axes where axis was."""
    arr = np.asarray(arr)
    axis = axis % len(arr.shape)
    moved = np.moveaxis(arr, axis, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    results = np.stack([np.asarray(func1d(row, *args, **kwargs)) for row in rows])
    out = results.reshape(moved.shape[:-1] + results.shape[1:])
    tail = len(results.shape) - 1  # the axes of one result
    return np.moveaxis(out, tuple(range(axis, len(moved.shape) - 1)),
                       tuple(range(axis + tail, len(out.shape))))


def vectorize(pyfunc, otypes=None, doc=None, excluded=None, cache=False, signature=None):
    """np.vectorize: a function that calls pyfunc once per element of its
    broadcast arguments (a loop), the arguments `excluded` names passed whole.
    The result's dtype is otypes' first, or that of pyfunc's result for the
    first element, as numpy's; a tuple result gives a tuple of arrays. Numpy
    refuses size-0 arguments without otypes; so does this."""
    skipped = () if excluded is None else tuple(excluded)
    if isinstance(otypes, str):  # a type code per output: "d"
        otypes = [otypes] if len(otypes) == 1 else list(otypes)

    def vectorized(*args, **kwargs):
        names = [k for k in kwargs.keys() if k not in skipped]
        mapped = [i for i in range(len(args)) if i not in skipped]
        arrays = [np.asarray(args[i]) for i in mapped] + [np.asarray(kwargs[k]) for k in names]
        shape = np.shape(sum((np.zeros(np.shape(a)) for a in arrays), 0.0))  # the broadcast shape
        arrays = [np.broadcast_to(a, shape) for a in arrays]
        flat = [np.ravel(a) for a in arrays]
        n = flat[0].shape[0] if flat else 1
        if n == 0 and otypes is None:
            raise ValueError("cannot call `vectorize` on size 0 inputs unless `otypes` is set")

        def element(k):
            positional = list(args)
            for j, i in enumerate(mapped):
                positional[i] = flat[j][k]
            keywords = {name: kwargs[name] for name in kwargs.keys()}
            for j, name in enumerate(names):
                keywords[name] = flat[len(mapped) + j][k]
            return pyfunc(*positional, **keywords)

        if n == 0:  # with otypes (numpy refuses it without them)
            outs = tuple(np.zeros(shape, dtype=t) for t in otypes)
            return outs if len(otypes) > 1 else outs[0]
        if otypes is not None:
            several = len(otypes) > 1
            starts = [np.zeros(n, dtype=t) for t in otypes]
        else:
            first = element(0)
            several = isinstance(first, tuple)
            starts = [np.full(n, v) for v in (first if several else (first,))]  # the first result's dtype
        outs = []
        for j, start in enumerate(starts):  # a tuple result: pyfunc is called once per output
            out = np.copy(start)
            for k in range(n):
                out[k] = element(k)[j] if several else element(k)
            outs.append(np.reshape(out, shape))
        return tuple(outs) if several else outs[0]

    return vectorized


def logaddexp_reduce(a, axis=0, keepdims=False):
    """np.logaddexp.reduce: log(sum(exp(a))) along axis, shifted by the maximum
    (0 where it is not finite: inf stays inf, all -inf gives -inf)."""
    a = np.asarray(a) * 1.0
    top = np.max(a, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    total = np.log(np.sum(np.exp(a - top), axis=axis, keepdims=True)) + top
    return total if keepdims else np.squeeze(total, axis=axis)


def multivariate_normal_logpdf(x, mean=None, cov=1, allow_singular=False):
    """scipy.stats.multivariate_normal.logpdf: x's last axis the variables (a
    vector is one point, or points of one variable), cov a matrix, a vector
    (its diagonal) or a number (times the identity); through the Cholesky
    factor. The result squeezed, a float for one point, as scipy's."""
    number = isinstance(cov, (int, float))
    if not number:
        cov = np.asarray(cov) * 1.0
    if mean is None:
        mean = np.zeros(1 if number else cov.shape[0])
    mean = np.ravel(np.atleast_1d(mean) * 1.0)
    dim = mean.shape[0]
    if number:
        cov = cov * np.eye(dim)
    elif len(cov.shape) == 1:
        cov = np.diag(cov)
    x = np.atleast_1d(x) * 1.0
    if len(x.shape) == 1:
        x = x[:, None] if dim == 1 else x[None, :]
    lower = np.linalg.cholesky(cov)
    z = np.linalg.solve(lower, np.reshape(x - mean, (-1, dim)).T)
    log_det = 2.0 * np.sum(np.log(np.diagonal(lower)))
    out = -0.5 * (dim * np.log(2.0 * np.pi) + log_det + np.sum(z * z, axis=0))
    kept = tuple(d for d in x.shape[:-1] if d != 1)  # scipy squeezes: one point is a float
    return np.reshape(out, kept) if kept else out[0]


def multivariate_normal_pdf(x, mean=None, cov=1, allow_singular=False):
    """scipy.stats.multivariate_normal.pdf: exp of the logpdf."""
    return np.exp(multivariate_normal_logpdf(x, mean, cov, allow_singular))


# The values of parameters these functions implement, and the rewrite for the
# others: a call with another value is refused at the call, by numpy's (scipy's) name.
LIMITS = {
    vectorize: {"signature": ((None,), "np.vectorize calls pyfunc per element here; for a function of rows "
                                       "(a signature like '(n)->()') use np.apply_along_axis(f, -1, x)")},
    quantile: {"method": (("linear",), "irad interpolates linearly only; sort and index for other methods")},
    percentile: {"method": (("linear",), "irad interpolates linearly only; sort and index for other methods")},
    convolve: {"mode": (("full", "same", "valid"), "numpy's modes are 'full', 'same' and 'valid'")},
    searchsorted: {"side": (("left", "right"), "numpy's sides are 'left' and 'right'")},
    multivariate_normal_logpdf: {"allow_singular": ((False,), "give a positive definite cov (irad factors it "
                                                     "with Cholesky), e.g. cov + 1e-9 * np.eye(d)")},
    multivariate_normal_pdf: {"allow_singular": ((False,), "give a positive definite cov (irad factors it "
                                                  "with Cholesky), e.g. cov + 1e-9 * np.eye(d)")},
}


def bincount_fits(x, length):
    """Every value of x in [0, length): np.bincount's result then has `length` elements."""
    return np.all((np.asarray(x) >= 0) & (np.asarray(x) < length))


def bincount_of_length(x, weights, length):
    """np.bincount once its length (max(x) + 1, at least minlength) is known: the
    occurrences of each value (int64), or the sums of the weights of each (floats)."""
    hits = np.asarray(x)[:, None] == np.arange(length)[None, :]
    if weights is None:
        return np.sum(hits, axis=0)
    return np.sum(np.where(hits, np.asarray(weights).astype(np.float64)[:, None], 0.0), axis=0)  # float64, as numpy


def interp_periodic(x, xp, fp, period):
    """np.interp(x, xp, fp, period=period), as numpy computes it: x and xp taken
    modulo the period, xp sorted (fp with it) and extended by one knot each side
    across the period's ends (left= and right= are ignored, as numpy ignores them)."""
    if period == 0:
        raise ValueError("period must be a non-zero value")
    period = abs(period)
    wrapped = np.asarray(xp, dtype=np.float64) % period
    order = np.argsort(wrapped)
    knots, values = wrapped[order], np.asarray(fp, dtype=np.float64)[order]
    knots = np.concatenate((knots[-1:] - period, knots, knots[0:1] + period))
    values = np.concatenate((values[-1:], values, values[0:1]))
    return np.interp(np.asarray(x, dtype=np.float64) % period, knots, values)
