"""Transformations as IR: what `irad.grad(f)`, `irad.jacfwd(f)`, ... lower to.

The API's transformation objects are `Transformation`s: a kind, the function
(a Python function or another transformation), `argnums` and `has_aux`.
Lowered for the tree of a call's arguments, one is an entry function in the
same module as everything else, whose body asks for the derivative with
request ops; irad's one pipeline (passes/pipelines.py) rewrites them:

    grad, value_and_grad   irad.value_and_grad / irad.grad (`aux = 1` with has_aux)
    jacfwd                 per float argument leaf, one irad.jvp (in a helper
                           function) along a tangent, mapped by an irad.vmap
                           over the leaf's identity basis: the Jacobian's columns
    jacrev                 per float output leaf, one irad.vjp along a
                           cotangent, mapped over the output's basis: its rows

Called inside a program, a transformation lowers the same way: its entry is
one more function of the program's module, so the outer derivative meets
the inner requests (the pass rewrites the innermost first). A Jacobian's
block is the mapped sweep's result, reshaped.

The result trees follow JAX: a gradient has the structure of the arguments in
`argnums` (None at int and bool leaves; one tree for an int `argnums`, a tuple
for a tuple); a Jacobian is the tree of f's outputs with each float output
replaced by that gradient structure, its leaves the blocks d output / d
argument leaf of shape `output.shape + argument.shape`.
"""

from __future__ import annotations

import inspect
import numbers
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import arith, func, scf, tensor
from xdsl.dialects.builtin import FloatAttr, FunctionType, TensorType, UnitAttr
from xdsl.ir import Attribute, Block, Region, SSAValue

from irad.base.pytrees import NONE, Node, Tree, leaf_types, tuple_tree, with_leaf_types
from irad.frontend.callables import StaticShape
from irad.frontend.source import error_at, name_of
from irad.ir import tensor as T
from irad.ir.builder import IRBuilder
from irad.ir.dialect import GradOp, JvpOp, ValueAndGradOp, VjpOp, VmapOp, batched_type, unbatched_type
from irad.ir.metadata import ENTRY, UNROLLABLE, mark_generated
from irad.ir.walk import find
from irad.ir.types import describe, is_differentiable, is_float, is_tensor, shape_of
from irad.ir.symbols import functions_by_name

GRADIENTS = ("grad", "value_and_grad")
JACOBIANS = ("jacfwd", "jacrev")
VMAP = "vmap"
JVP = "jvp"  # irad.jvp called inside a program: its arguments are the primals, then the tangents


class Transformation:
    """What the frontend reads of a transformation object (irad/api.py,
    irad/jacobians.py, irad/vmapping.py): its `kind` (GRADIENTS, JACOBIANS, JVP:
    irad.jvp inside a program, or VMAP), the function `f`, `argnums` and `has_aux`; a vmap's `in_axes`,
    `out_axes` and `axis_size` (JAX's); and the arguments lowered as values known while
    lowering, by position (`static_argnums`, a tuple of ints) and by name
    (`static_argnames`, a tuple of str), as JAX's `jit` takes them."""

    in_axes = 0
    out_axes = 0
    axis_size = None

    def __init__(self, kind: str, f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
                 static_argnums: int | Sequence[int] = (), static_argnames: str | Sequence[str] = ()):
        if kind not in (*GRADIENTS, *JACOBIANS, JVP, VMAP):
            raise ValueError(f"unknown transformation {kind!r}")
        self.kind = kind
        self.f = f
        self.argnums = argnums
        self.has_aux = has_aux
        self.static_argnums, self.static_argnames = normalise_static(f, static_argnums, static_argnames)

    @property
    def single(self) -> bool:
        """One argument's tree (an int `argnums`) rather than a tuple of them."""
        return isinstance(self.argnums, numbers.Integral)

    def options(self) -> tuple:
        """What else decides the code (a backend, checkpointing), for equality."""
        return ()

    def identity(self) -> tuple:
        """What the transformation is: two made alike are equal, so compiled code
        keyed on one (the inner grad of `irad.hessian(f)`, made anew at each
        step of a loop) is found again rather than compiled again."""
        argnums = self.argnums
        if isinstance(argnums, Sequence) and not isinstance(argnums, str):
            argnums = ("seq", *argnums)  # a list and a tuple select the same arguments
        return self.kind, self.f, argnums, self.has_aux, self.static_argnums, self.static_argnames, self.options()

    def __eq__(self, other) -> bool:
        return self is other or isinstance(other, Transformation) and self.identity() == other.identity()

    def __hash__(self) -> int:
        try:
            return hash(self.identity())
        except TypeError:  # an unhashable callable or argnums: equal only to itself, in practice
            return id(self)


