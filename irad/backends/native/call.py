"""The native call path of functions with arrays, built once per signature.

Python calls a public function `@f` that takes or returns arrays through a
trampoline, `irad_py_<f>`, LLVM IR written here per signature and
JIT-compiled with the module:

* array arguments cross as the numpy arrays themselves, in one tuple with
  the result arrays: one ctypes `py_object` however many arrays there are
  (ctypes converts each argument it passes, which costs more than the
  trampoline's reads). The trampoline checks each array in place, reading the fields numpy's own C API
  macros read (`PyArray_DATA`, `PyArray_DIMS`, ...; `numpy_layout` verifies
  where they are, once per process): exactly an ndarray, the dtype, the
  shape, C-contiguous and aligned. It then builds the memref descriptor on
  its stack; the data is never copied. An argument that fails a check makes
  it return `-(i + 1)`, and Python converts that argument (a contiguous copy
  of the right dtype, or a clear error for a wrong shape) and calls again;
* array results are destinations (`destination_passing`): Python allocates
  them with `np.empty` and passes them after the arguments, and the function
  computes into them (`bufferization.materialize_in_destination`; MLIR's
  empty-tensor elimination writes the last op's result in place). So a
  result is a plain numpy array Python owns, sharing memory with nothing;
* scalar and memref results come back through a small struct, and the
  trampoline returns a status: 0, or the id of a failed check
  (native/checks.py), whatever the entry's own convention;
* the GIL is held while the arguments are read and released while the
  machine code runs, as a C extension does.

The Python half (`Caller`) is Python source generated per signature: one
`np.empty` per array result, one ctypes call and a status test, no loop and
nothing that touches xDSL. Functions without arrays keep calling their entry
directly (native/compile.py).
"""

from __future__ import annotations

import ctypes
import functools
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import bufferization, func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    Float32Type,
    Float64Type,
    FunctionType,
    IntegerType,
    MemRefType,
    ModuleOp,
    TensorType,
    UnitAttr,
)
from xdsl.ir import Attribute

from irad.backends import entry
from irad.base.errors import BackendError
from irad.ir.types import numpy_dtype

TRAMPOLINE_PREFIX = "irad_py_"


# ---- numpy arrays, read in place ---------------------------------------------------
@dataclass(frozen=True)
class NumpyLayout:
    """Byte offsets of the fields of numpy's PyArrayObject and PyArray_Descr
    (numpy/ndarraytypes.h) that the trampoline reads."""

    type: int  # ob_type, in PyObject_HEAD
    data: int
    nd: int
    dimensions: int
    strides: int
    descr: int
    type_char: int  # PyArray_Descr.type ('d' for float64)
    byteorder: int
    tuple_items: int  # PyTupleObject.ob_item: the arrays cross in tuples


@functools.cache
def numpy_layout() -> NumpyLayout:
    """Where this CPython and numpy keep an array's fields: after the object
    header, `data, nd, dimensions, strides, base, descr`, and in a descr after
    its `typeobj`, `kind, type, byteorder` (the layout compiled extensions
    rely on); and a tuple's items. Checked against real arrays and a tuple;
    BackendError if it differs."""
    head = object.__basicsize__  # sizeof(PyObject): 16, more in free-threaded builds
    word = ctypes.sizeof(ctypes.c_void_p)
    layout = NumpyLayout(
        type=head - word, data=head, nd=head + word, dimensions=head + 2 * word, strides=head + 3 * word,
        descr=head + 5 * word, type_char=head + word + 1, byteorder=head + word + 2,
        tuple_items=tuple.__basicsize__,
    )

    def pointer(address: int) -> int:
        return ctypes.c_void_p.from_address(address).value or 0

    def agrees(a: np.ndarray) -> bool:
        at = id(a)
        ndim = ctypes.c_int.from_address(at + layout.nd).value
        if pointer(at + layout.type) != id(type(a)) or ndim != a.ndim:
            return False
        descr = pointer(at + layout.descr)
        return (
            pointer(at + layout.data) == a.__array_interface__["data"][0]
            and tuple((ctypes.c_ssize_t * ndim).from_address(pointer(at + layout.dimensions))) == a.shape
            and tuple((ctypes.c_ssize_t * ndim).from_address(pointer(at + layout.strides))) == a.strides
            and descr == id(a.dtype)
            and ctypes.string_at(descr + layout.type_char - 1, 3) == (a.dtype.kind + a.dtype.char + a.dtype.byteorder).encode()
        )

    samples = [np.zeros((3, 5)), np.zeros((4, 6), np.float32)[1:, ::2], np.zeros(7, ">i4"), np.zeros((), np.bool_)]
    items = tuple(samples)
    in_tuple = tuple.__itemsize__ == word and all(
        pointer(id(items) + layout.tuple_items + k * word) == id(a) for k, a in enumerate(items)
    )
    if sys.implementation.name != "cpython" or not in_tuple or not all(map(agrees, samples)):
        raise BackendError(
            "the native backend reads numpy arrays in place, and this Python or numpy lays them out "
            "differently than it expects\n  hint: use the default backend (backend='python')"
        )
    return layout


