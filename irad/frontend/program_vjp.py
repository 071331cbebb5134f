"""irad.vjp(f, *primals) called inside a program: `out, pullback = irad.vjp(f, x, y)`.

`out` is f called on the primals. The pullback is a partial application of
a gradient: `pullback(ct)` is irad.grad of `<f(*primals), ct>` (summed over
the elements, and over the leaves of a tuple of outputs) with respect to the
primals' tuple, so it returns one cotangent per primal, as JAX's does, and
it is differentiated again like any irad.grad inside a program. f is a
function known while lowering, or a lambda, nested def or functools.partial
the program made: that one is an argument of the gradient that it does not
differentiate (transformed_closures.py), bound where irad.vjp is called, as
JAX linearises there: a variable it reads that changes before the pullback is
called does not change the pullback.
"""

from __future__ import annotations

import ast
import functools

import numpy as np

from irad.frontend.callables import Partial
from irad.frontend.transformations import Transformation
from irad.frontend.transformed_closures import bound, is_made_function
from irad.frontend.arrays import known_value
from irad.frontend.values import Static




def cotangent_product(f, primals, cotangent):
    """<f(*primals), cotangent>: an output that is a number or an array."""
    return np.sum(f(*primals) * cotangent)


def cotangent_products(f, primals, cotangents):
    """<f(*primals), cotangents> for a tuple of outputs."""
    return sum(np.sum(y * c) for y, c in zip(f(*primals), cotangents))


def aux_cotangent_product(f, primals, cotangent):
    """As cotangent_product, for an f returning (out, aux) (aux not differentiated)."""
    return np.sum(f(*primals)[0] * cotangent)


def program_vjp(fl, node: ast.Call) -> tuple:
    """`(out, pullback)` (with has_aux=True: `(out, pullback, aux)`) of the
    call `node`, lowered by the FunctionLowering `fl`."""
    keywords = {k.arg: k.value for k in node.keywords}
    if len(node.args) < 2 or keywords.keys() - {"has_aux"} or any(isinstance(a, ast.Starred) for a in node.args):
        raise fl.src.error(node, "irad.vjp inside a program takes (f, *primals) by position, and has_aux=",
                           "write out, pullback = irad.vjp(f, x, y)")
    has_aux = False
    if "has_aux" in keywords:
        known, has_aux = known_value(fl.expr(keywords["has_aux"]))
        if not known or not isinstance(has_aux, (bool, np.bool_)):
            raise fl.src.error(keywords["has_aux"], "has_aux must be True or False, known while lowering")
    fn = fl.expr(node.args[0])
    made = is_made_function(fn)
    if made:  # bound here: what it reads now is what the pullback differentiates
        fn = bound(fl, fn)
    elif not (isinstance(fn, Static) and callable(fn.obj) and not isinstance(fn.obj, type)):
        raise fl.src.error(
            node.args[0], f"irad.vjp inside a program differentiates a function, not {fl.kind_of(fn)}",
            "pass a function defined with def, a lambda or a functools.partial",
        )
    primals = tuple(fl.expr(a) for a in node.args[1:])
    out = fl.calls.call_value(fn, list(primals), {}, node)
    if has_aux:
        if not (isinstance(out, tuple) and len(out) == 2):
            raise fl.src.error(node, f"with has_aux=True, f must return a pair (out, aux), but returns {fl.kind_of(out)}",
                               "return (out, aux)")
        product = aux_cotangent_product
    else:
        product = cotangent_products if isinstance(out, tuple) else cotangent_product
    if made:
        pullback = Partial(Static(Transformation("grad", product, argnums=1)), (fn, primals))
    else:
        pullback = Partial(Static(Transformation("grad", functools.partial(product, fn.obj), argnums=0)), (primals,))
    return (out[0], pullback, out[1]) if has_aux else (out, pullback)
