"""Lowering of Python functions (their AST) to an xDSL module.

Every Python function reached from the entry point becomes its own `func.func`,
specialised once per argument-type signature; calls between them stay
`func.call`, so the call graph survives lowering and the differentiation pass
can consult the rule table at each call.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import types
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import arith, cf, func, scf
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import FileLineColLoc, FunctionType, IntAttr, ModuleOp, StringAttr
from xdsl.ir import Attribute, Block, Region, SSAValue

from irad.errors import UnsupportedError
from irad.recursion import deep_recursion
from irad.frontend.arrays import (
    NUMPY,
    STATIC_OPERATORS,
    ArrayLowering,
    BoundMethod,
    builtin_on_array,
    is_array,
    is_numpy_callable,
    lower_wrapper_body,
    reshape_method,
)
from irad.ir.symbols import fresh_symbol, rename_callees, value_name
from irad.frontend.control_flow import RETURNED, VALUE, ControlFlowLowering
from irad.frontend import integers, joins
from irad.frontend.emitter import Emitter
from irad.frontend.globals import CLOSURE, DEFAULT, Global, HiddenArguments, HiddenGlobals, is_hidden
from irad.frontend.values import Static, Value
from irad.frontend.library import (
    FLOAT_FUNCTIONS,
    FLOAT_TO_INT,
    OPS,
    describe_callable,
    python_reference,
)
from irad.rules.keys import IMPLEMENTED_IN_PYTHON, target_key
from irad.frontend.source import (
    SUBSET_HINT,
    FunctionSource,
    NoSourceError,
    def_location,
    parse_function,
)
from irad.ir.types import F64, I1, I64, describe, is_bool, is_float, is_int, type_of_value

# The largest literal integer exponent expanded into multiplications.
MAX_UNROLLED_POWER = 64

UNSUPPORTED_STATEMENTS = {
    ast.Try: ("a `try` statement", "exceptions cannot be differentiated; remove it"),
    ast.Raise: ("a `raise` statement", "exceptions cannot be differentiated; remove it"),
    ast.With: ("a `with` statement", "remove it"),
    ast.Assert: ("an `assert` statement", "move the check outside the function"),
    ast.Import: ("an `import` inside the function", "import at module level"),
    ast.ImportFrom: ("an `import` inside the function", "import at module level"),
    ast.FunctionDef: ("a nested function definition", "define it at module level"),
    ast.ClassDef: ("a class definition", "define it at module level"),
    ast.Global: ("a `global` statement", "pass the value as an argument"),
    ast.Nonlocal: ("a `nonlocal` statement", "pass the value as an argument"),
    ast.Delete: ("a `del` statement", "remove it"),
}


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
        self._globals: dict[str, tuple[Global, ...]] = {}  # function symbol -> its hidden globals
        self._functions: dict[tuple[object, tuple[Attribute, ...]], func.FuncOp] = {}
        # functions being lowered -> a declaration standing in for recursive calls
        self._in_progress: dict[tuple[object, tuple[Attribute, ...]], func.FuncOp] = {}
        self._called_recursively: set[tuple[object, tuple[Attribute, ...]]] = set()
        self._symbols: set[str] = set()

    def function(
        self, fn, arg_types: tuple[Attribute, ...], call_site: str | None = None
    ) -> func.FuncOp:
        """The func.func for `fn` specialised to `arg_types`, lowering it if needed."""
        fn = IMPLEMENTED_IN_PYTHON.get(fn, fn)
        key = (fn, arg_types)
        if key in self._functions:
            return self._functions[key]
        if key in self._in_progress:
            # Recursion: the call sees the declaration with the result types
            # assumed so far; `_lower_recursive` checks them afterwards.
            self._called_recursively.add(key)
            return self._in_progress[key]
        try:
            if fn in OPS or fn in NUMPY:
                op = self._library_wrapper(fn, arg_types)
            elif hasattr(fn, "_irad_module"):
                op = self._import_derivative(fn, arg_types)
            elif not isinstance(fn, types.FunctionType) and callable(fn) and self.has_rules(fn):
                op = self._external(fn, arg_types)
            else:
                op = None
                source = parse_function(fn)
        except NoSourceError as exc:
            if call_site is None:
                raise
            raise UnsupportedError(f"{call_site}: {exc}") from None
        if op is None:
            name, target = self.symbol_for(fn)
            op = self._lower_recursive(key, source, name, target)
        self._functions[key] = op
        self.module.body.block.add_op(op)
        return op

    def has_rules(self, fn) -> bool:
        return self.table is not None and self.table.has_entries(target_key(fn))

    def globals_of(self, op: func.FuncOp) -> tuple[Global, ...]:
        """The globals `op` takes as hidden arguments, after its own, in order."""
        return self._globals.get(op.sym_name.data, ())

    def _library_wrapper(self, fn, arg_types: tuple[Attribute, ...]) -> func.FuncOp:
        """A function whose body is the library op, so calls to `fn` meet the table."""
        block = Block(arg_types=arg_types)
        if fn in NUMPY:
            result = lower_wrapper_body(self, fn, Emitter(block), block.args)
        else:
            result = OPS[fn][1](Emitter(block), block.args)
        block.add_op(func.ReturnOp(result))
        key = target_key(fn)
        name = self.unique_symbol(key)
        op = func.FuncOp(
            name, FunctionType.from_lists(arg_types, [result.type]), Region(block),
            visibility="private",
        )
        if name != key:
            op.attributes["irad.target"] = StringAttr(key)
        return op

    def _import_derivative(self, fn, arg_types: tuple[Attribute, ...]) -> func.FuncOp:
        """The entry of the module a derivative object (irad.grad(f), ...)
        builds; its other functions join this module under fresh names."""
        module, entry_name, hidden = fn._irad_module(arg_types)
        functions = [op for op in module.ops if isinstance(op, func.FuncOp)]
        symbols = {op.sym_name.data: self.unique_symbol(op.sym_name.data) for op in functions}
        entry = None
        for op in functions:
            op.detach()
            rename_callees(op, symbols)
            op.sym_name = StringAttr(symbols[op.sym_name.data])
            op.sym_visibility = StringAttr("private")
            if op.sym_name.data == symbols[entry_name]:
                entry = op
            else:
                self.module.body.block.add_op(op)
        self._globals[entry.sym_name.data] = hidden.globals
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
    def _lower_recursive(self, key, source, name: str, target: str) -> func.FuncOp:
        """Lower a function; if it calls itself (directly or through others), lower
        it again until the result types and the hidden globals its recursive calls
        assumed are its own. The globals only grow (the assumed ones come first,
        in order), so that part stops; type changes get three rounds."""
        assumed: list[Attribute] = [F64]  # numeric code mostly returns one float
        hidden: tuple[tuple[Global, Attribute], ...] = ()  # assumed hidden globals and types
        type_rounds = 0
        while type_rounds < 3:
            inputs = [*key[1], *(t for _, t in hidden)]
            self._in_progress[key] = func.FuncOp.external(name, inputs, assumed)
            self._globals[name] = tuple(g for g, _ in hidden)
            self._called_recursively.discard(key)
            lowered_before = set(self._functions)
            lowering = FunctionLowering(self, source, key[1], name, target, hidden)
            try:
                op = lowering.lower()
            except UnsupportedError:
                # the recursive calls' assumed result may be what failed (a tuple
                # unpacked from an assumed float): retry with what a return gave
                learned = lowering.first_return_types
                if key not in self._called_recursively or learned in (None, assumed):
                    raise
                assumed = learned
                type_rounds += 1
                for stale in set(self._functions) - lowered_before:
                    self._forget(self._functions.pop(stale))
                continue
            finally:
                del self._in_progress[key]
            actual = list(op.function_type.outputs.data)
            found = lowering.hidden.items()
            self._globals[name] = tuple(g for g, _ in found)
            if key not in self._called_recursively or (actual == assumed and found == hidden):
                return op
            type_rounds += actual != assumed
            assumed, hidden = actual, found
            # functions lowered meanwhile may call this one with the wrong type
            # or without its globals
            for stale in set(self._functions) - lowered_before:
                self._forget(self._functions.pop(stale))
        raise UnsupportedError(
            f"{source.location(source.tree)}: the result types of the recursive function "
            f"{describe_callable(source.fn)} depend on its recursive calls\n"
            "  hint: make every return give the same type (e.g. return floats everywhere)"
        )

    def _forget(self, op: func.FuncOp) -> None:
        self._symbols.discard(op.sym_name.data)
        self._globals.pop(op.sym_name.data, None)
        op.detach()
        op.erase(safe_erase=False)

    def symbol_for(self, fn) -> tuple[str, str]:
        """(unique symbol name, rule-table key) for a Python function."""
        key = target_key(fn)
        by_key = self.symbols_by_key or fn.__module__.startswith("irad.")
        return self.unique_symbol(key if by_key else fn.__name__), key

    def unique_symbol(self, base: str) -> str:
        name = fresh_symbol(base, self._symbols)
        self._symbols.add(name)
        return name


def lower_function(
    fn, arg_types: tuple[Attribute, ...], table=None
) -> tuple[ModuleOp, str, HiddenGlobals]:
    """Lower `fn` for `arg_types`. Returns the module, the entry's symbol name
    and the global arrays the entry takes after `arg_types` (hidden arguments).

    `table` is the rule table the module will be differentiated against.
    """
    lowering = ModuleLowering(table)
    try:
        with deep_recursion():  # lowering recurses once per nested helper call
            entry = lowering.function(fn, arg_types)
    except RecursionError:
        raise UnsupportedError(
            f"the calls below {describe_callable(fn)} nest too deeply for irad's frontend "
            "(several thousand levels, or a long chain of nested expressions)\n"
            "  hint: flatten the call chain or split very long expressions"
        ) from None
    entry.sym_visibility = None  # the entry point is public, helpers private
    hidden = HiddenGlobals.now(lowering.globals_of(entry), describe_callable(fn))
    return lowering.module, entry.sym_name.data, hidden


def bind_arguments(fn, args: tuple, kwargs: dict) -> tuple:
    """All arguments of a call to the entry function, positionally, defaults filled in."""
    code = getattr(fn, "__code__", None)
    if code is None or code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
        return tuple(args)  # lowering reports what it cannot handle, with its location
    if not kwargs and len(args) == code.co_argcount:
        return tuple(args)
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except (TypeError, ValueError) as exc:
        raise UnsupportedError(
            f"{def_location(fn)}cannot call "
            f"{describe_callable(fn)} with these arguments: {exc}\n"
            "  hint: pass one example value per parameter"
        ) from None
    bound.apply_defaults()
    return tuple(bound.arguments.values())


def signature_of(fn, args: tuple) -> tuple[Attribute, ...]:
    """The IR types of example arguments, with an error naming a bad one."""
    types_ = []
    for i, value in enumerate(args):
        t = type_of_value(value)
        if t is None:
            raise UnsupportedError(
                f"argument {i} of {describe_callable(fn)} has type "
                f"{type(value).__name__}, which irad cannot lower\n"
                "  hint: pass float, int or bool scalars, or numpy arrays of float64, float32, int or bool"
            )
        types_.append(t)
    return tuple(types_)


class FunctionLowering(ControlFlowLowering):
    """Lowers one Python function body to a func.func."""

    def __init__(
        self, owner: ModuleLowering, src: FunctionSource, arg_types, name: str = "", target: str = "",
        hidden: tuple = (),
    ):
        self.owner = owner
        self.name_and_target = (name, target)
        self.src = src
        self.fn = src.fn
        self.arg_types = arg_types
        self.env: dict[str, Value] = {}
        self.block = Block(arg_types=arg_types)
        # global arrays read at each call: block arguments after the parameters
        self.hidden = HiddenArguments(self.block, hidden, owner.hidden_globals)
        self.em = Emitter(self.block)
        self.arrays = ArrayLowering(self)  # numpy arrays: irad/frontend/arrays.py
        # the types of the first `return` lowered (a base case, usually): what a
        # recursive function is assumed to return when its first guess was wrong
        self.first_return_types: list[Attribute] | None = None

    # ---- function level -------------------------------------------------
    def lower(self) -> func.FuncOp:
        tree = self.src.tree
        self.bind_parameters(
            self.block.args[: len(self.arg_types)],
            lambda n: f"{tree.name} takes {n} arguments but was given {len(self.arg_types)}",
        )
        self.run_statements(tree.body)
        returned = self.env.get(RETURNED, False)
        if returned is not True and returned is not False and self.env.get(VALUE) is not None:
            raise self.src.error(
                tree,
                f"{tree.name} returns a value on some paths but reaches its end on others",
                "end the function with a `return`",
            )
        results = self._flatten_return(self.env.get(VALUE) if returned else None, tree)
        self.em.op(func.ReturnOp(*results))
        name, key = self.name_and_target
        op = func.FuncOp(
            name,
            FunctionType.from_lists(self.block.arg_types, [r.type for r in results]),
            Region(self.block),
            visibility="private",
        )
        if key != name:
            op.attributes["irad.target"] = StringAttr(key)
        line, col = self.src.line_col(tree)  # the `def`: where run-time errors name the function
        op.location = FileLineColLoc(StringAttr(self.src.filename), IntAttr(line), IntAttr(col))
        return op

    def returned_value(self, stmt: ast.Return) -> Value:
        """What a `return` gives (rules and pullbacks return other things)."""
        value = None if stmt.value is None else self.expr(stmt.value)
        values = self._flatten_return(value, stmt)  # reports a non-number where it is returned
        if self.first_return_types is None:
            self.first_return_types = [v.type for v in values]
        return value

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

    def _flatten_return(self, value: Value, node: ast.AST) -> list[SSAValue]:
        if value is None:
            return []
        values = value if isinstance(value, tuple) else (value,)
        for v in values:
            if not isinstance(v, SSAValue):
                raise self.src.error(
                    node,
                    f"{self.src.tree.name} returns {_kind(v)}, "
                    "not a number or a flat tuple of numbers",
                    "return numbers (float, int, bool) or a tuple of them",
                )
        return list(values)

    # ---- statements -------------------------------------------------------
    def statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Assign):
            value = self.expr(stmt.value)
            for target in stmt.targets:
                self.assign(target, value)
        elif isinstance(stmt, ast.AugAssign) and _is_item(stmt.target):
            target = stmt.target  # y[i] += v: read, combine, write back
            current = self.expr_Subscript(target)
            self.arrays.assign_item(
                target.value.id, target.slice, self.binary(stmt.op, current, stmt.value, stmt), stmt
            )
        elif isinstance(stmt, ast.AugAssign):
            if not isinstance(stmt.target, ast.Name):
                raise self.src.error(
                    stmt, "augmented assignment to anything but a variable",
                    "in-place updates of containers are not supported",
                )
            current = self.name(stmt.target)
            result = self.binary(stmt.op, current, stmt.value, stmt)
            if is_array(current):  # numpy updates the array in place: y += v is np.add(y, v, out=y)
                self.arrays.update(stmt.target.id, current, result, stmt)
            else:
                self.assign(stmt.target, result)
        elif isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None:
                self.assign(stmt.target, self.expr(stmt.value))
        elif isinstance(stmt, ast.Expr):
            if not (isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)):
                self.expr(stmt.value)  # pure: evaluated for its errors only
        elif isinstance(stmt, ast.Pass):
            pass
        elif hasattr(self, f"stmt_{type(stmt).__name__}"):
            getattr(self, f"stmt_{type(stmt).__name__}")(stmt)
        else:
            what, hint = UNSUPPORTED_STATEMENTS.get(
                type(stmt), (f"a `{type(stmt).__name__}` statement", SUBSET_HINT)
            )
            raise self.src.error(stmt, f"{what} is not supported", hint)

    def assign(self, target: ast.expr, value: Value) -> None:
        if isinstance(target, ast.Name):
            if isinstance(value, SSAValue) and value.name_hint is None:
                value.name_hint = value_name(target.id)
            self.arrays.views.bind(target.id, value)  # an alias or a view shares an array
            self.env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            if not isinstance(value, tuple):
                raise self.src.error(target, "tuple unpacking of a value that is not a tuple")
            if len(value) != len(target.elts):
                raise self.src.error(
                    target,
                    f"cannot unpack {len(value)} values into {len(target.elts)} names",
                )
            for t, v in zip(target.elts, value):
                self.assign(t, v)
        elif _is_item(target):
            self.arrays.assign_item(target.value.id, target.slice, value, target)
        else:
            raise self.src.error(
                target,
                f"assignment to a {type(target).__name__.lower()} is not supported",
                "assign to plain variable names",
            )

    # ---- expressions ------------------------------------------------------
    def expr(self, node: ast.expr) -> Value:
        method = getattr(self, f"expr_{type(node).__name__}", None)
        if method is None:
            raise self.src.error(
                node, f"{_describe_node(node)} is not supported in irad's Python subset"
            )
        return method(node)

    def number(self, node: ast.expr) -> SSAValue:
        """Evaluate `node`, which must be a number."""
        return self.as_number(self.expr(node), node)

    def as_number(self, value: Value, node: ast.expr) -> SSAValue:
        if isinstance(value, Static):
            value = self.static_number(value, node)
        if not isinstance(value, SSAValue):
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
        if t is None:
            raise self.src.error(
                node,
                f"{_kind(Static(obj))} cannot be used as a number",
                "only numbers (float, int, bool) can be values in irad programs",
            )
        if is_int(t) and not -(2**63) <= obj < 2**63:
            raise self.src.error(
                node,
                f"the integer {obj} does not fit in 64 bits (irad's int is i64)",
                "write it as a float literal (e.g. 1e23) if a float is what you need",
            )
        return self.em.const(obj, t)

    def integer(self, n: int, node: ast.AST) -> Value:
        """An int known while lowering: a constant when it fits in i64, else kept
        exact (Static), as Python would, until it is used as a run-time value."""
        if integers.INT64_MIN <= n <= integers.INT64_MAX:
            return self.em.const(n, I64)
        return Static(n)

    def expr_Constant(self, node: ast.Constant) -> Value:
        if isinstance(node.value, (bool, int, float)):
            return self.materialise(node.value, node)
        raise self.src.error(
            node,
            f"the constant {node.value!r} is not supported",
            "only numeric constants (float, int, bool) are supported",
        )

    def name(self, node: ast.Name) -> Value:
        return self.expr_Name(node)

    def expr_Name(self, node: ast.Name) -> Value:
        if node.id in self.env:
            return self.env[node.id]
        origin = self.lookup_global(node.id)
        if origin is None:
            raise self.src.error(node, f"name '{node.id}' is not defined")
        try:
            obj = origin.read()
        except LookupError:
            raise self.src.error(node, f"name '{node.id}' is not defined") from None
        return self._static_value(Static(obj, origin), node)

    def lookup_global(self, name: str) -> Global | None:
        """Where a free name of the function lives: a closure cell, its module's
        globals, or the builtins (None: nowhere)."""
        code = self.fn.__code__
        if name in code.co_freevars and self.fn.__closure__:
            return Global(self.fn.__closure__[code.co_freevars.index(name)], name, CLOSURE)
        if name in self.fn.__globals__:
            return Global(self.fn.__globals__, name)
        if hasattr(builtins, name):
            return Global(vars(builtins), name)
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

    def expr_Attribute(self, node: ast.Attribute) -> Value:
        base = self.expr(node.value)
        if is_array(base):
            return self.arrays.attribute(base, node.attr, node)
        if not isinstance(base, Static):
            raise self.src.error(
                node, f"attribute access `.{node.attr}` on a runtime value is not supported"
            )
        if not hasattr(base.obj, node.attr):
            raise self.src.error(node, f"{_kind(base)} has no attribute '{node.attr}'")
        origin = base.origin.attribute(node.attr) if base.origin is not None else None
        return self._static_value(Static(getattr(base.obj, node.attr), origin), node)

    def expr_Tuple(self, node: ast.Tuple) -> Value:
        values = []
        for elt in node.elts:
            if isinstance(elt, ast.Starred):
                raise self.src.error(elt, "starred expressions are not supported")
            values.append(self.number(elt))
        return tuple(values)

    def expr_Subscript(self, node: ast.Subscript) -> Value:
        base = self.expr(node.value)
        if is_array(base):
            return self.arrays.subscript(base, node.slice, node)
        if isinstance(base, Static) and isinstance(base.obj, tuple):  # x.shape[0], a global tuple
            origin = base.origin
            base = tuple(Static(v, origin and origin.item(i)) for i, v in enumerate(base.obj))
        if not isinstance(base, tuple):
            raise self.src.error(node, f"indexing into {_kind(base)} is not supported")
        index = _static_index(node.slice)
        if index is None:
            raise self.src.error(node, "tuples can only be indexed with constant integers or slices")
        try:
            return base[index]
        except IndexError:
            raise self.src.error(node, f"tuple index {index} out of range") from None

    def expr_UnaryOp(self, node: ast.UnaryOp) -> Value:
        operand = self.expr(node.operand)
        if isinstance(node.op, ast.Not) and isinstance(operand, Static):
            return Static(not operand.obj)
        if isinstance(node.op, (ast.USub, ast.UAdd)) and _static_int(operand) is not None:
            n = _static_int(operand)
            return self.integer(-n if isinstance(node.op, ast.USub) else n, node)
        x = self.as_number(operand, node.operand)
        if isinstance(node.op, ast.UAdd):
            return self.em.to_int(x) if is_bool(x.type) else x
        if isinstance(node.op, ast.USub):
            if is_array(x):
                return self.arrays.negate(x, node)
            if is_float(x.type):
                return self.em.op(arith.NegfOp(x))
            x = self.em.to_int(x)
            folded = integers.constant_int(x)
            if folded is not None:
                return self.integer(-folded, node)
            return integers.CheckedIntegers(self.em, self.src.location(node)).negate(x)
        if isinstance(node.op, ast.Not):
            b = self.em.to_bool(x)
            return self.em.op(arith.XOrIOp(b, self.em.const(1, I1)))
        raise self.src.error(node, "the bitwise operator `~` is not supported")

    def expr_BinOp(self, node: ast.BinOp) -> Value:
        left = self.expr(node.left)
        if isinstance(node.op, ast.Pow) and _literal_int(node.right) is not None and not is_array(left):
            return self.power(self.as_number(left, node.left), node.right, node, None)
        right = self.expr(node.right)
        static = _static_arithmetic(node.op, left, right)
        if static is not None:  # shapes: x.shape[0] * 2 is known while lowering
            return static
        return self.binary(node.op, self.as_number(left, node.left), node.right, node, right)

    def binary(
        self, op: ast.operator, left: SSAValue, right_node: ast.expr, node, right: Value = None
    ) -> SSAValue:
        if not isinstance(left, SSAValue):
            raise self.src.error(node, f"arithmetic on {_kind(left)} is not supported")
        if isinstance(op, ast.Pow) and not is_array(left) and _literal_int(right_node) is not None:
            return self.power(left, right_node, node, None)
        if right is None:
            right = self.expr(right_node)
        right = self.as_number(right, right_node)
        if is_array(left) or is_array(right):
            return self.arrays.binary(op, left, right, node)
        if isinstance(op, ast.Pow):
            return self.power(left, right_node, node, right)
        em = self.em
        if isinstance(op, ast.Div):  # true division: floats keep their precision
            if is_float(left.type) or is_float(right.type):
                a, b = em.unify(left, right)
            else:
                a, b = em.to_float(left), em.to_float(right)
            return em.op(arith.DivfOp(a, b))
        a, b = em.unify(left, right)
        floating = is_float(a.type)
        if not floating:
            folded = integers.fold(op, a, b)
            if folded is not None:  # exact, as Python computes it
                return self.integer(folded, node)
            checked = integers.CheckedIntegers(em, self.src.location(node))
        if isinstance(op, ast.Add):
            return em.op(arith.AddfOp(a, b)) if floating else checked.add(a, b)
        if isinstance(op, ast.Sub):
            return em.op(arith.SubfOp(a, b)) if floating else checked.sub(a, b)
        if isinstance(op, ast.Mult):
            return em.op(arith.MulfOp(a, b)) if floating else checked.mul(a, b)
        if isinstance(op, (ast.FloorDiv, ast.Mod)):
            symbol = "//" if isinstance(op, ast.FloorDiv) else "%"
            if floating:
                # CPython computes these through fmod; floor(a / b) differs
                # (1.0 // 0.1 is 9.0), and xDSL has no remf to do it exactly.
                raise self.src.error(
                    node,
                    f"`{symbol}` on floats is not supported",
                    "write math.floor(a / b) (or a - b * math.floor(a / b)) if "
                    "that is what you mean; `//` and `%` on ints are supported",
                )
            if integers.constant_int(b) in (None, 0):  # MLIR leaves x // 0 undefined
                self.check(
                    em.op(arith.CmpiOp(b, em.const(0, b.type), "ne")), node,
                    "integer division or modulo by zero",
                )
            if isinstance(op, ast.FloorDiv):
                return em.op(arith.FloorDivSIOp(a, b))
            return self.modulo(a, b)
        raise self.src.error(node, f"the operator {_OPERATOR_NAMES.get(type(op), type(op).__name__)} is not supported")

    def check(self, condition: SSAValue, node: ast.AST, message: str) -> None:
        """A run-time check: fails with `file:line: message` unless `condition` holds."""
        self.em.op(cf.AssertOp(condition, f"{self.src.location(node)}: {message}"))

    def check_int_conversion(self, x: SSAValue, node: ast.AST) -> None:
        """Before a float -> i64 conversion (fptosi is poison outside i64 and for
        inf/nan). Checking x itself suffices for floor/ceil/trunc too: no double
        lies strictly between 2**63 - 1024 and 2**63, nor just below -2**63."""
        em = self.em
        inside = em.op(arith.AndIOp(  # ordered comparisons: false for nan
            em.op(arith.CmpfOp(x, em.const(-(2.0**63), x.type), "oge")),
            em.op(arith.CmpfOp(x, em.const(2.0**63, x.type), "olt")),
        ))
        self.check(inside, node, "cannot convert float infinity or NaN to integer "
                   "(or the integer does not fit in 64 bits)")

    def modulo(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """Python's `%` on ints: the result has the sign of the divisor."""
        em = self.em
        r = em.op(arith.RemSIOp(a, b))
        zero = em.const(0, a.type)
        nonzero = em.op(arith.CmpiOp(r, zero, "ne"))
        signs_differ = em.op(
            arith.CmpiOp(em.op(arith.XOrIOp(r, b)), zero, "slt")
        )
        fix = em.op(arith.AndIOp(nonzero, signs_differ))
        return em.op(arith.SelectOp(fix, em.op(arith.AddiOp(r, b)), r))

    def power(
        self, base: SSAValue, exponent_node: ast.expr, node, exponent: SSAValue | None
    ) -> SSAValue:
        em = self.em
        n = _literal_int(exponent_node)
        if n is not None and abs(n) <= MAX_UNROLLED_POWER:
            base = em.to_int(base) if is_bool(base.type) else base
            if n < 0 and not is_float(base.type):
                base = em.to_float(base)
            if is_float(base.type):
                result = _power_by_squaring(em, base, abs(n), lambda a, b: em.op(arith.MulfOp(a, b)))
            elif integers.constant_int(base) is not None:  # exact, as Python computes it
                return self.integer(integers.constant_int(base) ** n, node)
            else:
                checked = integers.CheckedIntegers(em, self.src.location(node))
                result = _power_by_squaring(em, base, n, checked.mul)
            if n < 0:
                return em.op(arith.DivfOp(em.const(1.0, base.type), result))
            return result
        if exponent is None:
            exponent = self.number(exponent_node)
        if not is_float(base.type) and not is_float(exponent.type):
            raise self.src.error(
                node,
                "int ** int with a runtime exponent is not supported",
                "write float(base) ** n",
            )
        a, b = em.unify(em.to_float(base), em.to_float(exponent))
        return em.op(mathd.PowFOp(a, b))

    def expr_Compare(self, node: ast.Compare) -> Value:
        left = self.expr(node.left)
        if len(node.ops) == 1:
            right = self.expr(node.comparators[0])
            static = _static_arithmetic(node.ops[0], left, right)
            if static is not None:  # a rule may decline on a shape: x.shape[0] < 8
                return static
            return self.compare(
                node.ops[0], self.as_number(left, node.left), self.as_number(right, node.comparators[0]), node
            )
        left = self.as_number(left, node.left)
        result = None
        for op, right_node in zip(node.ops, node.comparators):
            right = self.number(right_node)
            cmp = self.compare(op, left, right, node)
            result = cmp if result is None else self.em.op(arith.AndIOp(result, cmp))
            left = right
        return result

    def compare(self, op: ast.cmpop, left: SSAValue, right: SSAValue, node) -> SSAValue:
        predicates = _COMPARISONS.get(type(op))
        if predicates is None:
            raise self.src.error(node, f"the comparison `{_CMP_NAMES.get(type(op), type(op).__name__)}` is not supported")
        if is_array(left) or is_array(right):
            return self.arrays.compare(predicates[0], left, right, node)
        a, b = self.em.unify(left, right)
        if is_float(a.type):
            return self.em.op(arith.CmpfOp(a, b, predicates[0]))
        return self.em.op(arith.CmpiOp(a, b, predicates[1]))

    def expr_BoolOp(self, node: ast.BoolOp) -> Value:
        known = [self.expr(v) for v in node.values]
        if all(isinstance(v, Static) for v in known):  # decided while lowering
            pick = all if isinstance(node.op, ast.And) else any
            return Static(pick(v.obj for v in known))
        values = [self.as_number(k, sub) for k, sub in zip(known, node.values)]
        for v, sub in zip(values, node.values):
            if not is_bool(v.type):
                raise self.src.error(
                    sub,
                    "`and`/`or` on a number (not a bool) is not supported",
                    "compare explicitly, e.g. `x != 0.0`",
                )
        op_class = arith.AndIOp if isinstance(node.op, ast.And) else arith.OrIOp
        result = values[0]
        for v in values[1:]:
            result = self.em.op(op_class(result, v))
        return result

    def expr_IfExp(self, node: ast.IfExp) -> Value:
        test = self.number(node.test)
        if is_array(test):
            raise self.src.error(
                node.test, "the truth value of an array is ambiguous",
                "use np.where(cond, a, b) for an elementwise choice",
            )
        cond = self.em.to_bool(test)
        then_block, then_value = self._branch(node.body)
        else_block, else_value = self._branch(node.orelse)
        joined = joins.join_types(then_value.type, else_value.type)
        if joined is None:
            raise self.src.error(
                node,
                "the two values of this conditional expression have no common type: "
                f"{joins.mismatch(then_value.type, else_value.type)}",
                "irad's array shapes are static: give both the same shape",
            )
        then_value = joins.convert(Emitter(then_block), then_value, joined)
        else_value = joins.convert(Emitter(else_block), else_value, joined)
        then_block.add_op(scf.YieldOp(then_value))
        else_block.add_op(scf.YieldOp(else_value))
        return self.em.op(
            scf.IfOp(cond, [then_value.type], Region(then_block), Region(else_block))
        )

    def _branch(self, node: ast.expr) -> tuple[Block, SSAValue]:
        """Lower one arm of a conditional expression into its own block (lazily run)."""
        outer = self.em
        block = Block()
        self.em = Emitter(block)
        try:
            value = self.number(node)
        finally:
            self.em = outer
        return block, value

    def expr_Call(self, node: ast.Call) -> Value:
        callee = self.expr(node.func)
        if not isinstance(callee, Static):
            raise self.src.error(node, f"calling {_kind(callee)} is not supported")
        if callee.obj is builtins.isinstance:
            return self._isinstance(node)
        if isinstance(callee.obj, BoundMethod):  # x.sum(axis=0), x.reshape(2, 3)
            if callee.obj.fn is np.reshape:
                return reshape_method(self.arrays, callee.obj.array, node)
            return self.arrays.call(callee.obj.fn, node, bound=callee.obj.array)
        if is_numpy_callable(callee.obj):
            return self.arrays.call(callee.obj, node)
        if callee.obj is builtins.len and len(node.args) == 1:
            return builtin_on_array(self.arrays, builtins.len, [self.expr(node.args[0])], node) or (
                self._not_supported(node, callee)
            )
        if getattr(callee.obj, "_irad_transform", False):
            return self._transform(node, callee.obj)
        if hasattr(callee.obj, "_irad_module"):  # a derivative object: irad.grad(f), ...
            return self._external_call(node, callee.obj)
        target = IMPLEMENTED_IN_PYTHON.get(callee.obj, callee.obj)
        if target in OPS:
            return self._library_call(node, callee.obj)
        if isinstance(target, types.FunctionType):
            return self._python_call(node, target)
        if callable(target) and self.owner.has_rules(target):
            return self._external_call(node, target)
        self._not_supported(node, callee)

    def _not_supported(self, node: ast.Call, callee: Static):
        raise self.src.error(
            node,
            f"call to {describe_callable(callee.obj)} is not supported: it has no "
            "Python source irad can lower and no lowering in irad's library",
            "register a rule for it with @irad.rrule, or mark it irad.non_differentiable "
            "(then irad calls it as it is); or rewrite it as a Python function",
        )

    def _transform(self, node: ast.Call, transform) -> Static:
        """irad.grad(f, argnums=...) and friends inside a program: applied while
        lowering, to functions and constants known then."""

        def known(arg: ast.expr):
            try:
                return ast.literal_eval(arg)
            except ValueError:
                value = self.expr(arg)
                if not isinstance(value, Static):
                    raise self.src.error(
                        arg, f"the arguments of {describe_callable(transform)} must be "
                        "known while lowering (functions and constants)"
                    ) from None
                return value.obj

        args = [known(a) for a in node.args]
        kwargs = {k.arg: known(k.value) for k in node.keywords}
        return Static(transform(*args, **kwargs))

    def _external_call(self, node: ast.Call, fn) -> Value:
        """A call to a function without source that the rule table covers."""
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            raise self.src.error(
                node, f"{describe_callable(fn)} takes its arguments positionally here"
            )
        return self.call(fn, [self.number(a) for a in node.args], node)

    def _library_call(self, node: ast.Call, fn) -> SSAValue:
        arities, emit = OPS[fn]
        if node.keywords:
            raise self.src.error(node, f"keyword arguments to {describe_callable(fn)} are not supported")
        if len(node.args) not in arities:
            raise self.src.error(
                node,
                f"{describe_callable(fn)} with {len(node.args)} arguments is not supported",
            )
        args = [self.number(a) for a in node.args]
        if any(is_array(a) for a in args):
            result = builtin_on_array(self.arrays, fn, args, node)
            if result is None:
                raise self.src.error(
                    node, f"{describe_callable(fn)} on arrays is not supported",
                    "use the numpy function (np.maximum, np.abs, ...)",
                )
            return result
        if fn in FLOAT_TO_INT and is_float(args[0].type):
            self.check_int_conversion(args[0], node)
        if self.owner.has_rules(fn):  # the pass must meet a call op to consult the table
            return self.call(fn, args, node)
        return emit(self.em, args)

    def call(self, fn, args: list[SSAValue], node: ast.AST) -> Value:
        """A func.call to `fn`'s function for these argument types, located at `node`;
        the callee's hidden globals come from this function's own."""
        callee = self.owner.function(fn, tuple(v.type for v in args), self.src.location(node))
        declared = callee.function_type.inputs.data[len(args) :]
        hidden = [self.hidden.argument(g, t) for g, t in zip(self.owner.globals_of(callee), declared, strict=True)]
        op = func.CallOp(callee.sym_name.data, [*args, *hidden], callee.function_type.outputs.data)
        line, col = self.src.line_col(node)
        op.location = FileLineColLoc(StringAttr(self.src.filename), IntAttr(line), IntAttr(col))
        results = self.em.results(op)
        if len(results) == 0:
            return None
        return results[0] if len(results) == 1 else results

    def _python_call(self, node: ast.Call, fn) -> Value:
        if any(isinstance(a, ast.Starred) for a in node.args) or any(
            k.arg is None for k in node.keywords
        ):
            raise self.src.error(
                node, "*args / **kwargs in calls are not supported", "pass the arguments one by one"
            )
        kinds = {p.kind for p in inspect.signature(fn).parameters.values()}
        if kinds & {inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD}:
            raise self.src.error(
                node,
                f"{describe_callable(fn)} takes *args or **kwargs, which irad does not support",
                "give it plain positional parameters",
            )
        args = [self.number(a) for a in node.args]
        kwargs = {k.arg: self.number(k.value) for k in node.keywords}
        try:
            bound = inspect.signature(fn).bind(*args, **kwargs)
        except TypeError as exc:
            raise self.src.error(node, f"bad call to {describe_callable(fn)}: {exc}") from None
        bound.apply_defaults()
        values = []
        for name, v in bound.arguments.items():
            if not isinstance(v, SSAValue) and type_of_value(v) is not None:  # a default value
                v = self.static_number(Static(v, Global(fn, name, DEFAULT)), node)
            if not isinstance(v, SSAValue):
                raise self.src.error(
                    node, f"argument '{name}' of {describe_callable(fn)} is not a number"
                )
            if fn in FLOAT_FUNCTIONS:  # like math functions, they take floats
                v = self.em.to_float(v)
            values.append(v)
        return self.call(fn, values, node)


    def _isinstance(self, node: ast.Call) -> Static:
        """isinstance(x, float/int/bool) on a value: known from its IR type."""
        if len(node.args) != 2 or node.keywords:
            raise self.src.error(node, "isinstance takes exactly two arguments")
        value = self.expr(node.args[0])
        classes = self.expr(node.args[1])
        if not isinstance(classes, Static) or not isinstance(classes.obj, (type, tuple)):
            raise self.src.error(node.args[1], "the second argument of isinstance must be a type")
        if isinstance(value, SSAValue):  # a runtime value of a known Python type
            example = False if is_bool(value.type) else 0.0 if is_float(value.type) else 0
            return Static(isinstance(example, classes.obj))
        return Static(isinstance(value.obj if isinstance(value, Static) else value, classes.obj))


