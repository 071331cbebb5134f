"""The Python API: lower, grad, value_and_grad, vjp.

Each transformation lowers the function for the example arguments' types,
runs `irad-differentiate`, `irad-lower-tape` and `irad-optimize`, and compiles
the result with the chosen backend (a name, "python", "native" or "iree", or a
backend object; by default irad.config's `backend`, "python" unless set). Compiled code is cached
per function, argument signature (the arguments' pytree structure, their
leaves' types and the values of the static arguments, `static_argnums` and
`static_argnames`: irad/arguments.py), backend object (with its options) and rule-table version, so a rule
edit forces a recompile, and per dtype and shape of the global arrays the
function reads: those are hidden arguments, read at each call and passed
after the function's own (irad/frontend/globals.py), and per value it baked in
of what it read from outside (numbers, strings, containers' layouts, functions:
guards, checked at each call). Results come back in the structure the function
returns (a dict for a dict, ...).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects.builtin import Float32Type, ModuleOp

from irad.arguments import argument_trees, arguments, check_tree, normalise_argnums
from irad.frontend.source import error_at, name_of
from irad.base.errors import UnsupportedError
from irad.frontend.callables import StaticShape
from irad.frontend.transformations import Transformation, constructor, normalise_static, program_call, ranges, split_aux
from irad.backends import Backend, check_backend
from irad.base import config
from irad.backends.entry import ArrayKind, EntryPlan
from irad.keywords import keyword_call, keyword_form
from irad.compiled import Compiled, cached, current, run_compiled, variant
from irad import compiled as compiled_code
from irad.base.pytrees import INT64, SCALARS, Node, Tree, leaf_types, tuple_tree, unflatten
from irad.ir.types import is_differentiable
from irad.pickling import reduced
from irad.pipeline import jvp_module, lowered, options, transformation_module, vjp_module
from irad.rules import default_table


def lower(f: Callable, *example_args, **example_kwargs) -> ModuleOp:
    """The primal module of `f`, specialised to the example arguments' types.
    Arguments that are pytrees (tuples, dicts, ...) are flattened into one IR
    argument per leaf, named after its path (`%params.W`); global arrays `f`
    reads are arguments after its own, named after them. Keyword-only
    arguments are arguments after the positional ones (irad/keywords.py);
    those that are not data are known while lowering."""
    found = keyword_call(f, len(example_args), example_kwargs) if example_kwargs else None
    if found is not None:
        call, static = found
        return lowered(call, arguments(call, example_args, example_kwargs, static_argnames=static)[1])[0]
    return lowered(f, arguments(f, example_args, example_kwargs)[1])[0]


# ---- grad / value_and_grad ------------------------------------------------------
_NDARRAY = np.ndarray


class TransformationFunction(Transformation):
    """What grad, value_and_grad, jacfwd, jacrev and hessian return: a
    Transformation (the frontend lowers it to request ops) that compiles
    itself per signature (`_compiled`) and runs.

    It pickles by what it is, the constructor call that makes it
    (`_recipe`): the function by reference (pickle's own way with a
    module-level function; another transformation by its own recipe),
    argnums, options, static arguments and the backend object. Compiled code
    stays behind and is compiled again, once, in the receiving process, whose
    import of the function's module registers the rules that module registers
    (docs/scaling-out.md)."""

    backend: Backend

    def _compiled(self, signature: Node) -> tuple[Compiled, tuple]:
        raise NotImplementedError

    def _recipe(self) -> tuple[Callable, tuple, dict]:
        """`(constructor, arguments, keywords)`: the public call that makes this
        transformation (`irad.grad`, (f, argnums), {"backend": ...})."""
        raise NotImplementedError

    def __reduce__(self):
        make, args, keywords = self._recipe()
        for name in ("static_argnums", "static_argnames"):  # given only when given
            value = getattr(self, name, None)
            if value is not None and not (isinstance(value, (tuple, list, set, frozenset)) and not value):
                keywords[name] = value
        return reduced(make, args, keywords)

    def wait_optimised(self, timeout: float | None = None) -> bool:
        """Wait until the native code compiled so far runs at -O2: the first
        call runs code compiled at -O0 while -O2 compiles in the background
        (tiered compilation, docs/backends/native.md). True at once on other
        backends; False if a background compile failed (calls keep running
        the -O0 code, with the same results)."""
        return compiled_code.wait_optimised(self.f, self.kind, timeout)

    def lower(self, *args, **kwargs) -> ModuleOp:
        """The differentiated, optimised module the backend runs for these argument types."""
        return self._compiled(self._arguments(args, kwargs)[1])[0].module

    def _arguments(self, args: tuple, kwargs: dict) -> tuple[list, Node]:
        """The leaves of a call's arguments and its signature (static ones in it by value)."""
        return arguments(self.f, args, kwargs, self.static_argnums, self.static_argnames)


