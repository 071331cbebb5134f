"""Lowering of Python functions (their AST) to an xDSL module.

Every Python function reached from the entry point becomes its own `func.func`,
specialised once per argument-type signature; calls between them stay
`func.call`, so the call graph survives lowering and the differentiation pass
can consult the rule table at each call.

A FunctionLowering owns one function: its current control-flow path
(control_state.Path: variables, jumps taken, array sharing), its emitter, its
parameters (entry) and its return (exit), its globals, and the values of
values.py's kinds it makes (`as_number`, `static_number`, `runtime_values`,
...). `statement` and `expr` route each node to the collaborator whose kind it
is: simple statements to Statements (statements.py), expressions to
Expressions (expressions.py), branches, loops and jumps to ControlFlow
(control_flow.py), calls to Calls (calls.py), `for` and comprehensions to
Iteration (iteration.py), lists to Lists (lists.py), numpy to ArrayLowering
(arrays.py).
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import functools
import inspect
import numbers
import re
import types
import warnings
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import arith, cf, func
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr
from xdsl.ir import Attribute, Block, SSAValue

from irad.base.errors import IradWarning, UnsupportedError
from irad.base.recursion import deep_recursion
from irad.frontend.arrays import ArrayLowering, lower_wrapper_body
from irad.frontend.callables import (
    SELF, CallShape, Closure, ClosureCode, Keywords, Partial, constant_key, flatten, local_names, rebuild,
    static_argument,
)
from irad.frontend.calls import Calls, closure_signature
from irad.frontend.callable_entries import (
    entry_function, needs_entry, parameter_names, positional_parameters, underlying_function,
)
from irad.frontend.iteration import ITERABLES, Iteration
from irad.frontend.lists import BufferAppend, ListMethod, Lists
from irad.ir import builder, printing
from irad.ir.symbols import fresh_symbol, value_name
from irad.ir.metadata import NAME, STATIC, static_attribute
from irad.frontend.control_flow import ControlFlow
from irad.frontend.expressions import Expressions
from irad.frontend.statements import Statements
from irad.frontend.control_state import NOT_RETURNED, ControlState, Path
from irad.frontend import held_ints, integers, number_joins, narrow_ints, numpy_scalars, primitives
from irad.frontend.emitter import Emitter
from irad.frontend.globals import CLOSURE, DEFAULT, Global, Guards, HiddenArguments, HiddenGlobals, is_hidden
from irad.frontend.returned_functions import returned_leaves
from irad.frontend.runtime_origins import runtime_origin
from irad.frontend.numpy_table import NUMPY, library_entries
from irad.base import pytrees
from irad.base.pytrees import Node, Tree, tuple_tree
from irad.frontend.values import (
    Kind,
    ListValue,
    MappingValue,
    Method,
    RecordValue,
    Static,
    Value,
    ir_name,
    value_kind,
    make_value,
    value_node,
)
from irad.frontend.transformations import (
    JVP, VMAP, Transformation, element_signature, jvp_entry, lower_transformation, lower_vmap,
)
from irad.frontend.library import INT_RANGES, OPS, describe_callable, python_reference
from irad.linalg import is_primitive
from irad.rules.keys import IMPLEMENTED_IN_PYTHON, target_key
from irad.frontend.source import (
    FunctionSource,
    NoSourceError,
    call_site,
    def_location,
    name_of,
    parse_function,
)
from irad.ir.types import F32, F64, I64, describe, is_float, is_int, refusal, type_of_value
from irad.ir.isa import isa

COMPREHENSIONS = (ast.ListComp, ast.GeneratorExp, ast.DictComp)  # lowered by iteration.py





class ModuleLowering:
    """Lowers a Python entry function and everything it calls into one module.

    With a rule table, a call to a library function that has entries in the
    table becomes a call to a small function wrapping the op, so the pass
    meets a call op where it consults the table. `symbols_by_key` names every
    function by its rule-table key (used for modules holding a rule).

    Global arrays the functions read become hidden arguments after their own
    (irad/frontend/globals.py); `globals_of` gives a function's, in order.
    A rule's module has no caller to pass them (`hidden_globals=False`).
    """

    def __init__(self, table=None, symbols_by_key: bool = False, hidden_globals: bool = True) -> None:
        self.module = ModuleOp([])
        self.table = table
        self.symbols_by_key = symbols_by_key
        self.hidden_globals = hidden_globals
        # what the module bakes in of the values it reads from outside, checked at each call
        # (globals.py); a rule's module is built once per signature, with no call to check it
        self.guards = Guards() if hidden_globals else None
        self._globals: dict[str, tuple[Global, ...]] = {}  # function symbol -> its hidden globals
        self._results: dict[str, Tree] = {}  # function symbol -> the tree of its results
        # function symbol -> per result, is it a new array of its own (views.Views.own_results)
        self.own_results: dict[str, tuple[bool, ...]] = {}
        self.held_ints: dict[str, held_ints.Summary] = {}  # function symbol -> its ints held as floats
        self._functions: dict[tuple[object, tuple[Attribute, ...]], func.FuncOp] = {}
        # functions being lowered -> (symbol, input types, assumed result types) of
        # the declaration that stands in for recursive calls, made on the first one
        self._in_progress: dict[tuple[object, tuple[Attribute, ...]], tuple | func.FuncOp] = {}
        # the entry's numbers' kinds, by (fn, its shape without them): a recursive call
        # passing numbers of the same kinds calls the entry itself (Calls.call)
        self.entry_kinds: dict[tuple[object, CallShape], tuple] = {}
        self._called_recursively: set[tuple[object, tuple[Attribute, ...]]] = set()
        self._lowering: dict[object, int] = {}  # function -> how many of its specialisations are being lowered
        # function symbol -> per result, the int or bool it is on every path (None: a run-time value)
        self.known_results: dict[str, tuple] = {}
        self._symbols: set[str] = set()
        self.names: dict[str, str] = {}  # symbol -> the name before `_1`, `_2`, ... (messages)
        self._prints: dict[tuple, str] = {}
        self._signatures: dict[object, inspect.Signature] = {}
        # (id of a partial, bound method or callable object, arity) -> (it, its entry function, the source)
        self._entries: dict[tuple[int, int], tuple[object, types.FunctionType, FunctionSource]] = {}

    def signature(self, fn) -> inspect.Signature:
        """`fn`'s own signature (not a wrapped function's), read once per module:
        its call sites and its lowering each bind arguments with it."""
        try:
            found = self._signatures.get(fn)
        except TypeError:  # an unhashable callable
            return inspect.signature(fn, follow_wrapped=False)
        if found is None:
            found = self._signatures[fn] = inspect.signature(fn, follow_wrapped=False)
        return found

    def is_lowering(self, fn) -> bool:
        """Is a specialisation of `fn` being lowered (a call to it now is recursive)?"""
        return IMPLEMENTED_IN_PYTHON.get(fn, fn) in self._lowering

    def function(
        self, fn, shape: CallShape | Node | tuple[Attribute, ...], call_site: str | None = None, origin=None
    ) -> func.FuncOp:
        """The func.func for `fn` specialised to a call's shape (or the tree of
        its positional arguments, or their IR types), lowering it if needed. Its
        arguments are the shape's run-time leaves (callables.py); `origin` is
        the call that asked for it (calls.CallOrigin), None for the entry."""
        shape = CallShape.of(shape)
        entry = None
        if needs_entry(fn) and not self._library(fn):  # a partial, a bound method, ...: an entry calls it
            key = (id(fn), len(shape.args))
            entry = self._entries.get(key)
            if entry is None:
                entry = self._entries[key] = (fn, *entry_function(fn, len(shape.args)))
            fn = entry[1]
        fn = IMPLEMENTED_IN_PYTHON.get(fn, fn)
        if shape.kinds:
            self.entry_kinds[(fn, dataclasses.replace(shape, kinds=()))] = shape.kinds
        arg_types = shape.leaf_types()
        key = (fn, shape)
        if key in self._functions:
            return self._functions[key]
        if key in self._in_progress:
            # Recursion: the call sees the declaration with the result types
            # assumed so far; `_lower_recursive` checks them afterwards.
            self._called_recursively.add(key)
            declaration = self._in_progress[key]
            if not isinstance(declaration, func.FuncOp):
                declaration = self._in_progress[key] = func.FuncOp.external(*declaration)
            return declaration
        try:
            if isinstance(fn, ClosureCode):
                op, source = None, fn.source
            elif fn in OPS or fn in NUMPY:
                op = self._library_wrapper(fn, arg_types)
            elif is_primitive(fn):  # irad/linalg.py: called, not lowered
                name, key = self.unique_symbol(target_key(fn)), target_key(fn)
                op = primitives.declaration(fn, name, arg_types)
                if name != key:
                    op.attributes["irad.target"] = StringAttr(key)
            elif isinstance(fn, Transformation):
                op = self._transformation(fn, shape, call_site)
            elif not isinstance(fn, types.FunctionType) and callable(fn) and self.has_rules(fn):
                op = self._external(fn, arg_types)
            else:
                op = None
                source = entry[2] if entry is not None else parse_function(fn)
        except NoSourceError as exc:
            if call_site is None:
                raise
            raise UnsupportedError(f"{call_site}: {exc}") from None
        if op is None:
            name, target = self.symbol_for(fn)
            lowered_before = len(self._functions)
            try:
                op = self._lower_recursive(key, source, name, target, origin)
            except UnsupportedError as exc:
                if getattr(fn, "__wrapped__", None) is None or getattr(exc, "function", None) is not fn:
                    raise
                # a decorator's wrapper irad cannot lower: the function it wraps instead
                self._forget_since(lowered_before)
                self._symbols.discard(name)
                return self._unwrapped(fn, key, exc, call_site)
        self._functions[key] = op
        self.module.body.block.add_op(op)
        return op

    def _library(self, fn) -> bool:
        """Is `fn` a callable irad knows by name (scipy.stats.norm.cdf, a bound
        method, among them), or one the rule table covers?"""
        try:
            fn = IMPLEMENTED_IN_PYTHON.get(fn, fn)
            return fn in OPS or fn in NUMPY or is_primitive(fn) or self.has_rules(fn)
        except TypeError:  # unhashable
            return False

    def _unwrapped(self, wrapper, key, reason: UnsupportedError, call_site) -> func.FuncOp:
        wrapped = inspect.unwrap(wrapper)
        first_line = str(reason).splitlines()[0]
        warnings.warn(
            f"{def_location(wrapper)}irad cannot lower the wrapper {wrapper.__code__.co_qualname} "
            f"that a decorator put around {describe_callable(wrapped)} ({first_line}); it "
            "differentiates the wrapped function (its __wrapped__) instead, without what the "
            "wrapper adds",
            IradWarning, stacklevel=2,
        )
        op = self.function(wrapped, key[1], call_site)
        self._functions[key] = op
        return op

    def print_declaration(self, arg_types: list[Attribute], text: str) -> str:
        """The symbol of the declaration one `print` statement calls (irad/ir/printing.py)."""
        key = (tuple(arg_types), text)
        if key not in self._prints:
            op = printing.declaration(self.unique_symbol("print"), arg_types, text)
            op.sym_visibility = StringAttr("private")
            self.module.body.block.add_op(op)
            self._prints[key] = op.sym_name.data
        return self._prints[key]

    def has_rules(self, fn) -> bool:
        return self.table is not None and self.table.has_entries(target_key(fn))

    def globals_of(self, op: func.FuncOp) -> tuple[Global, ...]:
        """The globals `op` takes as hidden arguments, after its own, in order."""
        return self._globals.get(op.sym_name.data, ())

    def results_of(self, op: func.FuncOp) -> Tree:
        """The tree of `op`'s results: recorded for functions lowered from Python
        (a dict, nested tuples, ...); otherwise a number or a flat tuple."""
        found = self._results.get(op.sym_name.data)
        if found is not None:
            return found
        outputs = op.function_type.outputs.data
        return outputs[0] if len(outputs) == 1 else tuple_tree(outputs) if outputs else pytrees.NONE

    def _library_wrapper(self, fn, arg_types: tuple[Attribute, ...]) -> func.FuncOp:
        """A function whose body is the library op, so calls to `fn` meet the table."""
        block = Block(arg_types=arg_types)
        if fn in NUMPY:
            result = lower_wrapper_body(self, fn, Emitter(block), block.args)
        else:
            result = OPS[fn][1](Emitter(block), block.args)
        results = list(result) if isinstance(result, tuple) else [result]  # np.split, np.linalg.eigh: several arrays
        block.add_op(func.ReturnOp(*results))
        key = target_key(fn)
        name = self.unique_symbol(key)
        op = builder.private_function(name, block, [r.type for r in results])
        if name != key:
            op.attributes["irad.target"] = StringAttr(key)
        return op

    def _transformation(self, t: Transformation, shape: CallShape, call_site: str | None) -> func.FuncOp:
        """The entry of a transformation (irad.grad(f), ...) for this call: f
        lowered into this module, and a function asking for its derivative
        with request ops (irad/frontend/transformations.py)."""
        if t.kind == JVP:  # irad.jvp(f, primals, tangents) in a program: f's arguments, then the tangents
            n = len(shape.args) // 2
            primal_shape = dataclasses.replace(shape, args=shape.args[:n])
            primal = self.function(t.f, primal_shape, call_site)
            tangents = pytrees.leaf_types(tuple_tree(shape.args[n:]))
            fixed = len(primal_shape.leaf_types()) - len(tangents)  # a closure's captured values
            name = self.unique_symbol(f"{primal.sym_name.data}.jvp")
            entry, tree = jvp_entry(t, primal, self.results_of(primal), fixed, tangents, name)
            self._globals[entry.sym_name.data] = self.globals_of(primal)
            self._results[entry.sym_name.data] = tree
            return entry
        signature = shape.positional_tree()
        if signature is None:
            where = f"{call_site}: " if call_site else ""
            raise UnsupportedError(
                f"{where}{describe_callable(t)} takes numbers, arrays or containers of them, positionally\n"
                "  hint: pass its arguments by position, as values"
            )
        names = parameter_names(t.f, len(signature.children))
        if t.kind == VMAP:  # f lowered for one element of the batch
            element, axes, size = element_signature(t, signature, names)
            primal = self.function(t.f, CallShape.of(element), call_site)
            entry, tree = lower_vmap(t, primal, self.results_of(primal), signature, axes, size, self.unique_symbol)
        else:
            primal = self.function(t.f, shape, call_site)
            entry, tree = lower_transformation(t, primal, self.results_of(primal), signature, names, self.unique_symbol)
        self._globals[entry.sym_name.data] = self.globals_of(primal)
        self._results[entry.sym_name.data] = tree
        return entry

    def _external(self, fn, arg_types: tuple[Attribute, ...]) -> func.FuncOp:
        """A declaration the backend binds to the Python callable `fn`.

        Without source its result type is unknown; irad takes it to be one
        float (f64), as for math functions.
        """
        key = target_key(fn)
        name = self.unique_symbol(key)
        op = func.FuncOp.external(name, list(arg_types), [F64])
        op.attributes["irad.python"] = StringAttr(python_reference(fn))
        if name != key:
            op.attributes["irad.target"] = StringAttr(key)
        return op
    def _lower_recursive(self, key, source, name: str, target: str, origin=None) -> func.FuncOp:
        """Lower a function; if it calls itself (directly or through others), lower
        it again until the result types and the hidden globals its recursive calls
        assumed are its own. The globals only grow (the assumed ones come first,
        in order), so that part stops; type changes get three rounds."""
        assumed: Tree = F64  # numeric code mostly returns one float
        hidden: tuple[tuple[Global, Attribute], ...] = ()  # assumed hidden globals and types
        arg_types = key[1].leaf_types()
        type_rounds = 0
        while type_rounds < 3:
            inputs = [*arg_types, *(t for _, t in hidden)]
            self._in_progress[key] = (name, inputs, pytrees.leaf_types(assumed))  # most functions do not recurse
            self._globals[name] = tuple(g for g, _ in hidden)
            self._results[name] = assumed
            self._called_recursively.discard(key)
            lowered_before = len(self._functions)
            lowering = FunctionLowering(self, source, arg_types, name, target, key[1], hidden, origin)
            self._lowering[key[0]] = self._lowering.get(key[0], 0) + 1
            try:
                op = lowering.lower()
            except UnsupportedError:
                # the recursive calls' assumed result may be what failed (a tuple
                # unpacked from an assumed float): retry with what a return gave
                learned = lowering.first_return_tree
                if key not in self._called_recursively or learned in (None, assumed):
                    raise
                assumed = learned
                type_rounds += 1
                self._forget_since(lowered_before)
                continue
            finally:
                del self._in_progress[key]
                self._lowering[key[0]] -= 1
                if not self._lowering[key[0]]:
                    del self._lowering[key[0]]
            actual = lowering.result_tree
            found = lowering.hidden.items()
            self._globals[name] = tuple(g for g, _ in found)
            self._results[name] = actual
            self.known_results[name] = lowering.known_results
            if key not in self._called_recursively or (actual == assumed and found == hidden):
                return op
            type_rounds += actual != assumed
            assumed, hidden = actual, found
            # functions lowered meanwhile may call this one with the wrong type
            # or without its globals
            self._forget_since(lowered_before)
        raise UnsupportedError(
            f"{source.location(source.tree)}: the result types of the recursive function "
            f"{describe_callable(source.fn)} depend on its recursive calls\n"
            "  hint: make every return give the same type (e.g. return floats everywhere)"
        )

    def _forget_since(self, count: int) -> None:
        """Forget the functions lowered after the first `count` (in order: a
        count, not a copy of the keys, marks where a lowering started, which
        would be quadratic in the number of functions)."""
        stale = [self._functions.pop(key) for key in list(self._functions)[count:]]
        for op in stale:  # a summary kept by a caller reads the function's IR (held_ints.Summary)
            summary = self.held_ints.get(op.sym_name.data)
            if summary is not None:
                summary.settle()
        for op in stale:
            self._forget(op)

    def _forget(self, op: func.FuncOp) -> None:
        self._symbols.discard(op.sym_name.data)
        self._globals.pop(op.sym_name.data, None)
        self._results.pop(op.sym_name.data, None)
        self.known_results.pop(op.sym_name.data, None)
        self.own_results.pop(op.sym_name.data, None)
        op.detach()
        op.erase(safe_erase=False)

    def symbol_for(self, fn) -> tuple[str, str]:
        """(unique symbol name, rule-table key) for a Python function."""
        if isinstance(fn, ClosureCode):  # no rule can name a lambda or nested def
            name = self.unique_symbol(fn.name)
            self.names[name] = fn.name
            return name, name
        key = target_key(fn)
        by_key = self.symbols_by_key or (fn.__module__ or "").startswith("irad.")
        base = key if by_key else fn.__name__.replace("<lambda>", "lambda")
        name = self.unique_symbol(base)
        self.names[name] = base
        return name, key

    def unique_symbol(self, base: str) -> str:
        name = fresh_symbol(base, self._symbols)
        self._symbols.add(name)
        return name


def lower_function(
    fn, signature: Node | tuple[Attribute, ...], table=None
) -> tuple[ModuleOp, str, HiddenGlobals, Tree]:
    """Lower `fn` for `signature` (the tree of its arguments, or their IR types).
    Returns the module, the entry's symbol name, the global arrays the entry
    takes after the signature's leaves (hidden arguments) and the tree of its
    results.

    `table` is the rule table the module will be differentiated against.
    """
    library_entries(fn)  # an entry point of scipy's: its numpy-table entries first
    lowering = ModuleLowering(table)
    try:
        with deep_recursion():  # lowering recurses once per nested helper call
            entry = lowering.function(fn, signature)
    except RecursionError:
        raise UnsupportedError(
            f"the calls below {describe_callable(fn)} nest too deeply for irad's frontend "
            "(several thousand levels, or a long chain of nested expressions)\n"
            "  hint: flatten the call chain or split very long expressions"
        ) from None
    entry.sym_visibility = None  # the entry point is public, helpers private
    held_ints.strip(lowering.module)
    narrow_ints.check(lowering.module)
    hidden = HiddenGlobals.now(lowering.globals_of(entry), describe_callable(fn), lowering.guards.freeze())
    return lowering.module, entry.sym_name.data, hidden, lowering.results_of(entry)


def as_signature(signature: Node | tuple[Attribute, ...]) -> Node:
    """The tree of a call's arguments; IR types alone mean one leaf per argument."""
    return signature if isinstance(signature, Node) else tuple_tree(signature)


