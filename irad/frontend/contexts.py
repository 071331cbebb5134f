"""`with` statements: the context managers irad takes, and what each means.

`with np.errstate(...)` is the one: its body is lowered as usual, and the
context itself is nothing in the IR. numpy's errstate only chooses how numpy
reports a floating-point error (a division by zero, an overflow, an invalid
operation, an underflow): by a RuntimeWarning, by nothing, or by raising
FloatingPointError. irad's float arithmetic follows IEEE 754 and never
reports one, on either backend: `x / 0.0` is inf, `0.0 / 0.0` NaN, `np.log(0.0)`
-inf, and no warning is issued. So 'ignore' (and 'warn', whose warnings do
not change a value) mean for irad what they mean for numpy, and irad refuses
'raise', 'call', 'print' and 'log', where numpy would raise or call out.
(irad's run-time checks are another matter, and errstate does not change
them: an int `//` or `%` by zero, a float `%` or `//` by zero on Python
floats, or int() of inf raise RuntimeCheckError, as Python raises.)
"""

from __future__ import annotations

import ast

import numpy as np

from irad.base.errors import UnsupportedError
from irad.frontend.arrays import known_value
from irad.frontend.values import Static

_QUIET = ("ignore", "warn")
_CATEGORIES = ("all", "divide", "over", "under", "invalid")


def enter(fl, stmt: ast.With, item: ast.withitem) -> None:
    """Check one context manager of a `with` statement (refusing all but
    np.errstate with quiet settings); it emits nothing."""
    call = item.context_expr
    if not (isinstance(call, ast.Call) and _is_errstate(fl, call.func)):
        raise fl.src.error(
            stmt, "a `with` statement is supported only for np.errstate(...)",
            "remove the `with` (irad's code raises no exceptions to manage), or keep the body without it",
        )
    if item.optional_vars is not None:
        raise fl.src.error(item.optional_vars, "`with np.errstate(...) as name`: irad binds no name to it",
                           "drop `as name`")
    if call.args:
        raise fl.src.error(call, "np.errstate takes its settings by keyword (divide='ignore', ...)")
    for keyword in call.keywords:
        if keyword.arg not in _CATEGORIES:
            raise fl.src.error(
                keyword.value if keyword.arg is not None else call,
                f"np.errstate({keyword.arg or '**'}=...) is not supported",
                f"irad takes np.errstate with {', '.join(_CATEGORIES)} set to 'ignore' or 'warn'",
            )
        known, setting = known_value(fl.expr(keyword.value))
        if not known or setting not in _QUIET + (None,):
            raise fl.src.error(
                keyword.value,
                f"np.errstate({keyword.arg}={setting!r}): irad's floating-point arithmetic follows IEEE 754 "
                "and never raises or reports an error (1/0 is inf, 0/0 NaN)" if known else
                f"np.errstate({keyword.arg}=...) must be known while lowering",
                "use 'ignore' or 'warn', which irad takes (its code never warns); check the values "
                "yourself (np.isfinite) where numpy would raise",
            )


def _is_errstate(fl, func: ast.expr) -> bool:
    try:
        callee = fl.expr(func)
    except UnsupportedError:  # a name irad cannot resolve: not np.errstate
        return False
    return isinstance(callee, Static) and callee.obj is np.errstate


__all__ = ["enter"]