class _GradFunction(TransformationFunction):
    """The callable returned by grad / value_and_grad.

    Called twice with plain arguments (numbers, arrays) of one signature, an
    instance gets a class of its own, whose `__call__` is that signature's
    call entry (irad/backends/entry.py): one generated function that checks
    the arguments and runs the compiled code. Anything else comes here, to
    `_general`."""

    def __init__(
        self, f: Callable, argnums, with_value: bool, checkpoint: bool = False, backend: Backend | str = "python",
        has_aux: bool = False, static_argnums=(), static_argnames=(),
    ):
        super().__init__("value_and_grad" if with_value else "grad", f, argnums, has_aux, static_argnums,
                         static_argnames)
        self.with_value = with_value
        self.checkpoint = checkpoint
        self.backend = check_backend(backend)
        self.__name__ = f"{'value_and_grad' if with_value else 'grad'}({name_of(f)})"
        self.__doc__ = getattr(f, "__doc__", None)
        # The signature (the arguments' trees and leaf types) determines the IR,
        # so this key finds compiled code (its variants, by global arrays) without lowering.
        self._by_signature: dict[tuple, list[Compiled]] = {}
        # For arguments that are all plain numbers and arrays, their Python
        # types (an array's dtype and shape) determine the signature, so this
        # cheaper key finds the same variants without flattening (and their entry).
        self._by_python_types: dict[tuple, list[Compiled]] = {}
        self._table = default_table()  # one table for the process; edits bump its version
        code = getattr(f, "__code__", None)
        plain = code is not None and not code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
        static = self.static_argnums or self.static_argnames
        self._arity = code.co_argcount if plain and not static else -1  # called with exactly these: no binding

    def options(self) -> tuple:
        return self.checkpoint, self.backend

    def _compiled(self, signature: Node) -> tuple[Compiled, tuple]:
        """The compiled gradient for these arguments, and the hidden arrays' values."""
        variants = self._variants(signature)
        found = current(variants) if variants else None  # the common case: compiled, no closure made
        if found is not None:
            return found
        return variant(variants, lambda: self._compile(signature)[0])

    def _variants(self, signature: Node) -> list[Compiled]:
        return self._by_signature.setdefault((signature, self._table.version), [])

    def _compile(self, signature: Node) -> tuple[Compiled, tuple]:
        nums = normalise_argnums(self.f, self.argnums, signature)

        def build() -> Compiled:
            module, entry, hidden, results = transformation_module(self, signature, options(self.backend, self.checkpoint))
            code = self.backend.compile(module)
            return Compiled(module, code.function(entry), hidden=hidden, results=results, code=code,
                            enter=lambda plan: code.entry(entry, plan))

        key = (self.f, self.kind, nums, self.single, self.has_aux, signature, self.checkpoint, self.backend)
        return cached(key, build)

    def _recipe(self) -> tuple[Callable, tuple, dict]:
        make = value_and_grad if self.with_value else grad
        return make, (self.f, self.argnums), {
            "has_aux": self.has_aux, "checkpoint": self.checkpoint, "backend": self.backend}

    def __call__(self, *args, **kwargs):
        return self._general(args, kwargs)

    def _general(self, args: tuple, kwargs: dict):
        """A call the entry does not take: the first with these argument types,
        pytrees, keyword arguments, global arrays to read, bad arguments."""
        if kwargs:
            form = keyword_form(self, len(args), kwargs)  # keyword-only arguments (irad/keywords.py)
            if form is not None:
                return form(*args, **kwargs)
        kinds = None
        if not kwargs and len(args) == self._arity:
            kinds = []
            for a in args:
                cls = type(a)
                if cls is _NDARRAY:
                    kinds.append(ArrayKind(a.dtype, a.shape))
                elif cls in SCALARS and (cls is not int or INT64[0] <= a < INT64[1]):
                    kinds.append(cls)
                else:  # a pytree, or a value the flattening path explains
                    kinds = None
                    break
        key = (tuple(kinds), self._table.version) if kinds is not None else None
        variants = self._by_python_types.get(key) if key is not None else None
        compiled = _without_hidden_arrays(variants) if variants else None
        if compiled is None:
            leaves, signature = self._arguments(args, kwargs)
            if key is not None:
                self._by_python_types[key] = self._variants(signature)
            compiled, hidden = self._compiled(signature)
            results = run_compiled(compiled.run, (*leaves, *hidden), compiled.code)
            return unflatten(compiled.results, iter(results))
        # Plain arguments of a compiled signature seen before: from now on its
        # entry takes them (a gradient called once never makes a class or an entry).
        self._enter(key, compiled)
        return unflatten(compiled.results, iter(run_compiled(compiled.run, args, compiled.code)))

    def _enter(self, key: tuple, compiled: Compiled) -> None:
        """Make the entry of these argument types this gradient's `__call__`
        (its class becomes one of its own, once)."""
        entry = compiled.entries.get(key)
        if entry is None:
            names: dict = {}
            plan = EntryPlan(key[0], _results_template(compiled.results, names), _GradFunction._general,
                             self._table, key[1], names, compiled.hidden.guards.check)
            entry = compiled.entries[key] = compiled.enter(plan)
        cls = type(self)
        if cls is _GradFunction:
            cls = self.__class__ = type(cls.__name__, (cls,), {"__module__": cls.__module__})
        cls.__call__ = entry


