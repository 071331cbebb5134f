"""What one op's derivative is: its entry in the registry (passes/ad/derivatives/).

An entry holds, side by side, everything the passes need to know about an op:

- `reverse(b, op, dy)`: one cotangent per operand (None for an operand that gets
  none), given the cotangent `dy` of its single result; `b` is the pullback
  builder (passes/ad/reverse.py): `b.primal(v)` is primal `v` inside the pullback,
  `b.is_active(v)` says whether `v` wants a cotangent.
- `forward(b, op)`: the tangent of its result (None: it has none), `b` being the
  TangentBuilder (passes/ad/forward.py) with the op already cloned. By default it is
  the reverse rule used as a linear map (see `linearised`).
- `differentiable`: False for piecewise-constant ops and ops without float
  results; activity analysis (passes/ad/activity.py) stops at them.
- `operands`: the operand positions that can carry a derivative (None: all).
- `elementwise`: the op applies pointwise to scalars or to the elements of
  tensors (tests/passes/test_op_sweep.py samples these on scalars and tensors).
- `structured`: the op's rules build it whole: `reverse(b, op, cotangents, adj)`
  accumulates into `adj` itself and `forward(b, op)` clones the op (regions and
  calls, which carry any number of results).
- `multi_result`: an op with several results (math.sincos): `reverse(b, op, dys)`
  gets one cotangent per result (None where none flows) and `forward(b, op)`
  returns one tangent per result (None: it has none).
- `batch(b, op)`: the op on values batched along a leading axis (irad-vmap),
  given the BatchBuilder (passes/batching/batcher.py); None: irad-vmap refuses
  the op when a batched value reaches it (rules in batching.py).
- `refused`: why irad has no derivative for this op although its results may
  vary (a bit cast, say); its rules raise that as an error naming the op, so a
  derivative never silently skips it. The op is classified, not forgotten
  (tests/passes/test_mlir_ops.py checks every MLIR 22 math and arith float op
  has an entry).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from irad.base.errors import DifferentiationError
from irad.ir.locations import location

ReverseRule = Callable[..., list[SSAValue | None] | None]
ForwardRule = Callable[..., SSAValue | None]
BatchRule = Callable[..., list[SSAValue] | None]


@dataclass(frozen=True)
class OpDerivative:
    name: str
    reverse: ReverseRule | None = None
    forward: ForwardRule | None = None
    differentiable: bool = True
    operands: tuple[int, ...] | None = None
    elementwise: bool = False
    structured: bool = False
    multi_result: bool = False
    refused: str = ""
    batch: BatchRule | None = None


def linearised(reverse: ReverseRule) -> ForwardRule:
    """The forward rule of an op whose Jacobian is diagonal per operand (1x1 for
    scalars, elementwise for tensors): its own transpose, so the reverse rule
    with the tangent of operand i as the cotangent gives that operand's part
    dy = df/dx_i dx_i. `b.pushing(v)` makes `v` the one active operand."""

    def forward(b, op: Operation) -> SSAValue | None:
        total = None
        for i, operand in enumerate(op.operands):
            t = b.tangents.get(operand)
            if t is None:
                continue
            with b.pushing(operand):
                part = reverse(b, op, t)[i]
            if part is not None:  # None: the result does not vary with this operand
                total = part if total is None else b.add(total, part)
        return total

    return forward


def registrar(table: dict[str, OpDerivative], **defaults) -> Callable:
    """A decorator for one family's reverse rules: `@derivative("math.sin")`
    enters the decorated reverse rule into `table` under each name, with
    `forward` (default: the linearised reverse rule) and the other fields."""

    def derivative(*names: str, forward: ForwardRule | None = None, **fields) -> Callable:
        def register(reverse: ReverseRule) -> ReverseRule:
            for name in names:
                enter(table, OpDerivative(name, reverse, forward or linearised(reverse), **{**defaults, **fields}))
            return reverse

        return register

    return derivative


def non_differentiable(table: dict[str, OpDerivative], batch: BatchRule | None, *names: str) -> None:
    for name in names:
        enter(table, OpDerivative(name, differentiable=False, batch=batch))


def refusal(op: Operation, why: str) -> DifferentiationError:
    """The error for a value to be differentiated reaching a refused op."""
    return DifferentiationError(
        f"{location(op)}: no derivative for the op `{op.name}`: {why}\n"
        "  hint: compute the value without it, or put it behind a function marked "
        "irad.non_differentiable if its derivative is meant to be zero"
    )


def refused(table: dict[str, OpDerivative], why: str, *names: str) -> None:
    """Ops irad does not differentiate, for the reason `why`: a varying value
    reaching one is an error, in both modes, whatever the op's result type (a bit
    cast to an integer and back must not pass for a constant)."""

    def refuse(b, op: Operation, *_) -> None:
        raise refusal(op, why)

    for name in names:
        enter(table, OpDerivative(name, refuse, refuse, refused=why))


def enter(table: dict[str, OpDerivative], entry: OpDerivative) -> None:
    if entry.name in table:
        raise ValueError(f"two derivative entries for {entry.name}")
    table[entry.name] = entry