def _is_item(target: ast.expr) -> bool:
    """`name[...]`: an in-place write to an array."""
    return isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)


def _static_int(value: Value) -> int | None:
    if isinstance(value, Static) and type(value.obj) is int:
        return value.obj
    if isinstance(value, SSAValue):
        return integers.constant_int(value)
    return None


def _static_arithmetic(op, left: Value, right: Value) -> Static | None:
    """int op int evaluated while lowering when one side is static (a shape)."""
    if not (isinstance(left, Static) or isinstance(right, Static)):
        return None
    a, b = _static_int(left), _static_int(right)
    fn = STATIC_OPERATORS.get(type(op))
    if a is None or b is None or fn is None:
        return None
    return Static(fn(a, b))


def _power_by_squaring(em: Emitter, base: SSAValue, n: int, mul) -> SSAValue:
    result = None
    square = base
    while n:
        if n & 1:
            result = square if result is None else mul(result, square)
        n >>= 1
        if n:
            square = mul(square, square)
    return result if result is not None else em.const(1, base.type)


def _literal_int(node: ast.expr) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
    ):
        return -node.operand.value
    return None


def _static_index(node: ast.expr):
    n = _literal_int(node)
    if n is not None:
        return n
    if isinstance(node, ast.Slice):
        parts = [node.lower, node.upper, node.step]
        values = [None if p is None else _literal_int(p) for p in parts]
        if all(p is None or v is not None for p, v in zip(parts, values)):
            return slice(*values)
    return None


def _kind(value: Value) -> str:
    if isinstance(value, Static):
        obj = value.obj
        if isinstance(obj, types.ModuleType):
            return f"the module {obj.__name__}"
        if callable(obj):
            return f"the function {describe_callable(obj)}"
        return f"a {type(obj).__name__} object"
    if isinstance(value, tuple):
        return "a tuple"
    if value is None:
        return "None (a call that returns nothing)"
    return f"a {describe(value.type)} value"


_COMPARISONS = {
    ast.Lt: ("olt", "slt"),
    ast.LtE: ("ole", "sle"),
    ast.Gt: ("ogt", "sgt"),
    ast.GtE: ("oge", "sge"),
    ast.Eq: ("oeq", "eq"),
    ast.NotEq: ("une", "ne"),
}
_CMP_NAMES = {ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}
_OPERATOR_NAMES = {
    ast.MatMult: "`@`",
    ast.BitAnd: "`&`",
    ast.BitOr: "`|`",
    ast.BitXor: "`^`",
    ast.LShift: "`<<`",
    ast.RShift: "`>>`",
}
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
