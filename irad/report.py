"""The decision report: what the passes did at each call op, and why.

For every call in the differentiated call tree it says whether a rule was
inlined (which one, where it is defined), the rule declined or was opted out
of, the callee was differentiated because no rule matched, the callee is
non-differentiable, or no derivative flowed through the call at all.

In reverse mode (`irad.grad`) or forward mode (`irad.jvp`), and at order 2: the
gradient differentiated again, in reverse mode (`irad.grad(irad.grad(f))`) or
in forward mode (`irad.jacfwd(irad.grad(f))`, which is how `irad.hessian`
works). Calls inside the generated code of the gradient meet the rule table at
order 2, where a rule may decline (see docs/forward-mode.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import func

from irad.arguments import arguments
from irad.frontend.source import error_at
from irad.frontend.transformations import Transformation, float_leaves, normalise_static
from irad.ir.metadata import static_values
from irad.base.pytrees import leaf_types
from irad.ir.types import is_differentiable
from irad.passes.ad.decisions import CallDecision
from irad.passes import differentiate, jvp
from irad.pipeline import gradient_module, lowered
from irad.rules import RuleTable, default_table

MODES = ("reverse", "forward")


@dataclass(frozen=True)
class Report:
    """The decisions of one differentiation; at order 2, `gradient` is the
    report of the (reverse-mode) gradient that was differentiated again."""

    function: str
    decisions: tuple[CallDecision, ...]
    mode: str = "reverse"
    order: int = 1
    gradient: Report | None = None
    # (symbol, "axis=1"): the functions specialised on static values, and on which
    specialisations: tuple[tuple[str, str], ...] = ()

    def _lines(self, indent: str) -> list[str]:
        lines = [f"{indent}{d.describe()}" for d in self.decisions]
        lines += [f"{indent}@{name} is specialised on {values}" for name, values in self.specialisations]
        return lines or [f"{indent}(no calls)"]

    def __str__(self) -> str:
        if self.gradient is None:
            title = f"irad explain: {self.function}"
            if self.mode != "reverse":
                title += f" ({self.mode} mode)"
            return "\n".join([title, *self._lines("  ")])
        return "\n".join(
            [
                f"irad explain: {self.function}, order 2 ({self.mode} over reverse)",
                "  order 1, reverse mode: the gradient",
                *self.gradient._lines("    "),
                f"  order 2, {self.mode} mode: the gradient differentiated",
                *self._lines("    "),
            ]
        )


def explain(
    f: Callable,
    *args,
    argnums: int | Sequence[int] | None = None,
    table: RuleTable | None = None,
    mode: str = "reverse",
    order: int = 1,
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
) -> Report:
    """The decision report for differentiating `f` at `args` (all float
    arguments unless `argnums` says otherwise), in `mode` ("reverse" or
    "forward"). `order=2` differentiates the gradient of `f` again in `mode`
    with respect to the same arguments, and reports both orders (the rule
    table is the default one there, as for the API's higher derivatives).
    `static_argnums`/`static_argnames` as for `irad.grad`. The report ends
    with the functions specialised on values known while lowering (an axis
    a helper was passed, a static argument) and those values."""
    if isinstance(f, Transformation):  # irad.grad(f): its request op is what the report would differentiate
        raise error_at(f.f, f"explain takes the function itself, not {f.kind}({getattr(f.f, '__name__', 'f')}): "
                       f"it reports how the function is differentiated\n  hint: irad.explain(f, *args, argnums=...)"
                       ", or order=2 for the gradient differentiated again")
    if mode not in MODES:
        raise error_at(f, f"explain: mode must be 'reverse' or 'forward', got {mode!r}")
    if order not in (1, 2):
        raise error_at(f, f"explain: order must be 1 or 2, got {order!r}\n  hint: higher orders nest order 2")
    if order == 2 and table is not None and table is not default_table():
        raise error_at(f, "explain: order 2 differentiates with the default rule table only")
    table = table if table is not None else default_table()
    signature = arguments(f, args, None, *normalise_static(f, static_argnums, static_argnames))[1]
    n = len(signature.children)
    if argnums is None:
        nums = range(n)
    else:
        nums = [argnums % n] if isinstance(argnums, int) else [a % n for a in argnums]
    wrt = set(float_leaves(signature, nums))
    active = tuple(i in wrt and is_differentiable(t) for i, t in enumerate(leaf_types(signature)))
    title = getattr(f, "__qualname__", getattr(f, "__name__", "f"))
    if order == 1:
        module, name, hidden, _ = lowered(f, signature, table)
    else:  # the gradient, differentiated again
        gradient = explain(f, *args, argnums=argnums, static_argnums=static_argnums, static_argnames=static_argnames)
        differentiated = tuple(i for i in dict.fromkeys(nums) if float_leaves(signature, [i]))
        module, name, hidden, _ = gradient_module(f, signature, differentiated, with_value=False, inline=False)
    # the global arrays f reads come after its arguments, never differentiated
    active += (False,) * len(hidden.globals)
    specialised = tuple((op.sym_name.data, static_values(op)) for op in module.ops
                        if isinstance(op, func.FuncOp) and static_values(op))
    decisions = _decisions(module, name, active, mode, table)
    if order == 1:
        return Report(title, decisions, mode, specialisations=specialised)
    return Report(title, decisions, mode, 2, gradient, specialised)


def _decisions(module, name: str, active: tuple[bool, ...], mode: str, table: RuleTable) -> tuple[CallDecision, ...]:
    """Differentiate @name of `module` in `mode`; what was decided at each call."""
    return (differentiate if mode == "reverse" else jvp).call_decisions(module, name, active, table)
