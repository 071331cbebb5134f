"""Command-line entry points: ``irad-opt`` and ``irad``.

``irad-opt`` is ``xdsl-opt`` with the irad dialect and passes registered
explicitly, so it works even when the ``xdsl.universe`` entry point is not
installed::

    irad-opt f.mlir -p irad-differentiate,irad-optimize

``irad`` groups irad's commands; ``irad opt ...`` forwards to ``irad-opt``.

Errors in the input (parse and verification errors, irad's own
:class:`~irad.errors.IradError`) are reported as messages with exit status 1,
without a Python traceback; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from xdsl.utils.exceptions import DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from irad.errors import IradError
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

    parsed, rest = parser.parse_known_args(args)
    if parsed.command == "opt":
        irad_opt_main(rest)


if __name__ == "__main__":
    main()
