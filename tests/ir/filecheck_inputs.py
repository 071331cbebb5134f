"""The FileCheck inputs (filecheck/**/*.mlir) that parse in irad's context."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError

from irad import pipeline


def parsed() -> Iterator[tuple[Path, ModuleOp]]:
    """(path, module) of each input, skipping those written for another tool's
    syntax (mlir-opt) and split inputs."""
    for path in sorted(Path(__file__).parents[2].joinpath("filecheck").rglob("*.mlir")):
        if "Output" in path.parts:
            continue
        try:
            yield path, Parser(pipeline.context(), path.read_text()).parse_module()
        except ParseError:
            continue