def bind_arguments(fn, args: tuple, kwargs: dict) -> tuple:
    """All arguments of a call to the entry function, positionally, defaults
    filled in: one per positional parameter of `fn` (of the function a
    transformation differentiates; a partial's remaining ones, a method's
    without `self`), then those its `*args` takes. A call Python would refuse
    is an error at the caller's line naming what is wrong."""
    target = fn
    while isinstance(target, Transformation):  # the function it differentiates
        target = target.f
    code = getattr(target, "__code__", None) if isinstance(target, types.FunctionType) else None
    if code is not None and not kwargs and len(args) == code.co_argcount and not code.co_kwonlyargcount \
            and not code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
        return tuple(args)
    name = getattr(target, "__qualname__", None) or name_of(target)
    try:
        if not (code is not None or needs_entry(target)):  # np.sin, math.exp, ...: lowered as called
            raise ValueError(target)
        signature = inspect.signature(target)
    except (TypeError, ValueError):  # no signature Python can give: lowering reports what it cannot handle
        if kwargs:
            raise _call_error(target, f"{name}() is given the keyword argument '{next(iter(kwargs))}'",
                              "pass its arguments by position") from None
        return tuple(args)
    takes_any = any(p.kind == p.VAR_KEYWORD for p in signature.parameters.values())
    unexpected = [k for k in kwargs if k not in signature.parameters and not takes_any]
    try:
        if unexpected:  # Python names it first, before a missing argument
            raise TypeError(f"got an unexpected keyword argument '{unexpected[0]}'")
        bound = signature.bind(*args, **kwargs)
    except TypeError as exc:
        missing = re.fullmatch(r"missing a required argument: '(\w+)'", str(exc))
        param = signature.parameters.get(missing[1]) if missing else None
        if param is not None and param.kind == param.KEYWORD_ONLY:  # a keyword cannot pass it here
            short = getattr(underlying_function(target), '__name__', 'f')
            hint = (f"pass it by keyword, {short}(..., {param.name}=...), or (irad.vjp, irad.jvp, irad.vmap) "
                    f"bind it first: functools.partial({short}, {param.name}=...)")
        else:
            hint = f"call it as {name}{_shown(signature)}"
        raise _call_error(target, f"{name}() {_why(exc, signature, args)}", hint) from None
    positional = []  # (value, given by the call) per positional parameter
    out = []
    for param in signature.parameters.values():
        if param.kind in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
            given = param.name in bound.arguments
            positional.append((bound.arguments[param.name] if given else param.default, given))
        elif param.kind == param.VAR_POSITIONAL:
            out = list(bound.arguments.get(param.name, ()))
        elif param.name in bound.arguments:  # a keyword-only argument, or one **kwargs takes
            key = param.name if param.kind == param.KEYWORD_ONLY else next(iter(bound.arguments[param.name]))
            raise _call_error(
                target, f"{name}() is given the keyword argument '{key}', which only a keyword can pass: "
                "irad passes a transformation's arguments by position",
                f"bind it first: functools.partial({getattr(underlying_function(target), '__name__', 'f')}, "
                f"{key}=...), or make it a positional parameter",
            )
    # the defaults after the last argument the call gives are arguments too while
    # they are float data; from an int, a bool, a function or an object on, the
    # callee takes its own, known while lowering, as JAX leaves an unpassed default
    # a Python value (`def loss(p, x, n_heads=2)`: n_heads may set a shape)
    last = max((i + 1 for i, (_, given) in enumerate(positional) if given), default=0)
    n = last
    while n < len(positional) and is_float_data(positional[n][0]):
        n += 1
    return (*(value for value, _ in positional[:n]), *out)


