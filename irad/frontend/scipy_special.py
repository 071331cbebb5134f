"""scipy.special in the numpy table (numpy_table.py): one entry per function.

The package registers this module on demand (irad/frontend/__init__.py), the
first time a program calls a scipy.special function, so `import irad` does not
import scipy.

- erf and erfc are the math ops (their derivatives are the op registry's);
- the other elementwise functions call irad/special.py's, written in irad's
  subset: in float64, as scipy computes its float32 loops, and rounded back to
  float32 where scipy returns float32. The rule table has rules for those
  whose body differentiates to something else than their derivative
  (irad/frontend/scipy_rules.py);
- logsumexp, softmax and log_softmax reduce along static axes, from the
  tensor ops: the maximum is subtracted before exp, so nothing overflows, and
  the derivative of the maximum cancels (to rounding).
"""

from __future__ import annotations

import math

import scipy.special
from xdsl.dialects import arith
from xdsl.dialects import math as mathd
from xdsl.ir import SSAValue

from irad import special
from irad.frontend.arrays import ArrayLowering, is_array
from irad.frontend.numpy_table import call_library, numpy_function
from irad.ir import tensor as T
from irad.ir.constants import float_constant
from irad.ir.mlir_ops import ErfcOp
from irad.ir.types import F64, I1


def _in_float64(al: ArrayLowering, fn, values: list[SSAValue]) -> SSAValue:
    """`fn` on values of one float dtype and shape, computed in float64 and
    rounded back to their dtype."""
    elem = T.element(values[0])
    result = fn([al.to_element(v, F64) for v in values])
    result = al.to_element(result, elem)
    return al.new(result) if is_array(result) else result


def _elementwise(scipy_fn, params: tuple[str, ...], emit):
    """An entry whose arguments numpy's rules bring to one float dtype and shape."""

    def handler(al, node, *args):
        values = al.floats(node, *(al.array(a, node) for a in args))
        return _in_float64(al, lambda wide: emit(al, node, wide), values)

    numpy_function(scipy_fn, params=params)(handler)


def _calling(fn):
    return lambda al, node, values: call_library(al, fn, values, node)


def _op(op_class):
    return lambda al, node, values: al.em.op(op_class(values[0]))


_elementwise(scipy.special.erf, ("x",), _op(mathd.ErfOp))
_elementwise(scipy.special.erfc, ("x",), _op(ErfcOp))
for _fn, _impl in (
    (scipy.special.expit, special.expit), (scipy.special.log_expit, special.log_expit),
    (scipy.special.logit, special.logit),
    (scipy.special.ndtr, special.ndtr), (scipy.special.log_ndtr, special.log_ndtr),
    (scipy.special.ndtri, special.ndtri), (scipy.special.erfinv, special.erfinv),
    (scipy.special.gammaln, special.gammaln), (scipy.special.digamma, special.digamma),
    (scipy.special.i0, special.i0), (scipy.special.i0e, special.i0e),
    (scipy.special.i1, special.i1), (scipy.special.i1e, special.i1e),
):
    _elementwise(_fn, ("x",), _calling(_impl))
_elementwise(scipy.special.xlogy, ("x", "y"), _calling(special.xlogy))
_elementwise(scipy.special.xlog1py, ("x", "y"), _calling(special.xlog1py))
_elementwise(scipy.special.betaln, ("a", "b"), _calling(special.betaln))


@numpy_function(scipy.special.polygamma, params=("n", "x"))
def _polygamma(al, node, n, x):
    """polygamma(0, x) is digamma, polygamma(1, x) trigamma; n must be known while lowering."""
    order = al.static(n, node, "the order n")
    impl = {0: special.digamma, 1: special.trigamma}.get(order) if isinstance(order, int) else None
    if impl is None:
        raise al.error(node, f"scipy.special.polygamma(n, x) for n = {order!r} is not supported (n = 0 and 1 are)",
                       "docs/scipy.md lists the scipy functions irad lowers")
    (x,) = al.floats(node, al.array(x, node))
    return _in_float64(al, lambda wide: call_library(al, impl, wide, node), [x])


