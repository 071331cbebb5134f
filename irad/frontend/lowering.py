"""Lowering of one Python function (its AST) to a `func.func`.

Every Python function reached from the entry point becomes its own `func.func`,
specialised once per argument-type signature (module_lowering.ModuleLowering
holds them); calls between them stay `func.call`, so the call graph survives
lowering and the differentiation pass can consult the rule table at each call.

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
import functools
import types
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import arith, cf, func
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr
from xdsl.ir import Block, SSAValue

from irad.base.errors import UnsupportedError
from irad.frontend.arrays import ArrayLowering
from irad.frontend.callables import (
    SELF, CallShape, Closure, Keywords, Partial, constant_key, flatten, local_names, rebuild,
)
from irad.frontend.calls import Calls, closure_signature
from irad.frontend.iteration import Iteration
from irad.frontend.lists import BufferAppend, ListMethod, Lists
from irad.ir import builder
from irad.ir.symbols import value_name
from irad.ir.metadata import NAME, STATIC, static_attribute
from irad.frontend.control_flow import ControlFlow
from irad.frontend.expressions import Expressions
from irad.frontend.statements import Statements
from irad.frontend.control_state import NOT_RETURNED, ControlState, Path
from irad.frontend import held_ints, integers, number_classes, number_joins, numpy_scalars
from irad.frontend.emitter import Emitter
from irad.frontend.globals import CLOSURE, DEFAULT, Global, HiddenArguments, is_hidden
from irad.frontend.returned_functions import returned_leaves
from irad.frontend.runtime_origins import runtime_origin
from irad.base import pytrees
from irad.base.pytrees import Tree
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
from irad.frontend.library import INT_RANGES, describe_callable
from irad.frontend.masked_reads import Selection
from irad.frontend.source import FunctionSource
from irad.ir.types import F32, F64, I64, describe, is_float, is_int, refusal, type_of_value
from irad.ir.isa import isa

COMPREHENSIONS = (ast.ListComp, ast.GeneratorExp, ast.DictComp)  # lowered by iteration.py


class FunctionLowering:
    """Lowers one Python function body to a func.func; `owner` is the
    module_lowering.ModuleLowering it belongs to."""

    def __init__(
        self, owner, src: FunctionSource, arg_types, name: str = "", target: str = "",
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
        # the Python classes of the parameters' numbers, as the caller passed them (number_classes.py);
        # the entry's follow from their kinds
        self.parameter_classes = {} if shape is not None and shape.kinds else number_classes.parameters(
            self.block.args, shape.classes if shape is not None else ())
        # global arrays read at each call: block arguments after the parameters
        self.hidden = HiddenArguments(self.block, hidden, owner.hidden_globals)
        self.em = Emitter(self.block)
        self.statement_em = self.em  # the emitter of the statement being lowered (calls.Calls._never_returns)
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
        if returned is True and value is NOT_RETURNED:  # every path raised: no call of it returns
            self.owner.always_raises.add(self.name_and_target[0])
            value = self.em.const(0.0, F64)  # a float for the entry's transformations; no path reaches it
        if returned is not True and returned is not False and value is not None and value is not NOT_RETURNED:
            raise self.src.error(
                tree,
                f"{tree.name} returns a value on some paths but reaches its end on others",
                "end the function with a `return`",
            )
        value = value if returned is not False and value is not NOT_RETURNED else None
        results, self.result_tree = self._flatten_return(value, tree)
        self.known_results = tuple(numpy_scalars.known_number(r) for r in results)
        self.owner.result_classes[self.name_and_target[0]] = tuple(
            number_classes.classes(r, self.parameter_classes) for r in results)
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
            if isinstance(node, (ast.Yield, ast.YieldFrom)):
                raise self.src.error(
                    node, "a generator function (`yield`) is not supported",
                    "build the items in a list and return it (`out = []`, `out.append(v)`, `return out`), "
                    "or write a generator expression where it is consumed (`sum(f(v) for v in xs)`): "
                    "sum, list, zip and for take a list as they take the generator",
                )
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
        if isinstance(value, Selection):  # x[m] where neither a reduction nor an elementwise operation takes it
            raise value.refusal(self.arrays, node, "a selection used as a value here")
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
    if kind is Kind.SELECTION:
        return f"x[m] for a boolean mask computed at run time (at {value.where})"
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
    "Await": "await",
    "Starred": "a starred expression",
}


def _describe_node(node: ast.AST) -> str:
    return _NODE_NAMES.get(type(node).__name__, f"the expression `{type(node).__name__}`")