def is_data(value) -> bool:
    """A number, an array or a container of them: a default the entry takes as
    an argument; a keyword argument that is a run-time value (irad/keywords.py)."""
    try:
        pytrees.flatten(value, "", type_of_value)
    except pytrees.BadLeaf:
        return False
    return True


def is_float_data(value) -> bool:
    """Data without a Python int or bool in it: a default the entry takes as a
    run-time argument (ints and bools set shapes, trip counts and branches)."""
    if not is_data(value):
        return False
    leaves, _ = pytrees.flatten(value, "", type_of_value)
    return not any(isinstance(leaf, (numbers.Integral, np.bool_)) for leaf in leaves)


def _call_error(fn, message: str, hint: str) -> UnsupportedError:
    """An error about a call of `fn` at the caller's line (the first frame outside irad)."""
    defined = def_location(underlying_function(fn) or fn)
    return UnsupportedError(
        f"{call_site()}{message}" + (f"\n  ({describe_callable(fn)} is defined at {defined[:-2]})" if defined else "")
        + f"\n  hint: {hint}"
    )


def _why(exc: TypeError, signature: inspect.Signature, args: tuple) -> str:
    """Python's words for a call `signature` refuses (inspect's, with counts)."""
    text = str(exc)
    if text == "too many positional arguments":
        takes = [p for p in signature.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        return f"takes {len(takes)} positional argument{'s' if len(takes) != 1 else ''} but {len(args)} were given"
    if text.startswith("missing a required argument: "):
        return "missing a required " + text[len("missing a required "):]
    return text


def _shown(signature: inspect.Signature) -> str:
    return str(signature.replace(return_annotation=inspect.Signature.empty))


def flatten_arguments(fn, args: tuple, where: Callable[[], str] | None = None,
                      static: frozenset[int] = frozenset()) -> tuple[list, Node]:
    """The leaves of example arguments (pytrees) and the tree of the call: what
    the function is specialised for. A value irad cannot take is an error
    naming the function, the argument and the path to the value, prefixed by
    `where()` (the caller's file:line). The arguments at the positions
    `static` are values known while lowering (callables.static_argument)."""
    leaves: list = []
    trees = []
    names = parameter_names(fn, len(args))
    for i, value in enumerate(args):
        if i in static:
            try:
                trees.append(static_argument(value))
            except TypeError:
                raise UnsupportedError(
                    f"{where() if where else ''}{describe_callable(fn)} cannot take argument {i} ('{names[i]}') "
                    f"as a static argument: it is {pytrees.describe_object(value)}, which is not hashable\n"
                    "  hint: pass a tuple for a list, a NamedTuple or frozen dataclass for a dict, or leave it "
                    "out of static_argnums and static_argnames"
                ) from None
            continue
        try:
            found, tree = pytrees.flatten(value, names[i], type_of_value)
        except pytrees.BadLeaf as bad:
            defined = def_location(fn)
            refused = refusal(bad.obj)  # a subclass or an int dtype: its own reason and rewrite
            raise UnsupportedError(
                f"{where() if where else ''}{describe_callable(fn)} cannot take argument {i} ('{names[i]}'): "
                + (f"{bad.path} is {refused[0]}" if refused else bad.describe())
                + (f"\n  {describe_callable(fn)} is defined at {defined[:-2]}" if defined else "")
                + f"\n  hint: {refused[1] if refused else 'irad takes ' + pytrees.ACCEPTED}"
            ) from None
        leaves += found
        trees.append(tree)
    kinds = tuple(numpy_scalars.of_argument(leaf) for leaf in leaves)
    return leaves, pytrees.Arguments(tuple, tuple(range(len(trees))), tuple(trees), kinds=kinds)


def signature_of(fn, args: tuple) -> Node:
    """The tree of example arguments, with an error naming a bad one."""
    return flatten_arguments(fn, args)[1]


class FunctionLowering:
    """Lowers one Python function body to a func.func."""

    def __init__(
        self, owner: ModuleLowering, src: FunctionSource, arg_types, name: str = "", target: str = "",
        shape: CallShape | None = None, hidden: tuple = (), origin=None,
    ):
        self.owner = owner
        self.shape = shape
        self.origin = origin  # the call it was lowered for (calls.CallOrigin); None: the entry
        self.name_and_target = (name, target)
        self.src = src
        self.fn = src.fn
        self.arg_types = arg_types
        self.path = Path()  # variables, jumps taken and array sharing (control_state.py)
        # per expression being evaluated, the containers its evaluated parts hold (or None)
        self.pending: list[list | None] = []
        self.block = Block(arg_types=arg_types)
        if shape is not None and shape.kinds:  # the entry's numbers: numpy's or Python's
            numpy_scalars.mark_parameters(self.block, shape.kinds)
        # global arrays read at each call: block arguments after the parameters
        self.hidden = HiddenArguments(self.block, hidden, owner.hidden_globals)
        self.em = Emitter(self.block)
        self.arrays = ArrayLowering(self)  # numpy arrays: irad/frontend/arrays.py
        self.control_flow = ControlFlow(self)  # if, while, jumps; loops' carried state: control_flow.py
        self.calls = Calls(self)  # calls and their specialisation, functions as values: calls.py
        self.iteration = Iteration(self)  # for, comprehensions, sum(), range/zip/enumerate: iteration.py
        self.lists = Lists(self)  # unpacking, lists that change: lists.py
        self.expressions = Expressions(self)  # names, operators, subscripts, displays: expressions.py
        self.statements = Statements(self)  # assignments, expression statements, with, assert: statements.py
        # the tree of the first `return` lowered (a base case, usually): what a
        # recursive function is assumed to return when its first guess was wrong
        self.first_return_tree: Tree | None = None
        self.result_tree: Tree = pytrees.NONE
        self.known_results: tuple = ()  # per result, the int or bool it is known to be (None: run-time)
        self.static_parameters: dict[str, object] = {}  # parameter -> the static value it was specialised on

    @property
    def env(self) -> dict[str, Value]:
        """The current path's variables, by name."""
        return self.path.env

    @property
    def control(self) -> ControlState:
        """The current path's jumps taken, and the value `return` gave."""
        return self.path.control

    # ---- function level -------------------------------------------------
    def lower(self) -> func.FuncOp:
        tree = self.src.tree
        self.bind_call(self.shape or CallShape.of(self.arg_types))
        self.control_flow.run_statements(tree.body)
        returned, value = self.control.returned, self.control.value
        if returned is not True and returned is not False and value is not None and value is not NOT_RETURNED:
            raise self.src.error(
                tree,
                f"{tree.name} returns a value on some paths but reaches its end on others",
                "end the function with a `return`",
            )
        value = value if returned is not False and value is not NOT_RETURNED else None
        results, self.result_tree = self._flatten_return(value, tree)
        self.known_results = tuple(numpy_scalars.known_number(r) for r in results)
        self.owner.own_results[self.name_and_target[0]] = self.arrays.views.own_results(results)
        self.em.op(builder.return_op(*results))
        held = held_ints.check(self.block, self.arrays.held_ints)  # ints held as floats: not written into
        number_joins.check(self.block)  # numbers that joins hold as arrays: used only where exact
        name, key = self.name_and_target
        self.owner.held_ints[name] = held
        op = builder.private_function(name, self.block, [r.type for r in results])
        if key != name:
            op.attributes["irad.target"] = StringAttr(key)
        named = self.owner.names.get(name, name)
        if named != name:  # a second specialisation (`@f_1`): messages name `f`
            op.attributes[NAME] = StringAttr(named)
        if self.static_parameters:  # what it was specialised on, for readers and irad.explain
            op.attributes[STATIC] = static_attribute(self.static_parameters)
        line, col = self.src.line_col(tree)  # the `def`: where run-time errors name the function
        op.location = FileLineColLoc(StringAttr(self.src.filename), IntAttr(line), IntAttr(col))
        return op

    def returned_value(self, stmt: ast.Return) -> Value:
        """What a `return` gives (rules and pullbacks return other things)."""
        value = None if stmt.value is None else self.expr(stmt.value)
        leaves, tree = self._flatten_return(value, stmt)  # reports a non-number where it is returned
        if self.first_return_tree is None:
            self.first_return_tree = tree
        if tree == pytrees.NONE:
            return None
        return rebuild(tree, iter(leaves))  # numbers known while lowering become constants

    def bind_call(self, shape: CallShape) -> None:
        """Bind the parameters to the call's arguments (the block's arguments, in
        the order of `shape`), with Python's rules: defaults, *args, **kwargs."""
        tree = self.src.tree
        leaves = iter(self.block.args)
        closure = rebuild(shape.closure, leaves) if shape.closure is not None else None
        args = [rebuild(s, leaves) for s in shape.args]
        kwargs = {k: rebuild(s, leaves) for k, s in shape.keywords}
        if closure is not None:
            for name, value in closure.captured:  # what it reads from its definer
                self._bind(name, closure if value is SELF else value)
            signature = closure_signature(closure)
        else:
            signature = self.owner.signature(self.fn)
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as exc:
            positional = [p for p in signature.parameters.values() if p.kind <= p.POSITIONAL_OR_KEYWORD]
            raise self.src.error(
                tree, f"{tree.name} takes {len(positional)} arguments but was given {len(args)} ({exc})"
            ) from None
        for name, param in signature.parameters.items():
            if name in bound.arguments:
                value = bound.arguments[name]
                static = _static_constant(value)
                if static is not None:
                    self.static_parameters[name] = static
            elif param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                value = () if param.kind == param.VAR_POSITIONAL else {}
            elif closure is not None:
                value = param.default  # the value it had at the `def`
            else:
                where = Global(self.fn, name, DEFAULT, guards=self.owner.guards) \
                    if param.kind <= param.POSITIONAL_OR_KEYWORD else None
                value = self._static_value(Static(param.default, where), tree)
            if param.kind == param.VAR_KEYWORD:
                value = Keywords(tuple(value.items()))
            self._bind(name, value)

    def _bind(self, name: str, value: Value) -> None:
        value = self.runtime_values(value, self.src.tree, arrays=False)  # static numbers: constants
        self._name_arguments(name, value)
        self.lists.freeze_lists(value, f"it is (in) '{name}', which the function was given (a parameter, or a variable of the "
                                 "function that defines it): the caller's list would change, "
                                 "and irad does not change it")
        self.env[name] = value

    def _name_arguments(self, name: str, value: Value) -> None:
        """Name the block arguments a parameter's value holds after it: a
        container's leaves after their paths (`params.W`, `layers.0.b`), a
        closure's after the variables it captured."""
        found = value_node(value)
        if isinstance(value, SSAValue):
            if value.owner is self.block and value.name_hint is None:
                value.name_hint = ir_name(name)
        elif found is not None:
            node, items = found
            for key, v in zip(node.keys, items):
                self._name_arguments(name + pytrees.step(node.cls, key), v)
        elif isinstance(value, Closure) and value.captured:
            for inner, v in value.captured:
                if v is not SELF:
                    self._name_arguments(inner, v)
        elif isinstance(value, Partial):
            for v in value.args:
                self._name_arguments(name, v)

    def bind_parameters(self, args: Sequence[Value], mismatch: Callable[[int], str]) -> list[str]:
        """Bind the function's parameters to `args`; `mismatch(n)` says what is
        wrong when it has n parameters instead."""
        params = self._parameters(self.src.tree)
        if len(params) != len(args):
            raise self.src.error(self.src.tree, mismatch(len(params)))
        for name, arg in zip(params, args):
            if isinstance(arg, SSAValue):
                arg.name_hint = value_name(name)
            self.env[name] = arg
        return params

    def _parameters(self, tree: ast.FunctionDef) -> list[str]:
        a = tree.args
        if a.vararg or a.kwarg or a.kwonlyargs:
            raise self.src.error(
                tree,
                f"{tree.name} has *args, **kwargs or keyword-only parameters",
                "use plain positional parameters",
            )
        return [p.arg for p in a.posonlyargs + a.args]

    def _flatten_return(self, value: Value, node: ast.AST) -> tuple[list[SSAValue], Tree]:
        """The leaves of a returned value (numbers, arrays, and tuples, lists,
        dicts, NamedTuples and dataclasses of them) and its tree; called from a
        program, also functions (returned_functions.py)."""
        found = self.tree_leaves(value, node) if self.origin is None else returned_leaves(self, value, node)
        if found is None:
            raise self.src.error(
                node,
                f"{self.src.tree.name} returns {_kind(value)}, not a number, an array, or a "
                "tuple, list, dict, NamedTuple or dataclass of them",
                "return numbers (float, int, bool), arrays, or containers of them",
            )
        return found

    def tree_leaves(self, value: Value, node: ast.AST) -> tuple[list[SSAValue], Tree] | None:
        """The SSA leaves of a value and its tree (numbers known while lowering
        become constants); None when it holds something else (a function, ...)."""
        leaves: list[SSAValue] = []
        tree = flatten(self.runtime_values(value, node), leaves)
        return None if tree is None else (leaves, tree)

    def runtime_values(self, value: Value, node: ast.AST, arrays: bool = True) -> Value:
        """`value` with the numbers known while lowering in it (alone or inside
        containers) as constants, and, with `arrays`, the global arrays as
        hidden arguments: what a run-time value must be where one is needed."""
        if isinstance(value, Static) and type_of_value(value.obj) is not None:
            return self.static_number(value, node) if arrays or self.is_number(value.obj) else value
        found = value_node(value) if isinstance(value, (tuple, MappingValue)) else None
        if found is None:
            return value
        tree, items = found
        converted = [self.runtime_values(v, node, arrays) for v in items]
        if all(a is b for a, b in zip(items, converted)):
            return value
        self.lists.freeze_lists(value, "it holds numbers known while lowering, and a copy of it holds them as values")
        return make_value(tree.cls, tree.keys, converted, tree.order)

    def runtime_error(self, node: ast.AST, message: str, hint: str, values) -> UnsupportedError:
        """The error for a run-time number (in `values`) where one known while
        lowering is needed: `message`, and where it became run-time with what
        to do about it (runtime_origins.py), else `hint`."""
        found = runtime_origin(self, values)
        if found is None:
            return self.src.error(node, message, hint)
        return self.src.error(node, f"{message}: {found.why}", f"{found.hint}; or: {hint}" if hint else found.hint)

    @staticmethod
    def is_number(obj) -> bool:
        """A Python number (or a numpy scalar), not an array."""
        return type_of_value(obj) is not None and not isinstance(obj, np.ndarray)

    # ---- statements -------------------------------------------------------
    def statement(self, stmt: ast.stmt) -> None:
        """Lower one statement, by the collaborator whose kind it is."""
        if isinstance(stmt, ControlFlow.STATEMENTS):
            self.control_flow.statement(stmt)
        elif isinstance(stmt, ast.FunctionDef):
            self.calls.define(stmt)
        elif isinstance(stmt, ast.For):
            self.iteration.stmt_For(stmt)
        elif isinstance(stmt, BufferAppend):
            self.lists.stmt_BufferAppend(stmt)
        else:
            self.statements.statement(stmt)


    # ---- expressions ------------------------------------------------------
    def expr(self, node: ast.expr) -> Value:
        if isinstance(node, Calls.EXPRESSIONS):
            method = self.calls.expression
        elif isinstance(node, COMPREHENSIONS):
            method = getattr(self.iteration, f"expr_{type(node).__name__}")
        else:
            method = getattr(self.expressions, f"expr_{type(node).__name__}", None)
        if method is None:
            raise self.src.error(
                node, f"{_describe_node(node)} is not supported in irad's Python subset"
            )
        pending = self.pending  # the containers the expressions being evaluated hold (lists.py)
        pending.append(None)
        try:
            value = method(node)
        finally:
            pending.pop()
        if pending and isinstance(value, (tuple, MappingValue)):  # held until the enclosing one is done
            if pending[-1] is None:
                pending[-1] = [value]
            else:
                pending[-1].append(value)
        return value

    def number(self, node: ast.expr) -> SSAValue:
        """Evaluate `node`, which must be a number."""
        return self.as_number(self.expr(node), node)

    def as_number(self, value: Value, node: ast.expr) -> SSAValue:
        if isinstance(value, Static):
            value = self.static_number(value, node)
        if not isa(value, SSAValue):
            raise self.src.error(node, f"expected a number here, got {_kind(value)}")
        return value

    def static_number(self, value: Static, node: ast.AST) -> SSAValue:
        """An object known while lowering used as a value: an array read from a
        global (or closure, default, ...) is a hidden argument, read at each
        call; a number is a constant."""
        if value.origin is not None and is_hidden(value.obj):
            return self.hidden.argument(value.origin.at(self.src.location(node)))
        return self.materialise(value.obj, node)

    def materialise(self, obj: object, node: ast.AST) -> SSAValue:
        t = type_of_value(obj)
        if t is None and refusal(obj) is not None:
            what, hint = refusal(obj)
            raise self.src.error(node, f"the value here is {what}", hint)
        if t is None:
            foreign = hasattr(type(obj), "__array__") and not isinstance(obj, np.ndarray)
            raise self.src.error(
                node,
                f"{_kind(Static(obj))} cannot be used as a number"
                + (" or an array: irad reads numpy arrays from outside the function, not others" if foreign else ""),
                "make it a numpy array where it is defined (np.asarray(...)), or pass it as an argument "
                "(arguments with __array__ are converted)" if foreign
                else "only numbers (float, int, bool) can be values in irad programs",
            )
        if is_int(t) and not -(2**63) <= obj < 2**63:
            raise self.src.error(
                node,
                f"the integer {obj} does not fit in 64 bits (irad's int is i64)",
                "write it as a float literal (e.g. 1e23) if a float is what you need",
            )
        value = self.em.const(obj, t)
        if isinstance(obj, (np.floating, np.signedinteger)):  # not weak (NEP 50): np.float32, np.float64, np.int64
            numpy_scalars.mark_width(value, F32 if isinstance(obj, np.float32) else F64)
        return numpy_scalars.mark(value, numpy_scalars.NUMPY) if isinstance(obj, np.generic) else value

    def integer(self, n: int, node: ast.AST) -> Value:
        """An int known while lowering: a constant when it fits in i64, else kept
        exact (Static), as Python would, until it is used as a run-time value."""
        if integers.INT64_MIN <= n <= integers.INT64_MAX:
            return self.em.const(n, I64)
        return Static(n)


    @functools.cached_property
    def local_names(self) -> frozenset[str]:
        """The names local to the function by Python's rule (those it binds anywhere)."""
        return frozenset(local_names(self.src.tree))

    def lookup_global(self, name: str) -> Global | None:
        """Where a free name of the function lives: a closure cell, its module's
        globals, or the builtins (None: nowhere)."""
        code = self.fn.__code__
        if name in code.co_freevars and self.fn.__closure__:
            return Global(self.fn.__closure__[code.co_freevars.index(name)], name, CLOSURE, guards=self.owner.guards)
        if name in self.fn.__globals__:
            return Global(self.fn.__globals__, name, guards=self.owner.guards)
        if hasattr(builtins, name):
            return Global(vars(builtins), name, guards=self.owner.guards)
        return None

    def global_value(self, name: str) -> object:
        """The object a free name of the function names now (None if undefined)."""
        origin = self.lookup_global(name)
        try:
            return None if origin is None else origin.read()
        except LookupError:
            return None

    def _static_value(self, value: Static, node: ast.AST) -> Value:
        # Numbers from globals/closures are baked in as constants at lowering
        # time; arrays are hidden arguments (static_number).
        if type_of_value(value.obj) is not None:
            return self.static_number(value, node)
        return value


    def kind_of(self, value: Value) -> str:
        """What a value is, as a message says it."""
        return _kind(value)


    def check(self, condition: SSAValue, node: ast.AST, message: str) -> None:
        """A run-time check: fails with `file:line: message` unless `condition` holds."""
        self.em.op(cf.AssertOp(condition, f"{self.src.location(node)}: {message}"))

    def check_int_range(self, fn, n: SSAValue, node: ast.AST) -> None:
        """An int argument (math.factorial's) checked against its range (INT_RANGES)."""
        if is_float(n.type):
            raise self.src.error(node, f"{describe_callable(fn)} takes an int, got a float",
                                 "convert with int(...) if the value is integral")
        lowest, below, highest, above = INT_RANGES[fn]
        n = self.em.to_int(n)
        self.check(self.em.op(arith.CmpiOp(n, self.em.const(lowest, I64), "sge")), node, below)
        self.check(self.em.op(arith.CmpiOp(n, self.em.const(highest, I64), "sle")), node, above)

    def check_int_conversion(self, x: SSAValue, node: ast.AST) -> None:
        """Before a float -> i64 conversion (fptosi is poison outside i64 and for inf/nan)."""
        self.check(integers.float_fits_int64(self.em, x), node, integers.FLOAT_TO_INT_MESSAGE)



def _static_constant(value: Value) -> object | None:
    """The int, bool or str (or tuple of them) a parameter was specialised on
    (callables.StaticShape), for `irad.static`; None for anything else."""
    if isinstance(value, Static):
        return value.obj if value.obj is not None and constant_key(value.obj) is not None else None
    if type(value) is tuple and value:
        items = [_static_constant(v) for v in value]
        return None if None in items else tuple(items)
    return None



def _kind(value: Value) -> str:
    """What a value is, as a message says it."""
    kind = value_kind(value)
    if kind is Kind.RUNTIME:
        return f"a {describe(value.type)} value"
    if kind is Kind.KNOWN:
        obj = value.obj
        return f"the module {obj.__name__}" if isinstance(obj, types.ModuleType) else f"a {type(obj).__name__} object"
    if kind is Kind.TREE:
        if isinstance(value, Keywords):
            return "**kwargs"
        if isinstance(value, (ListValue, RecordValue, MappingValue)):
            what = "" if value.cls in (list, dict) else " (a NamedTuple)" if isinstance(value, RecordValue) else " (a dataclass)"
            return f"a {value.cls.__name__}{what}"
        return "a tuple"
    if kind is Kind.ITERABLE:
        return f"a {type(value).__name__.removesuffix('Value').lower()} object"
    if kind is Kind.ABSENT:
        return "None (a call that returns nothing)" if value is None else "a variable without a value"
    # Kind.CALLABLE
    if isinstance(value, Static):
        return f"the function {describe_callable(value.obj)}"
    if isinstance(value, Method):
        return f"the method {describe_callable(value.fn)}"
    if isinstance(value, ListMethod):
        return f"the method list.{value.name}"
    if isinstance(value, Closure):
        code = value.code  # its line tells two runs of one name apart
        return f"the function {code.name} (defined at line {code.source.line_col(code.source.tree)[0]})"
    if isinstance(value, Partial):
        return "a functools.partial object"
    return f"a {type(value).__name__} object"


_NODE_NAMES = {
    "Lambda": "a lambda",
    "ListComp": "a list comprehension",
    "SetComp": "a set comprehension",
    "DictComp": "a dict comprehension",
    "GeneratorExp": "a generator expression",
    "List": "a list",
    "Dict": "a dict",
    "Set": "a set",
    "JoinedStr": "an f-string",
    "NamedExpr": "an assignment expression (:=)",
    "Await": "await",
    "Yield": "yield",
    "YieldFrom": "yield from",
    "Starred": "a starred expression",
}


def _describe_node(node: ast.AST) -> str:
    return _NODE_NAMES.get(type(node).__name__, f"the expression `{type(node).__name__}`")
