"""irad.linalg's primitives in native code: small MLIR functions that call LAPACK.

The module the native backend compiles keeps each primitive as a private
declaration (`func.func private @irad.linalg.solve(tensor<...>, ...)` with
`irad.python = "irad.linalg:solve"`); bufferization turns its tensors into
memrefs and, since it cannot see inside, copies every operand the caller
still needs before the call (an external callee may write its operands) and
treats the results as buffers the caller owns. This module writes, for each
declaration, a definition at the memref level with that same signature: it
takes pointers to the buffers, calls LAPACKE (row-major, irad/backends/native/lapack.py)
once per matrix of the stack, overwriting operands where LAPACK works in
place and returning them, or returning buffers it allocates (memref.alloc,
lowered like the main module's: through irad's runtime, native/checks.py, so
the caller frees them as its own). These definitions form their own module,
lowered without bufferization and linked into the JIT module.

A primitive without a definition here, or any other declaration bound to a
Python function, is a BackendError naming it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import Float32Type, ModuleOp, StringAttr, TensorType
from xdsl.ir import Attribute

from irad.backends.native.lapack import Library, find
from irad.base.errors import BackendError

ROW_MAJOR = 101  # LAPACK_ROW_MAJOR


def python_declarations(module: ModuleOp) -> list[func.FuncOp]:
    """The declarations bound to Python functions (irad.python)."""
    return [
        op for op in module.ops
        if isinstance(op, func.FuncOp) and op.is_declaration and isinstance(op.attributes.get("irad.python"), StringAttr)
    ]


def glue_module(module: ModuleOp) -> str | None:
    """MLIR text defining every declaration of `module` bound to a primitive,
    or None if there is none; BackendError for one the native backend cannot run."""
    declarations = python_declarations(module)
    if not declarations:
        return None
    library = find()
    glue = _Glue(library)
    for op in declarations:
        reference = op.attributes["irad.python"].data
        build = PRIMITIVES.get(reference)
        if build is None:
            raise BackendError(
                f"the native backend cannot call the Python function {reference} "
                f"(@{op.sym_name.data})\n  hint: use backend='python' for programs that call it"
            )
        glue.define(op, build)
    return glue.text()


def library_path() -> str:
    return find().path


# ---- writing the definitions ---------------------------------------------------------
class _Glue:
    """MLIR text of the definitions and the LAPACKE declarations they call."""

    def __init__(self, library: Library):
        self.library = library
        self.int = f"i{library.int_bits}"
        self.externals: dict[str, str] = {}
        self.functions: list[str] = []

    def text(self) -> str:
        return "module {\n" + "\n".join([*self.externals.values(), *self.functions]) + "\n}\n"

    def define(self, op: func.FuncOp, build: Callable) -> None:
        inputs = list(op.function_type.inputs.data)
        outputs = list(op.function_type.outputs.data)
        element = inputs[0].element_type
        body = _Body(self, "s" if isinstance(element, Float32Type) else "d", str(element))
        args = [body.fresh("arg") for _ in inputs]
        results = build(body, args, [tuple(t.get_shape()) for t in inputs])
        params = ", ".join(f"{a}: {_memref(t)}" for a, t in zip(args, inputs))
        result_types = ", ".join(_memref(t) if isinstance(t, TensorType) else str(t) for t in outputs)
        self.functions.append(
            f'func.func @"{op.sym_name.data}"({params}) -> ({result_types}) {{\n'
            + "\n".join(body.lines)
            + f"\n  func.return {', '.join(results)} : {result_types}\n}}"
        )

    def lapacke(self, name: str, params: Sequence[str]) -> str:
        symbol = self.library.symbol(f"LAPACKE_{name}")
        self.externals[symbol] = f"llvm.func @{symbol}({', '.join(params)}) -> {self.int}"
        return symbol


def _memref(t: Attribute) -> str:
    return "memref<" + "".join(f"{n}x" for n in t.get_shape()) + f"{t.element_type}>"


class _Body:
    """The lines of one definition; `T` is the element type, `I` LAPACK's int."""

    def __init__(self, glue: _Glue, letter: str, element: str):
        self.glue, self.letter, self.T, self.I = glue, letter, element, glue.int
        self.lines: list[str] = []
        self._count = 0
        self.indent = "  "

    def fresh(self, hint: str = "v") -> str:
        self._count += 1
        return f"%{hint}{self._count}"

    def emit(self, text: str, hint: str = "v") -> str:
        name = self.fresh(hint)
        self.lines.append(f"{self.indent}{name} = {text}")
        return name

    def line(self, text: str) -> None:
        self.lines.append(f"{self.indent}{text}")

    # constants
    def index(self, n: int) -> str:
        return self.emit(f"arith.constant {n} : index", "c")

    def integer(self, n: int, type: str | None = None) -> str:
        return self.emit(f"arith.constant {n} : {type or self.I}", "c")

    def real(self, x: float) -> str:
        if x != x:  # MLIR writes a NaN by its bits
            bits = "0x7FC00000" if self.T == "f32" else "0x7FF8000000000000"
            return self.emit(f"arith.constant {bits} : {self.T}", "c")
        return self.emit(f"arith.constant {x!r} : {self.T}", "c")

    # buffers
    def alloc(self, shape: Sequence[int], element: str | None = None) -> str:
        return self.emit(f"memref.alloc() : {self.memref(shape, element)}", "buf")

    def memref(self, shape: Sequence[int], element: str | None = None) -> str:
        return "memref<" + "".join(f"{n}x" for n in shape) + f"{element or self.T}>"

    def pointer(self, buffer: str, shape: Sequence[int], element: str | None = None) -> str:
        """The address of a buffer's first element (identity layout: offset 0)."""
        address = self.emit(f"memref.extract_aligned_pointer_as_index {buffer} : {self.memref(shape, element)} -> index")
        as_int = self.emit(f"arith.index_cast {address} : index to i64")
        return self.emit(f"llvm.inttoptr {as_int} : i64 to !llvm.ptr", "ptr")

    def at(self, pointer: str, offset: str, element: str | None = None) -> str:
        """pointer + offset elements (offset an i64)."""
        return self.emit(f"llvm.getelementptr {pointer}[{offset}] : (!llvm.ptr, i64) -> !llvm.ptr, {element or self.T}", "ptr")

    def matrix(self, pointer: str, i: str, size: int, element: str | None = None) -> str:
        """The i-th matrix of `size` elements of a stack."""
        return self.at(pointer, self.emit(f"arith.muli {i}, {self.integer(size, 'i64')} : i64"), element)

    # LAPACK calls, one per matrix of a stack
    def batch(self, count: int, body: Callable[[str], str],
              failed: Sequence[tuple[str, Sequence[int]]] = ()) -> str:
        """for i < count: body(i as i64) gives LAPACK's info; returns `all info == 0`.
        If a call failed, the buffers of `failed` (buffer, shape) are filled
        with NaN, as the Python backend's primitives return them
        (irad.linalg._failed): a rule that uses a result without its check
        (slogdet's gradient is a solve) gets NaN, never a stale number."""
        zero, one, n = self.index(0), self.index(1), self.index(count)
        ok = self.emit("arith.constant true", "c")
        i, acc = self.fresh("i"), self.fresh("acc")
        result = self.fresh("ok")
        self.line(f"{result} = scf.for {i} = {zero} to {n} step {one} iter_args({acc} = {ok}) -> (i1) {{")
        outer, self.indent = self.indent, self.indent + "  "
        info = body(self.emit(f"arith.index_cast {i} : index to i64"))
        good = self.emit(f"arith.cmpi eq, {info}, {self.integer(0)} : {self.I}")
        both = self.emit(f"arith.andi {acc}, {good} : i1")
        self.line(f"scf.yield {both} : i1")
        self.indent = outer
        self.line("}")
        if failed:
            bad = self.emit(f"arith.xori {result}, {self.emit('arith.constant true', 'c')} : i1")
            self.line(f"scf.if {bad} {{")
            outer, self.indent = self.indent, self.indent + "  "
            nan = self.real(float("nan"))
            for buffer, shape in failed:
                self.fill(buffer, shape, nan)
            self.indent = outer
            self.line("}")
        return result

    def fill(self, buffer: str, shape: Sequence[int], value: str, at: tuple[str, ...] = ()) -> None:
        """Store `value` into every element of `buffer`."""
        if len(at) == len(shape):
            self.line(f"memref.store {value}, {buffer}[{', '.join(at)}] : {self.memref(shape)}")
            return
        self.loop(0, shape[len(at)], lambda j: self.fill(buffer, shape, value, (*at, j)))

    def call(self, name: str, args: Sequence[tuple[str, str]]) -> str:
        """LAPACKE_<letter><name>(args), each (value, type); returns its info."""
        symbol = self.glue.lapacke(self.letter + name, [t for _, t in args])
        values = ", ".join(v for v, _ in args)
        types = ", ".join(t for _, t in args)
        return self.emit(f"llvm.call @{symbol}({values}) : ({types}) -> {self.I}", "info")

    def layout(self) -> tuple[str, str]:
        return self.integer(ROW_MAJOR, "i32"), "i32"

    def char(self, c: str) -> tuple[str, str]:
        return self.integer(ord(c), "i8"), "i8"

    def int_arg(self, n: int) -> tuple[str, str]:
        return self.integer(n), self.I

    def loop(self, lower: int | str, upper: int, body: Callable[[str], None]) -> None:
        """for j in [lower, upper): body(j as index)."""
        lo = self.index(lower) if isinstance(lower, int) else lower
        hi, one = self.index(upper), self.index(1)
        j = self.fresh("j")
        self.line(f"scf.for {j} = {lo} to {hi} step {one} {{")
        outer, self.indent = self.indent, self.indent + "  "
        body(j)
        self.indent = outer
        self.line("}")


