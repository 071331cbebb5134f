"""Statements lowered as the simpler ones they mean (issue 32): `for ... else` and
`while ... else` (the loop, then the `else` body where no `break` ran: a hidden
flag each `break` sets, loop_else.py), the assignment expression `:=` and
`match` on literals (an `if`/`elif` chain, match_statements.py).

Each program runs as plain Python/numpy too: irad's value against it and its
gradient against central differences, on both backends, with inputs that take
the `break` (at run time or while lowering) and inputs that do not. What stays
refused is checked for its file:line and its hint, and each hint's rewrite runs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irad
from tests.reference import BACKENDS, central_difference, check_against_numpy, check_refused


# ---- for ... else, while ... else ------------------------------------------------------------
def for_else_runtime_break(x):
    t = 0.0
    for i in range(4):
        if x[i] > 1.5:
            break
        t = t + x[i]
    else:
        t = t + 100.0
    return t


def for_else_known_break(x):
    t = 0.0
    for i in range(4):
        if i == 2:
            break
        t = t + x[i]
    else:
        t = t + 100.0  # never runs: the break is known to run while lowering
    return t


def for_else_without_break(x):
    t = 0.0
    for v in x:
        t = t + v
    else:
        t = t * 2.0
    return t


def for_else_returns(x):
    t = 0.0
    for v in x:
        if v > 1.5:
            break
        t = t + v * v
    else:
        return t - 1.0
    return t


def for_else_nested(x):
    t = 0.0
    for i in range(2):
        for j in range(3):
            if x[j] * (i + 1) > 1.9:
                break  # ends the inner loop only
            t = t + x[j]
        else:
            t = t + 10.0
            continue
        t = t + 1000.0
    return t


def for_else_over_functions(x):
    t = 0.0
    for f in (np.sin, np.cos, np.exp):  # unrolled: the break is known per item at run time
        if f(x[0]) > 1.0:
            break
        t = t + f(x[1])
    else:
        t = -t
    return t


def while_else_runtime_break(x):
    i = 0
    t = 0.0
    while i < 4:
        if x[i] > 1.5:
            break
        t = t + x[i]
        i += 1
    else:
        t = t * 3.0
    return t


def for_else_break_in_match(x):
    t = 0.0
    for i in range(4):
        match i:
            case 2:
                if x[i] > 1.5:
                    break
        t = t + x[i]
    else:
        t = t + 50.0
    return t


X_BREAKS = np.array([0.3, -1.2, 2.0, 0.7])  # x[2] > 1.5: the loops break
X_RUNS = np.array([0.3, 1.2, 1.0, 0.7])  # no element > 1.5: the else bodies run
X_FIRST = np.array([1.7, 0.2, 1.25, 0.7])  # the first element breaks


# ---- := -----------------------------------------------------------------------------------------
def walrus_in_if(x):
    if (s := x.sum()) > 0:
        return s * s
    return s


def walrus_in_assignment(x):
    y = (z := x * 2.0) + 1.0
    return (y * z).sum()


def walrus_in_loop(x):
    t = w = 0.0
    for v in x:
        if (w := v * v) > 0.5:
            t = t + w
    return t + w


def walrus_after_known_and(x):
    n = 3
    if n > 2 and (m := n * 2) > 5:  # `and` decided while lowering: m is bound here
        return x[0] * m
    return x[1]


def walrus_in_jumping_chain(x):
    n = 0
    t = 0.0
    for v in x:
        if (n := n + 1) > 2:  # evaluated once per iteration, whatever the chain's jumps
            t = t + v * n
        elif v > 1.5:
            break
        else:
            t = t - v
    return t + n


def walrus_rewritten_while(x):
    """The rewrite walrus_in_while's refusal gives."""
    i = 0
    t = 0.0
    while True:
        v = x[i]
        if not (v < 1.5 and i < 3):
            break
        t = t + v
        i += 1
    return t


# ---- match --------------------------------------------------------------------------------------
def _loss(x, kind):
    match kind:
        case "l2":
            return (x * x).sum()
        case "l1" | "abs":
            return np.abs(x).sum()
        case _:
            return x.sum()


def match_strings(x):
    return _loss(x, "l2") + 2.0 * _loss(x, "abs") + 3.0 * _loss(x, "other")


def match_runtime_ints(x):
    t = 0.0
    for i in range(4):
        k = int(x[i] > 0.5) + int(x[i] > 1.1)
        match k:  # known only at run time: an if chain at run time
            case 0:
                t = t + x[i]
            case 1:
                t = t + x[i] * x[i]
            case other:
                t = t + other * x[i]
    return t


