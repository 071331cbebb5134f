"""Sizes and counts the native backend reads from environment variables."""

from __future__ import annotations

import os

from irad.base.errors import BackendError


def number_from(variable: str, default: float, unit_name: str, zero_means: str, kind=float):
    """`variable`'s value as a `kind` (float or int) of `unit_name`; `default`
    if unset. A bad or negative value is a BackendError naming the variable."""
    value = os.environ.get(variable, str(default))
    try:
        amount = kind(value)
    except ValueError:
        amount = -1
    if amount < 0:
        raise BackendError(f"{variable} must be a number of {unit_name} (0 {zero_means}), not {value!r}")
    return amount


def bytes_from(variable: str, default: float, unit: int, unit_name: str, zero_means: str) -> int:
    """`variable`'s value, a number of `unit_name` (`unit` bytes each), in bytes;
    `default` units if unset. A bad value is a BackendError naming the variable."""
    return int(number_from(variable, default, unit_name, zero_means) * unit)


def switch(variable: str, off: str = "", on: str = "") -> bool:
    """`variable` 0 or 1 (on if unset) as a bool; another value is a
    BackendError naming the variable and what 0 (`off`) and 1 (`on`) mean."""
    value = os.environ.get(variable, "1")
    if value not in ("0", "1"):
        meanings = f"0 ({off}) or 1 ({on})" if off else "0 or 1"
        raise BackendError(f"{variable} must be {meanings}, not {value!r}")
    return value == "1"
