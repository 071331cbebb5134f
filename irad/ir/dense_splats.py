"""Splat dense attributes parsed into one element of storage.

xDSL 0.75's parser repeats the one element of `dense<1.0> : tensor<20000x20000xf64>`
(or of a one-element hex blob) once per element of the type before storing it:
irad-opt took 9 GB and 36 s to read that constant. Here such a literal is read
as xDSL reads a rank-0 one, and stored once, as irad's own constants are
(irad/ir/constants.py). Any other literal goes to xDSL's parser unchanged.
Applied when `irad.ir` is imported: every parser of irad's IR (irad-opt, the
native backend's xDSL step between two mlir-opt runs) goes through it.
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType
from xdsl.parser.attribute_parser import AttrParser
from xdsl.utils.exceptions import ParseError

_parse_dense = AttrParser.parse_dense_int_or_fp_elements_attr


def _parse_splat_once(self: AttrParser, type=None) -> DenseIntOrFPElementsAttr:
    start, full = self.pos, type
    try:
        self.parse_punctuation("<")
        hex_string = self.parse_optional_str_literal()
        one = hex_string is not None or self.parse_optional_number(allow_boolean=True) is not None
        self.parse_punctuation(">")
        if one and full is None:
            self.parse_punctuation(":")
            full = self._parse_dense_literal_type()
    except ParseError:
        one = False
    end = self.pos
    self._resume_from(start)
    if not one or math.prod(full.get_shape()) <= 1:
        return _parse_dense(self, type)
    element = full.get_element_type()
    if hex_string is not None and len(hex_string) != 2 + 2 * element.compile_time_size:
        return _parse_dense(self, type)
    single = _parse_dense(self, TensorType(element, []))  # xDSL's own reading of the number
    self._resume_from(end)
    return DenseIntOrFPElementsAttr(full, single.data)


AttrParser.parse_dense_int_or_fp_elements_attr = _parse_splat_once
