"""Matrix products in native code through BLAS (cblas_?gemm, cblas_?gemv).

Lowered by MLIR, a `linalg.matmul` becomes three scalar loops: 19-42x slower
than JAX on the MLP and attention gradients. Before mlir-opt, the native
backend rewrites each `linalg.matmul` on tensors of at least `min_flops()`
multiply-adds into a call to the optimised BLAS irad already loads for
LAPACK (irad/backends/native/lapack.py). The product becomes a call to a private
function of its own, written at the tensor level:

    %C = func.call @"irad.blas.0"(%A, %B) : (tensor<MxK>, tensor<KxN>) -> tensor<MxN>

    func.func private @"irad.blas.0"(%a: tensor<MxK>, %b: tensor<KxN>) -> tensor<MxN> {
      %ma = bufferization.to_buffer %a read_only : tensor<MxK> to memref<MxK>
      (same for b)
      %c = memref.alloc() : memref<MxN>
      llvm.call @cblas_dgemm(RowMajor, transA, transB, M, N, K, 1.0, pA, lda, pB, ldb, 0.0, pC, N)
      %r = bufferization.to_tensor %c restrict writable
      return %r
    }

One-shot bufferization analyses the function: it reads its arguments
(never copied for the call) and returns a fresh buffer, freed like any
other. The call is where the caller reads the operands, as a tensor op, so
an op that later reuses an operand's buffer in place comes after it; with
the `to_buffer` in the caller instead, CSE merged two of them and a
gradient read an operand that had been overwritten. A call is no linalg
op, so elementwise fusion does not merge producers into it either.
Operands are read where they are, as BLAS allows:

* a `linalg.transpose` ([1, 0]) feeding the product is not materialised: its
  input is passed with BLAS's transpose flag;
* a `tensor.extract_slice` whose rows (or columns) are contiguous, a block
  or a rank-reducing slice `xs[t]`, is read in its source's buffer, with the
  source's row length as leading dimension (columns contiguous: transposed);
* anything else is a buffer of its own; one-shot bufferization copies it to
  a row-major one if it is a view (the identity layout `to_buffer` asks for).

A product with one row or one column (a matrix-vector product, as `A @ v`
is lowered) calls ?gemv instead: OpenBLAS's ?gemm does not forward those to
it and was 2.5-5x slower on them. Contractions (irad/ir/contraction.py) that
are stacks of matrix products ('Zik,Zkj->Zij', and the permuted forms their
gradients produce) call BLAS once per matrix of the stack.

Below the threshold, for products with an empty dimension, and without a
library that has CBLAS, the loops stay (a call costs more than a tiny product).
Threads: one by default (irad/backends/native/lapack.py sets them when it finds the
library; irad.config's `native_blas_threads` chooses another count). A large ?gemm
calls irad_split_?gemm instead, with the same arguments: two single-threaded
calls, one of which a helper thread may take (native/split.py).
"""

from __future__ import annotations

import ctypes
import functools
from typing import NamedTuple

from xdsl.dialects import arith, bufferization, func, llvm, memref, scf, tensor
from xdsl.dialects.builtin import (
    Float32Type,
    Float64Type,
    FloatAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    TensorType,
    UnitAttr,
    i32,
    i64,
)
from xdsl.dialects.linalg.ops import MatmulOp, TransposeOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from irad.backends.native import split as native_split
from irad.backends.native.lapack import Library, find, threads
from irad.base import config
from irad.base.errors import BackendError
from irad.ir import contraction
from irad.ir.constants import is_splat_of
from irad.ir.tensor import DYNAMIC

FUNCTION_PREFIX = "irad.blas."

ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112  # CBLAS_ORDER, CBLAS_TRANSPOSE


def min_flops() -> int:
    """A product of fewer multiply-adds (M*N*K) stays as loops: irad.config's
    `native_blas_min_flops`. Measured crossover (docs/backends.md,
    bench/matmul_lowering.py): BLAS wins from about 16^3."""
    return config.read("native_blas_min_flops")


