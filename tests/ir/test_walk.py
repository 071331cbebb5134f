"""irad.ir.walk: the ops Operation.walk() yields, in its order; a block's ops;
the ops of some classes among them."""

from xdsl.dialects import func, scf

from irad.ir.isa import isa
from irad.ir.walk import backwards_regions_first, find, find_among, ops_of, walk
from tests.ir.filecheck_inputs import parsed


def test_walk_is_operation_walk():
    """On every FileCheck input that parses in irad's context (nested loops,
    branches, linalg bodies, several functions), op by op."""
    checked = 0
    for path, module in parsed():
        assert list(walk(module)) == list(module.walk()), path.name
        checked += sum(1 for op in module.walk() if op.regions and op is not module)
    assert checked > 100  # ops with regions, nested ones among them


def test_find_is_a_filtered_walk():
    """`find` gives the ops of the classes `walk` gives, in its order; `ops_of`
    a block's ops as xDSL lists them."""
    found = 0
    for path, module in parsed():
        for classes in (func.CallOp, (scf.ForOp, scf.IfOp), scf.YieldOp):
            expected = [op for op in walk(module) if isa(op, classes)]
            assert find(module, classes) == expected, path.name
            functions = list(module.body.block.ops)
            assert find_among(functions, classes) == expected, path.name
            found += len(expected)
        assert ops_of(module.body.block) == list(module.body.block.ops), path.name
    assert found > 100


def test_backwards_regions_first_is_xdsl_order():
    """The order xDSL's rewrite walker fills its worklist in."""
    for path, module in parsed():
        expected = list(module.body.walk(reverse=True, region_first=True))
        assert backwards_regions_first(module.body) == expected, path.name
