"""Global arrays as hidden arguments (irad/frontend/globals.py): what the
frontend emits.

Every numpy array a function reads from outside its arguments becomes an
argument after its own, named after the global, and every call to a helper
that reads one passes it on. Numbers stay baked in. The values these programs
compute are checked in tests/api/test_globals.py.
"""

from __future__ import annotations

import re
import types

import numpy as np
import pytest
from xdsl.dialects import func

import irad
from irad.base.errors import UnsupportedError
from irad.ir.types import F64
from irad.passes.pipelines import Options
from irad.pipeline import jvp_module

W = np.array([1.0, 2.0, 3.0])
K = np.array([0.5, -0.5, 0.25])
SCALE = 2.5
IDX = np.array([2, 0, 1])
MASK = np.array([True, False, True])
CFG = types.SimpleNamespace(w=np.array([0.1, 0.2, 0.3]))
PAIR = (np.array([1.0, -1.0, 2.0]), np.array([3.0, 4.0, 5.0]))
X = np.array([0.3, -0.2, 0.7])


def functions(module):
    return {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}


def signature(fn) -> list[str]:
    """The argument names and types of a function, as printed."""
    return [f"%{a.name_hint}: {a.type}" for a in fn.body.block.args]


# ---- programs ------------------------------------------------------------------------
def reads_global(x):
    return np.sum(x * W) * SCALE


def reads_twice(x):
    return np.sum(x * W) + np.sum(W * W * x)


def helper(x):
    return np.sum(np.sin(x) * W)


def calls_helper(x):
    return helper(x) + np.sum(x * K)


def recursive(x, n):
    if n == 0:
        return np.sum(x * K)
    return recursive(x, n - 1) * 0.5 + np.sum(x * W)


def mutual_a(x, n):
    if n <= 0:
        return np.sum(x)
    return mutual_b(x, n - 1) + np.sum(x * W)


def mutual_b(x, n):
    return mutual_a(x, n - 1) * np.sum(K)


def branch_helper(x):
    return np.sum(x * K)


def calls_in_branch(x):
    if np.sum(x) > 0.0:
        return branch_helper(x)
    return np.sum(x)


def scalar_in(s):
    return np.sum(np.sin(s * W)) + np.sum(K) * s


def make_closure(v):
    def closure(x):
        return np.sum(x * v)

    return closure


def in_loop(x):
    acc = 0.0
    for i in range(W.shape[0]):
        acc = acc * 0.5 + x[i] * W[i]
    return acc


def attribute_and_item(x):
    return np.sum(x * CFG.w) + np.sum(x * PAIR[1])


def with_default(x, w=W):
    return np.sum(x * w)


def calls_with_default(x):
    return with_default(x)


def int_and_bool_arrays(x):
    return np.sum(np.where(MASK, x[IDX], 0.0))


def copies_global(x):
    b = np.copy(W)
    b[0] = 2.0
    return np.sum(x * b)


def writes_global(x):
    W[0] = 2.0
    return np.sum(x * W)


def writes_alias(x):
    b = W
    b[0] = 2.0
    return np.sum(x * b)


def writes_view(x):
    v = W[1:]
    v += 1.0
    return np.sum(x * W)


# ---- the hidden arguments ----------------------------------------------------------
def test_a_global_array_is_an_argument_named_after_it_and_a_number_a_constant():
    module = irad.lower(reads_global, X)
    text = str(module)
    fn = functions(module)["reads_global"]
    assert signature(fn) == ["%x: tensor<3xf64>", "%W: tensor<3xf64>"]
    assert "2.500000e+00" in text  # numbers stay baked in
    assert "dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]>" not in text  # the array is not
    assert "func.func @reads_global(%x: tensor<3xf64>, %W: tensor<3xf64>)" in text


def test_two_reads_of_one_global_are_one_argument():
    fn = functions(irad.lower(reads_twice, X))["reads_twice"]
    assert signature(fn) == ["%x: tensor<3xf64>", "%W: tensor<3xf64>"]


def test_a_helpers_globals_are_passed_by_its_caller():
    fns = functions(irad.lower(calls_helper, X))
    assert signature(fns["helper"]) == ["%x: tensor<3xf64>", "%W: tensor<3xf64>"]
    assert signature(fns["calls_helper"]) == ["%x: tensor<3xf64>", "%W: tensor<3xf64>", "%K: tensor<3xf64>"]
    assert "func.call @helper(%x, %W)" in str(fns["calls_helper"])


