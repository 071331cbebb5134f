"""scipy.stats in the numpy table (numpy_table.py): norm's pdf, logpdf, cdf,
logcdf, sf, logsf and the quantiles ppf and isf; multivariate_normal's logpdf
and pdf (written in irad/numpy_python.py); the log-densities of gamma,
t, beta, expon, laplace, cauchy, logistic, lognorm, uniform, chi2 and
halfnorm; poisson's, binom's and bernoulli's logpmf and pmf; with loc, scale and the
shape parameters positional or by keyword, as scipy takes them.

Registered on demand like scipy_special.py (irad/frontend/__init__.py). Each
calls its function in irad/special.py, in float64: scipy.stats computes and
returns float64 for float32 arguments too. A scale (or a shape parameter)
<= 0 gives NaN, as scipy's invalid parameters do; off the support the
log-density is -inf. The tails go through log_ndtr and ndtr, so logcdf and
logsf stay finite far out, and their derivatives too (log_ndtr's rule); ppf
and isf go through ndtri (and its rule).
"""

from __future__ import annotations

import scipy.stats

from irad import numpy_python, special
from irad.frontend.arrays import is_array
from irad.frontend.numpy_table import call_library, numpy_function
from irad.frontend.values import Static
from irad.ir.types import F64
from irad.rules.keys import IMPLEMENTED_IN_PYTHON


def _number_or_array(al, v, node):
    # an omitted loc or scale is the Static default (a number in a rule-table wrapper too)
    if isinstance(v, Static) and isinstance(v.obj, float):
        return al.em.const(v.obj, F64)
    return al.array(v, node)


def _distribution(method, impl, params):
    """An entry whose arguments (numbers or arrays) `impl` takes in the order of
    `params`, scipy's, the omitted ones at their defaults."""
    def handler(al, node, *args):
        values = al.floats(node, *(_number_or_array(al, v, node) for v in args))
        result = call_library(al, impl, [al.to_element(v, F64) for v in values], node)
        return al.new(result) if is_array(result) else result

    numpy_function(method, params=params)(handler)


LOC_SCALE = ("?loc=0.0", "?scale=1.0")
for _method, _impl, _params in (
    (scipy.stats.norm.pdf, special.norm_pdf, ()), (scipy.stats.norm.logpdf, special.norm_logpdf, ()),
    (scipy.stats.norm.cdf, special.norm_cdf, ()), (scipy.stats.norm.logcdf, special.norm_logcdf, ()),
    (scipy.stats.norm.sf, special.norm_sf, ()), (scipy.stats.norm.logsf, special.norm_logsf, ()),
    (scipy.stats.norm.ppf, special.norm_ppf, ()), (scipy.stats.norm.isf, special.norm_isf, ()),
    (scipy.stats.gamma.logpdf, special.gamma_logpdf, ("a",)), (scipy.stats.t.logpdf, special.t_logpdf, ("df",)),
    (scipy.stats.beta.logpdf, special.beta_logpdf, ("a", "b")),
    (scipy.stats.expon.logpdf, special.expon_logpdf, ()), (scipy.stats.laplace.logpdf, special.laplace_logpdf, ()),
    (scipy.stats.cauchy.logpdf, special.cauchy_logpdf, ()), (scipy.stats.logistic.logpdf, special.logistic_logpdf, ()),
    (scipy.stats.lognorm.logpdf, special.lognorm_logpdf, ("s",)), (scipy.stats.uniform.logpdf, special.uniform_logpdf, ()),
    (scipy.stats.chi2.logpdf, special.chi2_logpdf, ("df",)), (scipy.stats.halfnorm.logpdf, special.halfnorm_logpdf, ()),
):
    first = "q" if _impl in (special.norm_ppf, special.norm_isf) else "x"
    _distribution(_method, _impl, (first, *_params, *LOC_SCALE))
for _method, _impl in ((scipy.stats.poisson.logpmf, special.poisson_logpmf),
                       (scipy.stats.poisson.pmf, special.poisson_pmf)):
    _distribution(_method, _impl, ("k", "mu", "?loc=0.0"))
for _method, _impl in ((scipy.stats.binom.logpmf, special.binom_logpmf), (scipy.stats.binom.pmf, special.binom_pmf)):
    _distribution(_method, _impl, ("k", "n", "p", "?loc=0.0"))
for _method, _impl in ((scipy.stats.bernoulli.logpmf, special.bernoulli_logpmf),
                       (scipy.stats.bernoulli.pmf, special.bernoulli_pmf)):
    _distribution(_method, _impl, ("k", "p", "?loc=0.0"))
IMPLEMENTED_IN_PYTHON[scipy.stats.multivariate_normal.logpdf] = numpy_python.multivariate_normal_logpdf
IMPLEMENTED_IN_PYTHON[scipy.stats.multivariate_normal.pdf] = numpy_python.multivariate_normal_pdf
