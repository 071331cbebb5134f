"""Functions as values while lowering, and what a call is specialised on.

A call to a Python function becomes a `func.call` to a `func.func` specialised
for the *shape* of its arguments: which are run-time values (their IR types),
and which are known while lowering (a function, a module, None, a string, a
user object whose method is called). Run-time values become the function's
arguments; known ones are baked into its body, so `apply(f, x)` lowers `apply`
once per `f` it is called with, as JAX specialises on static arguments.

Values that stand for functions:

* a Python function, builtin, numpy function, bound method or
  `functools.partial` object from globals: `Static`;
* `Closure`: a `lambda` or nested `def` of the function being lowered. It
  lowers to its own `func.func` whose leading arguments are the values it
  reads from the enclosing function (*closure conversion*), so run-time
  values it closes over are differentiated through. As in Python it reads
  them when it is called (late binding), not where it is defined;
* `Partial`: `functools.partial(f, ...)` made inside the program, holding run-time
  values;
* `Keywords`: the `**kwargs` of a function, which only a call can expand.

Containers of any of these (tuples, lists, dicts, NamedTuples, dataclasses)
are pytrees: `flatten` and `rebuild` below are the one way a structured value
becomes run-time values and comes back, for calls, returns and joins.
"""

from __future__ import annotations

import ast
import struct
from dataclasses import dataclass, field, fields

import numpy as np
from xdsl.ir import Attribute, SSAValue

from irad.base.pytrees import Node, is_data, leaf_types, tuple_tree
from irad.frontend.source import FunctionSource
from irad.frontend.values import Kind, Static, make_value, value_kind, value_node


@dataclass(frozen=True, eq=False)
class ClosureCode:
    """The code of a lambda or nested def: its AST (a lambda made a `def`
    returning its expression), where it lives, and the names it reads from the
    enclosing function. One per AST node, so every call meets the same code."""

    source: FunctionSource
    name: str  # for symbols and messages: "loss.inner", "loss.lambda"
    free: tuple[str, ...]
    nonlocals: tuple[str, ...] = ()  # what its `nonlocal` statements declare (nonlocal_writes.py)


@dataclass(frozen=True, eq=False)
class Closure:
    """A lambda or nested def as a value. `captured` is None while it still
    reads its definer's live variables (inside the function that defines it);
    a call or a hand-over to another function fixes them."""

    code: ClosureCode
    defaults: tuple = ()  # the values of its positional defaults, evaluated at the `def`
    kw_defaults: tuple = ()  # (name, value) of keyword-only defaults
    captured: tuple | None = None  # ((name, value), ...)
    definer: object = field(default=None, repr=False)  # the FunctionLowering defining it
    # ((name, value), ...) of variables of a comprehension that made it, which
    # Python's cells hold at their last value once it ends: read before the definer's
    cells: tuple = ()
    KIND = Kind.CALLABLE


@dataclass(frozen=True, eq=False)
class Partial:
    """functools.partial(fn, *args, **keywords) built inside a program."""

    fn: object
    args: tuple = ()
    keywords: tuple = ()  # ((name, value), ...)
    KIND = Kind.CALLABLE


@dataclass(frozen=True, eq=False)
class Keywords:
    """A function's `**kwargs`: names and values, expanded by `f(**kwargs)`."""

    items: tuple = ()
    KIND = Kind.TREE


# ---- shapes: what a call is specialised on -----------------------------------------
# A shape is a pytree (irad/base/pytrees.py) whose leaves are IR types (a run-time
# value: one argument of the func.func) or the shapes below, of values known while
# lowering. Containers are pytrees' `Node`s. All are hashable and compared by value;
# `parts()` gives the shapes inside one, in the order of its run-time values.
@dataclass(frozen=True)
class StaticShape:
    """An object known while lowering, compared by equality when it is a plain
    constant (a string, a tuple of ints) and by identity otherwise, and by
    where it lives (the arrays reached from it are hidden arguments read there)."""

    key: object
    obj: object = field(compare=False, hash=False)
    origin: object = None

    def parts(self) -> tuple:
        return ()


