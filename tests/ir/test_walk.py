"""irad.ir.walk.walk: the ops Operation.walk() yields, in its order."""

from pathlib import Path

from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError

from irad import pipeline
from irad.ir.walk import walk


def test_walk_is_operation_walk():
    """On every FileCheck input that parses in irad's context (nested loops,
    branches, linalg bodies, several functions), op by op."""
    checked = 0
    for path in sorted(Path(__file__).parents[2].joinpath("filecheck").rglob("*.mlir")):
        if "Output" in path.parts:
            continue
        try:
            module = Parser(pipeline.context(), path.read_text()).parse_module()
        except ParseError:  # written for another tool's syntax (mlir-opt), or split inputs
            continue
        assert list(walk(module)) == list(module.walk()), path.name
        checked += sum(1 for op in module.walk() if op.regions and op is not module)
    assert checked > 100  # ops with regions, nested ones among them