@functools.cache
def python_symbols() -> None:
    """The JIT's code calls CPython's PyEval_SaveThread/RestoreThread and
    compares types with numpy's ndarray."""
    import llvmlite.binding as llvm

    for name in ("PyEval_SaveThread", "PyEval_RestoreThread"):
        llvm.add_symbol(name, ctypes.cast(getattr(ctypes.pythonapi, name), ctypes.c_void_p).value)
    llvm.add_symbol(NDARRAY_SYMBOL, id(np.ndarray))


# ---- types ------------------------------------------------------------------------
_DTYPES = {Float64Type: np.float64, Float32Type: np.float32}
_NATIVE_ORDER = "<" if sys.byteorder == "little" else ">"


@dataclass(frozen=True)
class ArraySpec:
    """A tensor type as numpy sees it, precomputed for the call path."""

    dtype: np.dtype
    shape: tuple[int, ...]
    text: str  # the IR type, for messages

    @property
    def type_chars(self) -> bytes:
        """The `PyArray_Descr.type` chars of this dtype (int64 is 'l' and 'q' on Linux)."""
        return bytes(sorted({ord(np.dtype(c).char) for c in np.typecodes["All"] if np.dtype(c) == self.dtype}))

    @property
    def byteorders(self) -> bytes:
        return b"=|" + _NATIVE_ORDER.encode()

    @property
    def element_strides(self) -> tuple[int, ...]:
        strides, size = [], 1
        for n in reversed(self.shape):
            strides.append(size)
            size *= n
        return tuple(reversed(strides))


def array_spec(t: TensorType) -> ArraySpec:
    elem = t.element_type
    if type(elem) in _DTYPES:
        dtype = np.dtype(_DTYPES[type(elem)])
    elif isinstance(elem, IntegerType) and numpy_dtype(elem) is not None:  # bool, int8 ... uint64
        dtype = numpy_dtype(elem)
    else:
        raise BackendError(f"the native backend cannot pass a {t} to or from numpy")
    return ArraySpec(dtype, tuple(t.get_shape()), str(t))


# ---- the module: array results become destinations -----------------------------------
def destination_passing(module: ModuleOp, public: Sequence[func.FuncOp]) -> None:
    """Each public function's tensor results become memref arguments after
    its own (`materialize_in_destination ... restrict writable`), in order;
    it returns the rest. In place."""
    for fn in public:
        outputs = fn.function_type.outputs.data
        kept = [t for t in outputs if not isinstance(t, TensorType)]
        if len(kept) == len(outputs):
            continue
        block = fn.body.blocks.first
        destinations = [
            block.insert_arg(MemRefType(t.element_type, t.get_shape()), len(block.args))
            for t in outputs
            if isinstance(t, TensorType)
        ]
        for ret in [op for op in block.ops if isinstance(op, func.ReturnOp)]:
            results = iter(destinations)
            for value in ret.operands:
                if isinstance(value.type, TensorType):
                    materialize = bufferization.MaterializeInDestinationOp(
                        operands=[value, next(results)],
                        properties={"restrict": UnitAttr(), "writable": UnitAttr()},
                        result_types=[[]],
                    )
                    block.insert_op_before(materialize, ret)
            block.insert_op_before(func.ReturnOp(*[v for v in ret.operands if not isinstance(v.type, TensorType)]), ret)
            block.erase_op(ret)
        inputs = [*fn.function_type.inputs.data, *(d.type for d in destinations)]
        fn.function_type = FunctionType.from_lists(inputs, kept)
        if fn.arg_attrs is not None:
            fn.arg_attrs = ArrayAttr([*fn.arg_attrs.data, *[DictionaryAttr({})] * len(destinations)])