def _without_hidden_arrays(variants: list[Compiled]) -> Compiled | None:
    """The variant an entry can run: when no variant reads global arrays (which
    only the general path passes), the one whose guards hold now."""
    if any(compiled.hidden.globals for compiled in variants):
        return None
    return next((compiled for compiled in variants if compiled.hidden.guards.holds()), None)


def _results_template(tree: Tree, names: dict) -> str:
    """The expression building `tree` from its leaves `{0}`, `{1}`, ...
    (entry.py): tuples, lists, dicts and None written out, other classes
    through `unflatten`."""
    leaves = iter(range(len(leaf_types(tree))))

    def write(t: Tree) -> str | None:
        if not isinstance(t, Node):
            if isinstance(t, Float32Type):  # numpy's float32 number (pytrees.scalar_leaf)
                names["_e_float32"] = np.float32
                return "_e_float32({%d})" % next(leaves)
            return "{%d}" % next(leaves)
        items = [write(c) for c in t.children]
        if None in items:
            return None
        if t.cls is type(None):
            return "None"
        if t.cls is tuple:
            return "(" + "".join(i + ", " for i in items) + ")"
        if t.cls is list:
            return "[" + ", ".join(items) + "]"
        if t.cls is dict:
            pairs = (repr(k).replace("{", "{{").replace("}", "}}") + ": " + i for k, i in zip(t.keys, items))
            return "{{" + ", ".join(pairs) + "}}"
        return None

    written = write(tree)
    if written is not None:
        return written
    names["_e_unflatten"], names["_e_tree"] = unflatten, tree
    n = len(leaf_types(tree))
    return "_e_unflatten(_e_tree, iter((" + "".join("{%d}, " % k for k in range(n)) + ")))"