def match_guards_and_captures(x):
    t, m = 0.0, -1
    for n in range(5):
        match n:
            case 0 | 1 as k if k == 1:
                t = t + x[k]
            case m if m > 3:
                t = t + x[0] * m
            case 2:
                t = t - x[2]
            case _:
                t = t * 2.0
    return t + m  # bound by the last case whose pattern matched, as Python binds it


def match_none(x):
    opt = None
    match opt:
        case None:
            return x.sum()
        case _:
            return 0.0


PROGRAMS = [
    *((f, (x,)) for f in (for_else_runtime_break, for_else_known_break, for_else_without_break, for_else_returns,
                          for_else_nested, for_else_over_functions, while_else_runtime_break, for_else_break_in_match,
                          walrus_in_if, walrus_in_loop, walrus_in_jumping_chain, walrus_rewritten_while,
                          match_runtime_ints) for x in (X_BREAKS, X_RUNS, X_FIRST)),
    (walrus_in_if, (-X_RUNS,)), (walrus_in_assignment, (X_BREAKS,)), (walrus_after_known_and, (X_BREAKS,)),
    (match_strings, (X_BREAKS,)), (match_guards_and_captures, (X_BREAKS,)), (match_none, (X_RUNS,)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", PROGRAMS, ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(PROGRAMS)])
def test_statement_forms_match_python(case, backend):
    f, args = case
    check_against_numpy(f, args, backend)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-3.0, 3.0), min_size=4, max_size=4))
def test_for_else_takes_pythons_branch(xs):
    """Whether the else body ran, for any break pattern (a wrong branch is silently wrong)."""
    x = np.array(xs)
    for f in (for_else_runtime_break, for_else_nested, while_else_runtime_break, for_else_break_in_match,
              walrus_in_jumping_chain):
        assert irad.value_and_grad(f)(x.copy())[0] == pytest.approx(f(x.copy()), rel=1e-12, abs=1e-12)


# ---- what stays refused ---------------------------------------------------------------------------
def walrus_after_runtime_and(x):
    if x[0] > 0 and (w := x[1]) > 0:  # <- refused
        return w
    return x[2]


def walrus_in_runtime_ifexp(x):
    return (w := x[1]) if x[0] > 0 else x[2]  # <- refused


def walrus_in_while(x):
    i = 0
    t = 0.0
    while (v := x[i]) < 1.5 and i < 3:  # <- refused
        t = t + v
        i += 1
    return t


def walrus_in_comprehension(x):
    return sum(y for v in x if (y := v * v) > 0.1)  # <- refused


def match_sequence(x):
    t = (x[0], x[1])
    match t:
        case (a, b):  # <- refused
            return a * b
    return 0.0


def match_or_binding(x):
    match 1:
        case (1 as k) | (2 as k):  # <- refused
            return x[0]
    return 0.0


REFUSED = [
    (walrus_after_runtime_and, "an assignment expression \\(`w := ...`\\) evaluated only on some paths"),
    (walrus_in_runtime_ifexp, "an assignment expression \\(`w := ...`\\) evaluated only on some paths"),
    (walrus_in_while, "in a `while` condition is not supported"),
    (walrus_in_comprehension, "an assignment expression \\(`y := ...`\\) in a comprehension is not supported"),
    (match_sequence, "a sequence pattern in a `match` statement is not supported"),
    (match_or_binding, "a `|` pattern that binds names is not supported"),
]


@pytest.mark.parametrize("f, message", REFUSED, ids=[c[0].__name__ for c in REFUSED])
def test_refusals_name_the_line_and_the_rewrite(f, message):
    check_refused(f, (X_BREAKS,), message)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f", [for_else_runtime_break, for_else_nested, while_else_runtime_break, for_else_break_in_match,
                               walrus_in_jumping_chain, match_runtime_ints, for_else_returns], ids=lambda f: f.__name__)
def test_vmap_takes_each_rows_branch(f, backend):
    """Under irad.vmap the break flag is batched: each row takes its own else branch."""
    rows = np.random.default_rng(3).normal(size=(12, 4)) * 1.5
    np.testing.assert_allclose(irad.vmap(f, backend=backend)(rows), [f(r) for r in rows], rtol=1e-12)
    grads = irad.vmap(irad.grad(f), backend=backend)(rows)
    for r, g in zip(rows, grads):
        np.testing.assert_allclose(g, central_difference(f, (r,), 0), rtol=1e-6, atol=1e-8)
