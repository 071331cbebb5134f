"""np.linalg: numpy's arguments brought to irad.linalg's stacks of matrices and back.

Every function here reshapes its arguments to stacks (k, m, n) of one float
dtype (int arrays become float64, as numpy computes them; batch axes
broadcast as numpy broadcasts them), calls the functions of irad/linalg.py,
checks the `ok` flag of those that can fail where numpy raises LinAlgError
(RuntimeCheckError on the Python backend, as for any run-time check), and
reshapes the results to numpy's shapes. The derivatives are those of
irad.linalg's functions (rule-table entries, irad/frontend/linalg_rules.py)
and of the reshapes, transposes and broadcasts around them.

Norms are compositions: sums, maxima and minima of |x| (whose derivatives
are the op registry's: sign(x), 0 at 0; ties share equally), singular
values, and irad.linalg.norm2/pnorm, whose rules give the gradient 0 at 0.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects import arith, cf, func
from xdsl.dialects import math as mathd
from xdsl.ir import SSAValue

from irad import linalg
from irad.frontend.arrays import ArrayLowering, numpy_function
from irad.frontend.values import Static, is_array
from irad.frontend.views import Slice
from irad.ir import tensor as T
from irad.ir.types import F64, is_float


# ---- stacks of matrices ----------------------------------------------------------
def _float_array(al: ArrayLowering, node, x, what: str, min_rank: int) -> SSAValue:
    """A float array of rank `min_rank` or more (a number, where 0 is enough, as a 1-element vector)."""
    x = al.array(x, node)
    if not is_array(x) and min_rank == 0:
        x = T.splat(al.em, al.to_element(x, x.type if is_float(x.type) else F64), (1,))
    if not is_array(x) or len(T.shape(x)) < min_rank:
        rank = len(T.shape(x)) if is_array(x) else 0
        raise al.error(node, f"{what}: {rank}-dimensional array given; the array must be at least "
                       f"{min_rank}-dimensional")
    elem = T.element(x)
    return al.to_element(x, elem if is_float(elem) else F64)


def _stack(al: ArrayLowering, x: SSAValue, batch) -> SSAValue:
    """x (..., m, n), its batch axes broadcast to `batch`, as one stack (k, m, n)."""
    dims = T.shape(x)[-2:]
    x = T.broadcast_to(al.em, x, (*batch, *dims))
    return T.reshape(al.em, x, (math.prod(batch), *dims))


def _matrices(al, node, a, what: str, square: bool = False) -> tuple[SSAValue, tuple[int, ...]]:
    """A stack of matrices from a numpy argument, and its batch shape."""
    a = _float_array(al, node, a, what, 2)
    dims = T.shape(a)
    if square and dims[-1] != dims[-2]:
        raise al.error(node, f"{what}: last 2 dimensions of the array must be square, got {dims}")
    return _stack(al, a, dims[:-2]), dims[:-2]


def _call(al: ArrayLowering, fn, args, node) -> tuple[SSAValue, ...]:
    """A call to a function of irad.linalg; its results as a tuple."""
    if node is not None:  # located at the numpy call
        results = al.fl.calls.call(fn, list(args), node)
        return results if isinstance(results, tuple) else (results,)
    callee = al.fl.owner.function(fn, tuple(v.type for v in args))  # in a rule-table wrapper
    return al.em.results(func.CallOp(callee.sym_name.data, list(args), callee.function_type.outputs.data))


def _check(al: ArrayLowering, ok: SSAValue, node, message: str) -> None:
    """Where numpy raises LinAlgError: a run-time check."""
    if node is None:  # inside a rule-table wrapper: no source location
        al.em.op(cf.AssertOp(ok, message))
    else:
        al.check(ok, node, message)


def _unstack(al, v: SSAValue, batch, dims) -> SSAValue:
    return al.new(T.reshape(al.em, v, (*batch, *dims)))


def _identities(al, like: SSAValue, batch) -> SSAValue:
    """Identity matrices of `like`'s dtype and size, for each index of `batch`."""
    n = T.shape(like)[-1]
    eye = T.band(al.em, n, n, 0, T.element(like))
    return T.broadcast_to(al.em, eye, (*batch, n, n))