def _product_shape(op: MatmulOp) -> tuple[int, int, int] | None:
    """(M, N, K) of a matmul on static float tensors with a zero init, else None."""
    if len(op.inputs) != 2 or len(op.outputs) != 1 or not op.results:
        return None
    a, b = op.inputs
    c = op.outputs[0]
    types = (a.type, b.type, c.type)
    if not all(isinstance(t, TensorType) and len(t.get_shape()) == 2 for t in types):
        return None
    if not isinstance(c.type.element_type, (Float32Type, Float64Type)):
        return None
    if any(t.element_type != c.type.element_type for t in types):
        return None
    if not is_splat_of(c, 0.0):
        return None
    (m, k), (_, n) = a.type.get_shape(), b.type.get_shape()
    if min(m, n, k) < 0:  # dynamic
        return None
    return m, n, k


def products(module: ModuleOp) -> list[Operation]:
    """The products `call_blas` turns into BLAS calls: matmuls, and
    contractions that are (batched) matrix products, of at least
    `min_flops()` multiply-adds per matrix product and no empty dimension."""
    threshold = min_flops()
    found = []
    for op in module.walk():
        shape = _product_shape(op) if isinstance(op, MatmulOp) else _batched_plan(op)
        if shape is not None and min(shape[:3]) > 0 and shape[0] * shape[1] * shape[2] >= threshold:
            found.append(op)
    return found


def call_blas(module: ModuleOp) -> bool:
    """Rewrite the large products of `module` (products()) into BLAS calls,
    in place; whether there was any (the library must then be loaded)."""
    found = products(module)
    library = blas_library() if found else None
    if library is None:
        return False
    declarations: dict[str, llvm.FuncOp] = {}
    for number, op in enumerate(found):
        e = _Emitter(op, library, declarations)
        if isinstance(op, MatmulOp):
            _gemm(e, op)
        else:
            _batched_gemm(e, op)
        module.body.block.add_op(e.function(f"{FUNCTION_PREFIX}{number}", op))
    module.body.block.add_ops(declarations.values())
    return True


ROUTINES = ("cblas_dgemm", "cblas_sgemm", "cblas_dgemv", "cblas_sgemv")


@functools.cache
def blas_library() -> Library | None:
    """The library of irad/backends/native/lapack.py if it has CBLAS (OpenBLAS
    does; a LAPACKE-only `lapack_library` may not), else None: the
    products stay loops."""
    threads()  # a bad native_blas_threads is an error, not loops
    try:
        library = find()
        handle = ctypes.CDLL(library.path)
    except (BackendError, OSError):
        return None
    return library if all(hasattr(handle, library.symbol(r)) for r in ROUTINES) else None


def library_path() -> str:
    return blas_library().path


class Operand(NamedTuple):
    """A matrix as BLAS reads it: its first element, leading dimension, and
    CBLAS_TRANSPOSE (TRANS: the product uses the transpose of what is stored)."""

    pointer: SSAValue
    ld: int
    flag: int