# The functions that make transformations (irad.grad, irad.jacfwd, ...): a
# program may apply them while it is lowered (irad.grad(g) inside f).
CONSTRUCTORS: set[Callable] = set()


def constructor(make: Callable) -> Callable:
    """Mark `make` as a function programs may call to make a transformation."""
    CONSTRUCTORS.add(make)
    return make


# ---- static arguments ------------------------------------------------------------------
def normalise_static(f, static_argnums, static_argnames) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """`static_argnums` as a tuple of ints and `static_argnames` as a tuple of
    str (each may be given as one int or str), checked."""
    nums = (static_argnums,) if isinstance(static_argnums, numbers.Integral) else static_argnums
    if not isinstance(nums, Sequence) or isinstance(nums, str) or not all(
            isinstance(n, numbers.Integral) and not isinstance(n, bool) for n in nums):
        raise error_at(f, f"static_argnums must be an int or a tuple of ints, got {static_argnums!r}")
    names = (static_argnames,) if isinstance(static_argnames, str) else static_argnames
    if not isinstance(names, Sequence) or not all(isinstance(n, str) for n in names):
        raise error_at(f, f"static_argnames must be a str or a tuple of str, got {static_argnames!r}")
    return tuple(int(n) for n in nums), tuple(names)


def static_positions(f, static_argnums: Sequence[int], static_argnames: Sequence[str], names: Sequence[str],
                     n_args: int) -> frozenset[int]:
    """The positions of the static arguments of a call with `n_args` arguments
    (all positional, defaults filled in), whose parameters are `names`."""
    out = set()
    for n in static_argnums:
        if n >= n_args and _defaulted(f, n):  # left to its default by the call: the callee's own, static anyway
            continue
        if not -n_args <= n < n_args:
            raise error_at(f, f"static_argnums {tuple(static_argnums)!r} is out of range for {name_of(f)}, "
                           f"which was called with {n_args} arguments")
        out.add(n % n_args)
    for name in static_argnames:
        if name in names[:n_args]:
            out.add(list(names).index(name))
        elif not _is_parameter(f, name):  # a parameter the call leaves to its default is static anyway
            raise error_at(f, f"static_argnames names '{name}', which is not a parameter of {name_of(f)} "
                           f"({', '.join(names[:n_args]) or 'none'})")
    return frozenset(out)


def _defaulted(f, n: int) -> bool:
    """Is the positional parameter `n` of `f` one with a default?"""
    while isinstance(f, Transformation):
        f = f.f
    try:
        params = [p for p in inspect.signature(f).parameters.values() if p.kind <= p.POSITIONAL_OR_KEYWORD]
    except (TypeError, ValueError):
        return False
    return n < len(params) and params[n].default is not inspect.Parameter.empty


def _is_parameter(f, name: str) -> bool:
    """Is `name` a parameter of `f` (of the function a transformation differentiates)?"""
    while isinstance(f, Transformation):
        f = f.f
    try:
        return name in inspect.signature(f).parameters
    except (TypeError, ValueError):  # no signature Python can give: irad cannot tell
        return True
# The API's functions a program may call with run-time values (irad.jvp), by what
# the frontend lowers them to: "jvp" (a request), or "vjp" (refused: it returns a pullback).
PROGRAM_CALLS: dict[Callable, str] = {}


def program_call(kind: str) -> Callable[[Callable], Callable]:
    """Mark an API function as one a program may call (`kind`: "jvp" or "vjp")."""

    def mark(fn: Callable) -> Callable:
        PROGRAM_CALLS[fn] = kind
        return fn

    return mark


# ---- argnums and the leaves they select ---------------------------------------------
def ranges(signature: Node) -> list[range]:
    """The leaf indices of each argument."""
    out, start = [], 0
    for tree in signature.children:
        n = len(leaf_types(tree))
        out.append(range(start, start + n))
        start += n
    return out


