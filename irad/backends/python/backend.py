"""`irad.Python()`, the default backend: a module becomes Python/numpy source
(translate.py), which CPython compiles. It needs nothing beyond pip and has
no options."""

from __future__ import annotations

from dataclasses import dataclass

from irad.backends.protocol import Backend


@dataclass(frozen=True)
class Python(Backend):
    """The Python/numpy backend (`backend="python"`)."""

    name = "python"
    tape_form = "objects"  # its tape is a list: a record's array takes one slot (passes/lower_tape.py)

    def compile(self, module):
        from irad.backends.python.translate import compile_module  # xDSL's dialects: only when compiling

        return compile_module(module)