class _Emitter:
    """The private function that computes one product: its body (ops added
    `at` a point of it), and the caller's values it reads, its arguments."""

    def __init__(self, op: Operation, library: Library, declarations: dict[str, llvm.FuncOp]):
        self.body = Block()
        self.at = InsertPoint.at_end(self.body)
        self.library, self.declarations = library, declarations
        self.int = IntegerType(library.int_bits)
        self.element = op.results[0].type.element_type
        self.arguments: dict[SSAValue, SSAValue] = {}  # the caller's value -> the body's argument

    def argument(self, value: SSAValue) -> SSAValue:
        """The body's argument for a value of the caller."""
        if value not in self.arguments:
            self.arguments[value] = self.body.insert_arg(value.type, len(self.body.args))
        return self.arguments[value]

    def function(self, name: str, op: Operation) -> func.FuncOp:
        """The private function; `op` is replaced by a call to it."""
        result = self.body.last_op.operands[0].type
        inputs = [v.type for v in self.arguments]
        call = func.CallOp(name, list(self.arguments), [result])
        Rewriter.insert_op(call, InsertPoint.before(op))
        op.results[0].replace_all_uses_with(call.results[0])
        Rewriter.erase_op(op)
        return func.FuncOp(name, FunctionType.from_lists(inputs, [result]), Region(self.body), "private")

    def add(self, new: Operation) -> Operation:
        Rewriter.insert_op(new, self.at)
        return new

    def blas(self, name: str, *args: SSAValue, split: bool = False, blocked: bool = False) -> None:
        """A call to cblas_<s|d><name>, declared once per module; `split`: to
        irad_split_<s|d><name> instead, with the same arguments, `blocked` (a
        narrow product, in blocks): to irad_split_narrow_<s|d><name>, or
        irad_blocked_<s|d><name> if not split (native/split.py)."""
        letter = "s" if isinstance(self.element, Float32Type) else "d"
        if split or blocked:
            symbol = native_split.symbol(letter, self.library, blocked=not split, narrow=blocked)
        else:
            symbol = self.library.symbol(f"cblas_{letter}{name}")
        if symbol not in self.declarations:
            signature = llvm.LLVMFunctionType([a.type for a in args])
            self.declarations[symbol] = llvm.FuncOp(symbol, signature, linkage=llvm.LinkageAttr("external"))
        self.add(llvm.CallOp(symbol, *args))

    def call(self, mnk: tuple[int, int, int], left: Operand, right: Operand, out: SSAValue) -> None:
        """C (M x N, row-major, contiguous at `out`) = op(left) @ op(right):
        ?gemv for one row or column of C, else ?gemm."""
        m, n, k = mnk
        one, zero = self.real(1.0, self.element), self.real(0.0, self.element)
        layout = self.constant(ROW_MAJOR, i32)
        size = lambda x: self.constant(x, self.int)  # noqa: E731
        if n == 1 or m == 1:
            # y = op(matrix) x: the matrix is left for a column (n == 1), or
            # right, transposed once more, for a row (m == 1)
            matrix, vector = (left, right) if n == 1 else (right, left)
            flag = matrix.flag if n == 1 else (NO_TRANS if matrix.flag == TRANS else TRANS)
            rows, cols = (m, k) if flag == NO_TRANS else (k, m)
            if n != 1:
                rows, cols = (n, k) if flag == NO_TRANS else (k, n)
            # the vector's elements: contiguous when it lies along its stored rows
            along_rows = (vector.flag == TRANS) if n == 1 else (vector.flag == NO_TRANS)
            step = 1 if along_rows else vector.ld
            self.blas("gemv", layout, self.constant(flag, i32), size(rows), size(cols), one, matrix.pointer,
                      size(matrix.ld), vector.pointer, size(step), zero, out, size(1))
            return
        self.blas("gemm", layout, self.constant(left.flag, i32), self.constant(right.flag, i32), size(m), size(n),
                  size(k), one, left.pointer, size(left.ld), right.pointer, size(right.ld), zero, out, size(n),
                  split=native_split.splits(m, n, k), blocked=native_split.narrow(m, n, k, right.flag == TRANS))

    def read(self, value: SSAValue) -> SSAValue:
        """The buffer of a tensor of the caller, which BLAS reads (row-major:
        bufferization copies a view that is not)."""
        return self.add(bufferization.ToBufferOp(
            operands=[self.argument(value)],
            result_types=[MemRefType(value.type.element_type, value.type.get_shape())],
            properties={"read_only": UnitAttr()},
        )).results[0]

    def result(self, buffer: SSAValue) -> None:
        """The function returns `buffer`, which BLAS wrote."""
        self.add(func.ReturnOp(self.add(bufferization.ToTensorOp(buffer, restrict=True, writable=True))))

    def constant(self, value: int, t) -> SSAValue:
        return self.add(arith.ConstantOp(IntegerAttr(value, t))).result

    def real(self, value: float, t) -> SSAValue:
        return self.add(arith.ConstantOp(FloatAttr(value, t))).result

    def pointer(self, buffer: SSAValue, offset: SSAValue | None) -> SSAValue:
        """The address of a view's first element: aligned base + offset elements."""
        address = self.add(memref.ExtractAlignedPointerAsIndexOp.get(buffer)).results[0]
        if offset is not None:
            width = buffer.type.element_type.bitwidth // 8
            size = self.add(arith.ConstantOp(IntegerAttr(width, IndexType()))).result
            bytes_ = self.add(arith.MuliOp(offset, size)).result
            address = self.add(arith.AddiOp(address, bytes_)).result
        as_int = self.add(arith.IndexCastOp(address, i64)).result
        return self.add(llvm.IntToPtrOp(as_int)).results[0]

    def index(self, value: int) -> SSAValue:
        return self.add(arith.ConstantOp(IntegerAttr(value, IndexType()))).result

    def operand(self, value: SSAValue) -> Operand:
        """How BLAS reads a product operand.
        A [1, 0] transpose is read through, its input passed transposed; a
        slice BLAS can read is read in its source's buffer (a slice whose
        columns, not rows, are contiguous: transposed the other way)."""
        transposed = False
        owner = value.owner
        if isinstance(owner, TransposeOp) and list(owner.permutation.get_values()) == [1, 0]:
            value, transposed = owner.inputs[0], True
        rows, cols = value.type.get_shape()
        view = _slice_view(value)
        if view is None:  # its own buffer, copied by bufferization if not row-major
            source, offsets, (row_stride, col_stride) = value, [], (cols, 1)
        else:
            source, offsets, (row_stride, col_stride) = view
        buffer = self.read(source)
        offset = None
        for term, stride in offsets:  # the slice's first element, in elements
            term = self.index(term) if isinstance(term, int) else self.argument(term)
            scaled = self.add(arith.MuliOp(term, self.index(stride))).result
            offset = scaled if offset is None else self.add(arith.AddiOp(offset, scaled)).result
        if col_stride == 1 or cols == 1:  # row-major; a single row's stride is any number
            ld, flipped = max(row_stride, cols, 1), False
        else:
            ld, flipped = max(col_stride, rows, 1), True
        flag = TRANS if transposed != flipped else NO_TRANS
        return Operand(self.pointer(buffer, offset), ld, flag)


