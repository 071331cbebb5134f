"""From a Python function to an optimised module: the frontend builds the
module with the transformation's request ops, and irad's one pipeline
(passes/pipelines.py) rewrites them.

    grad, value_and_grad, jacfwd, jacrev, hessian   a Transformation lowered by the
                                                   frontend (irad/frontend/transformations.py)
    vjp                                            irad.vjp_split: the public augmented
                                                   primal and pullback
    jvp                                            irad.jvp in an entry

Every mode takes its options from one `Options` (the backend's tape form and
keep-shared, the transformation's checkpoint), made by `options`.

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
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass, PassPipeline

from irad.base import config, progress
from irad.frontend import lower_function
from irad.frontend.globals import HiddenGlobals
from irad.frontend.entry_arguments import as_signature
from irad.base.pytrees import Node, Tree, leaf_types
from irad.frontend.transformations import Transformation, entry_block, entry_function, split_aux
from irad.ir.dialect import JvpOp, VjpSplitOp, make_context
from irad.ir.metadata import AUGMENTED, PULLBACK, generated_name
from irad.ir.types import is_differentiable
from irad.passes.pipelines import Options, autodiff_passes, optimise_passes
from irad.rules import default_table
from irad.universe import IRAD_UNIVERSE

# callback(pass_that_ran, module, last): called after every pass of every pipeline
AFTER_PASS: list[Callable[[ModulePass, ModuleOp, bool], None]] = []


@functools.cache
def context() -> Context:
    return make_context()


def options(backend, checkpoint: bool = False, inline: bool = True) -> Options:
    """The one place a transformation's pipeline options come from: the
    backend's tape form and keep-shared, the transformation's checkpoint.
    `inline=False`: a module to be differentiated again."""
    return Options(
        checkpoint=checkpoint, inline=inline, hoist=True,
        keep_shared=backend.keep_shared if inline else 0, tape=backend.tape_form,
    )


def _after_pass(previous: ModulePass | None, module: ModuleOp, following: ModulePass | None) -> None:
    if previous is not None:
        for callback in AFTER_PASS:
            callback(previous, module, following is None)


@functools.cache
def pipeline(spec: str) -> PassPipeline:
    """The pipeline of a spec (pass names, as `irad-opt -p` takes them)."""
    return PassPipeline.parse_spec(IRAD_UNIVERSE.all_passes, spec, _after_pass)


def run(module: ModuleOp, passes: tuple[ModulePass, ...] | str) -> None:
    """Run `passes` (or a spec of pass names) on `module`."""
    if isinstance(passes, str):
        if passes:
            pipeline(passes).apply(context(), module)
    elif passes:
        PassPipeline(tuple(passes), _after_pass).apply(context(), module)
    if config.read("verify"):
        module.verify()


def rewrite(module: ModuleOp, opts: Options) -> None:
    """`autodiff_passes(opts)` on `module`: its requests rewritten, then the
    result optimised, each a stage of the progress log (irad/base/progress.py)."""
    passes = autodiff_passes(opts)
    at = len(passes) - len(optimise_passes(opts))
    for name, group, after in (("differentiation", passes[:at], passes[at:at + 1]), ("optimisation", passes[at:], ())):
        def callback(previous, module, following, after=after):  # AFTER_PASS sees one pipeline
            _after_pass(previous, module, following if following is not None else next(iter(after), None))

        with progress.stage(name):
            PassPipeline(group, callback).apply(context(), module)
    if config.read("verify"):
        module.verify()


def lowered(f, signature, table=None) -> tuple[ModuleOp, str, HiddenGlobals, Tree]:
    """The frontend's module of `f` (a function or a Transformation) for
    `signature` (the tree of its arguments), verified when `verify` is on (the
    tests), so invalid IR from the frontend fails where it is built; its
    entry's name, the global arrays it takes after the signature's leaves and
    the tree of its results."""
    with progress.stage("lowering"):
        module, name, hidden, results = lower_function(f, signature, default_table() if table is None else table)
    if config.read("verify"):
        module.verify()
    return module, name, hidden, results


def function_named(module: ModuleOp, name: str) -> func.FuncOp:
    return next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == name)


def transformation_module(t: Transformation, signature: Node, opts: Options) -> tuple[ModuleOp, str, HiddenGlobals, Tree]:
    """The module of `t` for `signature`, its requests rewritten and optimised:
    its entry's name, the global arrays the entry takes after the signature's
    leaves, and the tree of its results."""
    module, entry, hidden, results = lowered(t, as_signature(signature))
    rewrite(module, opts)
    return module, entry, hidden, results


def gradient_module(
    f: Callable, signature: Node, argnums, with_value: bool, checkpoint: bool = False, inline: bool = True,
    has_aux: bool = False, single: bool = True, tape: str = "memref", keep_shared: int = 0,
) -> tuple[ModuleOp, str, HiddenGlobals, Tree]:
    """The module of grad (value_and_grad) of f: `transformation_module` with these options."""
    argnums = argnums[0] if single and len(argnums) == 1 else tuple(argnums)
    t = Transformation("value_and_grad" if with_value else "grad", f, argnums, has_aux)
    opts = Options(checkpoint=checkpoint, inline=inline, keep_shared=keep_shared if inline else 0, tape=tape)
    return transformation_module(t, signature, opts)


def vjp_requests(f: Callable, signature: Node, has_aux: bool) -> tuple[ModuleOp, str, str, Tree, HiddenGlobals, Tree | None]:
    """f's module with the request irad.vjp_split for its public augmented
    primal and pullback (with respect to every float leaf), not yet
    rewritten; the pair's names, the tree of f's (differentiated) results,
    the global arrays the augmented primal takes after f's arguments (never
    differentiated) and, with has_aux, the tree of the aux results the
    augmented primal returns after them."""
    signature = as_signature(signature)
    module, name, hidden, results = lowered(f, signature)
    out_tree, aux_tree = split_aux(f, results) if has_aux else (results, None)
    primal = function_named(module, name)
    primal.sym_visibility = StringAttr("private")  # the pair is public
    wrt = [i for i, t in enumerate(leaf_types(signature)) if is_differentiable(t)]
    active = tuple(i in wrt for i in range(len(primal.function_type.inputs.data)))
    # without aux, the generated pair itself (its names as generated_name makes them)
    forward, backward = (generated_name(name, AUGMENTED, active), generated_name(name, PULLBACK, active)) \
        if not has_aux else (f"{name}.vjp.forward", f"{name}.vjp.backward")
    aux = len(leaf_types(out_tree)) if has_aux else None
    module.body.block.add_op(VjpSplitOp(name, wrt, forward, backward, aux))
    return module, forward, backward, out_tree, hidden, aux_tree


def vjp_module(f: Callable, signature: Node, has_aux: bool, opts: Options) -> tuple[ModuleOp, str, str, Tree, HiddenGlobals, Tree | None]:
    """`vjp_requests`, rewritten and optimised."""
    found = vjp_requests(f, signature, has_aux)
    rewrite(found[0], opts)
    return found


def jvp_requests(f: Callable, signature: Node, wrt: tuple[int, ...]) -> tuple[ModuleOp, str, Tree, HiddenGlobals]:
    """f's module with the public `@<f>.jvp`, which takes f's arguments
    (leaves), then one tangent per `wrt` leaf (increasing), then the global
    arrays f reads, and returns f's results, then the tangents of its float
    results through an irad.jvp request (not yet rewritten); also the tree of
    f's results."""
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
    request = JvpOp(name, [*block.args[:n], *block.args[n + k:], *block.args[n:n + k]], wrt, result_types)
    block.add_op(request)
    entry = entry_function(primal, f"{name}.jvp", block, list(request.results))
    entry.sym_visibility = None
    module.body.block.add_op(entry)
    return module, entry.sym_name.data, results, hidden


def jvp_module(f: Callable, signature: Node, wrt: tuple[int, ...], opts: Options) -> tuple[ModuleOp, str, Tree, HiddenGlobals]:
    """`jvp_requests`, rewritten and optimised."""
    found = jvp_requests(f, signature, wrt)
    rewrite(found[0], opts)
    return found
