"""Calls: what `f(...)` lowers to, decided by what `f` is while lowering.

The arguments are evaluated first (`*t` expands a tuple, `**kwargs` a
function's own keyword arguments), then the callee decides:

* an array method (`x.sum(axis=0)`) or a numpy function: irad/frontend/arrays.py;
* a builtin irad knows (`len`, `range`, `zip`, `enumerate`, `reversed`,
  `tuple`, `list`, `sum`, `min`/`max` of one iterable, `isinstance`, `print`,
  `functools.partial`), or a library function (`math.sin`, `abs`, ...);
* a Python function, a lambda or nested def (`Closure`), a bound method of a
  user object, a `functools.partial` or an object with a Python `__call__`:
  a `func.call` to the function specialised for the call's shape
  (irad/frontend/callables.py);
* a function without source that the rule table covers, or a derivative
  object (`irad.grad(f)`): a call the backend binds;
* `irad.grad(f, ...)` and friends: applied while lowering.
"""

from __future__ import annotations

import ast
import builtins
import functools
import math
import inspect
import dataclasses
import sys
import types
import warnings
from dataclasses import dataclass, replace
from itertools import zip_longest

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr, TensorType
from xdsl.ir import SSAValue

from irad.base.errors import IradWarning
from irad.frontend.arrays import BoundMethod, array_method, builtin_on_array, is_numpy_callable, known_value
from irad.frontend.masked_reads import Selection
from irad.frontend.callables import (
    SELF,
    CallShape,
    Closure,
    ClosureCode,
    Keywords,
    Partial,
    StaticShape,
    flatten,
    free_names,
    rebuild,
    static_argument,
)
from irad.frontend import (at_updates, folding, held_ints, integers, jax_numpy, known_calls, library_refusals,
                           nonlocal_writes, number_classes, numpy_scalars, ufunc_methods)
from irad.frontend.containers import DictMethod, make_dict
from irad.frontend.control_state import PathEnded
from irad.frontend.iteration import ITERABLES
from irad.frontend.lists import ListMethod
from irad.frontend.library import DOMAINS, FLOAT_FUNCTIONS, FLOAT_TO_INT, INT_RANGES, OPS, describe_callable, select_extremum
from irad.frontend.printing import lower_print
from irad.base.pytrees import NONE, Node, build, is_record_class, leaf_types, record_fields, structure
from irad.frontend.rounding import lower_round
from irad.frontend.source import lambda_as_def
from irad.frontend.values import (
    Kind,
    ListValue,
    MappingValue,
    Method,
    NoValue,
    RecordValue,
    Static,
    Value,
    is_array,
    new_list,
    value_kind,
    make_value,
    python_class,
)
from irad.frontend.callable_entries import parameter_names
from irad.frontend.call_errors import call_hint, call_problem
from irad.frontend.known_methods import call_known_method, known_method
from irad.frontend.program_vjp import program_vjp
from irad.frontend.transformed_closures import is_made_function, made_function_argument, transform_made_function
from irad.frontend.transformations import CONSTRUCTORS, JVP, PROGRAM_CALLS, Transformation, static_positions
from irad.ir import builder
from irad.ir.types import I1, I64, describe, is_bool, is_differentiable, is_float, is_int, is_tensor
from irad import functional_python, numpy_python
from irad.frontend.numpy_table import NUMPY, library_entries, numpy_name
from irad.rules.keys import IMPLEMENTED_IN_PYTHON

_NOT_HANDLED = object()


@dataclass(frozen=True, eq=False)
class CallOrigin:
    """Where a function's specialisation was first called from: the caller's
    lowering, the call, the run-time values it passed (the callee's
    parameters, in order) and whether it was a recursive call (which passes
    its numbers as run-time values). Errors that need a value known while
    lowering follow a parameter back through it (`runtime_origin`)."""

    caller: object  # the FunctionLowering of the caller
    node: ast.AST
    leaves: tuple
    callee: str
    recursive: bool


_UNBOUND = object()  # a name the definer's variables do not hold