@pytest.mark.parametrize("entry", [recursive, mutual_a])
def test_recursion_reaches_a_fixed_point_of_globals(entry):
    """The base case reads K, the recursive case W: the first lowering assumes
    neither, so the function is lowered again with both."""
    module = irad.lower(entry, X, 3)
    module.verify()
    fns = functions(module)
    for name, fn in fns.items():
        hidden = [a.name_hint for a in fn.body.block.args[2:]]
        assert sorted(hidden) == ["K", "W"], name
    calls = [op for fn in fns.values() for op in fn.walk() if isinstance(op, func.CallOp)]
    assert calls and all(len(c.arguments) == 4 for c in calls)


def test_a_helper_reached_only_through_a_branch_gets_its_globals():
    fns = functions(irad.lower(calls_in_branch, X))
    assert signature(fns["calls_in_branch"])[1:] == ["%K: tensor<3xf64>"]


def test_closure_loop_attribute_item_default_and_non_float_arrays():
    closure = make_closure(np.array([1.0, 2.0, 3.0]))
    assert signature(functions(irad.lower(closure, X))["closure"])[1:] == ["%v: tensor<3xf64>"]
    assert signature(functions(irad.lower(in_loop, X))["in_loop"])[1:] == ["%W: tensor<3xf64>"]
    fn = functions(irad.lower(attribute_and_item, X))["attribute_and_item"]
    assert signature(fn)[1:] == ["%CFG.w: tensor<3xf64>", "%PAIR.1: tensor<3xf64>"]
    fns = functions(irad.lower(calls_with_default, X))
    assert signature(fns["calls_with_default"])[1:] == ["%w: tensor<3xf64>"]
    fn = functions(irad.lower(int_and_bool_arrays, X))["int_and_bool_arrays"]
    assert signature(fn)[1:] == ["%MASK: tensor<3xi1>", "%IDX: tensor<3xi64>"]


def test_the_gradient_entry_takes_the_globals_after_the_arguments():
    text = str(irad.grad(calls_helper).lower(X))
    assert "func.func @calls_helper.grad(%x: tensor<3xf64>, %W: tensor<3xf64>, %K: tensor<3xf64>) -> tensor<3xf64>" in text
    jvp = str(irad.jacfwd(scalar_in).lower(0.3))
    assert "func.func @scalar_in.jacfwd(%s: f64, %W: tensor<3xf64>, %K: tensor<3xf64>) -> f64" in jvp
    module, entry, _, _ = jvp_module(scalar_in, (F64,), (0,), Options())
    fn = functions(module)[entry]
    assert [a.name_hint for a in fn.body.block.args] == ["s", "ts", "W", "K"]  # the tangent before them


def test_a_copy_of_a_global_array_may_be_written():
    irad.lower(copies_global, X).verify()


@pytest.mark.parametrize(
    "program, message",
    [
        (writes_global, "in-place write to the global array 'W'"),
        (writes_alias, "in-place write to 'b', which is another name for the global array 'W'"),
        (writes_view, "in-place write to 'v', which is a view of the global array 'W'"),
    ],
)
def test_writing_into_a_global_array_is_an_error_at_its_line(program, message):
    with pytest.raises(UnsupportedError) as info:
        irad.lower(program, X)
    text = str(info.value)
    assert message in text and "np.copy" in text
    line = program.__code__.co_firstlineno + (1 if program is writes_global else 2)
    assert re.match(rf"{re.escape(__file__)}:{line}:\d+: ", text), text


# ---- rules have no caller to pass a global array ------------------------------------------
def cube(x):
    return x * x * x


def uses_cube(x):
    return cube(x) * 2.0


def cube_rule_reading_a_global(x):
    y = cube(x)

    def pullback(dy):
        return (dy * 3.0 * x * x * np.sum(K),)

    return y, pullback


def test_a_rule_reading_a_global_array_is_an_error(rule_table):
    irad.rrule(cube)(cube_rule_reading_a_global)
    with pytest.raises(UnsupportedError, match=r"a rule \(or a helper it calls\) reads the global 'K'") as info:
        irad.grad(uses_cube)(0.5)
    assert f"{__file__}:" in str(info.value)
