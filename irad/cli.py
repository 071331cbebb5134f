"""Command-line entry points: ``irad-opt`` and ``irad``.

``irad-opt`` is ``xdsl-opt`` with the irad dialect and passes registered
explicitly, so it works even when the ``xdsl.universe`` entry point is not
installed::

    irad-opt f.mlir -p irad-differentiate,irad-lower-tape,irad-optimize

``irad`` groups irad's commands; ``irad opt ...`` forwards to ``irad-opt``.

Errors in the input (parse and verification errors, irad's own
:class:`~irad.base.errors.IradError`) are reported as messages with exit status 1,
without a Python traceback; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from xdsl.utils.exceptions import DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from irad.base.errors import IradError
from irad.ir.dialect import load_missing_ops
from irad.universe import IRAD_UNIVERSE

_USER_ERRORS = (IradError, ParseError, DiagnosticException)


class IradOptMain(xDSLOptMain):
    """``xdsl-opt`` plus irad's dialect and passes.

    xDSL already registers everything from the multiverse, which includes
    irad's own universe when the package's entry point is installed. Only
    names still missing are added here: registering a dialect twice raises
    in ``Context.register_dialect``.
    """

    version_format = "irad-opt built from xdsl version {xdsl_version}"

    def register_all_dialects(self) -> None:
        super().register_all_dialects()
        known = set(self.ctx.registered_dialect_names)
        for name, factory in IRAD_UNIVERSE.all_dialects.items():
            if name not in known:
                self.ctx.register_dialect(name, factory)
        load_missing_ops(self.ctx)

    def register_all_passes(self) -> None:
        super().register_all_passes()
        for name, factory in IRAD_UNIVERSE.all_passes.items():
            if name not in self.available_passes:
                self.register_pass(name, factory)


def irad_opt_main(args: Sequence[str] | None = None) -> None:
    """Run ``irad-opt`` on ``args`` (default: the command line)."""
    try:
        IradOptMain(description="irad modular optimizer driver", args=args).run()
    except _USER_ERRORS as error:
        _report(error)
        sys.exit(1)


def _report(error: Exception) -> None:
    """Print an error and its notes (hints) to stderr."""
    print(f"irad-opt: error: {error}", file=sys.stderr)
    for note in getattr(error, "__notes__", ()):
        print(note, file=sys.stderr)


def main(args: Sequence[str] | None = None) -> None:
    """Run the ``irad`` command."""
    parser = argparse.ArgumentParser(
        prog="irad", description="IR-level automatic differentiation on xDSL."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    # `opt` takes no options of its own: everything after it, `--help`
    # included, belongs to irad-opt.
    commands.add_parser(
        "opt", help="run irad-opt (see `irad opt --help`)", add_help=False
    )

    explain = commands.add_parser(
        "explain",
        help="report what differentiation does at each call of a Python function",
        description="Differentiate FILE:FUNCTION at the example ARGS (Python literals) "
        "and print, for each call, the rule inlined, opted out of or declined, or "
        "the callee differentiated instead.",
    )
    explain.add_argument("function", metavar="FILE:FUNCTION")
    explain.add_argument("args", nargs="*", metavar="ARG")
    explain.add_argument(
        "--argnums", help="comma-separated argument indices (default: all float arguments)"
    )
    explain.add_argument("--static-argnums", help=STATIC_HELP)
    _vmap_options(explain)
    explain.add_argument(
        "--mode", choices=("reverse", "forward", "vmap"), default="reverse",
        help="reverse mode (irad.grad, the default) or forward mode (irad.jvp); with "
        "--order 2, how the gradient is differentiated again; vmap: how irad.vmap batches "
        "FUNCTION (with --in-axes, --out-axes, --axis-size)",
    )
    explain.add_argument(
        "--order", type=int, choices=(1, 2), default=1,
        help="2: differentiate the gradient again (--mode reverse: grad(grad(f)); "
        "--mode forward: jacfwd(grad(f)), as irad.hessian) and report both orders",
    )

    lower = commands.add_parser(
        "lower",
        help="print the IR a Python function lowers to, with a transformation's request ops",
        description="Lower FILE:FUNCTION at the example ARGS (Python literals) and print the "
        "module; with --transform, the module holds that transformation's request ops "
        "(irad.grad, irad.value_and_grad, irad.vjp, irad.vjp_split, irad.jvp, irad.vmap), and with "
        "--pipeline, irad's pipeline has rewritten and optimised them.",
    )
    lower.add_argument("function", metavar="FILE:FUNCTION")
    lower.add_argument("args", nargs="*", metavar="ARG")
    lower.add_argument("--transform", choices=TRANSFORMS, help="the transformation whose requests to show")
    lower.add_argument("--argnums", help="comma-separated argument indices (default: 0)")
    lower.add_argument("--static-argnums", help=STATIC_HELP)
    lower.add_argument("--has-aux", action="store_true", help="FUNCTION returns (output, aux)")
    lower.add_argument("--pipeline", action="store_true", help="run irad's pipeline on the requests")
    _vmap_options(lower)

    parsed, rest = parser.parse_known_args(args)
    if parsed.command == "opt":
        irad_opt_main(rest)
    else:
        if rest:
            parser.error(f"unrecognized arguments: {' '.join(rest)}")
        try:
            if parsed.command == "explain" and parsed.mode == "vmap":
                print(_explain_vmap(parsed))
            elif parsed.command == "explain":
                print(_explain(parsed.function, parsed.args, parsed.argnums, parsed.mode, parsed.order,
                               parsed.static_argnums))
            else:
                print(_lower(parsed))
        except IradError as error:
            print(f"irad: error: {error}", file=sys.stderr)
            sys.exit(1)


TRANSFORMS = ("grad", "value_and_grad", "vjp", "jvp", "jacfwd", "jacrev", "hessian", "vmap")
STATIC_HELP = ("comma-separated indices of the arguments known while lowering (ints, shapes, "
               "strings: as irad.grad's static_argnums)")


def _lower(parsed) -> str:
    """The module `irad lower` prints."""
    import irad
    from irad import pipeline
    from irad.arguments import arguments, normalise_argnums
    from irad.backends import check_backend
    from irad.frontend.transformations import float_leaves, normalise_static

    fn, args, nums = _load(parsed.function, parsed.args, parsed.argnums)
    static = _indices(parsed.static_argnums) or ()
    argnums = 0 if nums is None else nums[0] if len(nums) == 1 else nums
    kind = parsed.transform
    signature = arguments(fn, args, None, *normalise_static(fn, static, ()))[1]
    if kind is None:
        return str(pipeline.lowered(fn, signature)[0])
    opts = pipeline.options(check_backend("python"))
    if kind == "vmap":
        from irad.frontend.entry_arguments import as_signature

        batched = _vmapped(fn, parsed)
        signature = arguments(batched.f, _as_arrays(args), None)[1]
        module = pipeline.lowered(batched, as_signature(signature))[0]
    elif kind == "vjp":
        module = pipeline.vjp_requests(fn, signature, parsed.has_aux)[0]
    elif kind == "jvp":
        nums = normalise_argnums(fn, argnums, signature)
        module = pipeline.jvp_requests(fn, signature, float_leaves(signature, nums))[0]
    else:
        make = getattr(irad, kind)
        module = pipeline.lowered(make(fn, argnums, has_aux=parsed.has_aux, static_argnums=static), signature)[0]
    if parsed.pipeline:
        pipeline.run(module, pipeline.autodiff_passes(opts))
    return str(module)


def _explain(spec: str, arg_texts: Sequence[str], argnums: str | None, mode: str = "reverse", order: int = 1,
             static_argnums: str | None = None):
    from irad.report import explain

    fn, args, nums = _load(spec, arg_texts, argnums)
    return explain(fn, *args, argnums=nums, mode=mode, order=order, static_argnums=_indices(static_argnums) or ())


def _vmap_options(parser) -> None:
    parser.add_argument("--in-axes", default="0", help="vmap's in_axes, a Python literal: 0, None, (0, None), "
                        "{'w': None} (default 0); with vmap, list arguments are numpy arrays")
    parser.add_argument("--out-axes", default="0", help="vmap's out_axes, a Python literal (default 0)")
    parser.add_argument("--axis-size", type=int, help="vmap's axis_size, where no argument is mapped")


def _vmap_axes(parsed) -> tuple:
    import ast

    try:
        return ast.literal_eval(parsed.in_axes), ast.literal_eval(parsed.out_axes)
    except (ValueError, SyntaxError) as exc:
        raise IradError(f"--in-axes and --out-axes must be Python literals such as 0, None or (0, None) ({exc})") from None


def _vmapped(fn, parsed):
    from irad.vmapping import vmap

    in_axes, out_axes = _vmap_axes(parsed)
    return vmap(fn, in_axes, out_axes, axis_size=parsed.axis_size)


def _as_arrays(args: Sequence) -> list:
    """The example arguments of a vmap: lists of numbers as numpy arrays (a batch needs an axis)."""
    import numpy as np

    def convert(a):
        if isinstance(a, list) and a and all(isinstance(x, (int, float, list)) for x in a):
            return np.asarray(a)
        if isinstance(a, (tuple, list)):
            return type(a)(convert(x) for x in a)
        if isinstance(a, dict):
            return {k: convert(v) for k, v in a.items()}
        return a

    return [convert(a) for a in args]


def _explain_vmap(parsed) -> str:
    from irad.vmapping import explain_vmap

    fn, args, _ = _load(parsed.function, parsed.args, None)
    in_axes, out_axes = _vmap_axes(parsed)
    return explain_vmap(fn, *_as_arrays(args), in_axes=in_axes, out_axes=out_axes, axis_size=parsed.axis_size)


def _indices(text: str | None) -> tuple[int, ...] | None:
    """`--argnums 0,2` as (0, 2)."""
    if text is None:
        return None
    try:
        return tuple(int(n) for n in text.split(","))
    except ValueError:
        raise IradError(f"expected comma-separated argument indices such as 0,2, got '{text}'") from None


def _load(spec: str, arg_texts: Sequence[str], argnums: str | None):
    """The function FILE:FUNCTION names, its example arguments and argnums."""
    import ast
    import runpy

    path, _, name = spec.rpartition(":")
    if not path or not name:
        raise IradError(f"expected FILE:FUNCTION, got '{spec}'")
    # as `python FILE` does, the file's folder comes first on the import path
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        namespace = runpy.run_path(path, run_name="__irad_explain__")
    except (FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        raise IradError(f"cannot read {path}: {exc.strerror}") from None
    except ImportError as exc:
        raise IradError(
            f"{path} could not be run: {exc}\n  hint: run irad explain from the folder "
            "its imports are relative to (or set PYTHONPATH)"
        ) from None
    finally:
        sys.path.pop(0)
    if not callable(namespace.get(name)):
        raise IradError(f"{path} defines no function '{name}'")
    try:
        args = [ast.literal_eval(a) for a in arg_texts]
    except (ValueError, SyntaxError) as exc:
        raise IradError(f"arguments must be Python literals such as 1.5 or 3 ({exc})") from None
    return namespace[name], args, _indices(argnums)


if __name__ == "__main__":
    main()