@dataclass(frozen=True)
class ClosureShape:
    code: ClosureCode  # compared by identity
    defaults: tuple
    kw_defaults: tuple
    captured: tuple | None  # ((name, shape), ...); SELF for a reference to itself; None while live
    definer: object = None  # a live closure's definer (compared by identity); None once bound

    def parts(self) -> tuple:
        captured = (s for _, s in self.captured or () if s is not SELF)
        return (*self.defaults, *(s for _, s in self.kw_defaults), *captured)


@dataclass(frozen=True)
class PartialShape:
    fn: object
    args: tuple
    keywords: tuple

    def parts(self) -> tuple:
        return (self.fn, *self.args, *(s for _, s in self.keywords))


@dataclass(frozen=True)
class KeywordsShape:
    items: tuple

    def parts(self) -> tuple:
        return tuple(s for _, s in self.items)


SELF = "self-reference"  # a closure that names itself (recursion), in its captured shape


@dataclass(frozen=True)
class CallShape:
    """The shape of one call: its positional and keyword arguments, and for a
    closure the closure itself (its defaults and what it captured). The
    func.func's arguments are the run-time values in that order: closure,
    positional, keyword."""

    args: tuple
    keywords: tuple = ()  # ((name, shape), ...) sorted by name
    closure: ClosureShape | None = None
    kinds: tuple = ()  # an entry's: per run-time leaf, numpy's or Python's number (pytrees.Arguments)
    # per run-time leaf, the Python classes the caller passes (number_classes.passed; () for its type's)
    classes: tuple = ()

    @staticmethod
    def of(signature: CallShape | Node | tuple) -> CallShape:
        """A call's shape from the tree of its positional arguments (the API's
        signature) or their IR types."""
        if isinstance(signature, CallShape):
            return signature
        if isinstance(signature, Node):
            return CallShape(tuple(signature.children), kinds=getattr(signature, "kinds", ()))
        return CallShape(tuple(signature))

    def parts(self) -> tuple:
        closure = () if self.closure is None else (self.closure,)
        return (*closure, *self.args, *(s for _, s in self.keywords))

    def leaf_types(self) -> tuple[Attribute, ...]:
        return tuple(leaf_types(self))

    def positional_tree(self) -> Node | None:
        """The tree of the positional arguments when they are all the call has
        and all are data (numbers, arrays and containers of them), static
        arguments (a transformation's static_argnums) or functions the program
        made (not differentiated: program_vjp.py's pullback of a lambda)."""
        if self.keywords or self.closure is not None or not all(
                is_data(s) or isinstance(s, (StaticShape, ClosureShape, PartialShape)) for s in self.args):
            return None
        return tuple_tree(self.args)


_PLAIN = (str, bytes, type(None), bool, int, float, type(Ellipsis), np.integer, np.bool_)


def static_key(obj) -> object:
    """Equality for plain constants (numbers, strings, None, numpy's int and
    bool scalars, and tuples of them, nested), by type too (1, True and
    np.int64(1) specialise apart); identity for the rest."""
    key = constant_key(obj)
    return ("id", id(obj)) if key is None else key


def constant_key(obj) -> object | None:
    """The key of a plain constant (see `static_key`); None for other objects.
    Floats by their bits: 0.0 and -0.0 specialise apart, and NaNs of two signs."""
    if isinstance(obj, (float, np.floating)):
        return (type(obj), struct.unpack("<q", struct.pack("<d", float(obj)))[0])
    if isinstance(obj, _PLAIN):
        return (type(obj), obj.item() if isinstance(obj, np.generic) else obj)
    if type(obj) is tuple:
        keys = tuple(constant_key(o) for o in obj)
        return None if None in keys else (tuple, keys)
    return None


def static_argument(obj) -> StaticShape:
    """The shape of a static argument the API was given (static_argnums):
    compared by value, as JAX compares static arguments (TypeError when it
    cannot be hashed)."""
    key = constant_key(obj)
    if key is None:
        hash(obj)
        key = ("hash", type(obj), obj)
    return StaticShape(key, obj)