# ---- the trampoline, LLVM IR ----------------------------------------------------------
def _descriptor_type(rank: int) -> str:
    return f"{{ ptr, ptr, i64, [{rank} x i64], [{rank} x i64] }}" if rank else "{ ptr, ptr, i64 }"


def _any_of(lines: list[str], name: str, value: str, chars: bytes) -> str:
    """An i1 `%name`: the i8 `value` is one of `chars`."""
    terms = []
    for k, c in enumerate(chars):
        lines.append(f"  %{name}.{k} = icmp eq i8 {value}, {c}")
        terms.append(f"%{name}.{k}")
    return _all_of(lines, name, terms, "or")


def _all_of(lines: list[str], name: str, terms: list[str], op: str = "and") -> str:
    result = terms[0]
    for k, term in enumerate(terms[1:]):
        lines.append(f"  %{name}.{op}{k} = {op} i1 {result}, {term}")
        result = f"%{name}.{op}{k}"
    return result


def _check_array(lines: list[str], i: int, spec: ArraySpec, layout: NumpyLayout, next_label: str) -> None:
    """Branch to `next_label` if array argument %p{i} is an ndarray of `spec`
    that can be passed in place, else to %reject{i}. Leaves %p{i}.data."""
    p = f"%p{i}"

    def field(name: str, offset: int, base: str = p, ty: str = "ptr") -> str:
        lines.append(f"  {name}.at = getelementptr i8, ptr {base}, i64 {offset}")
        lines.append(f"  {name} = load {ty}, ptr {name}.at")
        return name

    field(f"{p}.type", layout.type)
    lines.append(f"  {p}.is = icmp eq ptr {p}.type, @{NDARRAY_SYMBOL}")
    lines.append(f"  br i1 {p}.is, label %array{i}, label %reject{i}")
    lines.append(f"array{i}:")
    nd = field(f"{p}.nd", layout.nd, ty="i32")
    descr = field(f"{p}.descr", layout.descr)
    char = field(f"{p}.char", layout.type_char, descr, "i8")
    order = field(f"{p}.order", layout.byteorder, descr, "i8")
    data = field(f"{p}.data", layout.data)
    lines.append(f"  {p}.rank = icmp eq i32 {nd}, {len(spec.shape)}")
    terms = [f"{p}.rank", _any_of(lines, f"p{i}.chars", char, spec.type_chars),
             _any_of(lines, f"p{i}.orders", order, spec.byteorders)]
    if all(spec.shape):  # an empty array's data pointer may be anything
        lines.append(f"  {p}.address = ptrtoint ptr {data} to i64")
        lines.append(f"  {p}.misaligned = and i64 {p}.address, {spec.dtype.itemsize - 1}")
        lines.append(f"  {p}.aligned = icmp eq i64 {p}.misaligned, 0")
        terms.append(f"{p}.aligned")
    meta = _all_of(lines, f"p{i}.meta", terms)
    if not spec.shape:
        lines.append(f"  br i1 {meta}, label %{next_label}, label %reject{i}")
        return
    lines.append(f"  br i1 {meta}, label %shape{i}, label %reject{i}")
    lines.append(f"shape{i}:")
    dims = field(f"{p}.dims", layout.dimensions)
    strides = field(f"{p}.strides", layout.strides)
    terms = []
    for k, (n, stride) in enumerate(zip(spec.shape, spec.element_strides)):
        lines.append(f"  {p}.dim{k}.at = getelementptr i64, ptr {dims}, i64 {k}")
        lines.append(f"  {p}.dim{k} = load i64, ptr {p}.dim{k}.at")
        lines.append(f"  {p}.dim{k}.ok = icmp eq i64 {p}.dim{k}, {n}")
        terms.append(f"{p}.dim{k}.ok")
        if n > 1 and all(spec.shape):  # strides of an axis of length 0 or 1, or of an empty array, are never used
            lines.append(f"  {p}.stride{k}.at = getelementptr i64, ptr {strides}, i64 {k}")
            lines.append(f"  {p}.stride{k} = load i64, ptr {p}.stride{k}.at")
            lines.append(f"  {p}.stride{k}.ok = icmp eq i64 {p}.stride{k}, {stride * spec.dtype.itemsize}")
            terms.append(f"{p}.stride{k}.ok")
    lines.append(f"  br i1 {_all_of(lines, f'p{i}.shape', terms)}, label %{next_label}, label %reject{i}")


