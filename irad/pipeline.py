"""irad's pipelines, defined once, as xDSL `PassPipeline`s built from pass names.

    gradient:  irad-differentiate{checkpoint=... inline=... hoist=true},irad-lower-tape,optimise
    reversed:  irad-lower-tape,optimise
    jvp:       irad-lower-tape,irad-jvp,optimise
    optimise:  irad-optimize{max-depth=...},irad-sink-accumulations,irad-hoist-loop-invariants,irad-symbol-dce
               (inlined; without inlining irad-optimize{max-depth=0},irad-symbol-dce)

The API, the Jacobians and `irad.export` run them; `irad-opt` and stock
`xdsl-opt` take the same names. `reversed` follows reverse mode run without the
pass (`Differentiator.reverse`, for vjp and jacrev). Whatever differentiates in
reverse mode lowers the tape ops to memref code (irad-lower-tape) before the
optimiser and the backends see them. A module built to be differentiated again
is not inlined (max-depth=0, inline=false): its calls, to rule targets above
all, must meet the rule table again; and its tape ops stay (no
irad-lower-tape): reverse mode follows them with shadow tapes, and the
pipeline that differentiates it lowers them. Forward mode follows the memref
code, so `jvp` lowers them first. Otherwise irad-differentiate inlines the
callees it differentiates before it reverses them (linear compile time in the
depth of a call tree; the optimiser would inline their generated functions
anyway).

Callbacks in `AFTER_PASS` see the module after every pass (the test suite
parses each one with upstream mlir-opt there); with the switch `verify` on
(irad.config; the tests turn it on), the module is verified at the end of
each pipeline.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, StringAttr
from xdsl.ir import Attribute, Block, Region
from xdsl.passes import ModulePass, PassPipeline

from xdsl.ir import SSAValue
from xdsl.rewriter import Rewriter

from irad.base import config
from irad.arguments import error_at, float_leaves, gradient_structure, name_of
from irad.frontend import lower_function
from irad.frontend.lowering import as_signature
from irad.frontend.globals import HiddenGlobals
from irad.frontend.pytrees import Node, Tree, leaf_types, tuple_tree, with_leaf_types
from irad.ir.constants import float_constant
from irad.ir.dialect import TAPE, GradOp, JvpOp, TapeFreeOp, ValueAndGradOp, make_context
from irad.ir.metadata import ENTRY, mark_generated
from irad.ir.symbols import fresh_symbol
from irad.ir.types import describe, is_differentiable, is_float
from irad.markers import stop_gradient
from irad.passes.ad.differentiator import Differentiator
from irad.passes.optimisation.inliner import DEFAULT_MAX_DEPTH, KEEP_ALL_INLINED
from irad.passes.ad.rule_ir import rule_key
from irad.rules import default_table
from irad.rules.keys import target_key
from irad.universe import IRAD_UNIVERSE

# callback(pass_that_ran, module, last): called after every pass of every pipeline
AFTER_PASS: list[Callable[[ModulePass, ModuleOp, bool], None]] = []


@functools.cache
def context() -> Context:
    return make_context()


def optimise_spec(inline: bool = True, keep_shared: int = KEEP_ALL_INLINED) -> str:
    """Inlined (code to run, not to differentiate again), a loop's sums of
    products are then taken after it (irad-sink-accumulations), and its
    invariant array code computed before it (irad-hoist-loop-invariants)."""
    shared = f" keep-shared={keep_shared}" if inline and keep_shared else ""
    sink = ",irad-sink-accumulations,irad-hoist-loop-invariants" if inline else ""
    return f"irad-optimize{{max-depth={DEFAULT_MAX_DEPTH if inline else 0}{shared}}}{sink},irad-symbol-dce"


def _joined(*specs: str) -> str:
    return ",".join(s for s in specs if s)


def reversed_spec(inline: bool = True, tape: str = "memref", keep_shared: int = KEEP_ALL_INLINED) -> str:
    """`tape`: the form irad-lower-tape gives the tape, "memref" or "tensor"
    (the backend's `tape_form`). Without inlining (a gradient to be
    differentiated again) the tape ops stay: the outer pipeline lowers them.
    `keep_shared`: the backend's `keep_shared` (irad-inline's keep-shared)."""
    lower_tape = "irad-lower-tape" if tape == "memref" else f"irad-lower-tape{{form={tape}}}"
    return _joined(lower_tape if inline else "", optimise_spec(inline, keep_shared))


def gradient_spec(
    checkpoint: bool = False, inline: bool = True, tape: str = "memref", keep_shared: int = KEEP_ALL_INLINED
) -> str:
    options = f"checkpoint={str(checkpoint).lower()} inline={str(inline).lower()} hoist=true"
    if inline and keep_shared:
        options += f" keep-shared={keep_shared}"
    return _joined(f"irad-differentiate{{{options}}}", reversed_spec(inline, tape, keep_shared))


def jvp_spec(inline: bool = True, tape: str = "memref") -> str:
    """`tape`: the form of the tapes of the gradients inside (a Hessian's), as in reversed_spec."""
    lower_tape = "irad-lower-tape" if tape == "memref" else f"irad-lower-tape{{form={tape}}}"
    return _joined(f"{lower_tape},irad-jvp", optimise_spec(inline))


def _after_pass(previous: ModulePass | None, module: ModuleOp, following: ModulePass | None) -> None:
    if previous is not None:
        for callback in AFTER_PASS:
            callback(previous, module, following is None)


@functools.cache
def pipeline(spec: str) -> PassPipeline:
    return PassPipeline.parse_spec(IRAD_UNIVERSE.all_passes, spec, _after_pass)


def run(module: ModuleOp, spec: str) -> None:
    """Run the pipeline `spec` (pass names, as `irad-opt -p` takes them) on `module`."""
    if spec:
        pipeline(spec).apply(context(), module)
    if config.read("verify"):
        module.verify()


def lowered(f, signature, table=None) -> tuple[ModuleOp, str, HiddenGlobals, Tree]:
    """The frontend's module of `f` for `signature` (the tree of its arguments),
    verified when `verify` is on (the tests), so invalid IR from the frontend
    fails where it is built; its entry's name, the global arrays it takes after
    the signature's leaves and the tree of its results."""
    module, name, hidden, results = lower_function(f, signature, default_table() if table is None else table)
    if config.read("verify"):
        module.verify()
    return module, name, hidden, results


def hidden_types(primal: func.FuncOp, arg_types) -> list[Attribute]:
    """The types of the hidden arguments (global arrays) `primal` takes after `arg_types`."""
    return list(primal.function_type.inputs.data[len(arg_types) :])


def function_named(module: ModuleOp, name: str) -> func.FuncOp:
    return next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == name)


