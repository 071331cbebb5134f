"""irad.ir.text: module_text, the text str() prints, with each type printed once;
generic_text, the generic form, which reads back as the same module."""

from xdsl.parser import Parser

from irad import pipeline
from irad.ir.text import generic_text, module_text
from tests.ir.filecheck_inputs import parsed


def test_module_text_is_str_on_filecheck_inputs():
    """Every FileCheck input that parses in irad's context (tensors, memrefs,
    function types, dense constants, nested regions)."""
    checked = 0
    for path, module in parsed():
        try:
            expected = str(module)
        except KeyError:  # an input for a verifier's error (an op without a required property)
            continue
        assert module_text(module) == expected, path.name
        checked += 1
    assert checked > 50


def test_equal_attributes_that_print_differently_are_not_shared():
    """0.0 and -0.0 compare equal; only types are printed once."""
    text = """builtin.module {
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
    module = Parser(pipeline.context(), text).parse_module()
    printed = module_text(module)
    assert printed == str(module)
    assert "-0.000000e+00 : f64" in printed and "dense<-0.000000e+00>" in printed


def _without_names(module):
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


def test_generic_text_parses_back_to_the_same_module():
    """generic_text writes every op, its operands, successors, properties,
    regions, block arguments, attributes and types: xDSL reads back the
    module it was given (the same text as str, names apart)."""
    checked = 0
    for path, module in parsed():
        try:
            expected = str(_without_names(module))
        except KeyError:  # an input for a verifier's error (an op without a required property)
            continue
        again = Parser(pipeline.context(), generic_text(module)).parse_module()
        assert str(again) == expected, path.name
        checked += 1
    assert checked > 50


def test_generic_text_keeps_signed_zeros_apart():
    text = """builtin.module {
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
    printed = generic_text(Parser(pipeline.context(), text).parse_module())
    assert "<{value = 0.000000e+00 : f64}>" in printed and "<{value = -0.000000e+00 : f64}>" in printed
    assert "dense<-0.000000e+00>" in printed and "dense<0.000000e+00>" in printed