def _fill_descriptor(lines: list[str], name: str, data: str, spec: ArraySpec) -> None:
    ty = _descriptor_type(len(spec.shape))
    lines.append(f"  store ptr {data}, ptr {name}")
    lines.append(f"  {name}.aligned = getelementptr {ty}, ptr {name}, i32 0, i32 1")
    lines.append(f"  store ptr {data}, ptr {name}.aligned")
    lines.append(f"  {name}.offset = getelementptr {ty}, ptr {name}, i32 0, i32 2")
    lines.append(f"  store i64 0, ptr {name}.offset")
    for k, (n, stride) in enumerate(zip(spec.shape, spec.element_strides)):
        for field, value in ((3, n), (4, stride)):
            lines.append(f"  {name}.f{field}.{k} = getelementptr {ty}, ptr {name}, i32 0, i32 {field}, i32 {k}")
            lines.append(f"  store i64 {value}, ptr {name}.f{field}.{k}")


@dataclass(frozen=True)
class Signature:
    """A public function as the call path sees it, from its IR types (once)."""

    inputs: tuple[ArraySpec | Attribute, ...]  # an ArraySpec per tensor argument
    outputs: tuple[ArraySpec | Attribute, ...]  # as the function returned them
    name: str

    @property
    def arrays_out(self) -> tuple[ArraySpec, ...]:
        return tuple(t for t in self.outputs if isinstance(t, ArraySpec))

    @property
    def rest_out(self) -> tuple[Attribute, ...]:
        """The results that still come back from the entry (scalars, memrefs)."""
        return tuple(t for t in self.outputs if not isinstance(t, ArraySpec))

    @property
    def has_arrays(self) -> bool:
        return any(isinstance(t, ArraySpec) for t in (*self.inputs, *self.outputs))


def signature(fn: func.FuncOp) -> Signature:
    def spec(t: Attribute):
        return array_spec(t) if isinstance(t, TensorType) else t

    ft = fn.function_type
    return Signature(tuple(map(spec, ft.inputs.data)), tuple(map(spec, ft.outputs.data)), fn.sym_name.data)


