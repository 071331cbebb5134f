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
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from xdsl.ir import Attribute, SSAValue

from irad.frontend.source import FunctionSource
from irad.frontend.values import Static


@dataclass(frozen=True, eq=False)
class ClosureCode:
    """The code of a lambda or nested def: its AST (a lambda made a `def`
    returning its expression), where it lives, and the names it reads from the
    enclosing function. One per AST node, so every call meets the same code."""

    source: FunctionSource
    name: str  # for symbols and messages: "loss.inner", "loss.lambda"
    free: tuple[str, ...]


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


@dataclass(frozen=True, eq=False)
class Partial:
    """functools.partial(fn, *args, **keywords) built inside a program."""

    fn: object
    args: tuple = ()
    keywords: tuple = ()  # ((name, value), ...)


@dataclass(frozen=True, eq=False)
class Keywords:
    """A function's `**kwargs`: names and values, expanded by `f(**kwargs)`."""

    items: tuple = ()


# ---- shapes: what a call is specialised on -----------------------------------------
# A shape is an IR type (a run-time value: one argument of the func.func) or one of
# the classes below, all hashable and compared by value.
@dataclass(frozen=True)
class TupleShape:
    items: tuple


@dataclass(frozen=True)
class StaticShape:
    """An object known while lowering, compared by equality when it is a plain
    constant (None, a string, a tuple of ints) and by identity otherwise, and by
    where it lives (the arrays reached from it are hidden arguments read there)."""

    key: object
    obj: object = field(compare=False, hash=False)
    origin: object = None


@dataclass(frozen=True)
class ClosureShape:
    code: ClosureCode  # compared by identity
    defaults: tuple
    kw_defaults: tuple
    captured: tuple  # ((name, shape), ...); SELF for a reference to itself


@dataclass(frozen=True)
class PartialShape:
    fn: object
    args: tuple
    keywords: tuple


@dataclass(frozen=True)
class KeywordsShape:
    items: tuple


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

    @staticmethod
    def of_types(types) -> CallShape:
        return CallShape(tuple(types))

    def leaf_types(self) -> tuple[Attribute, ...]:
        out: list[Attribute] = []
        if self.closure is not None:
            _leaf_types(self.closure, out)
        for s in self.args:
            _leaf_types(s, out)
        for _, s in self.keywords:
            _leaf_types(s, out)
        return tuple(out)


def _leaf_types(shape, out: list) -> None:
    if isinstance(shape, Attribute):
        out.append(shape)
    elif isinstance(shape, TupleShape):
        for s in shape.items:
            _leaf_types(s, out)
    elif isinstance(shape, ClosureShape):
        for s in shape.defaults:
            _leaf_types(s, out)
        for _, s in shape.kw_defaults:
            _leaf_types(s, out)
        for _, s in shape.captured:
            if s is not SELF:
                _leaf_types(s, out)
    elif isinstance(shape, PartialShape):
        _leaf_types(shape.fn, out)
        for s in shape.args:
            _leaf_types(s, out)
        for _, s in shape.keywords:
            _leaf_types(s, out)
    elif isinstance(shape, KeywordsShape):
        for _, s in shape.items:
            _leaf_types(s, out)


_PLAIN = (str, bytes, type(None), bool, int, float, type(Ellipsis))


def static_key(obj) -> object:
    """Equality for plain constants (and tuples of them), identity for the rest."""
    if isinstance(obj, _PLAIN) or (isinstance(obj, tuple) and all(isinstance(o, _PLAIN) for o in obj)):
        return (type(obj), obj)
    return ("id", id(obj))


def flatten(value, leaves: list[SSAValue], bind) -> object:
    """The shape of `value`, appending its run-time values to `leaves`.
    `bind(closure)` fixes what a live closure captured; `None` is returned for
    a value no call can take (the caller reports it)."""
    if isinstance(value, SSAValue):
        leaves.append(value)
        return value.type
    if isinstance(value, tuple):
        items = [flatten(v, leaves, bind) for v in value]
        return None if any(s is None for s in items) else TupleShape(tuple(items))
    if isinstance(value, Static):
        return StaticShape(static_key(value.obj), value.obj, value.origin)
    if isinstance(value, Closure):
        value = bind(value)
        defaults = tuple(flatten(v, leaves, bind) for v in value.defaults)
        kw_defaults = tuple((k, flatten(v, leaves, bind)) for k, v in value.kw_defaults)
        captured = []
        for name, v in value.captured:
            captured.append((name, SELF if v is SELF else flatten(v, leaves, bind)))
        parts = [*defaults, *(s for _, s in kw_defaults), *(s for _, s in captured)]
        if any(s is None for s in parts):
            return None
        return ClosureShape(value.code, defaults, kw_defaults, tuple(captured))
    if isinstance(value, Partial):
        fn = flatten(value.fn, leaves, bind)
        args = tuple(flatten(v, leaves, bind) for v in value.args)
        keywords = tuple((k, flatten(v, leaves, bind)) for k, v in value.keywords)
        if fn is None or any(s is None for s in args) or any(s is None for _, s in keywords):
            return None
        return PartialShape(fn, args, keywords)
    if isinstance(value, Keywords):
        items = tuple((k, flatten(v, leaves, bind)) for k, v in value.items)
        return None if any(s is None for _, s in items) else KeywordsShape(items)
    return None


def rebuild(shape, leaves) -> object:
    """The value a shape stands for, taking its run-time values from the iterator `leaves`."""
    if isinstance(shape, Attribute):
        return next(leaves)
    if isinstance(shape, TupleShape):
        return tuple(rebuild(s, leaves) for s in shape.items)
    if isinstance(shape, StaticShape):
        return Static(shape.obj, shape.origin)
    if isinstance(shape, ClosureShape):
        defaults = tuple(rebuild(s, leaves) for s in shape.defaults)
        kw_defaults = tuple((k, rebuild(s, leaves)) for k, s in shape.kw_defaults)
        captured = tuple((k, SELF if s is SELF else rebuild(s, leaves)) for k, s in shape.captured)
        return Closure(shape.code, defaults, kw_defaults, captured)
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
    for node in _own_scope(body):
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
    for node in _own_scope(body):
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


def _own_scope(body: list[ast.AST]):
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