def _i64_to_index(b: _Body, v: str) -> str:
    return b.emit(f"arith.index_cast {v} : i64 to index")


# ---- the primitives ----------------------------------------------------------------------
P = "!llvm.ptr"


def _solve(b: _Body, args, shapes):
    """?gesv on each matrix: b becomes x in place."""
    a, rhs = args
    (k, n, _), (_, _, m) = shapes
    pivots = b.alloc([n], b.I)
    pa, pb, pp = b.pointer(a, shapes[0]), b.pointer(rhs, shapes[1]), b.pointer(pivots, [n], b.I)
    ok = b.batch(k, lambda i: b.call("gesv", [
        b.layout(), b.int_arg(n), b.int_arg(m), (b.matrix(pa, i, n * n), P), b.int_arg(n),
        (pp, P), (b.matrix(pb, i, n * m), P), b.int_arg(m),
    ]), failed=[(rhs, shapes[1])])
    b.line(f"memref.dealloc {pivots} : {b.memref([n], b.I)}")
    return [rhs, ok]


def _slogdet(b: _Body, args, shapes):
    """?getrf, then the sign and log|.| of the product of U's diagonal, each
    row swap flipping the sign; (0, -inf) for a zero pivot, as numpy."""
    (a,) = args
    (k, n, _) = shapes[0]
    sign, logdet = b.alloc([k]), b.alloc([k])
    pivots = b.alloc([n], b.I)
    pa, pp = b.pointer(a, shapes[0]), b.pointer(pivots, [n], b.I)
    one, minus, zero = b.real(1.0), b.real(-1.0), b.real(0.0)

    def factor(i: str) -> str:
        b.call("getrf", [b.layout(), b.int_arg(n), b.int_arg(n), (b.matrix(pa, i, n * n), P), b.int_arg(n), (pp, P)])
        row = _i64_to_index(b, i)
        s, l = b.fresh("s"), b.fresh("l")
        s_in, l_in = b.fresh("s"), b.fresh("l")
        j = b.fresh("j")
        lo, hi, step = b.index(0), b.index(n), b.index(1)
        b.line(f"{s}, {l} = scf.for {j} = {lo} to {hi} step {step} iter_args({s_in} = {one}, {l_in} = {zero}) -> ({b.T}, {b.T}) {{")
        outer, b.indent = b.indent, b.indent + "  "
        d = b.emit(f"memref.load {a}[{row}, {j}, {j}] : {b.memref(shapes[0])}")
        pivot = b.emit(f"memref.load {pivots}[{j}] : {b.memref([n], b.I)}")
        j_int = b.emit(f"arith.index_cast {j} : index to {b.I}")
        expected = b.emit(f"arith.addi {j_int}, {b.integer(1)} : {b.I}")  # LAPACK pivots count from 1
        swapped = b.emit(f"arith.cmpi ne, {pivot}, {expected} : {b.I}")
        positive = b.emit(f"arith.cmpf ogt, {d}, {zero} : {b.T}")
        negative = b.emit(f"arith.cmpf olt, {d}, {zero} : {b.T}")
        signum = b.emit(f"arith.select {negative}, {minus}, {zero} : {b.T}")
        signum = b.emit(f"arith.select {positive}, {one}, {signum} : {b.T}")
        flip = b.emit(f"arith.select {swapped}, {minus}, {one} : {b.T}")
        s_next = b.emit(f"arith.mulf {s_in}, {b.emit(f'arith.mulf {signum}, {flip} : {b.T}')} : {b.T}")
        magnitude = b.emit(f"math.absf {d} : {b.T}")
        l_next = b.emit(f"arith.addf {l_in}, {b.emit(f'math.log {magnitude} : {b.T}')} : {b.T}")
        b.line(f"scf.yield {s_next}, {l_next} : {b.T}, {b.T}")
        b.indent = outer
        b.line("}")
        b.line(f"memref.store {s}, {sign}[{row}] : {b.memref([k])}")
        b.line(f"memref.store {l}, {logdet}[{row}] : {b.memref([k])}")
        return b.integer(0)

    b.batch(k, factor)
    b.line(f"memref.dealloc {pivots} : {b.memref([n], b.I)}")
    return [sign, logdet]


