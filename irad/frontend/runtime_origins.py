"""Why a number is only known at run time, for errors that needed it known.

A shape, an axis, a range a list is built over, ... must be known while
lowering. When the program gives a run-time number there, the error follows
that number back to where it became run-time and names the chain:

* an argument of the entry function (the API passes numbers as run-time
  values unless they are static: `static_argnums`);
* a parameter a recursive call passed (recursive calls pass numbers as
  run-time values, so recursion does not unroll);
* a parameter a caller passed as a run-time value: the chain continues in
  the caller, at the call;
* the index of a loop, an element read from an array, a call's result, a
  value an `if` or a loop joins.

Only the ops that compute the number are followed (arithmetic, casts), not
the values of other functions' bodies.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func, scf, tensor
from xdsl.ir import BlockArgument, Operation, SSAValue

from irad.base.pytrees import leaf_types
from irad.ir.isa import isa

_DEPTH = 40  # ops followed back from the number: beyond, nothing is said


@dataclass(frozen=True)
class RuntimeOrigin:
    """Why a number is run-time (`why`, one clause per step of the chain) and
    what to do about it (`hint`)."""

    why: str
    hint: str


def runtime_origin(fl, values) -> RuntimeOrigin | None:
    """Where the first run-time number in `values` (SSA values, or containers
    of them) became run-time in the function `fl` is lowering; None when no
    reason is found (the caller's own message stands)."""
    for value in _numbers(values):
        found = _origin(fl, value, 0)
        if found is not None:
            return found
    return None


def _numbers(values) -> list[SSAValue]:
    if isa(values, SSAValue):
        return [values]
    if isinstance(values, (tuple, list)):
        return [v for item in values for v in _numbers(item)]
    return []


def _origin(fl, value: SSAValue, depth: int) -> RuntimeOrigin | None:
    seen: set[SSAValue] = set()
    stack = [value]
    while stack and len(seen) < _DEPTH:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        if isinstance(v, BlockArgument):
            if v.block is fl.block:
                return _parameter(fl, v, depth)
            return RuntimeOrigin("it is the index of a loop whose trip count is known only at run time, or "
                                 "a value a loop carries from one iteration to the next",
                                 "give the loop a trip count known while lowering (a constant, a shape, len(...), "
                                 "an argument made static with static_argnums=...): such a loop is lowered once "
                                 "per iteration where its body needs the index known")
        owner = v.owner
        if not isinstance(owner, Operation):
            continue
        if isinstance(owner, func.CallOp):
            return RuntimeOrigin(f"it is a result of @{owner.callee.root_reference.data}, which returns a "
                                 "run-time value (different values on different paths, or from run-time arguments)",
                                 "return it from shapes, len(...) or constants, the same on every path")
        if isinstance(owner, tensor.ExtractOp):
            return RuntimeOrigin("it is read from an array (array elements are run-time values)",
                                 "use a shape or len(...), or pass it as a static argument (static_argnums)")
        if isinstance(owner, scf.IfOp):
            return RuntimeOrigin("an `if` whose condition is only known at run time joins it "
                                 "(different values on its paths)",
                                 "compute it without the `if`, from shapes, len(...) or constants")
        stack.extend(reversed(owner.operands))
    return None


def _parameter(fl, arg: BlockArgument, depth: int) -> RuntimeOrigin | None:
    """The chain of a parameter of the function `fl` lowers."""
    name = arg.name_hint or f"argument {arg.index}"
    function = fl.src.tree.name
    origin = fl.origin
    if origin is None:
        k = _position(fl, arg.index)
        if k is None:
            return None
        a = fl.src.tree.args
        params = [p.arg for p in (*a.posonlyargs, *a.args)]
        param = params[k] if k < len(params) else name
        where = f"argument {k}" if param == name else f"in argument {k} ('{param}')"
        return RuntimeOrigin(
            f"'{name}' is {where} of the entry function `{function}`, which the API passes as a "
            "run-time value",
            f"make it static: irad.grad({function}, static_argnums=({k},)) (or static_argnames=('{param}',); "
            "every transformation takes them), or compute it from an array's shape",
        )
    where = origin.caller.src.location(origin.node)
    if origin.recursive:
        return RuntimeOrigin(
            f"'{name}' is a parameter of {origin.callee}, passed to it at {where} by a recursive call, "
            "which passes its numbers as run-time values (so that recursion does not unroll)",
            "take the size from an array's shape (shapes specialise each level), or write the "
            "recursion as a loop",
        )
    if arg.index >= len(origin.leaves) or depth > 50:
        return None
    outer = _origin(origin.caller, origin.leaves[arg.index], depth + 1)
    if outer is None:
        return None
    return RuntimeOrigin(f"'{name}' is passed to {origin.callee} at {where}, where {outer.why}", outer.hint)


def _position(fl, leaf: int) -> int | None:
    """The positional argument of the entry whose tree holds run-time leaf `leaf`."""
    shape = fl.shape
    if shape is None:
        return leaf
    start = len(leaf_types(shape.closure)) if shape.closure is not None else 0
    for k, tree in enumerate(shape.args):
        n = len(leaf_types(tree))
        if start <= leaf < start + n:
            return k
        start += n
    return None