@constructor
def grad(
    f: Callable,
    argnums: int | Sequence[int] = 0,
    *,
    has_aux: bool = False,
    checkpoint: bool = False,
    backend: str | Backend | None = None,
    iree_target: str | None = None,
    iree_device: str | None = None,
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
) -> _GradFunction:
    """The gradient of `f` (which returns one float) with respect to `argnums`.

    `f` is any callable: a function, a lambda, a functools.partial, a bound
    method or an object with `__call__`; `argnums` counts its positional
    parameters (a partial's remaining ones), as in JAX. Arguments with
    `__array__` (JAX arrays) are taken as np.asarray takes them.
    An int `argnums` gives one gradient; a tuple gives a tuple, as in jax.grad.
    Arguments may be pytrees (tuples, lists, dicts, NamedTuples, dataclasses of
    floats and arrays): the gradient of one has its structure, with None for
    int and bool leaves. `has_aux=True`: f returns `(value, aux)`, and the call
    returns `(gradient, aux)`; aux (any pytree) is not differentiated.
    `checkpoint=True` makes loops store only each iteration's inputs and
    recompute the body in the reverse sweep (less memory, more time; see
    docs/control-flow.md). `backend` (by default irad.config's `backend`,
    "python" unless set) is a name or an object with options:
    "python" (irad.Python()), "native" (irad.Native(), machine code compiled
    by upstream MLIR 22 and llvmlite) or "iree" (irad.IREE(target="llvm-cpu",
    device=None): code compiled by IREE; target "cuda", "rocm", ... for a
    GPU); see docs/backends.md. `iree_target=` and `iree_device=` are
    deprecated: use backend=irad.IREE(target=..., device=...). Global arrays `f`
    reads are read at each call and never differentiated (see
    docs/python-subset.md).

    `static_argnums` (ints) and `static_argnames` (names) mark arguments as
    static, as in JAX: they are lowered as values known while lowering (a
    shape, an axis, a count, a flag, a string; any hashable value), are never
    differentiated (leave them out of `argnums`), and are part of the compile
    cache key: an equal value reuses the compiled code, a new one compiles
    anew. The gradient of a static argument is not returned.
    """
    backend = check_backend(backend or config.read("backend"), iree_target, iree_device)
    return _GradFunction(f, argnums, False, checkpoint, backend, has_aux, static_argnums, static_argnames)


@constructor
def value_and_grad(
    f: Callable,
    argnums: int | Sequence[int] = 0,
    *,
    has_aux: bool = False,
    checkpoint: bool = False,
    backend: str | Backend | None = None,
    iree_target: str | None = None,
    iree_device: str | None = None,
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
) -> _GradFunction:
    """Like `grad`, returning `(f(*args), gradient)`; with has_aux,
    `((value, aux), gradient)`. `static_argnums`/`static_argnames` as for `grad`."""
    backend = check_backend(backend or config.read("backend"), iree_target, iree_device)
    return _GradFunction(f, argnums, True, checkpoint, backend, has_aux, static_argnums, static_argnames)


# ---- vjp --------------------------------------------------------------------------
@program_call("vjp")
def vjp(
    f: Callable, *primals, has_aux: bool = False, backend: str | Backend | None = None, iree_target: str | None = None,
    iree_device: str | None = None, static_argnums: int | Sequence[int] = (), static_argnames: str | Sequence[str] = (),
):
    """`(out, pullback)`: `pullback(cotangent)` returns a tuple with one
    cotangent per primal, each of that primal's structure.

    The cotangent has the structure of `out` (a number, an array, or a pytree
    of them); its entries for int or bool outputs are ignored. Int and bool
    primals (or leaves) get None. With `has_aux=True`, f returns `(out, aux)`
    and vjp returns `(out, pullback, aux)`; aux is not differentiated.
    `backend` as for `grad`. Static primals (`static_argnums`,
    `static_argnames`, as for `grad`) get None from the pullback.
    """
    backend = check_backend(backend or config.read("backend"), iree_target, iree_device)
    static = normalise_static(f, static_argnums, static_argnames)
    leaves, signature = arguments(f, primals, None, *static)
    compiled, hidden = vjp_compiled(f, signature, has_aux, backend)
    out_tree, aux_tree = compiled.results.children if has_aux else (compiled.results, None)
    # the residuals the pullback gets hold what the global arrays were now
    results = run_compiled(compiled.run[0], (*leaves, *hidden), compiled.code)
    n_out = len(leaf_types(out_tree))
    n = len(compiled.out_types)
    outputs, aux, residuals = results[:n_out], results[n_out:n], results[n:]
    pullback = Pullback(f, has_aux, backend, leaves, signature, compiled, residuals, len(primals))
    out = unflatten(out_tree, iter(outputs))
    if has_aux:
        return out, pullback, unflatten(aux_tree, iter(aux))
    return out, pullback