def normalise_argnums(f, argnums, signature: Node, names: Sequence[str]) -> tuple[int, ...]:
    """The arguments `argnums` selects, each with at least one float leaf
    (`names`: the parameters' names, for errors)."""
    single = isinstance(argnums, numbers.Integral) and not isinstance(argnums, bool)
    if single:
        nums = (argnums,)
    elif isinstance(argnums, Sequence) and not isinstance(argnums, str):
        nums = tuple(argnums)
    else:
        raise error_at(f, f"argnums must be an int or a tuple of ints, got {argnums!r}")
    if not nums:
        raise error_at(f, f"argnums of {name_of(f)} is empty")
    n_args = len(signature.children)
    out = []
    for n in nums:
        if isinstance(n, bool) or not isinstance(n, numbers.Integral):
            raise error_at(f, f"argnums must be an int or a tuple of ints, got {argnums!r}")
        if not -n_args <= n < n_args:
            raise error_at(
                f,
                f"argnums {argnums!r} is out of range for {name_of(f)}, "
                f"which was called with {n_args} arguments"
            )
        n = int(n) % n_args
        tree = signature.children[n]
        if isinstance(tree, StaticShape):
            raise error_at(
                f, f"cannot differentiate {name_of(f)} with respect to argument {n} ('{names[n]}'): it is static "
                "(static_argnums or static_argnames), a value known while lowering\n"
                "  hint: leave it out of argnums, or out of the static arguments"
            )
        if not any(is_differentiable(t) for t in leaf_types(tree)):
            what = describe(tree) if not isinstance(tree, Node) else f"a {tree.cls.__name__} without float leaves"
            raise error_at(
                f,
                f"cannot differentiate {name_of(f)} with respect to argument {n} ('{names[n]}'): "
                f"it is {what}, not a float\n"
                "  hint: pass a float, or leave it out of argnums"
            )
        out.append(n)
    if len(set(out)) != len(out):
        raise error_at(f, f"argnums {argnums!r} repeats an argument")
    return tuple(out)


def float_leaves(signature: Node, nums: Sequence[int]) -> tuple[int, ...]:
    """The float leaves of the arguments `nums`, argument by argument."""
    types = leaf_types(signature)
    spans = ranges(signature)
    return tuple(i for a in nums for i in spans[a] if is_differentiable(types[i]))


def gradient_structure(signature: Node, nums: Sequence[int], single: bool) -> Tree:
    """The tree of the gradients of the arguments `nums`: each argument's tree
    with None in place of its int and bool leaves (one tree when `single`, else
    a tuple of them). Its leaves are the float leaves, in `float_leaves` order."""
    trees = [_floats_only(signature.children[a]) for a in nums]
    return trees[0] if single else tuple_tree(trees)


def _floats_only(tree: Tree) -> Tree:
    if isinstance(tree, Node):
        return Node(tree.cls, tree.keys, tuple(_floats_only(c) for c in tree.children))
    return tree if is_differentiable(tree) else NONE


def split_aux(f, results: Tree) -> tuple[Tree, Tree]:
    """(output, aux) of a function called with has_aux=True."""
    if not (isinstance(results, Node) and results.cls is tuple and len(results.children) == 2):
        shown = describe(results) if not isinstance(results, Node) else repr(results)
        raise error_at(
            f,
            f"with has_aux=True, {name_of(f)} must return a pair (output, aux), but returns {shown}\n"
            "  hint: return (output, aux); aux may be any pytree, and is not differentiated",
        )
    return results.children[0], results.children[1]


def check_scalar_result(f, tree: Tree, has_aux: bool) -> Attribute:
    """The type of the one float f returns (with has_aux: the first of its pair)."""
    if not isinstance(tree, Node) and (is_float(tree) or is_differentiable(tree) and shape_of(tree) == ()):
        return tree
    shown = describe(tree) if not isinstance(tree, Node) else repr(tree)
    if isinstance(tree, Node) and tree.cls is tuple and len(tree.children) == 2 and not has_aux:
        hint = "with has_aux=True, f may return (value, aux); use irad.vjp for functions with several outputs"
    elif isinstance(tree, Node) and len(leaf_types(tree)) > 1:
        hint = "use irad.vjp or irad.jacrev for functions with several outputs"
    elif not isinstance(tree, Node) and is_differentiable(tree):  # an array of more than one element
        hint = "reduce it to a number (np.sum, np.mean, ...), or take its Jacobian with irad.jacrev or irad.vjp"
    else:
        hint = "return a float (a gradient of an int, a bool, an array or nothing is not defined)"
    what = "the first of the pair it" if has_aux else "it"
    raise error_at(
        f,
        f"{name_of(f)} must return one float to take its gradient, but {what} returns {shown}\n"
        f"  hint: {hint}",
    )


def _check_float_outputs(f, out_tree: Tree) -> None:
    outputs = leaf_types(out_tree)
    if not outputs or not all(is_differentiable(t) for t in outputs):
        raise error_at(
            f,
            f"{name_of(f)} must return floats or float arrays for its Jacobian, but returns "
            f"{describe(out_tree) if not isinstance(out_tree, Node) else repr(out_tree) if outputs else 'nothing'}"
            + ("\n  hint: return int results as aux, with has_aux=True" if outputs else ""),
        )


def jacobian_structure(out_tree: Tree, aux_tree: Tree | None, signature: Node, nums, single: bool) -> Tree:
    """The tree of a Jacobian (JAX's nesting): out_tree with each leaf replaced by
    the gradient structure of the arguments `nums`; with aux, `(jacobian, aux)`."""
    inner = gradient_structure(signature, nums, single)

    def walk(t: Tree) -> Tree:
        if isinstance(t, Node):
            return Node(t.cls, t.keys, tuple(walk(c) for c in t.children))
        return inner

    tree = walk(out_tree)
    return tree if aux_tree is None else tuple_tree([tree, aux_tree])