def trampoline(sig: Signature, entry: str, convention: str, entry_result: str, params: Sequence[str]) -> str:
    """The LLVM IR of `irad_py_<f>`: `params` are the LLVM parameter types of
    the entry (native_checks.entries) as of its `_mlir_ciface_` function,
    `entry_result` its result type there, `convention` its failure convention."""
    layout = numpy_layout()
    has_results = bool(sig.rest_out)
    through = list(params[1:] if has_results and convention == "status" else params)
    arrays_out = sig.arrays_out
    typed: list[str] = ["ptr %res"] if has_results else []
    arguments: list[str] = ["ptr %res"] if has_results and convention != "nan" else []
    allocas: list[str] = []
    checks: list[str] = []
    fills: list[str] = []
    check_ids = [i for i, t in enumerate(sig.inputs) if isinstance(t, ArraySpec)]
    labels = [f"array{i}.ok" for i in check_ids] + ["call"]
    word = ctypes.sizeof(ctypes.c_void_p)
    typed.append("ptr %args")  # the tuple of the arguments, then the result arrays
    for i, t in enumerate(sig.inputs):
        if isinstance(t, ArraySpec):
            allocas.append(f"  %p{i}.slot = getelementptr i8, ptr %args, i64 {layout.tuple_items + word * i}")
            allocas.append(f"  %p{i} = load ptr, ptr %p{i}.slot")
            allocas.append(f"  %d{i} = alloca {_descriptor_type(len(t.shape))}, align 8")
            index = check_ids.index(i)
            if index:
                checks.append(f"{labels[index - 1]}:")
            _check_array(checks, i, t, layout, labels[index])
            _fill_descriptor(fills, f"%d{i}", f"%p{i}.data", t)
            arguments.append(f"ptr %d{i}")
        else:
            typed.append(f"{through[i]} %p{i}")
            arguments.append(f"{through[i]} %p{i}")
    if check_ids:
        checks.append(f"{labels[-2]}:")
    for j, spec in enumerate(arrays_out):
        allocas.append(f"  %e{j} = alloca {_descriptor_type(len(spec.shape))}, align 8")
        fills.append(f"  %o{j}.slot = getelementptr i8, ptr %args, i64 {layout.tuple_items + word * (len(sig.inputs) + j)}")
        fills.append(f"  %o{j} = load ptr, ptr %o{j}.slot")
        fills.append(f"  %o{j}.at = getelementptr i8, ptr %o{j}, i64 {layout.data}")
        fills.append(f"  %o{j}.data = load ptr, ptr %o{j}.at")
        _fill_descriptor(fills, f"%e{j}", f"%o{j}.data", spec)
        arguments.append(f"ptr %e{j}")
    call = f'@"{entry}"({", ".join(arguments)})'
    if convention == "nan":
        run = [f"  %r = call {entry_result} {call}", "  call void @PyEval_RestoreThread(ptr %gil)",
               f"  store {entry_result} %r, ptr %res", f"  %nan = fcmp uno {entry_result} %r, %r",
               "  br i1 %nan, label %failed, label %done", "failed:", "  %id = call i32 @irad_failure()",
               "  ret i32 %id", "done:", "  ret i32 0"]
    else:
        run = [f"  %status = call i32 {call}", "  call void @PyEval_RestoreThread(ptr %gil)", "  ret i32 %status"]
    rejects = [line for i in check_ids for line in (f"reject{i}:", f"  ret i32 {-(i + 1)}")]
    body = [
        f'define i32 @"{TRAMPOLINE_PREFIX}{sig.name}"({", ".join(typed)}) {{',
        "entry:", *allocas, *checks, *fills,
        "  %gil = call ptr @PyEval_SaveThread()", *run, *rejects, "}",
    ]
    return "\n".join(body)


# numpy's ndarray type object, by a symbol bound to its address in this process
# (python_symbols): the IR, and so the machine code, holds no address of this
# process, so it can be reused by another (irad/backends/native/object_cache.py).
NDARRAY_SYMBOL = "irad_ndarray_type"
TRAMPOLINE_DECLARATIONS = (
    "declare ptr @PyEval_SaveThread()\ndeclare void @PyEval_RestoreThread(ptr)\n"
    f"@{NDARRAY_SYMBOL} = external global i8"
)


# ---- the Python half --------------------------------------------------------------------
def _convert(spec: ArraySpec, value, position: int, name: str) -> np.ndarray:
    """An argument the trampoline refused, as an array it takes (a contiguous copy)."""
    array = np.asarray(value)
    if array.shape != spec.shape:
        raise BackendError(
            f"@{name} expected an array of shape {spec.shape} ({spec.text}) for argument {position}, got {array.shape}"
        )
    return np.array(array, dtype=spec.dtype, order="C", copy=True)