def _transpose_last(em, x: SSAValue) -> SSAValue:
    rank = len(T.shape(x))
    return T.transpose(em, x, [*range(rank - 2), rank - 1, rank - 2])


def _static_str(al, value, node, what: str, default: str, choices) -> str:
    s = al.static(value, node, what)
    s = default if s is None else s
    if s not in choices:
        raise al.error(node, f"{what} must be one of {', '.join(map(repr, choices))}, got {s!r}")
    return s


# ---- solve, inv, det, slogdet ---------------------------------------------------------
@numpy_function(np.linalg.solve, params=("a", "b"))
def _solve(al, node, a, b):
    a = _float_array(al, node, a, "np.linalg.solve", 2)
    b = _float_array(al, node, b, "np.linalg.solve", 1)
    elem = al.result_element([a, b])
    a, b = al.to_element(a, elem), al.to_element(b, elem)
    n = T.shape(a)[-1]
    if T.shape(a)[-2] != n:
        raise al.error(node, f"np.linalg.solve: last 2 dimensions of the array must be square, got {T.shape(a)}")
    vector = len(T.shape(b)) == 1  # numpy 2: b is a vector only if it is 1-d
    b_matrix = T.reshape(al.em, b, (n, 1)) if vector else b
    batch = T.broadcast_shapes(T.shape(a)[:-2], T.shape(b_matrix)[:-2])
    if T.shape(b_matrix)[-2] != n or batch is None:
        raise al.error(node, f"np.linalg.solve: shapes {T.shape(a)} and {T.shape(b)} do not fit "
                       "(a is (..., n, n), b is (n,) or (..., n, k))")
    x, ok = _call(al, linalg.solve, [_stack(al, a, batch), _stack(al, b_matrix, batch)], node)
    _check(al, ok, node, "np.linalg.solve: Singular matrix")
    m = T.shape(b_matrix)[-1]
    return _unstack(al, x, batch, (n,) if vector else (n, m))


@numpy_function(np.linalg.inv, params=("a",))
def _inv(al, node, a):
    stack, batch = _matrices(al, node, a, "np.linalg.inv", square=True)
    k, n, _ = T.shape(stack)
    x, ok = _call(al, linalg.solve, [stack, _identities(al, stack, (k,))], node)
    _check(al, ok, node, "np.linalg.inv: Singular matrix")
    return _unstack(al, x, batch, (n, n))


def _scalars(al, v: SSAValue, batch):
    """One number per matrix: a number for one matrix, else an array of the batch shape."""
    if not batch:
        return T.extract_scalar(al.em, T.reshape(al.em, v, ()))
    return al.new(T.reshape(al.em, v, batch))


@numpy_function(np.linalg.matrix_power, params=("a", "n"))
def _matrix_power(al, node, a, n):
    """Products by repeated squaring; a negative power inverts first."""
    n = al.static(n, node, "the power")
    if not isinstance(n, int) or isinstance(n, bool):
        raise al.error(node, "np.linalg.matrix_power: the power must be an int known while lowering")
    a = _float_array(al, node, a, "np.linalg.matrix_power", 2)
    stack, batch = _matrices(al, node, a, "np.linalg.matrix_power", square=True)
    k, size, _ = T.shape(stack)
    if n == 0:
        return al.new(_identities(al, stack, batch))
    if n < 0:
        stack, ok = _call(al, linalg.solve, [stack, _identities(al, stack, (k,))], node)
        _check(al, ok, node, "np.linalg.matrix_power: Singular matrix")
    x = T.reshape(al.em, stack, (*batch, size, size))
    result, square, n = None, x, abs(n)
    while n:
        if n & 1:
            result = square if result is None else al.matmul(result, square, node)
        n >>= 1
        if n:
            square = al.matmul(square, square, node)
    return result if result is a else al.new(result)  # numpy returns a itself for n = 1


@numpy_function(np.linalg.det, params=("a",))
def _det(al, node, a):
    stack, batch = _matrices(al, node, a, "np.linalg.det", square=True)
    (d,) = _call(al, linalg.det, [stack], node)
    return _scalars(al, d, batch)


