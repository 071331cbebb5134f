"""Names and provenance metadata of the functions the pass generates.

Naming scheme (stable; FileCheck tests depend on it):

    @<primal>.augmented.<activity>   the augmented primal: results, then residuals
    @<primal>.pullback.<activity>    the pullback: residuals and result cotangents in,
                                     argument cotangents out
    @<primal>.augmented.tape.<activity>, @<primal>.pullback.tape.<activity>
                                     the pair of a function in tape mode (loops,
                                     recursion), threading the tape; the pair above
                                     then allocates a tape and calls it

<activity> has one letter per argument: `d` (differentiated) or `c` (constant).
It is omitted for functions without arguments.

Metadata (discardable, builtin attributes, so upstream MLIR reads them):

    irad.primal = @f      the original primal function, even for generated code
    irad.role = "augmented_primal" | "pullback" | "jvp" | "entry"
                          ("entry": an API function wrapping request ops)
    irad.order = 1        derivative order (differentiating generated code adds one)
    irad.rule = "..."     on functions made from a rule for the primal itself: which one
    irad.derived_from = @g   at order 2 and above: the generated function this one was
                          generated from (the inliner judges recursion on those)
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, StringAttr, SymbolRefAttr, i64

AUGMENTED = "augmented_primal"
PULLBACK = "pullback"
ENTRY = "entry"
JVP = "jvp"
NAME = "irad.name"  # a specialisation's Python name, where its symbol has a `_1` (display_name)
_SHORT = {AUGMENTED: "augmented", PULLBACK: "pullback", JVP: "jvp"}


def activity_string(active: Sequence[bool]) -> str:
    return "".join("d" if a else "c" for a in active)


def generated_name(primal: str, role: str, active: Sequence[bool], variant: str = "") -> str:
    suffix = activity_string(active)
    name = f"{primal}.{_SHORT[role]}" + (f".{variant}" if variant else "")
    return f"{name}.{suffix}" if suffix else name


def origin(fn: func.FuncOp) -> tuple[str, int]:
    """(original primal symbol, derivative order) of a function."""
    primal = fn.attributes.get("irad.primal")
    if isinstance(primal, SymbolRefAttr):
        order = fn.attributes.get("irad.order")
        return primal.root_reference.data, order.value.data if isinstance(order, IntegerAttr) else 1
    return fn.sym_name.data, 0


def display_name(fn: func.FuncOp) -> str:
    """The name run-time errors give a function: its original primal's, without
    the `_1` of a second specialisation (`irad.name`)."""
    name = fn.attributes.get(NAME)
    return name.data if isinstance(name, StringAttr) else origin(fn)[0]


def mark_generated(fn: func.FuncOp, primal: func.FuncOp, role: str) -> None:
    root, order = origin(primal)
    fn.attributes["irad.primal"] = SymbolRefAttr(root)
    fn.attributes["irad.role"] = StringAttr(role)
    fn.attributes["irad.order"] = IntegerAttr(order + 1, i64)
    fn.location = primal.location  # the primal's `def`, for run-time errors
    if NAME in primal.attributes:
        fn.attributes[NAME] = primal.attributes[NAME]
    if order >= 1:  # generated from generated code: name the function it came from
        fn.attributes["irad.derived_from"] = SymbolRefAttr(primal.sym_name.data)


def derived_from(fn: func.FuncOp) -> str:
    """The function `fn` was generated from: `irad.derived_from` at order 2 and
    above, else the original primal (its own symbol for a primal)."""
    source = fn.attributes.get("irad.derived_from")
    if isinstance(source, SymbolRefAttr):
        return source.root_reference.data
    return origin(fn)[0]