class Pullback:
    """vjp's pullback: `pullback(cotangent)` runs the compiled reverse sweep
    on the residuals of the forward one.

    It pickles as the vjp request and the primals (their arrays copied when
    vjp ran, as the residuals are), and the receiving process runs vjp
    again. Not when the function reads global arrays: the receiver would
    read its own."""

    __slots__ = ("f", "has_aux", "backend", "primals", "signature", "compiled", "residuals", "given")

    def __init__(self, f: Callable, has_aux: bool, backend: Backend, leaves: list, signature: Node,
                 compiled: Compiled, residuals: tuple, given: int):
        self.f, self.has_aux, self.backend, self.signature = f, has_aux, backend, signature
        self.primals = [a.copy() if type(a) is _NDARRAY else a for a in leaves]
        self.compiled, self.residuals = compiled, residuals
        # the primals vjp was given: one cotangent each (the defaults after them get none, as in JAX)
        self.given = min(given, len(signature.children))

    def wait_optimised(self, timeout: float | None = None) -> bool:
        """As a gradient's `wait_optimised`, for the code this pullback runs."""
        return self.compiled.code.wait_optimised(timeout)

    def __call__(self, cotangent):
        compiled = self.compiled
        out_tree = compiled.results.children[0] if self.has_aux else compiled.results
        cts = check_tree(self.f, "the cotangent", cotangent, out_tree, skip_inactive=True)
        float_cts = [c for c, t in zip(cts, leaf_types(out_tree)) if is_differentiable(t)]
        grads = run_compiled(compiled.run[1], (*self.residuals, *float_cts), compiled.code)
        active = [i for i, t in enumerate(leaf_types(self.signature)) if is_differentiable(t)]
        by_leaf = dict(zip(active, grads))
        return tuple(argument_trees(self.signature, range(self.given), by_leaf))

    def __reduce__(self):
        if self.compiled.hidden.globals:
            raise UnsupportedError(
                f"the pullback of {name_of(self.f)} does not pickle: {name_of(self.f)} reads global arrays, "
                "which a receiving process would read as its own\n"
                "  hint: pass those arrays as arguments, or pickle irad.vjp's function and primals and call vjp there"
            )
        children = self.signature.children
        primals = argument_trees(self.signature, range(self.given), dict(enumerate(self.primals)))
        static = tuple(i for i, c in enumerate(children[:self.given]) if isinstance(c, StaticShape))  # by value
        primals = [c.obj if isinstance(c, StaticShape) else p for c, p in zip(children, primals)]
        return reduced(_pullback_at, (self.f, tuple(primals), self.has_aux, self.backend, static), {})


def _pullback_at(f: Callable, primals: tuple, has_aux: bool, backend: Backend, static_argnums=()) -> Pullback:
    """A pickled pullback, made again by vjp."""
    return vjp(f, *primals, has_aux=has_aux, backend=backend, static_argnums=static_argnums)[1]


def vjp_compiled(f: Callable, signature: Node, has_aux: bool, backend: Backend) -> tuple[Compiled, tuple]:
    """The compiled (augmented primal, pullback) of f, and the hidden arrays'
    values. Its results: the tree of f's results, or (out, aux)."""

    def build() -> Compiled:
        module, augmented, pullback, out_tree, hidden, aux_tree = vjp_module(f, signature, has_aux, options(backend))
        code = backend.compile(module)
        pair = (code.function(augmented), code.function(pullback))
        results = tuple_tree([out_tree, aux_tree]) if has_aux else out_tree
        return Compiled(module, pair, tuple(leaf_types(results)), hidden, results, code)

    return cached((f, "vjp", has_aux, signature, backend), build)


