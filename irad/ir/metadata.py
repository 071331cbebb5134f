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
    irad.static = {axis = 1 : i64, mode = "sum"}
                          on a function lowered from Python: the parameters its
                          specialisation took as values known while lowering (ints,
                          bools, floats, strings and tuples of them), by name
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import func
import numpy as np
from xdsl.dialects.builtin import (
    ArrayAttr, DictionaryAttr, FloatAttr, IntegerAttr, StringAttr, SymbolRefAttr, f64, i1, i64,
)
from xdsl.ir import Attribute

AUGMENTED = "augmented_primal"
PULLBACK = "pullback"
ENTRY = "entry"
JVP = "jvp"
NAME = "irad.name"  # a specialisation's Python name, where its symbol has a `_1` (display_name)
STATIC = "irad.static"  # the static values a specialisation was made for: {axis = 1 : i64}
# On an irad.vmap request: where irad-vmap cannot batch the callee, it may call
# it once per element instead (a Jacobian's sweeps over a basis)
UNROLLABLE = "irad.unrollable"
# On a loop irad-vmap made from one whose trip count varies along the batch:
# it runs to the largest with a mask (passes/batching/masks.py); reverse mode refuses it
MASKED = "irad.masked"
_SHORT = {AUGMENTED: "augmented", PULLBACK: "pullback", JVP: "jvp"}


def static_attribute(values: dict[str, object]) -> DictionaryAttr:
    """`irad.static` of a specialisation: each parameter's static value as a builtin attribute."""
    return DictionaryAttr({name: _constant(v) for name, v in values.items()})


def _constant(value) -> Attribute:
    if isinstance(value, (bool, np.bool_)):
        return IntegerAttr(int(value), i1)
    if isinstance(value, (int, np.integer)) and -(2**63) <= value < 2**63:
        return IntegerAttr(int(value), i64)
    if isinstance(value, (float, np.floating)):
        return FloatAttr(float(value), f64)
    if isinstance(value, tuple):
        return ArrayAttr([_constant(v) for v in value])
    return StringAttr(value if isinstance(value, str) else repr(value))


def static_values(fn: func.FuncOp) -> str:
    """`axis=1, mode='sum'`: what `irad.static` says a function was specialised on ("" if nothing)."""
    found = fn.attributes.get(STATIC)
    if not isinstance(found, DictionaryAttr):
        return ""
    return ", ".join(f"{name}={_python(v)}" for name, v in found.data.items())


def _python(attr: Attribute) -> str:
    if isinstance(attr, IntegerAttr):
        value = attr.value.data
        return repr(bool(value)) if attr.type == i1 else repr(value)
    if isinstance(attr, FloatAttr):
        return repr(attr.value.data)
    if isinstance(attr, ArrayAttr):
        items = [_python(a) for a in attr.data]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    return repr(attr.data) if isinstance(attr, StringAttr) else str(attr)


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