# ---- entries ------------------------------------------------------------------------
# An entry takes f's arguments (the leaves of their trees), then the global
# arrays f reads (hidden arguments, read at each call), and returns what the
# transformation returns, flattened.
def entry_block(primal: func.FuncOp, arg_types: Sequence[Attribute], extra: Sequence[Attribute] = ()) -> Block:
    """The block of an entry function into `primal`: `arg_types`, `extra`, then
    primal's hidden arguments; named like primal's arguments."""
    hidden = list(primal.function_type.inputs.data[len(arg_types):])
    block = Block(arg_types=[*arg_types, *extra, *hidden])
    params = primal.body.block.args if primal.body.blocks else ()
    for arg, primal_arg in zip(block.args, params[: len(arg_types)]):
        arg.name_hint = primal_arg.name_hint
    for arg, primal_arg in zip(block.args[len(block.args) - len(hidden):], params[len(arg_types):]):
        arg.name_hint = primal_arg.name_hint
    return block


def entry_function(primal: func.FuncOp, name: str, block: Block, results: Sequence[SSAValue]) -> func.FuncOp:
    """The private function `name` with body `block` returning `results`,
    marked as `primal`'s entry (not added to a module)."""
    block.add_op(func.ReturnOp(*results))
    types = [v.type for v in results]
    entry = func.FuncOp(name, FunctionType.from_lists(block.arg_types, types), Region(block), visibility="private")
    mark_generated(entry, primal, ENTRY)
    return entry


def lower_transformation(t: Transformation, primal: func.FuncOp, results: Tree, signature: Node,
                         names: Sequence[str], symbol: Callable[[str], str]) -> tuple[func.FuncOp, Tree]:
    """The entry of `t` for `signature`, whose primal (f lowered for it) is
    `primal` with the result tree `results`; `names` are f's parameters' names
    and `symbol(base)` a fresh symbol. Returns the entry (not yet in the
    module) and the tree of its results."""
    name = primal.sym_name.data
    if t.kind == VMAP:
        raise ValueError("a vmap is lowered by lower_vmap, for the signature of one element")
    nums = normalise_argnums(t.f, t.argnums, signature, names)
    if t.kind in GRADIENTS:
        return _gradient_entry(t, primal, results, signature, nums, symbol(f"{name}.{t.kind}"))
    if t.kind in JACOBIANS:
        return _jacobian_entry(t, primal, results, signature, nums, symbol(f"{name}.{t.kind}"), symbol)
    raise ValueError(f"unknown transformation {t.kind!r}")


def jvp_entry(t: Transformation, primal: func.FuncOp, results: Tree, fixed: int, tangent_types: Sequence[Attribute],
              name: str) -> tuple[func.FuncOp, Tree]:
    """The entry of irad.jvp called inside a program: it takes primal's
    arguments (the leaves of a closure's captured values, `fixed` of them,
    then those of the primals), then one tangent per primal leaf, then the
    hidden arguments; it returns `(out, tangent_out)` (with has_aux: `(out,
    tangent_out, aux)`), tangent_out with None at int and bool results, as
    irad.jvp does."""
    arg_types = list(primal.function_type.inputs.data[: fixed + len(tangent_types)])
    block = entry_block(primal, arg_types, tangent_types)
    n, k = len(arg_types), len(tangent_types)
    floats = [j for j in range(k) if is_differentiable(arg_types[fixed + j])]
    outputs = list(primal.function_type.outputs.data)
    request = JvpOp(primal.sym_name.data, [*block.args[:n], *block.args[n + k:], *(block.args[n + j] for j in floats)],
                    [fixed + j for j in floats], [*outputs, *(u for u in outputs if is_differentiable(u))])
    block.add_op(request)
    out_tree, aux_tree = split_aux(t.f, results) if t.has_aux else (results, None)
    n_out = len(leaf_types(out_tree))
    values = list(request.results[: len(outputs)])
    tangents = request.results[len(outputs): len(outputs) + sum(is_differentiable(u) for u in outputs[:n_out])]
    trees = [out_tree, _floats_only(out_tree)]
    returned = [*values[:n_out], *tangents]
    if t.has_aux:
        trees.append(aux_tree)
        returned += values[n_out:]
    return entry_function(primal, name, block, returned), tuple_tree(trees)