# ---- from a Python function to an optimised module ------------------------------
# An entry function takes f's arguments (the leaves of their trees), then what
# the request adds (tangents), then the hidden arguments: the global arrays f
# reads, which the API passes last, read at each call.
def entry_block(primal: func.FuncOp, arg_types, extra=()) -> Block:
    """The block of an entry function into `primal`: `arg_types`, `extra`, then
    primal's hidden arguments; named like primal's arguments."""
    hidden = hidden_types(primal, arg_types)
    block = Block(arg_types=[*arg_types, *extra, *hidden])
    params = primal.body.block.args
    for arg, primal_arg in zip(block.args, params[: len(arg_types)]):
        arg.name_hint = primal_arg.name_hint
    for arg, primal_arg in zip(block.args[len(block.args) - len(hidden) :], params[len(arg_types) :]):
        arg.name_hint = primal_arg.name_hint
    return block


def add_entry(module: ModuleOp, primal: func.FuncOp, name: str, block: Block, result_types) -> func.FuncOp:
    """Add the public function `name` with body `block`, marked as `primal`'s entry."""
    entry = func.FuncOp(name, FunctionType.from_lists(block.arg_types, result_types), Region(block))
    mark_generated(entry, primal, ENTRY)
    module.body.block.add_op(entry)
    return entry


def check_scalar_result(f, tree: Tree, has_aux: bool) -> Attribute:
    """The type of the one float f returns (with has_aux: the first of its pair)."""
    if not isinstance(tree, Node) and is_float(tree):
        return tree
    shown = describe(tree) if not isinstance(tree, Node) else repr(tree)
    if isinstance(tree, Node) and tree.cls is tuple and len(tree.children) == 2 and not has_aux:
        hint = "with has_aux=True, f may return (value, aux); use irad.vjp for functions with several outputs"
    elif isinstance(tree, Node) and len(leaf_types(tree)) > 1:
        hint = "use irad.vjp or irad.jacrev for functions with several outputs"
    else:
        hint = "return a float (a gradient of an int, a bool, an array or nothing is not defined)"
    what = "the first of the pair it" if has_aux else "it"
    raise error_at(
        f,
        f"{name_of(f)} must return one float to take its gradient, but {what} returns {shown}\n"
        f"  hint: {hint}",
    )


def stop_gradient_function(module: ModuleOp, t: Attribute) -> str:
    """A function `x -> x` of type `t` that the rule table marks non-differentiable
    (irad.stop_gradient): no cotangent flows through a call to it."""
    key = target_key(stop_gradient)
    taken = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
    for name, op in taken.items():
        if rule_key(op) == key and tuple(op.function_type.inputs.data) == (t,):
            return name
    name = fresh_symbol(key, taken)
    block = Block(arg_types=[t])
    block.add_op(func.ReturnOp(block.args[0]))
    op = func.FuncOp(name, FunctionType.from_lists([t], [t]), Region(block), visibility="private")
    if name != key:
        op.attributes["irad.target"] = StringAttr(key)
    module.body.block.add_op(op)
    return name


