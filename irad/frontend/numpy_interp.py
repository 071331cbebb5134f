"""np.interp: its numpy-table entry and the rule-table entries of its body.

np.interp(x, xp, fp) lowers to a call to irad/numerics.py's `interp`, written in
irad's subset, in float64 as numpy computes it. xp must be increasing, as
numpy requires (numpy does not check it, nor does irad). The rules give the
derivatives JAX gives: in x, the slope of x's interval [xp[i], xp[i+1]) (the
right-hand slope at a knot, the last interval's at xp[-1], 0 outside
[xp[0], xp[-1]]); in fp, the weights of the two knots around x; in xp, those
of the line through them. Through the body, np.clip would pick a one-sided
slope at the knots instead.
"""

from __future__ import annotations

import numpy as np

from irad import numerics, numpy_python
from irad.frontend.arrays import is_array
from irad.frontend.numpy_table import call_library, numpy_function
from irad.frontend.values import Static
from irad.frontend.registration import installer
from irad.ir import tensor as T
from irad.ir.types import F64


@numpy_function(np.interp, params=("x", "xp", "fp", "?left", "?right", "?period"))
def _interp(al, node, x, xp, fp, left, right, period):
    if al.given(period):  # numpy's wrapping, written in irad's subset
        return al.fl.calls.call_value(Static(numpy_python.interp_periodic), [x, xp, fp, period], {}, node)
    x, xp, fp = (al.to_element(al.array(v, node), F64) for v in (x, xp, fp))
    shapes = [T.shape(v) if is_array(v) else () for v in (xp, fp)]
    if len(shapes[0]) != 1 or shapes[0] != shapes[1]:
        raise al.error(node, f"np.interp takes xp and fp as vectors of one length, got shapes {shapes[0]} and {shapes[1]}")
    if shapes[0][0] < 2:
        raise al.error(node, "np.interp with fewer than 2 points is not supported",
                       "with one point, np.interp is fp[0] everywhere: write np.full_like(x, fp[0])")
    number = not is_array(x)
    if number:  # numpy: an np.float64 for a number x
        x = T.splat(al.em, x, (1,))
    y = call_library(al, numerics.interp, [x, xp, fp], node)
    if al.given(left) or al.given(right):
        ends = [al.to_element(al.array(v, node), F64) if al.given(v) else _knot(al, fp, i)
                for v, i in ((left, 0), (right, -1))]
        y = call_library(al, numerics.interp_beyond, [x, xp, y, *ends], node)
    return _element(al, y) if number else al.new(y)


def _element(al, v):
    """The one element of a vector of one, as a number."""
    return T.extract_scalar(al.em, T.reshape(al.em, v, ()))


def _knot(al, fp, i: int):
    """fp[i] as a number."""
    return _element(al, T.slice_along(al.em, fp, 0, i % T.shape(fp)[0], 1))


def interp_rule(x, xp, fp):
    y = numerics.interp(x, xp, fp)

    def pullback(dy):
        dx, dxp, dfp = numerics.interp_cotangents(x, xp, fp, dy)
        return dx, dxp, dfp

    return y, pullback


def interp_frule(x, xp, fp, dx, dxp, dfp):
    return numerics.interp(x, xp, fp), numerics.interp_tangent(x, xp, fp, dx, dxp, dfp)


install = installer(((numerics.interp, interp_rule, interp_frule),))
