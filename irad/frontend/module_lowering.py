"""The module a Python entry function lowers to: ModuleLowering.

It holds every function reached from the entry, each specialised once per call
shape (callables.CallShape) and lowered by a FunctionLowering (lowering.py);
library ops become small wrapper functions (so the differentiation pass meets a
call where it consults the rule table), transformations (irad.grad(f), ...) their
entry functions, recursive functions are lowered again until the result types
their recursive calls assumed are their own. `lower_function` is the frontend's
entry point.
"""

from __future__ import annotations

import dataclasses
import inspect
import types
import warnings

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Attribute, Block

from irad.base import pytrees
from irad.base.errors import IradWarning, UnsupportedError
from irad.base.pytrees import Node, Tree, tuple_tree
from irad.base.recursion import deep_recursion
from irad.frontend import held_ints, narrow_ints, primitives
from irad.frontend.arrays import lower_wrapper_body
from irad.frontend.callable_entries import entry_function, needs_entry, parameter_names
from irad.frontend.callables import CallShape, ClosureCode
from irad.frontend.emitter import Emitter
from irad.frontend.globals import Global, Guards, HiddenGlobals
from irad.frontend.library import OPS, describe_callable, python_reference
from irad.frontend.lowering import FunctionLowering
from irad.frontend.numpy_table import NUMPY, library_entries
from irad.frontend.source import FunctionSource, NoSourceError, def_location, parse_function
from irad.frontend.transformations import (
    JVP, VMAP, Transformation, element_signature, jvp_entry, lower_transformation, lower_vmap,
)
from irad.ir import builder, printing
from irad.ir.symbols import fresh_symbol
from irad.ir.types import F64
from irad.linalg import is_primitive
from irad.rules.keys import IMPLEMENTED_IN_PYTHON, target_key


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
        self.result_classes: dict[str, tuple] = {}  # per function, its results' Python classes (number_classes.py)
        self.always_raises: set[str] = set()  # function symbols every path of which raises
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
        self.always_raises.discard(op.sym_name.data)
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