def flatten(value, leaves: list[SSAValue], bind=None, known=None) -> object:
    """The shape of `value`, appending its run-time values to `leaves`; None
    for a value no call can take (the caller reports it). Without `bind`, data
    only: numbers, arrays and containers of them (what a branch joins or a
    function returns). With it, also functions and objects known while
    lowering; `bind(closure)` fixes what a live closure captured (`live`
    keeps it reading its definer's variables: what a branch joins).
    `known(v)` gives the Python number an SSA number is known to be while
    lowering (None: a run-time value): a call passes those as static values
    (`StaticShape`), which the callee is specialised on.

    By values.Kind: RUNTIME values are leaves (their types in the shape), or
    StaticShapes where `known`; TREEs are Nodes (None, ABSENT, is the empty
    tree; a function's **kwargs, with `bind`, a KeywordsShape); with `bind`, KNOWN values and known functions (a `Static`) are
    StaticShapes and the CALLABLEs a program makes are shapes of their own
    (their run-time defaults and captures are leaves); ITERABLEs and the
    methods of values take no part in a call (None)."""
    kind = value_kind(value)
    if kind is Kind.RUNTIME:
        number = known(value) if known is not None else None
        if number is not None:
            return StaticShape(static_key(number), number)
        leaves.append(value)
        return value.type
    found = value_node(value)  # a TREE's containers; None (ABSENT or a KNOWN None) is the empty tree
    if found is not None:
        node, items = found
        children = tuple(flatten(v, leaves, bind, known) for v in items)
        return None if None in children else Node(node.cls, node.keys, children, node.order)
    if bind is None or kind in (Kind.ITERABLE, Kind.ABSENT):
        return None
    if isinstance(value, Static):  # KNOWN, or a known function (CALLABLE)
        return StaticShape(static_key(value.obj), value.obj, value.origin)
    if isinstance(value, Closure):
        value = bind(value)
        defaults = tuple(flatten(v, leaves, bind, known) for v in value.defaults)
        kw_defaults = tuple((k, flatten(v, leaves, bind, known)) for k, v in value.kw_defaults)
        captured = None if value.captured is None else tuple(
            (k, SELF if v is SELF else flatten(v, leaves, bind, known)) for k, v in value.captured
        )
        shape = ClosureShape(value.code, defaults, kw_defaults, captured, value.definer if captured is None else None)
    elif isinstance(value, Partial):
        fn = flatten(value.fn, leaves, bind, known)
        args = tuple(flatten(v, leaves, bind, known) for v in value.args)
        shape = PartialShape(fn, args, tuple((k, flatten(v, leaves, bind, known)) for k, v in value.keywords))
    elif isinstance(value, Keywords):  # the TREE of a function's **kwargs
        shape = KeywordsShape(tuple((k, flatten(v, leaves, bind, known)) for k, v in value.items))
    else:
        return None  # the methods of values
    return None if None in shape.parts() else shape


def live(closure: Closure) -> Closure:
    """`flatten`'s `bind` for a join: a closure stays as it is (still reading
    its definer's variables, as Python's does until it is called)."""
    return closure


def same_function(a, b) -> bool:
    """Do two values stand for one function? Two runs of one `def` (or lambda) in
    the same function are, if their defaults are the same values: what it reads
    from its definer it reads when called (late binding), not where it was made."""
    if not (isinstance(a, Closure) and isinstance(b, Closure)):
        return False
    if a.code is not b.code or a.definer is not b.definer or (a.captured is None) != (b.captured is None):
        return False
    named = [*a.kw_defaults, *(a.captured or ())], [*b.kw_defaults, *(b.captured or ())]
    if [k for k, _ in named[0]] != [k for k, _ in named[1]]:
        return False
    pairs = [*zip(a.defaults, b.defaults), *((x, y) for (_, x), (_, y) in zip(*named))]
    return all(_same_value(x, y) for x, y in pairs)


def _same_value(a, b) -> bool:
    if a is b or same_function(a, b):
        return True
    if isinstance(a, Static) and isinstance(b, Static):
        return static_key(a.obj) == static_key(b.obj)
    found_a, found_b = value_node(a), value_node(b)
    if found_a is None or found_b is None or found_a[0] != found_b[0]:
        return False
    return all(_same_value(x, y) for x, y in zip(found_a[1], found_b[1], strict=True))


