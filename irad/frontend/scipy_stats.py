"""scipy.stats.norm in the numpy table (numpy_table.py): pdf, logpdf, cdf,
logcdf, sf and logsf, with loc and scale positional or by keyword, as scipy
takes them.

Registered on demand like scipy_special.py (irad/frontend/__init__.py). Each
calls its function in irad/special.py, in float64: scipy.stats computes and
returns float64 for float32 arguments too. A scale <= 0 gives NaN, as scipy's
invalid parameters do. The tails go through log_ndtr and ndtr, so logcdf and
logsf stay finite far out, and their derivatives too (log_ndtr's rule).
"""

from __future__ import annotations

import scipy.stats

from irad import special
from irad.frontend.arrays import is_array
from irad.frontend.numpy_table import call_library, numpy_function
from irad.frontend.values import Static
from irad.ir.types import F64


def _number_or_array(al, v, node):
    # an omitted loc or scale is the Static default (a number in a rule-table wrapper too)
    if isinstance(v, Static) and isinstance(v.obj, float):
        return al.em.const(v.obj, F64)
    return al.array(v, node)


def _norm(method, impl):
    def handler(al, node, x, loc, scale):
        values = al.floats(node, *(_number_or_array(al, v, node) for v in (x, loc, scale)))
        result = call_library(al, impl, [al.to_element(v, F64) for v in values], node)
        return al.new(result) if is_array(result) else result

    numpy_function(method, params=("x", "?loc=0.0", "?scale=1.0"))(handler)


for _method, _impl in (
    (scipy.stats.norm.pdf, special.norm_pdf), (scipy.stats.norm.logpdf, special.norm_logpdf),
    (scipy.stats.norm.cdf, special.norm_cdf), (scipy.stats.norm.logcdf, special.norm_logcdf),
    (scipy.stats.norm.sf, special.norm_sf), (scipy.stats.norm.logsf, special.norm_logsf),
):
    _norm(_method, _impl)