class Calls:
    """Calls, and functions as values, for one FunctionLowering (`fl`): a call
    to a function with Python source lowers (specialised on the kinds and the
    static values of its arguments, see `call`) to a func.call; a call to a
    numpy or library function, a constructor, a builtin or a transformation is
    lowered by the table or module that covers it.

    Its interface: `expression` (for the EXPRESSIONS), `define` (a `def`),
    `call_arguments` and `call_value` (a call whose callee and arguments are
    already evaluated: `sum(...)` in iteration.py), `call` (a func.call to a
    Python function: arrays.py's rule-covered calls). What it
    needs from its owner: the emitter, source and module (`fl.em`, `fl.src`,
    `fl.owner`, `fl.hidden`, `fl.name_and_target`); the lowering of
    expressions and assignments (`expr`, `assign`, `as_number`,
    `runtime_values`, `_static_value`, `check*`, `runtime_error`, `kind_of`);
    the arrays (`fl.arrays`); the lists and iterables it makes
    (`items_of`, `length_of`, `make_range`/`zip`/`enumerate`/`reversed`,
    `sum_call`, `sum_values`, `tree_leaves`, `materialise`, `call_list_method`,
    `calls_may_return_lists`).
    """

    EXPRESSIONS = (ast.Call, ast.Lambda)

    def __init__(self, fl) -> None:
        self.fl = fl
        self.closure_codes: dict[ast.AST, ClosureCode] = {}  # per def or lambda node (`_closure_code`)

    def expression(self, node: ast.Call | ast.Lambda) -> Value:
        """Lower one of the EXPRESSIONS."""
        return self.expr_Call(node) if isinstance(node, ast.Call) else self.expr_Lambda(node)

    def expr_Call(self, node: ast.Call) -> Value:
        if at_updates.is_at_update(node):  # JAX's x.at[i].set(v)
            return at_updates.lower(self.fl, node)
        callee = self.fl.expr(node.func)
        if isinstance(callee, Static):
            mirrored = jax_numpy.mirror(callee.obj)  # jax.grad(f) is irad.grad(f)
            if mirrored is not None and (mirrored[1] in CONSTRUCTORS or mirrored[1] in PROGRAM_CALLS):
                callee = Static(mirrored[1])
            if _hashable(callee.obj) and callee.obj in CONSTRUCTORS:
                return self._transform(node, callee.obj)
            if _hashable(callee.obj) and callee.obj in PROGRAM_CALLS:  # irad.jvp(f, primals, tangents)
                return self._program_call(node, callee.obj, PROGRAM_CALLS[callee.obj])
            if callee.obj is builtins.sum:  # sum(<generator>) is a loop: it reads the AST
                return self.fl.iteration.sum_call(node)
            if callee.obj in (builtins.all, builtins.any):  # so are all(...) and any(...)
                return self.fl.iteration.truth_call(node, every=callee.obj is builtins.all)
        args, kwargs = self.call_arguments(node)
        return self.call_value(callee, args, kwargs, node)

    def call_arguments(self, node: ast.Call) -> tuple[list, dict]:
        args: list = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                args.extend(self.fl.iteration.items_of(self.fl.expr(a.value), a))
            else:
                args.append(self.fl.expr(a))
        kwargs: dict = {}
        for k in node.keywords:
            if k.arg is None:
                value = self.fl.expr(k.value)
                if not isinstance(value, Keywords) and not (isinstance(value, MappingValue) and value.cls is dict):
                    raise self.fl.src.error(
                        k.value, "`**` in a call expands a dict or a function's own **kwargs",
                        "pass the keyword arguments by name",
                    )
                pairs = value.items
            else:
                pairs = ((k.arg, self.fl.expr(k.value)),)
            for name, v in pairs:
                if name in kwargs:
                    raise self.fl.src.error(node, f"keyword argument '{name}' repeated")
                kwargs[name] = v
        return args, kwargs

    def call_value(self, callee: Value, args: list, kwargs: dict, node: ast.AST) -> Value:
        """Call what `callee` stands for with argument values."""
        kind = value_kind(callee)
        if kind is Kind.CALLABLE and not isinstance(callee, Static):
            return self._call_made(callee, args, kwargs, node)
        if kind is Kind.TREE and isinstance(callee, (RecordValue, MappingValue)) and callee.cls is not dict:
            method = getattr(callee.cls, "__call__", None)  # model(x): its class's __call__
            if isinstance(method, types.FunctionType):
                return self._call_function(method, [callee, *args], kwargs, node)
        if not isinstance(callee, Static):
            raise self.fl.src.error(node, f"calling {self.fl.kind_of(callee)} is not supported")
        return self._call_known(callee, args, kwargs, node)

    def _call_made(self, callee, args: list, kwargs: dict, node) -> Value:
        """Call a function the program made (Kind.CALLABLE, not a Static)."""
        if isinstance(callee, Closure):
            return self._call_function(callee, args, kwargs, node)
        if isinstance(callee, Partial):
            return self.call_value(callee.fn, [*callee.args, *args], {**dict(callee.keywords), **kwargs}, node)
        if isinstance(callee, DictMethod):  # d.items(), d.get(k)
            return callee.call(self.fl, args, kwargs, node)
        if isinstance(callee, Method):  # model.forward(x) on a NamedTuple or dataclass value
            return self._call_function(callee.fn, [callee.receiver, *args], kwargs, node)
        if isinstance(callee, ListMethod):  # xs.append(v) (irad/frontend/lists.py)
            return self.fl.lists.call_list_method(callee, args, kwargs, node)
        raise self.fl.src.error(node, f"calling {self.fl.kind_of(callee)} is not supported")

    def _call_known(self, callee: Static, args: list, kwargs: dict, node) -> Value:
        """Call a function (or an object) known while lowering."""
        obj = callee.obj
        if isinstance(obj, BoundMethod):  # x.sum(axis=0), x.reshape(2, 3)
            return array_method(self.fl.arrays, obj, args, kwargs, node)
        if isinstance(obj, np.vectorize):  # @np.vectorize, or np.vectorize(f) made outside the program
            signature = {"signature": self.fl._static_value(Static(obj.signature), node)}
            self._refuse_limits(np.vectorize, numpy_python.vectorize, [Static(obj.pyfunc)], signature, node)
            made = self._call_function(numpy_python.vectorize, [Static(obj.pyfunc)], {
                "otypes": self.fl._static_value(Static(obj.otypes and tuple(np.dtype(c) for c in obj.otypes)), node),
                "excluded": self.fl._static_value(Static(tuple(obj.excluded)), node),
                "signature": self.fl._static_value(Static(obj.signature), node)}, node)
            return self.call_value(made, args, kwargs, node)
        if ufunc_methods.is_ufunc_method(obj):  # np.subtract.outer(x, y), np.add.reduce(x)
            return ufunc_methods.call(self.fl, obj, args, kwargs, node)
        mirrored = jax_numpy.mirror(obj)  # jnp.tanh, jax.nn.softmax: numpy's, scipy's or irad/jax_python.py's
        if mirrored is not None:
            return self._call_mirrored(*mirrored, args, kwargs, node)
        frozen = _frozen_distribution(obj, callee.origin)  # scipy.stats.norm(0.0, 2.0).logpdf as a global
        if frozen is not None:
            method, bound, keywords = frozen
            return self.call_value(method, [*args[:1], *bound, *args[1:]], {**keywords, **kwargs}, node)
        known = known_calls.call(self.fl.src, obj, args, kwargs, node)  # math.prod(x.shape), divmod(n, 4)
        if known is not None:
            return known
        # np.cov: irad/numpy_python.py; scipy.linalg's, irad/scipy_linalg.py (is_numpy_callable registers those)
        if is_numpy_callable(obj) and _hashable(obj) and obj in IMPLEMENTED_IN_PYTHON:
            self._refuse_limits(obj, IMPLEMENTED_IN_PYTHON[obj], args, kwargs, node)
            known = folding.known_call(obj, [known_value(a) for a in args], {k: known_value(v) for k, v in kwargs.items()})
            if known is not None:  # np.allclose(tol, 1e-3), np.searchsorted((1, 2, 3), 2): known here
                return known
            result = self._call_function(IMPLEMENTED_IN_PYTHON[obj], args, kwargs, node)
            if not kwargs:  # what numpy's dtype says of the result (np.convolve of bools is bools)
                result = self.fl.arrays.record(obj, args, result, node)
            return result
        if is_numpy_callable(obj):
            return self.fl.arrays.call_values(obj, args, kwargs, node)
        handled = self._builtin(obj, args, kwargs, node)
        if handled is not _NOT_HANDLED:
            return handled
        origin = callee.origin  # where it lives, for the arrays reached from it (globals.py)
        if isinstance(obj, types.MethodType):  # model.forward(x): self is known while lowering
            owner = _owner_origin(origin)
            return self.call_value(Static(obj.__func__), [Static(obj.__self__, owner), *args], kwargs, node)
        if isinstance(obj, functools.partial):
            part = (lambda step, i: origin.attribute(step).item(i)) if origin is not None else (lambda *_: None)
            bound = [self.fl._static_value(Static(a, part("args", i)), node) for i, a in enumerate(obj.args)]
            keywords = {k: self.fl._static_value(Static(v, part("keywords", k)), node) for k, v in obj.keywords.items()}
            func = Static(obj.func, origin and origin.attribute("func"))  # guarded: a rebound partial's function
            return self.call_value(func, [*bound, *args], {**keywords, **kwargs}, node)
        if isinstance(obj, Transformation):  # irad.grad(f), ...
            return self._external_call(obj, args, kwargs, node)
        if is_record_class(obj):  # State(x=..., v=...)
            return self._construct(obj, args, kwargs, node)
        if obj is dataclasses.replace:  # and a NamedTuple's s._replace(h=...) (expressions.py)
            return self._replaced_record(args, kwargs, node)
        target = IMPLEMENTED_IN_PYTHON.get(obj, obj) if _hashable(obj) else obj
        if obj is math.hypot and (len(args) != 2 or kwargs):  # two: numerics.hypot, whose rule beats its body
            target = functional_python.hypot
        if _hashable(target) and target in OPS:
            return self._library_call(obj, args, kwargs, node)
        if isinstance(target, types.FunctionType):
            if target is not obj:  # np.vectorize: irad/numpy_python.py
                self._refuse_limits(obj, target, args, kwargs, node)
            return self._call_function(target, args, kwargs, node)
        if callable(target) and _hashable(target) and self.fl.owner.has_rules(target):
            return self._external_call(target, args, kwargs, node)
        refused = library_refusals.refusal(describe_callable(obj)) if isinstance(obj, type) else None
        if refused is not None:  # np.vectorize(f)
            raise self.fl.src.error(node, f"{describe_callable(obj)} is not supported: {refused[0]}", refused[1])
        if isinstance(obj, type) and obj.__module__ != "builtins":
            raise self.fl.src.error(
                node, f"creating a {describe_callable(obj)} object inside a program is not supported",
                "create it outside and read it as a global (its methods are then resolved "
                "while lowering), or pass its numbers as arguments",
            )
        method = getattr(type(obj), "__call__", None)
        if isinstance(method, types.FunctionType):  # an object with a Python __call__
            return self.call_value(Static(method), [callee, *args], kwargs, node)
        wrapped = getattr(obj, "__wrapped__", None)
        if wrapped is not None:  # functools.lru_cache and other wrapper objects
            if not isinstance(obj, functools._lru_cache_wrapper):
                warnings.warn(
                    f"{self.fl.src.location(node)}: irad calls the function {describe_callable(obj)} "
                    f"wraps ({describe_callable(wrapped)}); what the wrapper object adds is ignored",
                    IradWarning, stacklevel=2,
                )
            return self.call_value(Static(wrapped), args, kwargs, node)
        self._not_supported(node, obj)

    def _call_mirrored(self, name: str, counterpart, rewrite: str | None, args: list, kwargs: dict, node) -> Value:
        if counterpart is None:
            raise self.fl.src.error(
                node, f"{name} is not supported: irad runs JAX's array functions as the numpy or scipy "
                "functions of the same name, and lowers Python's control flow itself",
                rewrite or "write it with numpy (docs/coming-from-jax.md lists the forms that lower)",
            )
        if is_numpy_callable(counterpart) and not _lowered(counterpart):
            raise self.fl.src.error(
                node, f"{name} is not supported: irad runs it as {numpy_name(counterpart)}, which irad does "
                "not lower", "docs/arrays.md lists the numpy functions irad lowers (docs/scipy.md scipy's); "
                "write it with those, or compute it outside the differentiated function",
            )
        return self.call_value(Static(counterpart), args, kwargs, node)

    def _not_supported(self, node: ast.AST, obj):
        refused = library_refusals.refusal(describe_callable(obj))
        if refused is not None:  # filter, math.fsum
            raise self.fl.src.error(node, f"{describe_callable(obj)} is not supported: {refused[0]}", refused[1])
        if getattr(obj, "__module__", None) == "builtins" and isinstance(obj, types.BuiltinFunctionType):
            raise self.fl.src.error(
                node, f"Python's builtin {obj.__name__}() is not supported inside a differentiated program "
                "(on these arguments)",
                "compute it outside the function and pass the result in (a static argument, static_argnums=, "
                "if it sets a shape or a branch)",
            )
        raise self.fl.src.error(
            node,
            f"call to {describe_callable(obj)} is not supported: it has no "
            "Python source irad can lower and no lowering in irad's library",
            "register a rule for it with @irad.rrule, or mark it irad.non_differentiable "
            "(then irad calls it as it is); or rewrite it as a Python function",
        )

    # ---- builtins ---------------------------------------------------------------------
    def _builtin(self, obj, args: list, kwargs: dict, node):
        if obj is builtins.isinstance:
            return self._isinstance(args, kwargs, node)
        if obj is builtins.type and len(args) == 1 and not kwargs:  # type(params)(*items): a container's class
            value = args[0]
            if isinstance(value, (RecordValue, MappingValue)):
                return Static(value.cls)
            if isinstance(value, (tuple, ListValue)):
                return Static(list if isinstance(value, ListValue) else tuple)
        if obj is builtins.len and len(args) == 1 and not kwargs:
            value = args[0]
            if isinstance(value, tuple) or isinstance(value, ITERABLES):
                return self.fl.iteration.length_of(value, node)
            if isinstance(value, (MappingValue, Keywords)):  # len(params), len(kwargs): known while lowering
                return Static(len(value.items))
            if isinstance(value, Static) and isinstance(value.obj, (tuple, list, range, str)):
                return Static(len(value.obj))
            return builtin_on_array(self.fl.arrays, builtins.len, [value], node) or self._not_supported(node, obj)
        if obj is builtins.range and not kwargs:
            return self.fl.iteration.make_range(args, node)
        if obj is builtins.zip:
            return self.fl.iteration.make_zip(args, kwargs, node)
        if obj is builtins.enumerate:
            return self.fl.iteration.make_enumerate(args, kwargs, node)
        if obj is builtins.reversed and not kwargs:
            return self.fl.iteration.make_reversed(args, node)
        if obj is builtins.sorted:
            return new_list(self.fl.iteration.sorted_items(args, kwargs, node))
        if obj in (builtins.tuple, builtins.list) and not kwargs and len(args) <= 1:
            items = self.fl.iteration.items_of(args[0], node) if args else ()
            return new_list(items) if obj is builtins.list else items
        if obj is builtins.sum:
            if kwargs.keys() - {"start"} or not 1 <= len(args) + len(kwargs) <= 2:
                raise self.fl.src.error(node, "sum takes an iterable and an optional start")
            start = args[1] if len(args) == 2 else kwargs.get("start")
            return self.fl.iteration.sum_values(args[0], start, node)
        if obj in (builtins.min, builtins.max) and kwargs:  # key=, default=
            return self.fl.iteration.extremum(obj is builtins.max, args, dict(kwargs), node)
        if obj in (builtins.min, builtins.max) and len(args) == 1:
            items = [self.fl.as_number(v, node) for v in self.fl.iteration.items_of(args[0], node)]
            if not items:
                raise self.fl.src.error(node, f"{obj.__name__}() of an empty sequence")
            if any(is_array(v) for v in items):
                raise self.fl.src.error(node, f"{obj.__name__}() of arrays is not supported",
                                     "use np.maximum/np.minimum, or np.max/np.min")
            return select_extremum(self.fl.em, items, obj is builtins.max)
        if obj is builtins.print:
            return lower_print(self.fl, args, kwargs, node)
        if obj is builtins.hasattr and len(args) == 2 and not kwargs and isinstance(args[1], Static) \
                and isinstance(args[1].obj, str):  # hasattr(scipy.special, "softplus"), hasattr(x, "ptp")
            if isinstance(args[0], Static):
                return Static(hasattr(args[0].obj, args[1].obj))
            if is_array(args[0]):
                return Static(hasattr(np.ndarray, args[1].obj))
        if obj is builtins.round:
            return lower_round(self.fl, args, kwargs, node)
        if obj is builtins.dict:
            return make_dict(self.fl, args, kwargs, node)
        if obj is functools.partial:
            if not args:
                raise self.fl.src.error(node, "functools.partial needs a function")
            return Partial(args[0], tuple(args[1:]), tuple(kwargs.items()))
        if known_method(obj):  # k.endswith("W") on a str known while lowering (known_methods.py)
            return call_known_method(self.fl.src, obj, args, kwargs, node) or _NOT_HANDLED
        return _NOT_HANDLED

    def _isinstance(self, args: list, kwargs: dict, node) -> Static:
        """isinstance(x, cls) on a value: known from its IR type (float, int,
        bool, np.ndarray) or its container (tuple, list, dict, a NamedTuple or
        dataclass)."""
        if len(args) != 2 or kwargs:
            raise self.fl.src.error(node, "isinstance takes exactly two arguments")
        value, classes = args
        if type(classes) is tuple and all(isinstance(c, Static) for c in classes):  # isinstance(q, (tuple, list))
            classes = Static(tuple(c.obj for c in classes))
        if not isinstance(classes, Static) or not isinstance(classes.obj, (type, tuple)):
            raise self.fl.src.error(node, "the second argument of isinstance must be a type")
        if isinstance(value, Static):
            return Static(isinstance(value.obj, classes.obj))
        cls = python_class(value)  # a run-time value: its class follows from its type
        if cls is None:
            return Static(isinstance(value, classes.obj))  # a function or a closure: not those classes
        if not isinstance(value, SSAValue) or cls is np.ndarray:
            return Static(issubclass(cls, classes.obj))
        # a number: the classes it may have on the paths into it (joins, numpy's scalars)
        possible = number_classes.classes(value, self.fl.parameter_classes)
        answers = {issubclass(c, classes.obj) for c in possible}
        if len(answers) > 1:
            raise self.fl.src.error(node, number_classes.refusal(possible, classes.obj, cls), number_classes.HINT)
        return Static(answers.pop() if answers else issubclass(cls, classes.obj))

    def _construct(self, cls: type, args: list, kwargs: dict, node) -> Value:
        """`State(x=x, v=v)`: a NamedTuple or dataclass value, its fields bound as
        the class's constructor binds them (defaults included)."""
        if getattr(cls, "__post_init__", None) is not None:
            raise self.fl.src.error(
                node, f"creating a {cls.__name__} inside a program: its __post_init__ would not run",
                "build it outside the program, or drop __post_init__",
            )
        try:
            bound = inspect.signature(cls).bind(*args, **kwargs)
        except TypeError as exc:
            raise self.fl.src.error(node, f"bad call to {cls.__name__}: {exc}") from None
        given = set(bound.arguments)
        bound.apply_defaults()
        keys = record_fields(cls)
        missing = [k for k in keys if k not in bound.arguments]
        if missing:
            raise self.fl.src.error(
                node, f"{cls.__name__} has fields its constructor does not set ({', '.join(missing)})",
                "build it outside the program",
            )
        items = []
        for key in keys:
            value = bound.arguments[key]
            if key not in given:  # a default: a Python object
                value = self.fl._static_value(Static(value), node)
            items.append(self.fl.runtime_values(value, node, arrays=False))
        return make_value(cls, keys, items)

    def _replaced_record(self, args: list, kwargs: dict, node) -> Value:
        """`dataclasses.replace(p, w=...)`, `s._replace(h=...)`: a new value of the
        record's class, with the fields given replaced (irad's records are values)."""
        record = args[0] if len(args) == 1 else None
        if not (isinstance(record, (RecordValue, MappingValue)) and record.cls is not dict):
            raise self.fl.src.error(node, "dataclasses.replace takes one NamedTuple or dataclass value, "
                                    "and the fields to replace by keyword")
        cls = record.cls
        if getattr(cls, "__post_init__", None) is not None:
            raise self.fl.src.error(node, f"replacing fields of a {cls.__name__} inside a program: its "
                                    "__post_init__ would not run", "build it outside the program, or drop __post_init__")
        keys = tuple(cls._fields) if isinstance(record, RecordValue) else record.keys()
        unknown = [k for k in kwargs if k not in keys]
        if unknown:  # Python's TypeError (dataclasses) or ValueError (NamedTuple)
            raise self.fl.src.error(node, f"{cls.__name__} has no field {unknown[0]!r} (its fields: {', '.join(keys)})")
        current = list(record) if isinstance(record, RecordValue) else [v for _, v in record.items]
        items = [self.fl.runtime_values(kwargs[k], node, arrays=False) if k in kwargs else v
                 for k, v in zip(keys, current)]
        return make_value(cls, keys, items)

    def _refuse_limits(self, obj, impl, args: list, kwargs: dict, node) -> None:
        """A call of `obj` (written in irad/numpy_python.py as `impl`) with a value of
        a parameter LIMITS lists that `impl` does not implement, refused by name."""
        try:
            bound = self.fl.owner.signature(impl).bind(*args, **kwargs).arguments
        except TypeError:
            return  # _call_function names the bad call
        for param, (allowed, hint) in numpy_python.LIMITS.get(impl, {}).items():
            known, value = known_value(bound[param]) if param in bound else (True, allowed[0])
            if not known or not any(type(value) is type(a) and value == a for a in allowed):
                shown = repr(value) if known else "a value known only at run time"
                raise self.fl.src.error(node, f"{numpy_name(obj)} with {param}={shown} is not supported", hint)

    # ---- functions from source: specialised on the call's shape -----------------------
    def _call_function(self, fn, args: list, kwargs: dict, node) -> Value:
        """A call to a Python function or a closure, specialised for its arguments."""
        if isinstance(fn, Closure) and fn.code.nonlocals:
            nonlocal_writes.refuse_out_of_definer(self.fl, fn, node)
        closure = self.bind_closure(fn) if isinstance(fn, Closure) else None
        signature = closure_signature(closure) if closure else self.fl.owner.signature(fn)
        who = closure.code.name if closure else describe_callable(fn)
        try:
            signature.bind(*args, **kwargs)
        except TypeError as exc:  # call_errors.py
            short = closure.code.name.rsplit(".", 1)[-1] if closure else getattr(fn, "__name__", who)
            raise self.fl.src.error(node, f"bad call to {who}: {call_problem(signature, kwargs, exc)}",
                                    call_hint(short, signature)) from None
        if fn in FLOAT_FUNCTIONS:  # like math functions, they take floats
            args = [self.fl.em.to_float(self.fl.as_number(a, node)) for a in args]
        leaves: list[SSAValue] = []
        target = closure.code if closure else fn
        # numbers known here are static values of the call (the callee is specialised
        # on them), except at a recursive call, which would unroll the recursion, and
        # at a call to a function the rule table has entries for (their signatures
        # name every argument's type)
        recursive = self.fl.owner.is_lowering(target)
        ruled = closure is None and self.fl.owner.has_rules(fn)
        known = None if recursive or ruled else numpy_scalars.known_static
        closure_shape = self.shape_of(closure, leaves, node, who, "the function", known) if closure else None
        arg_shapes = tuple(self.shape_of(a, leaves, node, who, f"argument {i}", known) for i, a in enumerate(args))
        keyword_shapes = []
        for name in sorted(kwargs):
            keyword_shapes.append((name, self.shape_of(kwargs[name], leaves, node, who, f"argument '{name}'", known)))
        shape = CallShape(arg_shapes, tuple(keyword_shapes), closure_shape)
        origin = CallOrigin(self.fl, node, tuple(leaves), who, recursive)
        result = self.call(target, leaves, node, shape, origin)
        self.fl.lists.calls_may_return_lists(result, (*args, *kwargs.values(), closure), node)
        if closure is not None and closure.code.nonlocals:
            return nonlocal_writes.write_back(self.fl, closure, result, node)
        return result

    def shape_of(self, value, leaves: list, node, who: str, what: str, known=None):
        """The shape of an argument: the ints and bools `known` says are known
        while lowering (a shape, an axis, len(x)) are static values, other
        numbers run-time values; global arrays stay known (the callee reads
        them where they live)."""
        value = self.fl.runtime_values(value, node, arrays=False)
        shape = flatten(value, leaves, self.bind_closure, known)
        if shape is None:
            raise self.fl.src.error(
                node, f"{what} of {who} is {self.fl.kind_of(value)}, which cannot be passed to a function",
                "pass numbers, arrays, tuples, lists, dicts, NamedTuples or dataclasses of them, "
                "functions or objects known while lowering",
            )
        return shape

    def call(self, fn, args: list[SSAValue], node: ast.AST, shape: CallShape | None = None,
             origin: CallOrigin | None = None) -> Value:
        """A func.call to `fn`'s function for these arguments (`shape` says how they
        make the call's arguments), located at `node`. Its results are rebuilt
        into the tree the callee returns (a number, a dict, nested tuples, ...);
        the ints and bools it returns on every path are known here too."""
        kinds = self.fl.owner.entry_kinds.get((fn, shape)) if shape is not None else None
        if kinds is not None and kinds == tuple(numpy_scalars.EITHER if isinstance(v.type, TensorType)
                                                else numpy_scalars.kind(v) for v in args):
            shape = replace(shape, kinds=kinds)  # the entry calling itself with numbers of its kinds
        passed = tuple(number_classes.passed(v, self.fl.parameter_classes) for v in args)
        if shape is not None and any(passed):  # what the callee's isinstance sees
            shape = replace(shape, classes=passed)
        callee = self.fl.owner.function(fn, shape if shape is not None else tuple(v.type for v in args),
                                     self.fl.src.location(node), origin)
        # the callee's hidden globals (irad/frontend/globals.py) come from this function's own
        declared = callee.function_type.inputs.data[len(args):]
        hidden = [self.fl.hidden.argument(g, t) for g, t in zip(self.fl.owner.globals_of(callee), declared, strict=True)]
        op = builder.call(callee.sym_name.data, [*args, *hidden], callee.function_type.outputs.data)
        line, col = self.fl.src.line_col(node)
        op.location = FileLineColLoc(StringAttr(self.fl.src.filename), IntAttr(line), IntAttr(col))
        results = self.fl.em.results(op)
        number_classes.mark_call(op, self.fl.owner.result_classes.get(callee.sym_name.data))
        # a new array the callee made is writable here, as numpy's result is (a
        # recursive call made before its function is lowered has no answer yet: not writable)
        owns = self.fl.owner.own_results.get(callee.sym_name.data)
        for result, own in zip(results, owns or ()):
            if own:
                self.fl.arrays.new(result)
        if owns is not None:  # a function lowered from Python: its results may be arrays it was given
            self.fl.arrays.call_aliases.record(args, results, owns, self.fl.src.location(node),  # call_aliases.py
                                               self.fl.owner.names.get(callee.sym_name.data, callee.sym_name.data))
        held_ints.call_results(self.fl.arrays.held_ints, self.fl.owner.held_ints.get(callee.sym_name.data), args, results,
                               self.fl.src.location(node), callee.sym_name.data)
        known = self.fl.owner.known_results.get(callee.sym_name.data, ())
        results = [r if k is None else self.fl.materialise(k, node) for r, k in zip_longest(results, known)]
        if callee.sym_name.data in self.fl.owner.always_raises:
            self._never_returns(callee, node)
        tree = self.fl.owner.results_of(callee)
        return None if tree == NONE else rebuild(tree, iter(results))

    def _never_returns(self, callee, node: ast.AST) -> None:
        """A call of a function every path of which raises ends its statement's
        path, where the statement runs it unconditionally (control_flow.run_statements)."""
        if self.fl.em is self.fl.statement_em:
            raise PathEnded
        name = self.fl.owner.names.get(callee.sym_name.data, callee.sym_name.data)
        raise self.fl.src.error(node, f"{name} raises on every path, and this expression calls it only on some",
                                "call it in a statement of its own (`if c: f(x)`), or raise directly")

    # ---- lambdas and nested defs ----------------------------------------------------------
    def expr_Lambda(self, node: ast.Lambda) -> Closure:
        return self._closure(node)

    def define(self, stmt: ast.FunctionDef) -> None:
        if stmt.decorator_list:
            raise self.fl.src.error(
                stmt.decorator_list[0], "a decorator on a nested function is not supported",
                "define the decorated function at module level",
            )
        self.fl.statements.assign(ast.Name(id=stmt.name, ctx=ast.Store()), self._closure(stmt))

    def _closure(self, node: ast.Lambda | ast.FunctionDef) -> Closure:
        args = node.args
        defaults = tuple(self.fl.expr(d) for d in args.defaults)  # evaluated where it is defined
        kw_defaults = tuple(
            (a.arg, self.fl.expr(d)) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None
        )
        return Closure(self._closure_code(node), defaults, kw_defaults, None, self.fl)

    def _closure_code(self, node) -> ClosureCode:
        cache = self.closure_codes
        if node not in cache:
            tree = node if isinstance(node, ast.FunctionDef) else lambda_as_def(node)
            outer = self.fl.name_and_target[0] or self.fl.src.tree.name
            free, nonlocals = free_names(node), nonlocal_writes.nonlocal_names(node)
            if nonlocals:  # it reads them from its definer, and returns what they hold after
                tree = nonlocal_writes.returning_nonlocals(tree, nonlocals)
                free = tuple(dict.fromkeys([*free, *nonlocals]))
            cache[node] = ClosureCode(self.fl.src.with_tree(tree), f"{outer}.{tree.name}", free, nonlocals)
        return cache[node]

    def bind_closure(self, closure: Closure, binding: frozenset = frozenset()) -> Closure:
        """Fix the values a closure reads from its definer: those they hold now
        (Python reads a closure's variables when it runs, and it runs now)."""
        if closure.captured is not None:
            return closure
        env = {**closure.definer.env, **dict(closure.cells)}
        captured = []
        for name in closure.code.free:
            value = env.get(name, _UNBOUND)
            if value is _UNBOUND and name not in closure.definer.local_names:
                continue  # a global (or a builtin), resolved inside
            if value is _UNBOUND or isinstance(value, NoValue):  # Python's would raise NameError
                unbound = value is _UNBOUND
                raise self.fl.src.error(
                    closure.code.source.tree,
                    f"{closure.code.name} reads '{name}', which has no value where it is called: "
                    + ("it is not assigned before the call on every path" if unbound else value.why),
                    "assign it before the call" if unbound else value.hint,
                )
            if isinstance(value, Closure) and value.code is closure.code:
                captured.append((name, SELF))  # it calls itself
                continue
            if isinstance(value, Closure) and value.captured is None:
                if value.code in binding:
                    raise self.fl.src.error(
                        closure.code.source.tree,
                        f"the nested functions {closure.code.name} and {value.code.name} call each other",
                        "define mutually recursive functions at module level",
                    )
                value = self.bind_closure(value, binding | {closure.code})
            captured.append((name, value))
        return Closure(closure.code, closure.defaults, closure.kw_defaults, tuple(captured))

    # ---- other callees ------------------------------------------------------------------
    def _transform(self, node: ast.Call, transform) -> Value:
        """irad.grad(f, argnums=...) and friends inside a program: applied while
        lowering, to functions and constants known then."""

        def known(arg: ast.expr):
            try:
                return ast.literal_eval(arg)
            except ValueError:
                value = self.fl.expr(arg)
                if arg is node.args[0] and is_made_function(value):  # a lambda: transformed_closures.py
                    return value
                if not isinstance(value, Static):
                    raise self.fl.src.error(
                        arg, f"the arguments of {describe_callable(transform)} must be "
                        "known while lowering (functions and constants)"
                    ) from None
                return value.obj

        args = [known(a) for a in node.args]
        kwargs = {k.arg: known(k.value) for k in node.keywords}
        if args and is_made_function(args[0]):
            return transform_made_function(self.fl, node, transform, args, kwargs)
        return Static(transform(*args, **kwargs))

    def _program_call(self, node: ast.Call, api, kind: str) -> Value:
        """irad.jvp(f, primals, tangents[, has_aux=...]) in a program: a call to
        an entry asking for the jvp with a request (transformations.jvp_entry);
        f is known while lowering (a function, a lambda or nested def)."""
        name = f"irad.{api.__name__}"
        if kind != JVP:
            return program_vjp(self.fl, node)  # irad/frontend/program_vjp.py
        keywords = {k.arg: k.value for k in node.keywords}
        if len(node.args) != 3 or keywords.keys() - {"has_aux"} or any(isinstance(a, ast.Starred) for a in node.args):
            raise self.fl.src.error(
                node, f"{name} inside a program takes (f, primals, tangents) by position, and has_aux=",
                "write irad.jvp(f, (x, y), (dx, dy))",
            )
        has_aux = False
        if "has_aux" in keywords:
            known, has_aux = known_value(self.fl.expr(keywords["has_aux"]))
            if not known or not isinstance(has_aux, (bool, np.bool_)):
                raise self.fl.src.error(keywords["has_aux"], "has_aux must be True or False, known while lowering")
            has_aux = bool(has_aux)
        fn = self.fl.expr(node.args[0])
        primals, tangents = self.fl.expr(node.args[1]), self.fl.expr(node.args[2])
        for what, value, arg in (("primals", primals, node.args[1]), ("tangents", tangents, node.args[2])):
            if not isinstance(value, tuple):
                raise self.fl.src.error(arg, f"{name} takes its {what} as a tuple, not {self.fl.kind_of(value)}",
                                     "write irad.jvp(f, (x,), (dx,))")
        if len(primals) != len(tangents):
            raise self.fl.src.error(node, f"{name} takes one tangent per primal ({len(primals)}), got {len(tangents)}")
        leaves: list[SSAValue] = []
        closure = self.bind_closure(fn) if isinstance(fn, Closure) else None
        if closure is not None:
            closure_shape, target = self.shape_of(closure, leaves, node, closure.code.name, "the function"), closure.code
        elif isinstance(fn, Static) and callable(fn.obj) and not isinstance(fn.obj, type):
            closure_shape, target = None, fn.obj
        else:
            raise self.fl.src.error(node.args[0], f"{name} differentiates a function known while lowering, "
                                 f"not {self.fl.kind_of(fn)}")
        trees = []
        for i, value in enumerate(primals):
            found = self.fl.tree_leaves(value, node.args[1])
            if found is None:
                raise self.fl.src.error(node.args[1], f"primal {i} of {name} is {self.fl.kind_of(value)}, "
                                     "not a number, an array or a container of them")
            leaves += found[0]
            trees.append(found[1])
        for i, (value, primal) in enumerate(zip(tangents, trees)):
            found = self.fl.tree_leaves(value, node.args[2])
            if found is None or not _tangent_fits(found[1], primal):
                shown = self.fl.kind_of(value) if found is None else describe(found[1])
                raise self.fl.src.error(
                    node.args[2], f"the tangent of primal {i} of {name} is {shown}, but its primal is "
                    f"{describe(primal)}", "give each tangent its primal's structure, shapes and float type",
                )
            leaves += [self.fl.em.to_float(v, t) if not is_float(v.type) and is_float(t) else v
                       for v, t in zip(found[0], leaf_types(primal))]
            trees.append(primal)
        transformation = Transformation(JVP, target, tuple(range(len(primals))), has_aux)
        return self.call(transformation, leaves, node, CallShape(tuple(trees), closure=closure_shape))

    def _external_call(self, fn, args: list, kwargs: dict, node) -> Value:
        """A call to a function without source that the rule table covers, or to
        a derivative object (irad.grad(f)), whose arguments may be containers."""
        if kwargs:
            raise self.fl.src.error(
                node, f"{describe_callable(fn)} takes its arguments positionally inside a program, not "
                f"'{next(iter(kwargs))}=' by keyword", "pass it by position, or bind the keyword before the "
                "transformation: irad.grad(functools.partial(f, k=...))" if isinstance(fn, Transformation)
                else "pass its arguments by position",
            )
        if not isinstance(fn, Transformation):
            return self.call(fn, [self.fl.as_number(a, node) for a in args], node)
        leaves: list[SSAValue] = []
        trees = []
        static = static_positions(fn, fn.static_argnums, fn.static_argnames, parameter_names(fn, len(args)), len(args))
        for i, a in enumerate(args):
            if i in static:
                trees.append(self._static_argument(fn, i, a, node))
                continue
            found = self.fl.tree_leaves(a, node)
            if found is None and made_function_argument(fn, i, a, len(args)):  # program_vjp.py
                trees.append(self.shape_of(a, leaves, node, describe_callable(fn), f"argument {i}"))
                continue
            if found is None:
                raise self.fl.src.error(
                    node, f"{describe_callable(fn)} takes numbers, arrays or containers of them, "
                    f"not {self.fl.kind_of(a)}"
                )
            leaves += found[0]
            trees.append(found[1])
        return self.call(fn, leaves, node, CallShape(tuple(trees)))

    def _static_argument(self, fn: Transformation, i: int, value, node) -> StaticShape:
        """Argument `i` of a call to a transformation that takes it as static:
        a value known while lowering, or the error saying where it became run-time."""
        value = self.fl.runtime_values(value, node, arrays=False)
        leaves: list[SSAValue] = []
        shape = flatten(value, leaves, self.bind_closure, numpy_scalars.known_number)
        if leaves or shape is None:
            raise self.fl.runtime_error(
                node, f"argument {i} of {describe_callable(fn)} is static (static_argnums or static_argnames), "
                "but it is not known while lowering", "pass a constant, a shape or len(...)", leaves,
            )
        if isinstance(shape, StaticShape):
            return shape
        try:
            return static_argument(_known_object(shape))
        except TypeError:
            raise self.fl.src.error(node, f"argument {i} of {describe_callable(fn)} is static, but it is "
                                 f"{self.fl.kind_of(value)}, which is not hashable", "pass a tuple") from None

    def _library_call(self, fn, args: list, kwargs: dict, node) -> SSAValue:
        arities, emit = OPS[fn]
        if kwargs:
            raise self.fl.src.error(node, f"the keyword argument '{next(iter(kwargs))}' of {describe_callable(fn)} "
                                 "is not supported", f"irad takes the arguments of {describe_callable(fn)} positionally, without keywords")
        if len(args) not in arities:
            raise self.fl.src.error(node, f"{describe_callable(fn)} with {len(args)} arguments is not supported")
        if len(args) == 1 and isinstance(args[0], Selection):  # abs(x[m]) (masked_reads.py)
            return builtin_on_array(self.fl.arrays, fn, args, node) or self.fl.as_number(args[0], node)
        values = [self.fl.as_number(a, node) for a in args]
        if any(is_array(a) for a in values):
            result = builtin_on_array(self.fl.arrays, fn, values, node)
            if result is None:
                raise self.fl.src.error(
                    node, f"{describe_callable(fn)} on arrays is not supported",
                    "use the numpy function (np.maximum, np.abs, ...)",
                )
            return result
        if fn in FLOAT_TO_INT and is_float(values[0].type):
            self.fl.check_int_conversion(values[0], node)
        if fn in INT_RANGES:
            self.fl.check_int_range(fn, values[0], node)
        if self.fl.owner.has_rules(fn):  # the pass must meet a call op to consult the table
            return self.call(fn, values, node)
        if fn in DOMAINS:
            inside, message = DOMAINS[fn]
            result = emit(self.fl.em, values)
            self.fl.check(inside(self.fl.em, values, result), node, message)
            return self._python_number(fn, values, result)
        if fn is builtins.pow and not any(is_float(v.type) for v in values) and _may_be_negative(values[-1]) \
                and numpy_scalars.kind(values[0]) != numpy_scalars.PYTHON:
            raise self.fl.src.error(node, "pow() of a numpy int and an int that may be negative: numpy raises "
                                 "(integers to negative integer powers are not allowed)",
                                 "write pow(float(base), n), or make n a non-negative literal")
        if fn in _KEEPS_BOOLS and all(is_bool(v.type) for v in values):
            kinds = {numpy_scalars.kind(v) for v in values}
            if not (fn is builtins.abs and kinds == {numpy_scalars.PYTHON}):  # abs(True) is 1
                return self._bools(fn, values, kinds.pop() if len(kinds) == 1 else numpy_scalars.EITHER)
        if fn is builtins.abs and is_int(values[0].type):  # abs(INT64_MIN) does not fit
            return integers.CheckedIntegers(self.fl.em, self.fl.src.location(node)).absolute(values[0])
        return self._python_number(fn, values, emit(self.fl.em, values))

    def _bools(self, fn, values: list[SSAValue], kind: str) -> SSAValue:
        """max, min of bools (one of them: a bool, numpy's or Python's as `kind`
        says; numpy_scalars.py), and abs of a numpy bool (the bool)."""
        result = values[0]
        for v in values[1:]:
            result = self.fl.em.op((arith.OrIOp if fn is builtins.max else arith.AndIOp)(result, v))
        return numpy_scalars.mark(result, kind) if result is not values[0] else result

    def _python_number(self, fn, values: list[SSAValue], result: SSAValue) -> SSAValue:
        """What kind of number a library call returns (numpy_scalars.py): math's
        functions, float() and int() a Python number; abs, min, max, pow their
        arguments' kind."""
        if fn in _KEEPS_BOOLS or fn is builtins.pow:
            return result
        if result in values:  # int(n) of an int: a new value, to say it is Python's
            if numpy_scalars.kind(result) == numpy_scalars.PYTHON:
                return result
            result = self.fl.em.op(arith.AddiOp(result, self.fl.em.const(0, result.type)))
        return numpy_scalars.mark(result, numpy_scalars.PYTHON)