def _cholesky(b: _Body, args, shapes):
    """?potrf on the lower triangle, in place; the upper triangle set to 0."""
    (a,) = args
    (k, n, _) = shapes[0]
    pa = b.pointer(a, shapes[0])
    zero = b.real(0.0)

    def factor(i: str) -> str:
        info = b.call("potrf", [b.layout(), b.char("L"), b.int_arg(n), (b.matrix(pa, i, n * n), P), b.int_arg(n)])
        row = _i64_to_index(b, i)

        def upper(r: str) -> None:
            after = b.emit(f"arith.addi {r}, {b.index(1)} : index")
            b.loop(after, n, lambda c: b.line(f"memref.store {zero}, {a}[{row}, {r}, {c}] : {b.memref(shapes[0])}"))

        b.loop(0, n, upper)
        return info

    ok = b.batch(k, factor, failed=[(a, shapes[0])])
    return [a, ok]


def _eigh(b: _Body, args, shapes):
    """?syevd on the lower triangle: the vectors overwrite a."""
    (a,) = args
    (k, n, _) = shapes[0]
    w = b.alloc([k, n])
    pa, pw = b.pointer(a, shapes[0]), b.pointer(w, [k, n])
    ok = b.batch(k, lambda i: b.call("syevd", [
        b.layout(), b.char("V"), b.char("L"), b.int_arg(n), (b.matrix(pa, i, n * n), P), b.int_arg(n),
        (b.matrix(pw, i, n), P),
    ]), failed=[(w, [k, n]), (a, shapes[0])])
    return [w, a, ok]


