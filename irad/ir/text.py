"""The MLIR text of a module, as `str(module)` writes it, sooner.

xDSL prints a type attribute by attribute each time it occurs (`tensor<16x20xf64>`
after nearly every op of an array program: a third of the time `str` takes). A
type is immutable and its text depends on nothing but itself, so `module_text`
prints each distinct type once and writes the same text again where it recurs.
Only types: other attributes may compare equal and print differently (a float
attribute of 0.0 and of -0.0). The native backend prints every module it
compiles (the text is mlir-opt's input and the object cache's key).
"""

from __future__ import annotations

from io import StringIO

from xdsl.ir import Attribute, Operation, TypeAttribute
from xdsl.printer import Printer


class _TypeOncePrinter(Printer):
    def __init__(self, stream: StringIO):
        super().__init__(stream=stream)
        self._types: dict[Attribute, str] = {}

    def print_string(self, text: str, *, indent: int | None = None) -> None:
        if "\n" in text:
            super().print_string(text, indent=indent)
            return
        # most of what is printed: no line to indent, and a StringIO takes str as it is (a third of the time)
        self._current_column += len(text)
        self.stream.write(text)

    def print_attribute(self, attribute: Attribute) -> None:
        if not isinstance(attribute, TypeAttribute):
            super().print_attribute(attribute)
            return
        text = self._types.get(attribute)
        if text is not None:
            self.print_string(text)
            return
        stream, self.stream = self.stream, StringIO()  # the printer's line and column still advance
        try:
            super().print_attribute(attribute)
            text = self._types[attribute] = self.stream.getvalue()
        finally:
            self.stream = stream
        self.stream.write(text)


def module_text(op: Operation) -> str:
    """`str(op)`: the same text."""
    out = StringIO()
    _TypeOncePrinter(out).print_op(op)
    return out.getvalue()
