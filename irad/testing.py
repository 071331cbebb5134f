"""Checking rules and gradients against the functions themselves.

`check_rrule` holds a rule to the ChainRulesTestUtils `test_rrule` standard:
its primal must match the target, and its cotangents must match central
finite differences of the target, in float64. `check_grad` does the same for
a whole program's gradient. Both raise AssertionError with a readable table.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence

import numpy as np

from irad.rules import RuleTable, default_table
from irad.ir.types import describe


def central_difference(f: Callable, args: Sequence, i: int, cotangents: Sequence[float]) -> float:
    """d/d args[i] of sum_k cotangents[k] * f(*args)[k], by central differences."""
    x = float(args[i])
    h = 1e-6 * max(1.0, abs(x))
    # a number keeps its kind: an np.float64's comparisons are numpy's bools, a float's Python's
    number = np.float64 if isinstance(args[i], np.generic) else float

    def at(value: float) -> float:
        moved = list(args)
        moved[i] = number(value)
        out = f(*moved)
        outs = out if isinstance(out, tuple) else (out,)
        return sum(c * float(o) for c, o in zip(cotangents, outs) if c)

    return (at(x + h) - at(x - h)) / (2 * h)


def _float_positions(args: Sequence) -> list[int]:
    return [
        i for i, a in enumerate(args)
        if isinstance(a, float) or (isinstance(a, np.ndarray) and a.dtype.kind == "f")
    ]


def _array_partials(f: Callable, args: Sequence, i: int, got) -> list[tuple[str, float, float]]:
    """One row per element of the array args[i]: irad's partial and central differences (float64)."""
    rows = []
    for index in np.ndindex(args[i].shape):
        def at(value: float, index=index) -> float:
            moved = list(args)
            moved[i] = np.array(args[i], dtype=np.float64)
            moved[i][index] = value
            return float(f(*moved))

        x = float(args[i][index])
        h = 1e-6 * max(1.0, abs(x))
        rows.append((f"d/d arg {i}{list(index)}", float(got[index]), (at(x + h) - at(x - h)) / (2 * h)))
    return rows


def _close(a: float, b: float, rtol: float, atol: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= atol + rtol * abs(b)


def _table_of(rows: list[tuple[str, float, float]], rtol: float, atol: float) -> tuple[bool, str]:
    ok = True
    lines = [f"  {'':<22} {'irad':>24} {'expected':>24} {'abs diff':>10}"]
    for label, got, want in rows:
        good = _close(got, want, rtol, atol)
        ok &= good
        mark = "" if good else "   <-- differs"
        lines.append(f"  {label:<22} {got:>24.17g} {want:>24.17g} {abs(got - want):>10.2e}{mark}")
    return ok, "\n".join(lines)


def check_rrule(
    target: Callable,
    *args,
    cotangent: float | Sequence[float] | None = None,
    rtol: float = 1e-6,
    atol: float = 1e-8,
    table: RuleTable | None = None,
) -> None:
    """Check the rule registered for `target` at `args`."""
    from irad.api import vjp
    from irad.rules.keys import target_key
    from irad.frontend.entry_arguments import signature_of
    from irad.base.pytrees import leaf_types

    table = table if table is not None else default_table()
    key = target_key(target)
    signature = tuple(leaf_types(signature_of(target, tuple(args))))
    rule = table.entry(key, signature)
    if rule is None or rule.kind != "rrule":
        found = "no entry" if rule is None else rule.describe()
        raise AssertionError(f"check_rrule: no rrule for {key} at ({', '.join(map(describe, signature))}): {found}")
    decision = table.lookup(key, signature)
    if decision.kind != "rule":
        raise AssertionError(f"check_rrule: {rule.describe()} declines at these arguments")
    out, pullback = vjp(target, *args)
    outs = out if isinstance(out, tuple) else (out,)
    if cotangent is None:
        cts = [1.0] * len(outs)
    else:
        cts = list(cotangent) if isinstance(cotangent, Sequence) else [cotangent]
    expected = target(*args)
    expected = expected if isinstance(expected, tuple) else (expected,)
    rows = [(f"primal {k}", float(o), float(e)) for k, (o, e) in enumerate(zip(outs, expected))]
    got = pullback(cts[0] if len(cts) == 1 else tuple(cts))
    for i, arg in enumerate(args):
        if isinstance(arg, float):
            rows.append((f"cotangent of arg {i}", got[i], central_difference(target, args, i, cts)))
        elif got[i] is not None:
            raise AssertionError(f"check_rrule: argument {i} is not a float, but got a cotangent")
    ok, shown = _table_of(rows, rtol, atol)
    if not ok:
        raise AssertionError(
            f"check_rrule: {rule.describe()} disagrees with {key} at {tuple(args)} "
            f"(rtol={rtol}, atol={atol}; expected: the target and central differences)\n{shown}"
        )


def check_grad(f: Callable, *args, argnums: int | Sequence[int] | None = None,
               rtol: float = 1e-6, atol: float = 1e-8) -> None:
    """Check irad.grad(f) at `args` against central differences of `f`; float
    arrays are checked element by element."""
    from irad.api import grad

    if argnums is None:
        nums = tuple(_float_positions(args))
    else:
        nums = (argnums,) if isinstance(argnums, numbers.Integral) else tuple(argnums)
    got = grad(f, argnums=nums)(*args)
    rows = []
    for i, g in zip(nums, got):
        if isinstance(args[i], np.ndarray):
            rows += _array_partials(f, args, i, g)
        else:
            rows.append((f"d/d arg {i}", g, central_difference(f, args, i, [1.0])))
    ok, shown = _table_of(rows, rtol, atol)
    if not ok:
        name = getattr(f, "__qualname__", repr(f))
        raise AssertionError(
            f"check_grad: the gradient of {name} at {tuple(args)} disagrees with central "
            f"differences (rtol={rtol}, atol={atol})\n{shown}"
        )