def _svd(b: _Body, args, shapes):
    """?gesdd, reduced ('S')."""
    (a,) = args
    (k, m, n) = shapes[0]
    p = min(m, n)
    u, s, vt = b.alloc([k, m, p]), b.alloc([k, p]), b.alloc([k, p, n])
    pa, pu, ps, pv = b.pointer(a, shapes[0]), b.pointer(u, [k, m, p]), b.pointer(s, [k, p]), b.pointer(vt, [k, p, n])
    ok = b.batch(k, lambda i: b.call("gesdd", [
        b.layout(), b.char("S"), b.int_arg(m), b.int_arg(n), (b.matrix(pa, i, m * n), P), b.int_arg(n),
        (b.matrix(ps, i, p), P), (b.matrix(pu, i, m * p), P), b.int_arg(p), (b.matrix(pv, i, p * n), P),
        b.int_arg(n),
    ]), failed=[(u, [k, m, p]), (s, [k, p]), (vt, [k, p, n])])
    return [u, s, vt, ok]


def _qr(b: _Body, args, shapes):
    """?geqrf, r copied out of the upper triangle, then ?orgqr forms q in place."""
    (a,) = args
    (k, m, n) = shapes[0]
    p = min(m, n)
    q, r, tau = b.alloc([k, m, p]), b.alloc([k, p, n]), b.alloc([p])
    pa, pt = b.pointer(a, shapes[0]), b.pointer(tau, [p])
    zero = b.real(0.0)

    def factor(i: str) -> str:
        matrix = b.matrix(pa, i, m * n)
        b.call("geqrf", [b.layout(), b.int_arg(m), b.int_arg(n), (matrix, P), b.int_arg(n), (pt, P)])
        row = _i64_to_index(b, i)

        def copy_r(x: str) -> None:
            def element(y: str) -> None:
                value = b.emit(f"memref.load {a}[{row}, {x}, {y}] : {b.memref(shapes[0])}")
                above = b.emit(f"arith.cmpi uge, {y}, {x} : index")
                kept = b.emit(f"arith.select {above}, {value}, {zero} : {b.T}")
                b.line(f"memref.store {kept}, {r}[{row}, {x}, {y}] : {b.memref([k, p, n])}")

            b.loop(0, n, element)

        b.loop(0, p, copy_r)
        info = b.call("orgqr", [b.layout(), b.int_arg(m), b.int_arg(p), b.int_arg(p), (matrix, P), b.int_arg(n), (pt, P)])

        def copy_q(x: str) -> None:
            def element(y: str) -> None:
                value = b.emit(f"memref.load {a}[{row}, {x}, {y}] : {b.memref(shapes[0])}")
                b.line(f"memref.store {value}, {q}[{row}, {x}, {y}] : {b.memref([k, m, p])}")

            b.loop(0, p, element)

        b.loop(0, m, copy_q)
        return info

    b.batch(k, factor)
    b.line(f"memref.dealloc {tau} : {b.memref([p])}")
    return [q, r]


# irad.python reference -> the definition's builder: (body, argument names,
# argument shapes) -> the returned values
PRIMITIVES: dict[str, Callable] = {
    "irad.linalg:solve": _solve,
    "irad.linalg:slogdet": _slogdet,
    "irad.linalg:cholesky": _cholesky,
    "irad.linalg:eigh": _eigh,
    "irad.linalg:svd": _svd,
    "irad.linalg:qr": _qr,
}