def _gradient_entry(t: Transformation, primal: func.FuncOp, results: Tree, signature: Node, nums,
                    name: str) -> tuple[func.FuncOp, Tree]:
    """grad returns the gradients of the float leaves of `argnums` (argument by
    argument), then with has_aux the aux values: `grads, aux`; value_and_grad
    returns the value, the aux values, then the gradients: `(value, aux), grads`."""
    with_value = t.kind == "value_and_grad"
    out_tree, aux_tree = split_aux(t.f, results) if t.has_aux else (results, None)
    out_type = check_scalar_result(t.f, out_tree, t.has_aux)
    arg_types = leaf_types(signature)
    wrt = float_leaves(signature, nums)
    ordered = sorted(wrt)
    block = entry_block(primal, arg_types)
    grad_types = [arg_types[i] for i in ordered]
    grads_tree = with_leaf_types(gradient_structure(signature, nums, t.single), [arg_types[i] for i in wrt])
    callee = primal.sym_name.data
    if t.has_aux:
        outputs = list(primal.function_type.outputs.data)
        request = ValueAndGradOp(callee, block.args, ordered, [*outputs, *grad_types], aux=1)
        value, aux = request.results[:1], list(request.results[1:len(outputs)])
    else:
        value_types = [out_type] if with_value else []
        request = (ValueAndGradOp if with_value else GradOp)(callee, block.args, ordered, [*value_types, *grad_types])
        value, aux = request.results[:len(value_types)], []
    block.add_op(request)
    by_index = dict(zip(ordered, request.results[len(request.results) - len(ordered):]))
    grads = [by_index[i] for i in wrt]
    if with_value:
        returned = [*value, *aux, *grads]
        tree = tuple_tree([tuple_tree([out_type, aux_tree]) if t.has_aux else out_type, grads_tree])
    else:
        returned = [*grads, *aux]
        tree = tuple_tree([grads_tree, aux_tree]) if t.has_aux else grads_tree
    return entry_function(primal, name, block, returned), tree


def _jacobian_entry(t: Transformation, primal: func.FuncOp, results: Tree, signature: Node, nums,
                    name: str, symbol: Callable[[str], str]) -> tuple[func.FuncOp, Tree]:
    """The Jacobian's blocks, row-major (float output leaf by float argument
    leaf of `argnums`), then the aux values."""
    out_tree, aux_tree = split_aux(t.f, results) if t.has_aux else (results, None)
    _check_float_outputs(t.f, out_tree)
    arg_types = leaf_types(signature)
    wrt = float_leaves(signature, nums)
    n_out = len(leaf_types(out_tree))
    block = entry_block(primal, arg_types)
    sweeps = _Sweeps(primal, block, n_out, t.has_aux, symbol)
    if t.kind == "jacfwd":
        entries = _forward_entries(sweeps, wrt)
    else:
        entries = _reverse_entries(sweeps, wrt)
    returned = [*entries, *sweeps.aux()]
    tree = jacobian_structure(out_tree, aux_tree, signature, nums, t.single)
    return entry_function(primal, name, block, returned), with_leaf_types(tree, [v.type for v in returned])


# A Jacobian is a batch of sweeps, one per element of an argument leaf (jacfwd:
# a tangent) or of an output leaf (jacrev: a cotangent). A leaf of one element
# gets its sweep as a request in the entry; a larger one one request in a
# helper function, mapped with irad.vmap over the identity basis, so the code
# does not grow with the Jacobian. Where irad-vmap cannot batch the helper
# (forward mode over a tape), it unrolls the map instead (UNROLLABLE).


class _Sweeps:
    """What the sweeps of one Jacobian entry share: the primal, the entry's
    block (f's argument leaves, then the hidden arrays) and the number of
    output leaves (the rest of f's results are aux)."""

    def __init__(self, primal: func.FuncOp, block: Block, n_out: int, has_aux: bool, symbol: Callable[[str], str]):
        self.primal, self.block, self.n_out, self.has_aux, self.symbol = primal, block, n_out, has_aux, symbol
        self.callee = primal.sym_name.data
        self.outputs = list(primal.function_type.outputs.data)
        self.values: Sequence[SSAValue] | None = None  # f's results, where a request computed them

    def aux(self) -> list[SSAValue]:
        """The aux values (f's results after the outputs): a request's, or f called once more."""
        if not self.has_aux:
            return []
        if self.values is None:
            call = func.CallOp(self.callee, list(self.block.args), self.outputs)
            self.block.add_op(call)
            self.values = call.results
        return list(self.values[self.n_out:])

    def helper(self, what: str, extra: Sequence[Attribute], make: Callable[[Block], Sequence[SSAValue]]) -> str:
        """A function of the entry's arguments and `extra`, whose body `make`
        builds; put beside the primal, it is the callee of a vmap request."""
        block = Block(arg_types=[*self.block.arg_types, *extra])
        for arg, entry_arg in zip(block.args, self.block.args):
            arg.name_hint = entry_arg.name_hint
        helper = entry_function(self.primal, self.symbol(f"{self.callee}.{what}"), block, make(block))
        self.primal.parent.insert_op_after(helper, self.primal)
        return helper.sym_name.data

    def mapped(self, helper: str, basis: SSAValue, size: int, out_types: Sequence[Attribute],
               out_axes: Sequence[int]) -> Sequence[SSAValue]:
        """`helper` mapped over the leading axis of `basis` (its last argument)."""
        args = [*self.block.args, basis]
        request = VmapOp(helper, args, [*([None] * len(self.block.args)), 0], out_axes, size,
                         [batched_type(ty, a, size) for ty, a in zip(out_types, out_axes)])
        request.attributes[UNROLLABLE] = UnitAttr()
        self.block.add_op(request)
        return request.results