def _known_object(shape):
    """The Python object a shape without run-time leaves stands for (a tuple of ints, ...)."""
    if isinstance(shape, StaticShape):
        return shape.obj
    if isinstance(shape, Node):
        return build(shape.cls, shape.keys, [_known_object(c) for c in shape.children], shape.order)
    raise TypeError("a function made inside the program")


def _tangent_fits(tangent, primal) -> bool:
    """Does a tangent's tree have its primal's structure, with the primal's type
    at each float leaf (an int where a float is: converted) and anything at
    the int and bool ones (ignored)?"""
    if structure(tangent) != structure(primal):
        return False
    return all(t == p or (is_float(p) and not is_tensor(p) and t in (I64, I1)) or not is_differentiable(p)
               for t, p in zip(leaf_types(tangent), leaf_types(primal)))


def _may_be_negative(n: SSAValue) -> bool:
    exponent = integers.constant_int(n)
    return exponent is None or exponent < 0


_KEEPS_BOOLS = (builtins.abs, builtins.max, builtins.min)  # of bools: a bool (numpy's abs too)


def _lowered(fn) -> bool:
    """Whether irad lowers the numpy or scipy function `fn`, or refuses it with
    a reason of its own (np.fft's, np.random's)."""
    name = library_entries(fn) or numpy_name(fn)  # registers scipy's entries on demand
    return (fn in NUMPY or fn in IMPLEMENTED_IN_PYTHON or library_refusals.refusal(name) is not None
            or name.startswith(("numpy.fft.", "numpy.random.")))