@dataclass(frozen=True)
class Caller:
    """How Python calls the trampoline `function`: a ctypes function taking
    `results` first (if there are scalar or memref results), then the tuple
    of all the arguments followed by the array results, then the arguments
    other than arrays again (`memref(i, value)`: the descriptor of a memref
    argument). `claim(values, arguments)` turns the memref results into
    Python values; `failed(id)` is the error of a check."""

    sig: Signature
    function: Callable
    results: type | None
    memref: Callable[[int, object], ctypes.Structure]
    claim: Callable[[Sequence, Sequence], tuple]
    failed: Callable[[int], Exception]

    def _lines(self, on_reject: str, args: str | None) -> tuple[list[str], list[str], dict]:
        """The statements of a call over parameters a0, a1, ... (`args`: the
        expression of their tuple, if there is one; `on_reject` when the
        trampoline refuses an argument), the expressions of the results, and
        the names they use."""
        sig, results = self.sig, self.results
        n = len(sig.inputs)
        params = ", ".join(f"a{i}" for i in range(n))
        env: dict = {"_f": self.function, "_empty": np.empty, "_R": results, "_claim": self.claim,
                     "_failed": self.failed, "_m": self.memref}
        scalars = [
            f"_m({i}, a{i})" if isinstance(t, MemRefType) else f"a{i}"
            for i, t in enumerate(sig.inputs)
            if not isinstance(t, ArraySpec)
        ]
        body = []
        for j, spec in enumerate(sig.arrays_out):
            env[f"_s{j}"], env[f"_d{j}"] = spec.shape, spec.dtype
            body.append(f"o{j} = _empty(_s{j}, _d{j})")
        if results is not None:
            body.append("r = _R()")
        outs = [f"o{j}" for j in range(len(sig.arrays_out))]
        if args is None:  # one tuple: ctypes converts each argument, at a cost
            both = "(" + "".join(f"a{i}, " for i in range(n)) + "".join(f"{o}, " for o in outs) + ")"
        else:
            both = f"{args} + (" + "".join(f"{o}, " for o in outs) + ")" if outs else args
        body.append(f"s = _f({', '.join((['r'] if results is not None else []) + [both] + scalars)})")
        body += ["if s:", "    if s > 0:", "        raise _failed(s)", f"    {on_reject}"]
        rest = sig.rest_out
        arrays = iter(outs)
        if any(isinstance(t, MemRefType) for t in rest):
            fields = "(r,)" if len(rest) == 1 else "(" + "".join(f"r.r{k}, " for k in range(len(rest))) + ")"
            values = iter(f"c[{k}]" for k in range(len(rest)))
            body.append(f"c = _claim({fields}, ({params}{',' if n else ''}))")
        else:
            values = iter(["r.value"] if len(rest) == 1 else [f"r.r{k}" for k in range(len(rest))])
        returned = [next(arrays) if isinstance(t, ArraySpec) else next(values) for t in sig.outputs]
        return body, returned, env

    def python(self) -> Callable[..., tuple]:
        """The Python function that calls the trampoline, returning a tuple:
        an argument it refuses is converted (a contiguous copy of the right
        dtype, or a clear error) and the call made again."""
        sig = self.sig
        n = len(sig.inputs)
        params = ", ".join(f"a{i}" for i in range(n))
        specs = {i: t for i, t in enumerate(sig.inputs) if isinstance(t, ArraySpec)}
        refused = f"@{sig.name}: the native call refused argument %d after converting it"
        converted = ", ".join(f"_convert(_specs[{i}], a{i}, {i}, {sig.name!r})" if i in specs else f"a{i}" for i in range(n))

        def define(name: str, on_reject: str) -> tuple[str, dict]:
            body, returned, env = self._lines(on_reject, None)
            returned_tuple = "".join(f"{r}, " for r in returned)
            lines = [f"def {name}({params}):", *(f"    {line}" for line in body), f"    return ({returned_tuple})"]
            return "\n".join(lines), env

        call, env = define("call", f"return again({converted})")
        again, _ = define("again", f"raise _BackendError({refused!r} % (-s - 1))")
        env.update(_convert=_convert, _specs=specs, _BackendError=BackendError)
        exec(compile(call + "\n\n" + again, f"<irad.backends.native.call @{sig.name}>", "exec"), env)
        return env["call"]

    def entry(self, plan: entry.EntryPlan) -> Callable:
        """The call entry (entry.py) of this function: the trampoline checks
        array arguments itself, so the entry checks only the others; an
        argument the trampoline refuses goes to the general path."""
        body, returned, env = self._lines("return _e_otherwise(_self, _args, _kwargs)", "_args")
        lines = [f"    {line}" for line in body] + [f"    return {plan.results.format(*returned)}"]
        in_place = {i for i, t in enumerate(self.sig.inputs) if isinstance(t, ArraySpec)}
        names = entry.params(len(self.sig.inputs))
        return entry.define(plan, names, entry.Body(lines, env), {}, self.sig.name, checked=in_place)