def _identity(block: Block, type_: Attribute) -> SSAValue:
    """The basis of `type_`'s space: a tensor of shape (size,) + type_.shape whose
    k-th element is 1 at flat index k; built when run, from two ramps (a
    constant would hold size**2 elements)."""
    b = IRBuilder(block)
    n = _size(type_)
    return T.reshape(b, T.band(b, n, n, 0, T.element(type_), computed=True), [n, *shape_of(type_)])


def _unit(block: Block, type_: Attribute, hot: int | None) -> SSAValue:
    """A constant of `type_` that is 1 at flat index `hot` and 0 elsewhere (all 0: None)."""
    values = np.zeros(_size(type_))
    if hot is not None:
        values[hot] = 1.0
    if is_tensor(type_):
        op = arith.ConstantOp(T.dense_attr(values, type_))
    else:
        op = arith.ConstantOp(FloatAttr(float(values[0]), type_))
    block.add_op(op)
    return op.result


def _size(type_: Attribute) -> int:
    return int(np.prod(shape_of(type_)))


def _block_type(rows: Attribute, cols: Attribute) -> Attribute:
    element = cols.element_type if is_tensor(cols) else cols
    return TensorType(element, [*shape_of(rows), *shape_of(cols)])


def _shaped(block: Block, v: SSAValue, rows: Attribute, cols: Attribute) -> SSAValue:
    """`v` (a number, or a tensor of the block's elements) as the block of
    shape rows.shape + cols.shape: a number for two numbers."""
    if not is_tensor(rows) and not is_tensor(cols):
        return v
    b = IRBuilder(block)
    return T.reshape(b, v if is_tensor(v.type) else _as_tensor(b, v), [*shape_of(rows), *shape_of(cols)])


def _as_tensor(b: IRBuilder, scalar: SSAValue) -> SSAValue:
    return b.value(tensor.FromElementsOp(scalar, result_type=TensorType(scalar.type, [1])))


def _forward_entries(sweeps: _Sweeps, wrt) -> list[SSAValue]:
    """The blocks' columns, argument leaf by argument leaf of `wrt`: one jvp
    along each element of the leaf's basis."""
    block, callee, outputs, n_out = sweeps.block, sweeps.callee, sweeps.outputs, sweeps.n_out
    float_outputs = [u for u in outputs if is_differentiable(u)]
    columns = []
    for a in wrt:
        arg_type = block.args[a].type
        n = _size(arg_type)

        def jvp(body: Block, tangent: SSAValue) -> Sequence[SSAValue]:
            request = JvpOp(callee, [*body.args[:len(block.args)], tangent], [a], [*outputs, *float_outputs])
            body.add_op(request)
            if body is block:
                sweeps.values = request.results[: len(outputs)]
            return request.results[len(outputs): len(outputs) + n_out]  # f's float results come first

        if n == 0:
            tangents = [_unit(block, _block_type(outputs[i], arg_type), None) for i in range(n_out)]
        elif n == 1:
            tangents = jvp(block, _unit(block, arg_type, 0))
        elif _over_a_loop_gradient(sweeps.primal):  # forward over a tape: irad-vmap cannot batch it
            columns.append(_unrolled_columns(sweeps, arg_type, n, jvp))
            continue
        else:
            helper = sweeps.helper("jacfwd.column", [arg_type], lambda body: jvp(body, body.args[-1]))
            out_axes = [len(shape_of(u)) for u in outputs[:n_out]]  # the basis last: output.shape + (n,)
            tangents = sweeps.mapped(helper, _identity(block, arg_type), n, outputs[:n_out], out_axes)
        columns.append([_shaped(block, tangents[i], outputs[i], arg_type) for i in range(n_out)])
    return [columns[j][i] for i in range(n_out) for j in range(len(wrt))]