def cut_aux(module: ModuleOp, name: str, differentiated: int) -> str:
    """A copy of @name whose float results after the first `differentiated`
    (the aux of has_aux) pass through irad.stop_gradient, so no cotangent
    reaches what computes them: zero cotangents fed to their pullbacks could
    still make NaN (0 * inf). @name itself is unchanged (its recursive calls
    use all its results). Returns the copy's name."""
    primal = function_named(module, name)
    copy = primal.clone()
    taken = {op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)}
    copy.sym_name = StringAttr(fresh_symbol(f"{name}.aux", taken))
    copy.sym_visibility = StringAttr("private")
    ret = copy.body.block.last_op
    values = list(ret.operands)
    for i in range(differentiated, len(values)):
        if is_differentiable(values[i].type):
            stop = func.CallOp(stop_gradient_function(module, values[i].type), [values[i]], [values[i].type])
            copy.body.block.insert_op_before(stop, ret)
            values[i] = stop.res[0]
    Rewriter.replace_op(ret, func.ReturnOp(*values))
    module.body.block.add_op(copy)
    return copy.sym_name.data


def reverse_sweeps(
    module: ModuleOp, name: str, block: Block, active: tuple[bool, ...], seeds: list[list[float]],
    checkpoint: bool = False,
) -> tuple[list[SSAValue], list[list[SSAValue]]]:
    """Call @name's augmented primal on `block`'s arguments, then its pullback
    once per entry of `seeds` (one cotangent per float result: a number, 1.0
    or 0.0, splat for an array, or a value of the block). Returns @name's results and, per sweep, the
    cotangents of the `active` arguments (in order)."""
    primal = function_named(module, name)
    outputs = list(primal.function_type.outputs.data)
    inputs = primal.function_type.inputs.data
    generated = Differentiator(module, default_table(), checkpoint).reverse(name, active)
    augmented = func.CallOp(generated.augmented, list(block.args), [*outputs, *generated.residual_types])
    block.add_op(augmented)
    residuals = augmented.results[len(outputs) :]
    grad_types = [t for t, a in zip(inputs, active) if a]
    sweeps = []
    float_outputs = [t for t in outputs if is_differentiable(t)]
    for seed in seeds:
        cotangents = []
        for s, t in zip(seed, float_outputs, strict=True):
            if not isinstance(s, SSAValue):
                constant = float_constant(s, t)
                block.add_op(constant)
                s = constant.result
            cotangents.append(s)
        pullback = func.CallOp(generated.pullback, [*residuals, *cotangents], grad_types)
        block.add_op(pullback)
        sweeps.append(list(pullback.results))
    for tape in (r for r in residuals if r.type == TAPE):
        block.add_op(TapeFreeOp(tape))  # the last pullback has run
    return list(augmented.results[: len(outputs)]), sweeps


def gradient_module(
    f: Callable,
    signature: Node,
    argnums: tuple[int, ...],
    with_value: bool,
    checkpoint: bool = False,
    inline: bool = True,
    has_aux: bool = False,
    single: bool = True,
    tape: str = "memref",
    keep_shared: int = KEEP_ALL_INLINED,
) -> tuple[ModuleOp, str, HiddenGlobals, Tree]:
    """The differentiated, optimised module, the name of its entry function,
    the global arrays it takes after f's arguments and the tree of its results.

    The entry, `@<f>.grad` or `@<f>.value_and_grad`, returns what grad or
    value_and_grad return, flattened: (the value,) the gradients of the float
    leaves of `argnums` (argument by argument), and with has_aux the aux
    values, in the order of the tree: `grads, aux` for grad and
    `(value, aux), grads` for value_and_grad. Without has_aux it holds the
    request op that irad-differentiate replaces (which takes increasing indices).
    `tape` is the tape's form (reversed_spec); `keep_shared`, the backend's
    inlining of shared callees (irad-inline's keep-shared).
    """
    signature = as_signature(signature)
    module, name, hidden, results = lowered(f, signature)
    primal = function_named(module, name)
    primal.sym_visibility = StringAttr("private")  # the entry below is the public one
    out_tree, aux_tree = results, None
    if has_aux:
        out_tree, aux_tree = _pair(f, results)
    out_type = check_scalar_result(f, out_tree, has_aux)
    arg_types = leaf_types(signature)
    wrt = float_leaves(signature, argnums)
    entry_name = f"{name}.{'value_and_grad' if with_value else 'grad'}"
    block = entry_block(primal, arg_types)
    grad_types = [arg_types[i] for i in wrt]
    grads_tree = with_leaf_types(gradient_structure(signature, argnums, single), grad_types)
    if has_aux:
        cut = cut_aux(module, name, 1)
        active = tuple(i in wrt for i in range(len(block.args)))
        n_aux = len([t for t in leaf_types(aux_tree) if is_differentiable(t)])
        outs, (grads,) = reverse_sweeps(module, cut, block, active, [[1.0] + [0.0] * n_aux], checkpoint)
        by_index = dict(zip(sorted(wrt), grads))
        grads = [by_index[i] for i in wrt]
        value, aux = outs[0], outs[1:]
        returned = [value, *aux, *grads] if with_value else [*grads, *aux]
        tree = tuple_tree([tuple_tree([out_type, aux_tree]), grads_tree]) if with_value else tuple_tree([grads_tree, aux_tree])
        block.add_op(func.ReturnOp(*returned))
        add_entry(module, primal, entry_name, block, [v.type for v in returned])
        run(module, reversed_spec(inline, tape, keep_shared))
        return module, entry_name, hidden, tree
    ordered = sorted(wrt)
    values = [out_type] if with_value else []
    request_types = values + [arg_types[i] for i in ordered]
    request = (ValueAndGradOp if with_value else GradOp)(name, block.args, ordered, request_types)
    block.add_op(request)
    grads = {i: r for i, r in zip(ordered, request.results[len(values) :])}
    block.add_op(func.ReturnOp(*request.results[: len(values)], *(grads[i] for i in wrt)))
    add_entry(module, primal, entry_name, block, values + grad_types)
    run(module, gradient_spec(checkpoint, inline, tape, keep_shared))
    tree = tuple_tree([out_type, grads_tree]) if with_value else grads_tree
    return module, entry_name, hidden, tree


