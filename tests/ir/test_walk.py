"""irad.ir.walk.walk: the ops Operation.walk() yields, in its order."""

from irad.ir.walk import walk
from tests.ir.filecheck_inputs import parsed


def test_walk_is_operation_walk():
    """On every FileCheck input that parses in irad's context (nested loops,
    branches, linalg bodies, several functions), op by op."""
    checked = 0
    for path, module in parsed():
        assert list(walk(module)) == list(module.walk()), path.name
        checked += sum(1 for op in module.walk() if op.regions and op is not module)
    assert checked > 100  # ops with regions, nested ones among them