def _over_a_loop_gradient(primal: func.FuncOp) -> bool:
    """Does `primal` reach a reverse-mode request whose callee reaches a loop?
    Its tape cannot be batched (forward over reverse: hessian of a loop), so
    its jacfwd sweeps are unrolled here, requests in the entry that a vmap of
    the Jacobian batches as requests (irad-vmap's unrollable fallback would
    differentiate them first)."""
    functions = functions_by_name(primal.parent)

    def reached(names: list[str]) -> set[str]:
        seen: set[str] = set()
        while names:
            name = names.pop()
            if name not in seen and name in functions:
                seen.add(name)
                names += [o.callee.root_reference.data for o in find(functions[name], (func.CallOp, JvpOp, GradOp, ValueAndGradOp, VjpOp, VmapOp))]
        return seen

    reverse = [o for n in reached([primal.sym_name.data]) for o in find(functions[n], (GradOp, ValueAndGradOp, VjpOp))]
    return any(find(functions[n], (scf.ForOp, scf.WhileOp))
               for o in reverse for n in reached([o.callee.root_reference.data]))


def _unrolled_columns(sweeps: _Sweeps, arg_type: Attribute, n: int, jvp) -> list[SSAValue]:
    """The blocks of one argument leaf, one jvp per element of its basis."""
    block, outputs = sweeps.block, sweeps.outputs
    sweeps_out = [jvp(block, _unit(block, arg_type, k)) for k in range(n)]
    b = IRBuilder(block)
    blocks = []
    for i in range(sweeps.n_out):
        rows = _size(outputs[i])
        parts = [T.reshape(b, t[i] if is_tensor(t[i].type) else _as_tensor(b, t[i]), [rows, 1]) for t in sweeps_out]
        blocks.append(T.reshape(b, T.concat(b, parts, 1), [*shape_of(outputs[i]), *shape_of(arg_type)]))
    return blocks


def _reverse_entries(sweeps: _Sweeps, wrt) -> list[SSAValue]:
    """The blocks' rows, output leaf by output leaf: one vjp along each
    element of the leaf's basis (the cotangents of the other outputs 0)."""
    block, callee, outputs, n_out = sweeps.block, sweeps.callee, sweeps.outputs, sweeps.n_out
    ordered = sorted(wrt)
    grad_types = [block.args[i].type for i in ordered]
    aux = n_out if sweeps.has_aux else None
    entries = []
    for i in range(n_out):
        n = _size(outputs[i])

        def vjp(body: Block, seed: SSAValue) -> Sequence[SSAValue]:
            seeds = [seed if o == i else _unit(body, u, None) for o, u in enumerate(outputs[:n_out])]
            request = VjpOp(callee, [*body.args[:len(block.args)], *seeds], ordered, grad_types, aux)
            body.add_op(request)
            return request.results

        if n == 0:
            rows = [_unit(block, _block_type(outputs[i], u), None) for u in grad_types]
        elif n == 1:
            rows = vjp(block, _unit(block, outputs[i], 0))
        else:
            helper = sweeps.helper("jacrev.row", [outputs[i]], lambda body: vjp(body, body.args[-1]))
            rows = sweeps.mapped(helper, _identity(block, outputs[i]), n, grad_types, [0] * len(grad_types))
        by_index = dict(zip(ordered, rows))
        entries += [_shaped(block, by_index[a], outputs[i], block.args[a].type) for a in wrt]
    return entries


# ---- vmap ---------------------------------------------------------------------------
def _axis_leaves(f, what: str, axes, tree: Tree, label: str) -> list:
    """`axes` (an int, None, or a tree prefix of `tree`) spread over `tree`'s
    leaves: one entry per leaf (JAX's in_axes/out_axes)."""
    if axes is None or (isinstance(axes, numbers.Integral) and not isinstance(axes, bool)):
        return [axes] * len(leaf_types(tree))
    if not isinstance(tree, Node) or not isinstance(axes, (tuple, list, dict)):
        raise error_at(
            f, f"vmap of {name_of(f)}: {what} {axes!r} does not match {label}\n"
            "  hint: give an int or None per argument (per result), or a container of the argument's structure"
        )
    # a tuple, list or NamedTuple of axes matches a sequence node by position (a NamedTuple's keys are its fields)
    keys = tuple(sorted(axes)) if isinstance(axes, dict) else tuple(range(len(axes)))
    tree_keys = tuple(sorted(tree.keys)) if tree.cls is dict else tuple(range(len(tree.children)))
    if isinstance(axes, dict) != (tree.cls is dict) or keys != tree_keys:
        raise error_at(
            f, f"vmap of {name_of(f)}: {what} {axes!r} does not match the structure of {label} "
            f"({tree.cls.__name__} of {len(tree.children)})\n"
            "  hint: one entry per element of the container, or one int or None for all of it"
        )
    def child_label(key) -> str:
        roots = {"the arguments": "argument", "the results": "result"}
        return f"{roots[label]} {key}" if label in roots else f"{label}[{key!r}]"

    return [a for position, (key, child) in enumerate(zip(tree.keys, tree.children))
            for a in _axis_leaves(f, what, axes[key if tree.cls is dict else position], child, child_label(key))]