@numpy_function(np.linalg.slogdet, params=("a",))
def _slogdet(al, node, a):
    stack, batch = _matrices(al, node, a, "np.linalg.slogdet", square=True)
    sign, logdet = _call(al, linalg.slogdet, [stack], node)
    return _scalars(al, sign, batch), _scalars(al, logdet, batch)


# ---- factorisations ------------------------------------------------------------------
def _lower_reading(al, node, a, uplo: str, what: str):
    """numpy reads one triangle of a symmetric matrix; irad.linalg the lower one
    (the upper triangle of a is the lower of a^T)."""
    stack, batch = _matrices(al, node, a, what, square=True)
    return (stack if uplo == "L" else _transpose_last(al.em, stack)), batch


@numpy_function(np.linalg.cholesky, params=("a", "?upper"))
def _cholesky(al, node, a, upper):
    upper = bool(al.static(upper, node, "upper"))
    stack, batch = _lower_reading(al, node, a, "U" if upper else "L", "np.linalg.cholesky")
    factor, ok = _call(al, linalg.cholesky, [stack], node)
    _check(al, ok, node, "np.linalg.cholesky: Matrix is not positive definite")
    factor = _transpose_last(al.em, factor) if upper else factor
    return _unstack(al, factor, batch, T.shape(factor)[1:])


def _eigh(al, node, a, uplo):
    uplo = _static_str(al, uplo, node, "UPLO", "L", ("L", "U"))
    stack, batch = _lower_reading(al, node, a, uplo, "np.linalg.eigh")
    w, v, ok = _call(al, linalg.eigh, [stack], node)
    _check(al, ok, node, "np.linalg.eigh: Eigenvalues did not converge")
    n = T.shape(stack)[-1]
    return _unstack(al, w, batch, (n,)), _unstack(al, v, batch, (n, n))


@numpy_function(np.linalg.eigh, params=("a", "?UPLO"))
def _eigh_handler(al, node, a, uplo):
    return _eigh(al, node, a, uplo)


@numpy_function(np.linalg.eigvalsh, params=("a", "?UPLO"))
def _eigvalsh(al, node, a, uplo):
    return _eigh(al, node, a, uplo)[0]


def _svd(al, node, a, what: str):
    stack, batch = _matrices(al, node, a, what)
    u, s, vt, ok = _call(al, linalg.svd, [stack], node)
    _check(al, ok, node, f"{what}: SVD did not converge")
    return (u, s, vt), batch


@numpy_function(np.linalg.svd, params=("a", "?full_matrices", "?compute_uv", "?hermitian"))
def _svd_handler(al, node, a, full_matrices, compute_uv, hermitian):
    if al.static(hermitian, node, "hermitian"):
        raise al.error(node, "np.linalg.svd(..., hermitian=True) is not supported",
                       "leave hermitian at False (the general SVD gives the same values)")
    full = al.static(full_matrices, node, "full_matrices")
    vectors = al.static(compute_uv, node, "compute_uv")
    (u, s, vt), batch = _svd(al, node, a, "np.linalg.svd")
    p = T.shape(s)[-1]
    if vectors is False:
        return _unstack(al, s, batch, (p,))
    m, n = T.shape(u)[1], T.shape(vt)[2]
    if full is not False and m != n:
        raise al.error(
            node, f"np.linalg.svd of a {m}x{n} matrix with full_matrices=True: the extra "
            "singular vectors numpy returns are an arbitrary completion, which irad does not compute",
            "pass full_matrices=False (the reduced SVD), or compute_uv=False for the values",
        )
    return _unstack(al, u, batch, (m, p)), _unstack(al, s, batch, (p,)), _unstack(al, vt, batch, (p, n))


@numpy_function(np.linalg.svdvals, params=("x",))
def _svdvals(al, node, x):
    (u, s, vt), batch = _svd(al, node, x, "np.linalg.svdvals")
    return _unstack(al, s, batch, T.shape(s)[1:])