# ---- reductions along axes: logsumexp, softmax, log_softmax ----------------------------
def _along(al: ArrayLowering, node, a, axis, b=None):
    """The float array (a number as a vector of one, as scipy takes it), the
    weights broadcast to it (or None), and the axes (normalised)."""
    x = al.array(a, node)
    (x,) = al.floats(node, x)
    w = None
    if b is not None and al.given(b):
        x, w = al.floats(node, x, al.array(b, node))
    if not is_array(x):
        x = T.splat(al.em, x, (1,))
        w = T.splat(al.em, w, (1,)) if w is not None else None
    return x, w, al.static_axes(axis, len(T.shape(x)), node)


def _finite_or_zero(al: ArrayLowering, m: SSAValue) -> SSAValue:
    """m where finite, else 0 (the shift of a slice whose maximum is ±inf or NaN)."""
    em = al.em
    finite = T.pointwise(
        em, lambda e, v: e.op(arith.CmpfOp(e.op(mathd.AbsFOp(v[0])), e.op(float_constant(math.inf, v[0].type)), "olt")),
        [m], I1, "piecewise-constant",
    )
    return T.select(em, finite, m, T.dense(em, 0.0, m.type))




def _result(al: ArrayLowering, reduced: SSAValue, x: SSAValue, axes, keepdims: bool) -> SSAValue:
    """A reduction's result: a number when no axis is left, else an array
    (with the reduced axes as 1s under keepdims)."""
    if keepdims:
        return al.new(T.reshape(al.em, reduced, [1 if i in axes else n for i, n in enumerate(T.shape(x))]))
    if not T.shape(reduced):
        return T.extract_scalar(al.em, reduced)
    return al.new(reduced)


@numpy_function(scipy.special.logsumexp, params=("a", "?axis", "?b", "?keepdims=False", "?return_sign=False"))
def _logsumexp(al, node, a, axis, b, keepdims, return_sign):
    """log(sum(b exp(a))) = log(sum(b exp(a - m))) + m, m the maximum (0 where it
    is not finite, so that an infinite maximum gives inf, and no element -inf).
    As scipy: an element whose weight is 0 adds nothing even if it is inf or
    NaN, and a negative sum is NaN."""
    if al.static(return_sign, node, "return_sign"):
        raise al.error(node, "scipy.special.logsumexp(..., return_sign=True) is not supported",
                       "with weights b of both signs, take the sign apart: the log of the positive part "
                       "and of the negative part, each a logsumexp with b >= 0 (docs/scipy.md)")
    x, w, axes = _along(al, node, a, axis, b)
    em = al.em
    if w is not None:
        x = T.select(em, T.compare(em, "oeq", w, T.dense(em, 0.0, w.type)), T.dense(em, -math.inf, x.type), x)
    shift = _finite_or_zero(al, T.reduce(em, x, axes, arith.MaximumfOp))
    terms = em.op(mathd.ExpOp(em.sub(x, T.broadcast_back(em, shift, x, axes))))
    if w is not None:
        terms = em.mul(w, terms)
    reduced = em.add(em.op(mathd.LogOp(T.reduce(em, terms, axes))), shift)
    return _result(al, reduced, x, axes, al.static(keepdims, node, "keepdims"))


def _softmax(al: ArrayLowering, node, a, axis, log: bool) -> SSAValue:
    x0 = al.array(a, node)
    x, _, axes = _along(al, node, a, axis)
    em = al.em
    m = T.reduce(em, x, axes, arith.MaximumfOp)
    m = _finite_or_zero(al, m) if log else m  # scipy: softmax([inf, 1]) is NaN
    shifted = em.sub(x, T.broadcast_back(em, m, x, axes))
    terms = em.op(mathd.ExpOp(shifted))
    total = T.broadcast_back(em, T.reduce(em, terms, axes), x, axes)
    y = em.sub(shifted, em.op(mathd.LogOp(total))) if log else em.div(terms, total)
    return al.new(y) if is_array(x0) else T.extract_scalar(em, T.reshape(em, y, ()))


@numpy_function(scipy.special.softmax, params=("x", "?axis"))
def _softmax_handler(al, node, x, axis):
    """exp(x - m) / sum(exp(x - m)), m the maximum along the axes."""
    return _softmax(al, node, x, axis, log=False)


@numpy_function(scipy.special.log_softmax, params=("x", "?axis"))
def _log_softmax(al, node, x, axis):
    """x - m - log(sum(exp(x - m))), m the maximum (0 where not finite), as scipy."""
    return _softmax(al, node, x, axis, log=True)
