"""Library functions irad refuses by name (numpy's, and Python's filter and
math.fsum), with why and the rewrite that works (each rewrite runs in
tests/frontend/test_refused_rewrites.py).

Most are refused because the length of their result depends on the data
(np.unique, np.nonzero, boolean-mask indexing), where irad's shapes are
known while lowering, as JAX's are; the others take a Python function to
call per element or row, which np.vectorize (numpy_python.vectorize) or irad.vmap of a module-level function does."""

from __future__ import annotations

_DATA_LENGTH = "its result's length depends on the data, and irad's array shapes are known while lowering"
_MASKED = ("keep the shape and mask the values: np.where(mask, x, 0.0), then np.sum over it "
           "(np.sum(mask) counts; np.sum(np.where(mask, x, 0.0)) / np.sum(mask) is the mean)")
_PER_ELEMENT = ("np.vectorize(f, otypes=[float])(x) calls f per element (a loop); irad.vmap(f)(x) of a function f "
                "defined at module level maps it over a vector's elements "
                "(np.reshape(irad.vmap(f)(np.ravel(x)), x.shape) for more axes); an elementwise choice is "
                "np.where(x > 0, x * x, -x)")

REFUSED = {
    "numpy.unique": (_DATA_LENGTH,
                     "sort and mark each value's first occurrence: s = np.sort(x); "
                     "first = np.concatenate((np.array([True]), s[1:] != s[:-1])); "
                     "np.sum(np.where(first, s, 0.0)) sums the distinct values, np.sum(first) counts them"),
    "numpy.nonzero": (_DATA_LENGTH, _MASKED),
    "numpy.flatnonzero": (_DATA_LENGTH, _MASKED),
    "numpy.argwhere": (_DATA_LENGTH, _MASKED),
    "numpy.extract": (_DATA_LENGTH, _MASKED),
    "numpy.histogram": ("its bin counts are not lowered (a count's derivative is zero; compute it outside "
                        "the differentiated function if it only feeds constants)",
                        "count with comparisons against the edges: edges = np.linspace(lo, hi, bins + 1); "
                        "upper = np.concatenate((edges[1:-1], np.array([np.inf]))) (numpy's last bin holds "
                        "its right edge); counts = np.sum((x[:, None] >= edges[:-1]) & (x[:, None] < upper), "
                        "axis=0)"),
    "numpy.frompyfunc": ("it calls a Python function per element, into an array of objects", _PER_ELEMENT),
    "filter": ("its result's length depends on what the predicate says of each item",
               "loop with the condition: sum(v for v in xs if pred(v)) (a run-time condition works there), "
               "or mask an array: np.sum(np.where(pred(x), x, 0.0))"),
    "math.fsum": ("its sum is correctly rounded, which needs a list of partial sums as long as the data makes it",
                  "sum(xs) or np.sum(x) (numpy's pairwise sum), within a few ulps of fsum's"),
    "numpy.piecewise": ("it calls each function on the elements its condition selects",
                        "choose elementwise: np.where(x < 0, -x, x * x), or np.select([c1, c2], [f1(x), f2(x)], "
                        "default) for more pieces (each piece is computed for every element, so keep each "
                        "finite everywhere, e.g. np.sqrt(np.maximum(x, 0.0)), or its NaN reaches the gradient)"),
}


def refusal(name: str) -> tuple[str, str] | None:
    """(why, the rewrite) for the function `name` (numpy.unique, math.fsum), if it is refused by name."""
    return REFUSED.get(name)