def _row_major_strides(shape) -> list[int]:
    strides, size = [], 1
    for n in reversed(shape):
        strides.append(size)
        size *= max(n, 1)
    return strides[::-1]


def _without_ones(value: SSAValue) -> list[int]:
    return [n for n in value.type.get_shape() if n != 1]


def _slice_view(value: SSAValue):
    """(source, offset terms [(index or int, stride)], (row stride, column
    stride)) of a 2-d `tensor.extract_slice` (rank-reducing or not) of a
    static source that BLAS can read in place: its rows or its columns
    contiguous. None otherwise. A reshape that only drops or adds dimensions
    of size 1 (how `xs[t]` is lowered) is read through."""
    op = value.owner
    if isinstance(op, tensor.ReshapeOp) and _without_ones(op.source) == _without_ones(value):
        op = op.source.owner
    if not isinstance(op, tensor.ExtractSliceOp):
        return None
    source = op.source
    shape = source.type.get_shape()
    sizes, strides = list(op.static_sizes.get_values()), list(op.static_strides.get_values())
    if any(n < 0 for n in (*shape, *sizes, *strides)):
        return None
    element = _row_major_strides(shape)
    # the source dimensions the result keeps: matched from the right (a
    # rank-reducing slice drops dimensions of size 1)
    kept, d = [], len(sizes) - 1
    for n in reversed(value.type.get_shape()):
        while d >= 0 and sizes[d] != n:
            d -= 1
        if d < 0:
            return None
        kept.insert(0, d)
        d -= 1
    rows, cols = value.type.get_shape()
    row_stride, col_stride = (element[k] * strides[k] for k in kept)
    if not (col_stride == 1 or cols == 1 or row_stride == 1 or rows == 1):
        return None
    dynamic = iter(op.offsets)
    offsets = [(next(dynamic) if o == DYNAMIC else o, element[k]) for k, o in enumerate(op.static_offsets.get_values())]
    return source, [(o, s) for o, s in offsets if not isinstance(o, int) or o], (row_stride, col_stride)