# ---- jvp --------------------------------------------------------------------------
@program_call("jvp")
def jvp(
    f: Callable,
    primals: Sequence,
    tangents: Sequence,
    argnums=None,
    *,
    has_aux: bool = False,
    backend: str | Backend | None = None,
    iree_target: str | None = None,
    iree_device: str | None = None,
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
):
    """`(f(*primals), tangent_out)`: forward mode along `tangents`.

    Without `argnums`, `tangents` has one entry per primal, of its structure
    (None at int and bool leaves, or for a primal without float leaves). With
    `argnums`, one tangent per entry of `argnums`. `tangent_out` has the
    structure of the output, with None for int or bool results. With
    `has_aux=True`, f returns `(out, aux)` and jvp returns `(out,
    tangent_out, aux)`, as jax.jvp does; aux is not differentiated.
    `backend` as for `grad`. A static primal (`static_argnums`,
    `static_argnames`, as for `grad`) takes None as its tangent.
    """
    backend = check_backend(backend or config.read("backend"), iree_target, iree_device)
    for what, given_values in (("primals", primals), ("tangents", tangents)):
        if not isinstance(given_values, (tuple, list)):
            raise error_at(
                f, f"jvp of {name_of(f)} takes its {what} as a tuple, got {given_values!r}\n"
                f"  hint: irad.jvp(f, (x,), (dx,))"
            )
    leaves, signature = arguments(f, tuple(primals), None, *normalise_static(f, static_argnums, static_argnames))
    tangents = tuple(tangents)
    if argnums is None:  # the primals given (the defaults after them have no tangent, as in JAX)
        nums = tuple(range(min(len(primals), len(signature.children))))
        if len(tangents) != len(nums):
            raise error_at(
                f, f"jvp of {name_of(f)} takes one tangent per primal ({len(nums)}), "
                f"got {len(tangents)}\n  hint: None for int or bool arguments"
            )
    else:
        nums = normalise_argnums(f, argnums, signature)
        if len(tangents) != len(nums):
            raise error_at(f, f"jvp of {name_of(f)} takes one tangent per argnum ({len(nums)}), got {len(tangents)}")
    spans = ranges(signature)
    given = {}
    for a, t in zip(nums, tangents):
        tree = signature.children[a]
        if t is None and not any(is_differentiable(u) for u in leaf_types(tree)):
            continue  # an argument without float leaves, or a static one
        if isinstance(tree, StaticShape):
            raise error_at(f, f"argument {a} of {name_of(f)} is static: its tangent must be None")
        values = check_tree(f, f"the tangent of argument {a}", t, tree, skip_inactive=False)
        given.update((i, v) for i, v in zip(spans[a], values) if v is not None)
    wrt = tuple(sorted(given))
    compiled, hidden = jvp_compiled(f, signature, wrt, backend)
    results = run_compiled(compiled.run, (*leaves, *(given[i] for i in wrt), *hidden), compiled.code)
    n = len(compiled.out_types)
    outputs, tangent_results = results[:n], iter(results[n:])
    tangent_out = [next(tangent_results) if is_differentiable(t) else None for t in compiled.out_types]
    if not has_aux:
        return unflatten(compiled.results, iter(outputs)), unflatten(compiled.results, iter(tangent_out))
    out_tree, aux_tree = split_aux(f, compiled.results)
    n_out = len(leaf_types(out_tree))
    return (unflatten(out_tree, iter(outputs[:n_out])), unflatten(out_tree, iter(tangent_out[:n_out])),
            unflatten(aux_tree, iter(outputs[n_out:])))


def jvp_compiled(f: Callable, signature: Node, wrt: tuple[int, ...], backend: Backend) -> tuple[Compiled, tuple]:
    """The compiled jvp of f along the leaves `wrt` (increasing), and the hidden arrays' values."""

    def build() -> Compiled:
        module, entry, results, hidden = jvp_module(f, signature, wrt, options(backend))
        code = backend.compile(module)
        return Compiled(module, code.function(entry), tuple(leaf_types(results)), hidden, results, code)

    return cached((f, "jvp", wrt, signature, backend), build)


__all__ = ["Pullback", "grad", "jvp", "lower", "value_and_grad", "vjp"]