@numpy_function(np.linalg.qr, params=("a", "?mode"))
def _qr(al, node, a, mode):
    mode = _static_str(al, mode, node, "mode", "reduced", ("reduced", "complete", "r"))
    stack, batch = _matrices(al, node, a, "np.linalg.qr")
    _, m, n = T.shape(stack)
    if mode == "complete" and m > n:
        raise al.error(node, f"np.linalg.qr(mode='complete') of a {m}x{n} matrix: the extra columns "
                       "of q are an arbitrary completion, which irad does not compute",
                       "use mode='reduced'")
    q, r = _call(al, linalg.qr, [stack], node)
    r = _unstack(al, r, batch, T.shape(r)[1:])
    if mode == "r":
        return r
    return _unstack(al, q, batch, T.shape(q)[1:]), r


@numpy_function(np.linalg.pinv, params=("a", "?rcond", "?hermitian", "?rtol"))
def _pinv(al, node, a, rcond, hermitian, rtol):
    if al.static(hermitian, node, "hermitian"):
        raise al.error(node, "np.linalg.pinv(..., hermitian=True) is not supported")
    stack, batch = _matrices(al, node, a, "np.linalg.pinv")
    given = [v for v in (rcond, rtol) if not (isinstance(v, Static) and v.obj is None)]
    if len(given) > 1:
        raise al.error(node, "np.linalg.pinv: rtol and rcond can't be both set")
    elem = T.element(stack)
    if given:
        cutoff = al.to_element(al.value(given[0], node), elem)
        if is_array(cutoff):
            raise al.error(node, "np.linalg.pinv: an array of cutoffs is not supported", "pass one number")
    else:
        cutoff = al.em.const(1e-15, elem)  # numpy's default rcond
    p, ok = _call(al, linalg.pinv, [stack, cutoff], node)
    _check(al, ok, node, "np.linalg.pinv: SVD did not converge")
    return _unstack(al, p, batch, T.shape(p)[1:])


# ---- norms -----------------------------------------------------------------------------
@numpy_function(np.linalg.norm, params=("x", "?ord", "?axis", "?keepdims"))
def _norm(al, node, x, ord, axis, keepdims):
    x = _float_array(al, node, x, "np.linalg.norm", 0)
    rank = len(T.shape(x))
    order = al.static(ord, node, "ord")
    axes = al.static(axis, node, "axis")
    keep = bool(al.static(keepdims, node, "keepdims"))
    if axes is None:
        if order is None:  # the 2-norm of the flattened array
            return _vector_norm(al, node, x, tuple(range(rank)), 2, keep)
        if rank not in (1, 2):
            raise al.error(node, "np.linalg.norm: improper number of dimensions to norm")
        axes = tuple(range(rank))
    axes = axes if isinstance(axes, tuple) else (axes,)
    axes = tuple(al.static_axes(a, rank, node)[0] for a in axes)
    if len(set(axes)) != len(axes):
        raise al.error(node, "np.linalg.norm: duplicate axes given")
    if len(axes) == 1:
        return _vector_norm(al, node, x, axes, 2 if order is None else order, keep)
    if len(axes) == 2:
        return _matrix_norm(al, node, x, axes, "fro" if order is None else order, keep)
    raise al.error(node, "np.linalg.norm: improper number of dimensions to norm")


@numpy_function(np.linalg.vector_norm, params=("x", "?axis", "?keepdims", "?ord"))
def _vector_norm_handler(al, node, x, axis, keepdims, ord):
    x = _float_array(al, node, x, "np.linalg.vector_norm", 0)
    rank = len(T.shape(x))
    axes = al.static(axis, node, "axis")
    axes = tuple(range(rank)) if axes is None else axes if isinstance(axes, tuple) else (axes,)
    axes = tuple(al.static_axes(a, rank, node)[0] for a in axes)
    order = al.static(ord, node, "ord")
    return _vector_norm(al, node, x, axes, 2 if order is None else order, bool(al.static(keepdims, node, "keepdims")))


@numpy_function(np.linalg.matrix_norm, params=("x", "?keepdims", "?ord"))
def _matrix_norm_handler(al, node, x, keepdims, ord):
    x = _float_array(al, node, x, "np.linalg.matrix_norm", 2)
    rank = len(T.shape(x))
    order = al.static(ord, node, "ord")
    return _matrix_norm(al, node, x, (rank - 2, rank - 1), "fro" if order is None else order,
                        bool(al.static(keepdims, node, "keepdims")))