def _normal_axis(f, what: str, axis, type_: Attribute, rank: int, label: str) -> int | None:
    if axis is None:
        return None
    if not -rank <= axis < rank:
        raise error_at(
            f, f"vmap of {name_of(f)}: {what} asks for axis {axis} of {label}, which is "
            f"{describe(type_) if rank else 'of rank 0 (' + describe(type_) + ')'}\n"
            "  hint: map an array along one of its axes, or give None for a value shared by the batch"
        )
    return int(axis) % rank


def element_signature(t: Transformation, signature: Node, names: Sequence[str]) -> tuple[Node, list, int]:
    """For a vmap `t` called with `signature`: the signature of one element of
    the batch, each leaf's batch axis (None: not mapped) and the batch size."""
    f = t.f
    in_axes = t.in_axes
    if isinstance(in_axes, (tuple, list)) and len(in_axes) != len(signature.children):
        raise error_at(
            f, f"vmap of {name_of(f)}: in_axes has {len(in_axes)} entries, but it is called with "
            f"{len(signature.children)} arguments\n  hint: one int or None per argument"
        )
    axes = _axis_leaves(f, "in_axes", in_axes, signature, "the arguments")
    types = leaf_types(signature)
    labels = [f"argument {a} ('{names[a]}')" for a, span in enumerate(ranges(signature)) for _ in span]
    axes = [_normal_axis(f, "in_axes", a, ty, len(shape_of(ty)), lab) for a, ty, lab in zip(axes, types, labels)]
    sizes = {}
    for axis, ty, lab in zip(axes, types, labels):
        if axis is not None:
            sizes.setdefault(shape_of(ty)[axis], []).append(f"axis {axis} of {lab}")
    if len(sizes) > 1:
        shown = "; ".join(f"size {n}: {', '.join(where)}" for n, where in sizes.items())
        raise error_at(f, f"vmap of {name_of(f)} got inconsistent sizes for the mapped axes ({shown})\n"
                       "  hint: map arrays with the same number of elements along their mapped axes")
    if sizes:
        size = next(iter(sizes))
        if t.axis_size is not None and t.axis_size != size:
            raise error_at(f, f"vmap of {name_of(f)}: axis_size={t.axis_size}, but the mapped axes have size {size}")
    elif t.axis_size is None:
        raise error_at(f, f"vmap of {name_of(f)} maps no argument (in_axes is None for all), so it needs axis_size\n"
                       "  hint: vmap(f, in_axes=..., axis_size=n)")
    else:
        size = int(t.axis_size)
    element = with_leaf_types(signature, [unbatched_type(ty, a) for ty, a in zip(types, axes)])
    return element, axes, size


def lower_vmap(t: Transformation, primal: func.FuncOp, results: Tree, signature: Node, axes: Sequence,
               size: int, symbol: Callable[[str], str]) -> tuple[func.FuncOp, Tree]:
    """The entry of the vmap `t` for `signature`: primal (f lowered for one
    element) mapped by an irad.vmap request along `axes`; the entry and the
    tree of its results (f's, each leaf stacked along its out_axes)."""
    outputs = primal.function_type.outputs.data
    out_axes = _axis_leaves(t.f, "out_axes", t.out_axes, results, "the results")
    out_axes = [_normal_axis(t.f, "out_axes", a, ty, len(shape_of(ty)) + 1, f"result {i}")
                for i, (a, ty) in enumerate(zip(out_axes, outputs))]
    block = entry_block(primal, leaf_types(signature))
    hidden = len(block.args) - len(axes)
    request = VmapOp(primal.sym_name.data, block.args, [*axes, *([None] * hidden)], out_axes, size,
                     [batched_type(ty, a, size) for ty, a in zip(outputs, out_axes)])
    block.add_op(request)
    entry = entry_function(primal, symbol(f"{primal.sym_name.data}.vmap"), block, request.results)
    return entry, with_leaf_types(results, request.results.types)


__all__ = [
    "CONSTRUCTORS", "GRADIENTS", "JACOBIANS", "JVP", "PROGRAM_CALLS", "Transformation", "VMAP", "constructor",
    "element_signature", "float_leaves", "gradient_structure", "jvp_entry", "lower_transformation", "lower_vmap",
    "normalise_argnums", "normalise_static", "program_call", "ranges", "split_aux", "static_positions",
]
