"""The kind each linalg.generic builder in irad/ir/tensor.py records, and that
it survives what the pipeline does to ops: cloning, printing and parsing, CSE,
the whole gradient pipeline."""

from io import StringIO

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import Float64Type, ModuleOp, StringAttr, TensorType
from xdsl.ir import Block, Region
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.transforms.common_subexpression_elimination import cse

import irad
from irad.base.errors import DifferentiationError
from irad.ir import tensor as T
from irad.ir.dialect import make_context
from tests import array_programs as p

F64 = Float64Type()
VECTOR = TensorType(F64, [3])


class _Builder:
    """The `b` the builders take: appends each op to a block."""

    def __init__(self, block: Block):
        self.block = block

    def op(self, op):
        self.block.add_op(op)
        return op.results[0] if op.results else None


def _module(build) -> ModuleOp:
    """A function of two f64 vectors returning what `build(b, x, y)` returns."""
    block = Block(arg_types=[VECTOR, VECTOR])
    results = build(_Builder(block), *block.args)
    block.add_op(func.ReturnOp(*results))
    fn = func.FuncOp("f", ([VECTOR, VECTOR], [r.type for r in results]), Region(block))
    return ModuleOp([fn])


def _generics(module: ModuleOp) -> list:
    return [op for op in module.walk() if op.name == "linalg.generic"]


def _kinds(module: ModuleOp) -> list[str]:
    return [T.generic_kind(op) for op in _generics(module)]


BUILDERS = {
    "compare": (lambda b, x, y: T.compare(b, "olt", x, y), "piecewise-constant"),
    "select": (lambda b, x, y: T.select(b, T.compare(b, "olt", x, y), x, y), "select"),
    "sign": (lambda b, x, y: T.sign(b, x), "piecewise-constant"),
    "to_float": (lambda b, x, y: T.to_float(b, T.compare(b, "olt", x, y), F64), "other"),
}


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_each_builder_records_its_kind(name):
    build, kind = BUILDERS[name]
    module = _module(lambda b, x, y: [build(b, x, y)])
    generics = _generics(module)
    assert generics[-1].attributes[T.KIND] == StringAttr(kind)
    assert _kinds(module)[-1] == kind
    assert all(T.generic_kind(op) in T.GENERIC_KINDS for op in generics)


def test_elementwise_defaults_to_other():
    module = _module(lambda b, x, y: [T.elementwise(b, lambda blk, a: a[0], [x], F64)])
    assert _kinds(module) == ["other"]


def test_the_kind_is_read_from_the_attribute_not_the_body():
    module = _module(lambda b, x, y: [BUILDERS["select"][0](b, x, y)])
    select = _generics(module)[-1]
    select.attributes[T.KIND] = StringAttr("other")
    assert T.generic_kind(select) == "other"


def test_a_generic_without_a_kind_is_an_error():
    module = _module(lambda b, x, y: [BUILDERS["select"][0](b, x, y)])
    select = _generics(module)[-1]
    del select.attributes[T.KIND]
    with pytest.raises(DifferentiationError, match=r"@f: linalg.generic: no `irad.kind` attribute"):
        T.generic_kind(select)


def test_the_kind_survives_cloning_printing_and_parsing():
    module = _module(lambda b, x, y: [BUILDERS["select"][0](b, x, y), T.sign(b, y)])
    expected = ["piecewise-constant", "select", "piecewise-constant"]
    assert _kinds(module.clone()) == expected
    for generic in (False, True):
        text = StringIO()
        Printer(stream=text, print_generic_format=generic).print_op(module)
        assert _kinds(Parser(make_context(), text.getvalue()).parse_module()) == expected


def test_cse_keeps_the_kind():
    """xDSL's CSE merges the inits but not the generics (ops with regions)."""
    module = _module(lambda b, x, y: [
        T.compare(b, "olt", x, y), T.select(b, T.compare(b, "olt", x, y), x, y),
    ])
    cse(module)
    assert _kinds(module) == ["piecewise-constant", "piecewise-constant", "select"]


@pytest.mark.parametrize("f, args", [
    (p.u_where, (np.array([1.0, -2.0, 3.0]), np.array([0.5, 0.5, 4.0]))),
    (p.u_sign, (np.array([1.0, -2.0, 0.0]),)),
    (p.w_in_while_with_mask, (np.array([1.0, -2.0, 3.0]),)),  # a mask read back from the tape
])
def test_every_generic_irad_emits_carries_its_kind(f, args):
    """After the whole gradient pipeline (inlining, canonicalisation, CSE)."""
    text = irad.export(f, *args)
    generics = [line for line in text.splitlines() if "linalg.generic" in line]
    assert generics
    assert all('attrs =  {irad.kind = "' in line for line in generics), generics