def _frozen_distribution(obj, origin):
    """A method of a frozen scipy.stats distribution known while lowering
    (`NOISE = scipy.stats.norm(0.0, 2.0)`, then `NOISE.logpdf(x)`) as the
    distribution's function and the parameters it was frozen with, read where
    the object lives (an array parameter is a hidden argument, globals.py):
    (the method, its positional parameters after x, its keyword ones); else None."""
    if not isinstance(obj, types.MethodType) or not type(obj.__self__).__name__.endswith("_frozen"):
        return None
    stats = sys.modules.get("scipy.stats")
    frozen, owner = obj.__self__, _owner_origin(origin)
    public = getattr(stats, getattr(getattr(frozen, "dist", None), "name", ""), None)  # the dist is a copy
    def at(value, *steps):
        where = owner
        for kind, step in steps:
            where = where and (where.attribute(step) if kind == "attr" else where.item(step))
        return Static(value, where)
    if public is not None and all(hasattr(frozen, a) for a in ("args", "kwds")):  # norm(...), gamma(a, ...), ...
        method = Static(getattr(public, obj.__name__))
        bound = [at(v, ("attr", "args"), ("item", i)) for i, v in enumerate(frozen.args)]
        return method, bound, {k: at(v, ("attr", "kwds"), ("item", k)) for k, v in frozen.kwds.items()}
    if type(frozen).__name__ == "multivariate_normal_frozen" and obj.__name__ in ("logpdf", "pdf"):
        method = Static(getattr(stats.multivariate_normal, obj.__name__))
        return method, [], {"mean": at(frozen.mean, ("attr", "mean")), "cov": at(frozen.cov, ("attr", "cov")),
                            "allow_singular": Static(frozen.allow_singular)}
    return None