def _gemm(e: _Emitter, op: MatmulOp) -> None:
    """Replace `op` by a BLAS call into a fresh buffer."""
    m, n, k = _product_shape(op)
    left, right = e.operand(op.inputs[0]), e.operand(op.inputs[1])
    buffer = e.add(memref.AllocOp.get(e.element, 64, [m, n])).results[0]
    e.call((m, n, k), left, right, e.pointer(buffer, None))
    e.result(buffer)


# ---- contractions that are (batched) matrix products --------------------------------------
def _batched_plan(op: Operation):
    """(M, N, K, batch, left, right, left transposed, right transposed) of a
    2-input contraction (irad/ir/contraction.py) on static float tensors
    that is a stack of matrix products with the stack axes leading in every
    operand ('Zik,Zkj->Zij', 'Zki,Zjk->Zij', ...); `left` and `right` are
    operand positions (C = left @ right, the output's rows from `left`).
    None for any other op."""
    if not contraction.is_contraction(op) or len(op.inputs) != 2 or len(op.outputs) != 1:
        return None
    if not is_splat_of(op.outputs[0], 0.0):
        return None
    types = [v.type for v in (*op.inputs, op.outputs[0])]
    element = types[-1].element_type
    if not isinstance(element, (Float32Type, Float64Type)) or any(t.element_type != element for t in types):
        return None
    if any(n < 0 for t in types for n in t.get_shape()):
        return None
    form = contraction.matmul_form(op)
    if form is None:
        return None
    left, right, t_left, t_right = form
    ins, out = contraction.subscripts(op)
    stack = len(out) - 2
    (k,) = set(ins[0][stack:]) & set(ins[1][stack:])
    sizes = dict(zip(ins[0] + ins[1], [*types[0].get_shape(), *types[1].get_shape()]))
    count = 1
    for letter in out[:stack]:
        count *= sizes[letter]
    return sizes[out[-2]], sizes[out[-1]], sizes[k], count, left, right, t_left, t_right


def _batched_gemm(e: _Emitter, op: Operation) -> None:
    """Replace a contraction by a BLAS call per matrix of the stack."""
    m, n, k, count, left, right, t_left, t_right = _batched_plan(op)
    out = op.results[0].type
    buffer = e.add(memref.AllocOp.get(e.element, 64, out.get_shape())).results[0]
    stacks = []  # (buffer, elements per matrix, leading dimension, flag)
    for position, transposed in ((left, t_left), (right, t_right)):
        value = op.inputs[position]
        whole = e.read(value)
        rows, cols = value.type.get_shape()[-2:]
        stacks.append((whole, rows * cols, cols, TRANS if transposed else NO_TRANS))

    def one(i: SSAValue | None) -> None:
        """The product of matrix i of the stack (None: the only one)."""
        def at(whole: SSAValue, size: int) -> SSAValue:
            return e.pointer(whole, None if i is None else e.add(arith.MuliOp(i, e.index(size))).result)

        a, b = (Operand(at(whole, size), ld, flag) for whole, size, ld, flag in stacks)
        e.call((m, n, k), a, b, at(buffer, m * n))

    if count == 1:
        one(None)
    else:
        body = Block(arg_types=[IndexType()])
        e.add(scf.ForOp(e.index(0), e.index(count), e.index(1), [], body))
        outer, e.at = e.at, InsertPoint.at_end(body)
        one(body.args[0])
        e.add(scf.YieldOp())
        e.at = outer
    e.result(buffer)