def structure(shape) -> object:
    """A shape without its leaf types (pytrees.structure, through functions too):
    what two values must share to be joined."""
    if isinstance(shape, Attribute):
        return None
    if isinstance(shape, Node):
        return (shape.cls, shape.keys, tuple(structure(c) for c in shape.children))  # order: values.mark_orders
    if isinstance(shape, tuple):  # a shape's shapes, or its (name, shape) pairs
        return tuple(structure(s) for s in shape)
    if isinstance(shape, (ClosureShape, PartialShape, KeywordsShape)):
        return (type(shape), *(structure(getattr(shape, f.name)) for f in fields(shape)))
    return shape  # a StaticShape, SELF, a name, a closure's code or definer, None


def rebuild(shape, leaves) -> object:
    """The value a shape stands for, taking its run-time values from the iterator `leaves`."""
    if isinstance(shape, Attribute):
        return next(leaves)
    if isinstance(shape, Node):
        return make_value(shape.cls, shape.keys, [rebuild(s, leaves) for s in shape.children], shape.order)
    if isinstance(shape, StaticShape):
        return Static(shape.obj, shape.origin)
    if isinstance(shape, ClosureShape):
        defaults = tuple(rebuild(s, leaves) for s in shape.defaults)
        kw_defaults = tuple((k, rebuild(s, leaves)) for k, s in shape.kw_defaults)
        captured = None if shape.captured is None else tuple(
            (k, SELF if s is SELF else rebuild(s, leaves)) for k, s in shape.captured
        )
        return Closure(shape.code, defaults, kw_defaults, captured, shape.definer)
    if isinstance(shape, PartialShape):
        fn = rebuild(shape.fn, leaves)
        args = tuple(rebuild(s, leaves) for s in shape.args)
        return Partial(fn, args, tuple((k, rebuild(s, leaves)) for k, s in shape.keywords))
    if isinstance(shape, KeywordsShape):
        return Keywords(tuple((k, rebuild(s, leaves)) for k, s in shape.items))
    raise AssertionError(f"unknown shape {shape!r}")


# ---- lambdas and nested defs ---------------------------------------------------------
def parameter_names(args: ast.arguments) -> list[str]:
    names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    return names


def local_names(fn: ast.FunctionDef | ast.Lambda) -> set[str]:
    """The names a function binds in its own scope: parameters, assignments,
    loop targets, nested defs (not those of nested functions or comprehensions)."""
    names = set(parameter_names(fn.args))
    body = [fn.body] if isinstance(fn, ast.Lambda) else fn.body
    for node in own_scope(body):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
    return names


def free_names(fn: ast.FunctionDef | ast.Lambda) -> tuple[str, ...]:
    """The names `fn` reads from enclosing scopes, in order of first use."""
    return tuple(dict.fromkeys(_free(fn)))


def _free(fn) -> list[str]:
    bound = local_names(fn)
    found: list[str] = []
    body = [fn.body] if isinstance(fn, ast.Lambda) else fn.body
    for node in own_scope(body):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in bound:
            found.append(node.id)
        elif isinstance(node, (ast.Lambda, ast.FunctionDef)):
            found += [n for n in _free(node) if n not in bound]
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            found += [n for n in _comprehension_free(node) if n not in bound]
    return found


def _comprehension_free(node) -> list[str]:
    targets = {n.id for g in node.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}
    found = []
    for child in ast.walk(node):
        if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load) and child.id not in targets:
            found.append(child.id)
    return found


def own_scope(body: list[ast.AST]):
    """The nodes of a statement list, not descending into nested scopes (which
    are yielded themselves: functions, lambdas, classes, comprehensions)."""
    stack = list(reversed(body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
                             ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                stack.extend(reversed([*node.args.defaults, *(d for d in node.args.kw_defaults if d)]))
                if not isinstance(node, ast.Lambda):
                    stack.extend(reversed(node.decorator_list))
            elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
                stack.append(node.generators[0].iter)  # evaluated in the enclosing scope
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))