def _owner_origin(origin):
    """Where the object a bound method belongs to lives: `MODEL` for `MODEL.forward`."""
    if origin is None or not origin.steps or origin.steps[-1][0] != "attr":
        return None
    return replace(origin, steps=origin.steps[:-1])


def _hashable(obj) -> bool:
    """Can `obj` be looked up in a table (a mutable dataclass instance cannot)?"""
    try:
        hash(obj)
    except TypeError:
        return False
    return True


def closure_signature(closure: Closure) -> inspect.Signature:
    """The signature of a lambda or nested def, its defaults the values they had at the `def`."""
    a = closure.code.source.tree.args
    empty = inspect.Parameter.empty
    positional = [*a.posonlyargs, *a.args]
    defaults = [empty] * (len(positional) - len(closure.defaults)) + list(closure.defaults)
    kw_defaults = dict(closure.kw_defaults)
    params = []
    for i, (arg, default) in enumerate(zip(positional, defaults)):
        kind = inspect.Parameter.POSITIONAL_ONLY if i < len(a.posonlyargs) else inspect.Parameter.POSITIONAL_OR_KEYWORD
        params.append(inspect.Parameter(arg.arg, kind, default=default))
    if a.vararg is not None:
        params.append(inspect.Parameter(a.vararg.arg, inspect.Parameter.VAR_POSITIONAL))
    for arg in a.kwonlyargs:
        params.append(inspect.Parameter(arg.arg, inspect.Parameter.KEYWORD_ONLY, default=kw_defaults.get(arg.arg, empty)))
    if a.kwarg is not None:
        params.append(inspect.Parameter(a.kwarg.arg, inspect.Parameter.VAR_KEYWORD))
    return inspect.Signature(params)


__all__ = ["Calls", "closure_signature"]
