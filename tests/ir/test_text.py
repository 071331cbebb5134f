"""irad.ir.text: module_text, the text str() prints, with each type printed once;
generic_text, the generic form, which reads back as the same module."""

from collections.abc import Iterator

from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from irad import pipeline
from irad.ir.text import generic_text, module_text
from tests.ir.filecheck_inputs import parsed

SIGNED_ZEROS = """builtin.module {
  func.func @f(%x: tensor<2xf64>) -> (tensor<2xf64>, f64, f64) {
    %a = arith.constant 0.000000e+00 : f64
    %b = arith.constant -0.000000e+00 : f64
    %c = arith.constant dense<-0.000000e+00> : tensor<2xf64>
    %d = arith.constant dense<0.000000e+00> : tensor<2xf64>
    %e = arith.addf %c, %d : tensor<2xf64>
    func.return %e, %a, %b : tensor<2xf64>, f64, f64
  }
}
"""


def printable() -> Iterator[tuple[str, ModuleOp, str]]:
    """(name, module, str(module) with %0, %1, ... for names) of every
    FileCheck input that parses in irad's context (tensors, memrefs,
    function types, dense constants, nested regions) and prints."""
    checked = 0
    for path, module in parsed():
        try:
            expected = str(_without_names(module))
        except KeyError:  # an input for a verifier's error (an op without a required property)
            continue
        yield path.name, module, expected
        checked += 1
    assert checked > 50


def _without_names(module: ModuleOp) -> ModuleOp:
    """A copy of `module` whose values have no name hints (printed %0, %1, ...)."""
    module = module.clone()
    for op in module.walk():
        for value in op.results:
            value.name_hint = None
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    arg.name_hint = None
    return module


def test_module_text_is_str_on_filecheck_inputs():
    for name, module, _ in printable():
        assert module_text(module) == str(module), name


def test_generic_text_parses_back_to_the_same_module():
    """generic_text writes every op, its operands, successors, properties,
    regions, block arguments, attributes and types: xDSL reads back the
    module it was given (the same text as str, names apart)."""
    for name, module, expected in printable():
        again = Parser(pipeline.context(), generic_text(module)).parse_module()
        assert str(_without_names(again)) == expected, name


def test_equal_attributes_that_print_differently_are_not_shared():
    """0.0 and -0.0 are told apart (module_text prints only types once,
    generic_text every attribute)."""
    module = Parser(pipeline.context(), SIGNED_ZEROS).parse_module()
    printed = module_text(module)
    assert printed == str(module)
    assert "-0.000000e+00 : f64" in printed and "dense<-0.000000e+00>" in printed
    generic = generic_text(module)
    assert "<{value = 0.000000e+00 : f64}>" in generic and "<{value = -0.000000e+00 : f64}>" in generic
    assert "dense<-0.000000e+00>" in generic and "dense<0.000000e+00>" in generic