def _pair(f, results: Tree) -> tuple[Tree, Tree]:
    """(output, aux) of a function called with has_aux=True."""
    if not (isinstance(results, Node) and results.cls is tuple and len(results.children) == 2):
        shown = describe(results) if not isinstance(results, Node) else repr(results)
        raise error_at(
            f,
            f"with has_aux=True, {name_of(f)} must return a pair (output, aux), but returns {shown}\n"
            "  hint: return (output, aux); aux may be any pytree, and is not differentiated",
        )
    return results.children[0], results.children[1]


def vjp_module(
    f: Callable, signature: Node, has_aux: bool = False, tape: str = "memref"
) -> tuple[ModuleOp, str, str, Tree, HiddenGlobals, Tree | None]:
    """The module with the public augmented primal and pullback of `f`, the
    tree of f's (differentiated) results, the global arrays the augmented
    primal takes after f's arguments (never differentiated) and, with has_aux,
    the tree of the aux results the augmented primal returns after them."""
    signature = as_signature(signature)
    module, name, hidden, results = lowered(f, signature)
    out_tree, aux_tree = _pair(f, results) if has_aux else (results, None)
    if has_aux:
        name = cut_aux(module, name, len(leaf_types(out_tree)))
    primal = function_named(module, name)
    arg_types = leaf_types(signature)
    active = tuple(is_differentiable(t) for t in arg_types) + (False,) * len(hidden_types(primal, arg_types))
    generated = Differentiator(module, default_table(), inline=True, hoist=True).reverse(name, active)
    for op in module.ops:
        if isinstance(op, func.FuncOp):
            public = op.sym_name.data in (generated.augmented, generated.pullback)
            op.sym_visibility = None if public else StringAttr("private")
    run(module, reversed_spec(tape=tape))
    return module, generated.augmented, generated.pullback, out_tree, hidden, aux_tree


def jvp_module(
    f: Callable, signature: Node, wrt: tuple[int, ...]
) -> tuple[ModuleOp, str, Tree, HiddenGlobals]:
    """The module whose public `@<f>.jvp` takes f's arguments (leaves), then one
    tangent per `wrt` leaf (increasing), then the global arrays f reads, and
    returns f's results, then the tangents of its float results; also the
    tree of f's results."""
    signature = as_signature(signature)
    module, name, hidden, results = lowered(f, signature)
    primal = function_named(module, name)
    primal.sym_visibility = StringAttr("private")
    outputs = primal.function_type.outputs.data
    arg_types = leaf_types(signature)
    tangents = [arg_types[i] for i in wrt]
    block = entry_block(primal, arg_types, tangents)
    n, k = len(arg_types), len(tangents)
    result_types = [*outputs, *(t for t in outputs if is_differentiable(t))]
    request = JvpOp(name, [*block.args[:n], *block.args[n + k :], *block.args[n : n + k]], wrt, result_types)
    block.add_ops([request, func.ReturnOp(*request.results)])
    entry = add_entry(module, primal, f"{name}.jvp", block, result_types)
    run(module, jvp_spec())
    return module, entry.sym_name.data, results, hidden
