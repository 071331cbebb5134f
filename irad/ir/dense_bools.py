"""Dense bool attributes printed as MLIR reads them.

xDSL 0.75 prints a dense attribute of more than 100 elements as hex, one byte
per element, and an i1 `true` as the byte 0xFF. MLIR stores i1 elements one
bit each and rejects that text ("elements hex data size is invalid"), so a
module holding a large bool constant (the mask of `np.tril` of a 64×64 array)
failed in mlir-opt. Such attributes are printed as a list of `true`/`false`
instead, which xDSL and MLIR both read back as the same values.

xDSL also calls an attribute a splat when its elements compare equal with ==,
so [0.0, -0.0] printed as `dense<0.0>`: a -0.0 turned into 0.0 on the way to
mlir-opt. A float attribute whose elements differ in their bits is printed
element by element. Applied when
`irad.ir` is imported: every printer of irad's IR (the native backend,
irad-opt, exports) goes through it.
"""

from __future__ import annotations

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, IntegerType
from xdsl.printer import Printer

_print_without_type = DenseIntOrFPElementsAttr.print_without_type


def _print_bools_as_a_list(self: DenseIntOrFPElementsAttr, printer: Printer) -> None:
    from irad.ir.constants import splat_element  # here: constants imports xDSL's linalg, which irad.ir defers

    element = self.get_element_type()
    if len(self) <= 1 or splat_element(self) is not None:
        _print_without_type(self, printer)
        return
    if not (isinstance(element, IntegerType) and element.width.data == 1) and not self.is_splat():
        _print_without_type(self, printer)  # not a splat for xDSL either
        return
    printer.print_string("dense")
    shape = self.get_shape() if self.shape_is_complete else (len(self),)
    with printer.in_angle_brackets():
        self._print_dense_list(self.get_values(), shape, printer)


DenseIntOrFPElementsAttr.print_without_type = _print_bools_as_a_list
