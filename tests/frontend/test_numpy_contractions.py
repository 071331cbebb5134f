"""numpy's contractions (irad/frontend/numpy_contractions.py) and batched matmul:
values against numpy, gradients against central differences, forward against
reverse, float32, on both backends (native: marked `native`)."""

import numpy as np
import pytest

import irad
from irad.backends.native.compile import unavailable_reason
from tests.array_checks import check_program, with_backends

NATIVE_MISSING = unavailable_reason()
BACKENDS = ["python", pytest.param("native", marks=[
    pytest.mark.native, pytest.mark.skipif(NATIVE_MISSING is not None, reason=str(NATIVE_MISSING))])]


def normal(*shape, seed=0):
    return np.random.default_rng(seed + sum(shape)).normal(size=shape)


# ---- programs -------------------------------------------------------------------------
def matmul_batched(a, b):
    return np.sum(np.sin(a @ b))


def matmul_vector_stack(v, b):
    return np.sum(np.cos(np.matmul(v, b)) + np.matmul(b, v[:4]) ** 2)


def dot_rank3(a, b):
    return np.sum(np.dot(a, b) ** 2)


def dot_vector(a, v):
    return np.sum(np.tanh(np.dot(a, v)))


def einsum_matmul(a, b):
    return np.sum(np.einsum("ij,jk->ik", a, b) ** 2)


def einsum_three(a, b, c):
    return np.einsum("i,ij,j", a, b, c)


def einsum_batched(a, b):
    return np.sum(np.sin(np.einsum("...ij,...kj->...ik", a, b)))


def einsum_diagonal(a):
    return np.einsum("ii", a) + np.sum(np.einsum("ii->i", a) ** 3)


def einsum_transpose_sum(a):
    return np.sum(np.einsum("ijk->kj", a) * np.arange(12.0).reshape(4, 3))


def einsum_outer_broadcast(a, v):
    return np.sum(np.einsum("ij,k->ijk", a, v) ** 2)


def tensordot_default(a, b):
    return np.sum(np.tensordot(a, b) ** 2)


def tensordot_pairs(a, b):
    return np.sum(np.sin(np.tensordot(a, b, axes=([2, 0], [0, 1]))))


def tensordot_zero(a, b):
    return np.sum(np.tensordot(a, b, axes=0) ** 2)


def inner_products(a, b):
    return np.sum(np.inner(a, b) ** 2) + np.inner(a[0, 0], b[0])


def vdot_flat(a, b):
    return np.vdot(a, b) ** 2


def kron_products(a, b):
    return np.sum(np.kron(a, b) ** 2) + np.sum(np.kron(a[0], b) * 0.5)


def cross_3(a, b):
    return np.sum(np.cross(a, b) ** 2)


def cross_mixed(a, b):
    return np.sum(np.cross(a[:, :2], b) ** 2) + np.sum(np.cross(a[:, :2], b[:, :2]) ** 2)


def cross_axis(a, b):
    return np.sum(np.sin(np.cross(a, b, axisa=0, axisb=0, axisc=0)))


def trace_offsets(a):
    return np.trace(a) + np.trace(a, 1) * 2.0 + np.trace(a, offset=-1) ** 2


def trace_batched(a):
    return np.sum(np.trace(a, axis1=1, axis2=2) ** 2)


def vecdots(a, b):
    return np.sum(np.vecdot(a, b) ** 2) + np.sum(np.linalg.vecdot(a, 2.0 * a, axis=0))


def linalg_forms(a, b):
    return (np.sum(np.linalg.matmul(a, b) ** 2) + np.sum(np.linalg.tensordot(a, b, axes=1))
            + np.sum(np.linalg.outer(a[0], b[0]) ** 2) + np.sum(np.linalg.matrix_transpose(a) * b.T))


def linalg_cross_trace(a, b):
    return (np.sum(np.linalg.cross(a, b) ** 2) + np.linalg.trace(a @ b.T)
            + np.sum(np.linalg.trace(np.stack([a @ b.T, b @ a.T]), offset=1)))