def _rows(al, x: SSAValue, axes) -> tuple[SSAValue, tuple[int, ...]]:
    """x with `axes` moved last and flattened: (rows, size), and the kept shape."""
    rank = len(T.shape(x))
    kept = [i for i in range(rank) if i not in axes]
    moved = T.transpose(al.em, x, kept + list(axes))
    dims = T.shape(x)
    kept_dims = tuple(dims[i] for i in kept)
    return T.reshape(al.em, moved, (math.prod(kept_dims), math.prod(dims[a] for a in axes))), kept_dims


def _reduced(al, v: SSAValue, x: SSAValue, axes, kept_dims, keep: bool):
    """One value per row back in numpy's shape (with size-1 axes for keepdims)."""
    if keep:
        return al.new(T.reshape(al.em, v, [1 if i in axes else n for i, n in enumerate(T.shape(x))]))
    if not kept_dims:
        return T.extract_scalar(al.em, T.reshape(al.em, v, ()))
    return al.new(T.reshape(al.em, v, kept_dims))


def _vector_norm(al, node, x, axes, order, keep: bool):
    em = al.em
    if isinstance(order, bool) or not isinstance(order, (int, float)):
        raise al.error(node, f"np.linalg.norm: invalid norm order {order!r} for vectors")
    rows, kept = _rows(al, x, axes)
    if order == 2:
        (v,) = _call(al, linalg.norm2, [rows], node)
    elif order == math.inf or order == -math.inf:
        combiner = arith.MaximumfOp if order > 0 else arith.MinimumfOp
        v = T.reduce(em, em.op(mathd.AbsFOp(rows)), [1], combiner)
    elif order == 1:
        v = T.reduce(em, em.op(mathd.AbsFOp(rows)), [1])
    elif order == 0:  # the number of nonzero entries: piecewise constant
        nonzero = T.compare(em, "une", rows, T.dense(em, 0.0, rows.type))
        v = T.reduce(em, T.to_float(em, nonzero, T.element(rows)), [1])
    else:
        (v,) = _call(al, linalg.pnorm, [rows, em.const(float(order), T.element(rows))], node)
    return _reduced(al, v, x, axes, kept, keep)


def _matrix_norm(al, node, x, axes, order, keep: bool):
    em = al.em
    if order not in ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf) or isinstance(order, bool):
        raise al.error(node, f"np.linalg.norm: invalid norm order {order!r} for matrices")
    rank = len(T.shape(x))
    first, second = axes
    kept = [i for i in range(rank) if i not in axes]
    kept_dims = tuple(T.shape(x)[i] for i in kept)
    if order == "fro":
        rows, _ = _rows(al, x, axes)
        (v,) = _call(al, linalg.norm2, [rows], node)
        return _reduced(al, v, x, axes, kept_dims, keep)
    matrices = T.transpose(em, x, kept + [first, second])
    stack = T.reshape(em, matrices, (math.prod(kept_dims), *T.shape(matrices)[-2:]))
    if order in (1, -1, math.inf, -math.inf):
        # 1: the largest column sum of |x|; inf: the largest row sum
        sums = T.reduce(em, em.op(mathd.AbsFOp(stack)), [1 if order in (1, -1) else 2])
        combiner = arith.MaximumfOp if order > 0 else arith.MinimumfOp
        v = T.reduce(em, sums, [1], combiner)
    else:
        _, s, _, ok = _call(al, linalg.svd, [stack], node)
        _check(al, ok, node, "np.linalg.norm: SVD did not converge")
        if order == "nuc":
            v = T.reduce(em, s, [1])
        else:  # 2: the largest singular value, -2: the smallest
            p = T.shape(s)[1]
            v = Slice((0, 0 if order == 2 else p - 1), (T.shape(s)[0], 1), (1, 1), (T.shape(s)[0],)).read(em, s)
    return _reduced(al, v, x, axes, kept_dims, keep)
