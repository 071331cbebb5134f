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

import re
from io import StringIO

from xdsl.dialects.builtin import UnitAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue, TypeAttribute
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


_BARE = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*")
# Ops whose custom form prints their regions as they are: their generic form says the same. A
# named linalg op (linalg.matmul, ...) hides its region, which mlir-opt then builds itself, so the
# region xDSL holds (its matmul adds in the other order) never reached mlir-opt: such ops, and any
# other op with regions, are written in their custom form, by xDSL's printer.
_REGIONS_AS_THEY_ARE = frozenset({
    "builtin.module", "func.func", "scf.for", "scf.if", "scf.while", "scf.execute_region", "scf.index_switch",
    "linalg.generic", "linalg.reduce",
})


class _GenericWriter:
    """`generic_text`'s writer: every op in MLIR's generic form, which is
    the same for every op (its name quoted, operands, successors,
    properties, regions, attributes, then its function type), so it is
    written here directly; attributes (and types) go through xDSL's
    printer, each distinct one once, as do the ops of `_REGIONS_AS_THEY_ARE`'s
    note. Values and blocks are named by that printer's counters, so the
    names it gives do not collide with these."""

    def __init__(self) -> None:
        self._printer = _TypeOncePrinter(StringIO())
        self._attributes: dict[Attribute, str] = {}
        self._by_id: dict[int, str] = {}  # (the attributes are the module's, alive while it is written)
        self._names: dict[SSAValue, str] = self._printer._ssa_values  # (without the %)
        self._blocks: dict[Block, str] = {}
        self._lines: list[str] = []

    def attribute(self, attribute: Attribute) -> str:
        # by identity first (the same object recurs: hashing an attribute hashes all it holds), then by value
        text = self._by_id.get(id(attribute))
        if text is None:
            text = self._attributes.get(attribute)
            if text is None:
                stream = self._printer.stream = StringIO()
                self._printer.print_attribute(attribute)
                text = self._attributes[attribute] = stream.getvalue()
            self._by_id[id(attribute)] = text
        return text

    def _dictionary(self, attributes: dict[str, Attribute]) -> str:
        parts = []
        for key, value in attributes.items():
            name = key if _BARE.fullmatch(key) else '"' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'
            parts.append(name if isinstance(value, UnitAttr) else f"{name} = {self.attribute(value)}")
        return ", ".join(parts)

    def op(self, op: Operation, indent: str) -> None:
        if op.regions and op.name not in _REGIONS_AS_THEY_ARE:
            stream = self._printer.stream = StringIO()
            self._printer.print_op(op)
            self._lines.append(indent + stream.getvalue())
            return
        names = self._names
        head = indent
        results = op.results
        if results:
            name = self._printer._get_new_valid_name_id()
            if len(results) == 1:
                names[results[0]] = name
                head += f"%{name} = "
            else:
                for i, result in enumerate(results):
                    names[result] = f"{name}#{i}"
                head += f"%{name}:{len(results)} = "
        text = [head, '"', op.name, '"(', ", ".join(["%" + names[v] for v in op.operands]), ")"]
        if op.successors:
            text += ["[", ", ".join([self._blocks[b] for b in op.successors]), "]"]
        if op.properties:
            text += [" <{", self._dictionary(op.properties), "}>"]
        if op.regions:
            text.append(" (")
            self._lines.append("".join(text))
            for i, region in enumerate(op.regions):
                self._region(region, indent, last=i == len(op.regions) - 1)
            text = [indent, ")"]
        if op.attributes:
            text += [" {", self._dictionary(op.attributes), "}"]
        attribute = self.attribute
        text += [" : (", ", ".join([attribute(v.type) for v in op.operands]), ") -> (",
                 ", ".join([attribute(r.type) for r in results]), ")"]
        self._lines.append("".join(text))

    def _region(self, region: Region, indent: str, last: bool) -> None:
        for block in region.blocks:
            self._blocks[block] = f"^bb{self._printer._get_new_valid_block_id()}"
        self._lines.append("{")
        inner = indent + "  "
        for block in region.blocks:
            arguments = []
            for arg in block.args:
                name = self._names[arg] = self._printer._get_new_valid_name_id()
                arguments.append(f"%{name}: {self.attribute(arg.type)}")
            self._lines.append(f"{self._blocks[block]}({', '.join(arguments)}):" if arguments else f"{self._blocks[block]}:")
            for op in block.ops:
                self.op(op, inner)
        self._lines.append("}" if last else "},")

    def text(self) -> str:
        return "\n".join(self._lines) + "\n"


def generic_text(op: Operation) -> str:
    """`op` as mlir-opt reads it, in MLIR's generic form (but the ops
    `_REGIONS_AS_THEY_ARE` leaves out): the native backend's input to the
    tools, written in a third of the time `module_text` takes."""
    writer = _GenericWriter()
    writer.op(op, "")
    return writer.text()
