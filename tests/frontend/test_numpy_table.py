"""The numpy table (irad/frontend/numpy_table.py): what users read is what exists,
and each entry is a rule-table target users can override and opt out of."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import irad
from irad.frontend.numpy_table import NUMPY, numpy_function, numpy_functions
from irad.rules.keys import IMPLEMENTED_IN_PYTHON, target_key

DOCS = Path(__file__).resolve().parents[2] / "docs" / "arrays.md"


def _documented() -> set[str]:
    """The functions the tables of docs/arrays.md's "Supported numpy functions"
    name, by rule-table name (an alias such as np.abs names numpy.absolute): a code
    span `np.a b c` names np.a, np.b and np.c."""
    section = DOCS.read_text().split("## Supported numpy functions", 1)[1].split("\n## ", 1)[0]
    names = set()
    for row in re.findall(r"^\|(.+)\|\s*$", section, re.M):
        first_cell = re.split(r"(?<!\\)\|", row)[0]
        for span in re.findall(r"`([^`]*)`", first_cell):
            first = re.match(r"np\.([A-Za-z_][\w.]*)", span)
            if first is None:
                continue
            rest = [n for n in span.split()[1:] if re.fullmatch(r"[a-z_][a-z0-9_.]*", n)]
            names.update([first.group(1), *rest])
    found = (_numpy_attribute(name) for name in names)
    return {f"{obj.__module__}.{obj.__name__}" if obj in IMPLEMENTED_IN_PYTHON else target_key(obj)  # np.cov: by numpy's name
            for obj in found if callable(obj)}  # np.r_[...] is an index, not a call


def _numpy_attribute(dotted: str):
    obj = np
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def test_the_docs_list_every_numpy_function_and_nothing_else():
    table = set(numpy_functions())
    documented = _documented()
    assert not table - documented, f"in the numpy table but not in docs/arrays.md: {sorted(table - documented)}"
    assert not documented - table, f"in docs/arrays.md but not in the numpy table: {sorted(documented - table)}"


def test_numpy_functions_is_the_table_by_rule_table_name():
    names = irad.numpy_functions()
    assert "numpy.logaddexp" in names and "numpy.float64" in names and "numpy.sin" in names
    in_python = {fn for fn in IMPLEMENTED_IN_PYTHON if fn.__module__.startswith("numpy")}
    assert "numpy.cov" in names and "numpy.linalg.lstsq" in names and len(in_python) == 13
    assert len(names) == len(in_python) + len(
        {fn for fn in NUMPY if not isinstance(fn, str) and target_key(fn).startswith("numpy.")})


def test_entries_come_in_through_numpy_function_only():
    entry = NUMPY[np.sin]
    with pytest.raises(TypeError):
        NUMPY[np.sin] = entry  # a write beside the decorator would miss its check
    with pytest.raises(ValueError, match="two handlers for numpy.sin"):
        numpy_function(np.sin, params=("x",))(lambda al, node, x: x)
    assert NUMPY[np.sin] is entry


def hypot_twice(x, y):
    return np.sum(np.hypot(x, y))


def hypot_rule(x, y):
    h = np.hypot(x, y)

    def pullback(dh):
        return 2.0 * dh * x / h, 2.0 * dh * y / h

    return h, pullback


def test_a_rule_replaces_a_numpy_function_and_opting_out_restores_its_ir(rule_table):
    x, y = np.array([3.0, 1.0]), np.array([4.0, 2.0])
    truth = x / np.hypot(x, y)
    np.testing.assert_allclose(irad.grad(hypot_twice)(x, y), truth)
    irad.rrule(np.hypot)(hypot_rule)  # for every signature
    np.testing.assert_allclose(irad.grad(hypot_twice)(x, y), 2.0 * truth)  # the rule's pullback
    assert [r.kind for r in irad.rules.list_rules(np.hypot)] == ["rrule"]
    irad.opt_out(np.hypot, types=(x, y))  # but not for these two shapes
    np.testing.assert_allclose(irad.grad(hypot_twice)(x, y), truth)  # its IR again
    x3, y3 = np.array([3.0, 1.0, 1.0]), np.array([4.0, 2.0, 1.0])
    np.testing.assert_allclose(irad.grad(hypot_twice)(x3, y3), 2.0 * x3 / np.hypot(x3, y3))


def split_halves(x):
    a, b = np.split(x, 2)
    return np.sum(a * b)


def split_by_keyword(x):
    a, b = np.split(x, indices_or_sections=2)
    return np.sum(a * b)


def test_an_entry_for_a_function_with_static_arguments_needs_them_by_keyword(rule_table):
    x = np.arange(4.0)
    irad.opt_out(np.split)
    with pytest.raises(irad.UnsupportedError, match=r"test_numpy_table.py:\d+:\d+: the rule table has an entry "
                       r"for numpy.split.*indices_or_sections must be known while lowering") as info:
        irad.grad(split_halves)(x)
    assert "hint: pass such arguments by keyword" in str(info.value)
    np.testing.assert_allclose(irad.grad(split_by_keyword)(x), [2.0, 3.0, 0.0, 1.0])


def test_a_numpy_function_is_an_entry_point_too():
    assert irad.grad(np.sinc)(0.0) == 0.0
    assert irad.grad(np.logaddexp, argnums=(0, 1))(1.0, 1.0) == (0.5, 0.5)
    np.testing.assert_allclose(irad.grad(np.arcsinh)(0.5), 1 / np.sqrt(1.25))