def multi_dots(a, b):
    return np.sum(np.linalg.multi_dot([a[0], b, b.T, a[1]])) + np.sum(np.linalg.multi_dot([a, b]) ** 2)


CASES = [
    (matmul_batched, lambda: (normal(2, 3, 4), normal(4, 5))),
    (matmul_batched, lambda: (normal(2, 1, 3, 4), normal(3, 4, 2))),  # batch axes broadcast
    (matmul_vector_stack, lambda: (normal(4), normal(3, 4, 4))),
    (dot_rank3, lambda: (normal(2, 3, 4), normal(5, 4, 2))),
    (dot_vector, lambda: (normal(2, 3, 4), normal(4))),
    (einsum_matmul, lambda: (normal(3, 4), normal(4, 2))),
    (einsum_three, lambda: (normal(3), normal(3, 4), normal(4))),
    (einsum_batched, lambda: (normal(2, 3, 4), normal(5, 4))),
    (einsum_diagonal, lambda: (normal(4, 4),)),
    (einsum_transpose_sum, lambda: (normal(2, 3, 4),)),
    (einsum_outer_broadcast, lambda: (normal(2, 3), normal(4))),
    (tensordot_default, lambda: (normal(2, 3, 4), normal(3, 4, 2))),
    (tensordot_pairs, lambda: (normal(2, 3, 4), normal(4, 2, 5))),
    (tensordot_zero, lambda: (normal(2, 3), normal(4))),
    (inner_products, lambda: (normal(2, 3, 4), normal(5, 4))),
    (vdot_flat, lambda: (normal(2, 3), normal(3, 2))),
    (kron_products, lambda: (normal(2, 3), normal(3, 2))),
    (cross_3, lambda: (normal(4, 3), normal(3))),
    (cross_mixed, lambda: (normal(4, 3), normal(4, 3))),
    (cross_axis, lambda: (normal(3, 4), normal(3, 4))),
    (trace_offsets, lambda: (normal(4, 5),)),
    (trace_batched, lambda: (normal(3, 4, 4),)),
    (vecdots, lambda: (normal(4, 3), normal(3))),
    (linalg_forms, lambda: (normal(3, 3), normal(3, 3))),
    (linalg_cross_trace, lambda: (normal(4, 3), normal(4, 3))),
    (multi_dots, lambda: (normal(2, 3), normal(3, 4))),
]


@pytest.mark.filterwarnings("ignore:Arrays of 2-dimensional vectors are deprecated")  # numpy's cross
@pytest.mark.parametrize(("f", "make", "backend"), with_backends(CASES))
def test_contraction(f, make, backend):
    check_program(f, make(), backend=backend, float32=backend == "python")


def test_batched_matmul_is_one_contraction():
    module = irad.grad(matmul_batched, argnums=(0, 1)).lower(normal(2, 3, 4), normal(4, 5))
    kinds = [op.attributes["irad.kind"].data for op in module.walk() if op.name == "linalg.generic"]
    assert kinds.count("contraction") == 3  # the primal and one per cotangent


def einsum_bad_letters(a):
    return np.sum(np.einsum("ij,jk->ik", a))


def matmul_misaligned(a, b):
    return np.sum(a @ b)


def cross_bad(a, b):
    return np.sum(np.cross(a, b))


@pytest.mark.parametrize(("f", "args", "message"), [
    (einsum_bad_letters, (normal(2, 2),), r"np\.einsum: the subscripts name 2 operands, but 1 are given"),
    (matmul_misaligned, (normal(2, 3, 4), normal(3, 2)), r"matmul: shapes \(2, 3, 4\) and \(3, 2\) are not aligned"),
    (cross_bad, (normal(4), normal(4)), r"dimension must be 2 or 3"),
])
def test_contraction_errors_are_located(f, args, message):
    with pytest.raises(irad.UnsupportedError, match=message) as info:
        irad.grad(f)(*args)
    assert "test_numpy_contractions.py:" in str(info.value)
