"""Constants whose elements are all one number stay one number, however large.

xDSL stores a DenseIntOrFPElementsAttr element by element, and the backends
printed constants element by element: np.ones((30000, 30000)) in a
differentiated function took ~7 GB while lowering, before anything ran.
Each program (tests/large_constant_programs.py) makes an array whose dense form needs 3.2 GB (20000²
float64) and runs, lowers, differentiates and compiles it in a child process
whose writable memory is capped at 1.5 GB (RLIMIT_DATA: past it an
allocation is a MemoryError, the child lives on and reports it). The values
are checked against closed forms. The native backend is checked on a small
program: nothing above LARGE_SPLAT elements reaches mlir-opt as a constant.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
from xdsl.dialects import arith
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType, f64, i64
from xdsl.parser import Parser

import irad
from irad import pipeline
from irad.ir import constants
from irad.ir.constants import LARGE_SPLAT, ConstantTooLarge, constant_array, dense_attr, splat_element
from tests import large_constant_programs as programs
from tests.reference import NATIVE_MISSING

CAP = programs.CAP


@pytest.fixture(scope="module")
def capped_results() -> dict:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    done = subprocess.run(
        [sys.executable, "-c", "from tests.large_constant_programs import main; main()"],
        cwd=root, capture_output=True, text=True, timeout=300,
        env={**os.environ, "IRAD_BACKEND": "python"},
    )
    results = {}
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            results[record.pop("case")] = record
    assert results, f"the child reported nothing (status {done.returncode}): {done.stderr[-2000:]}"
    return results


@pytest.mark.parametrize("case", sorted(programs.EXPECTED))
def test_within_the_cap_and_right(capped_results, case):
    result = capped_results.get(case)
    assert result is not None, f"{case}: the child died before reporting it"
    assert "memory" not in result, f"{case}: past the {CAP >> 20} MB cap: {result['memory']}"
    assert "error" not in result, f"{case}: {result['error']}"
    np.testing.assert_allclose(np.asarray(result["value"], dtype=float), np.asarray(programs.EXPECTED[case], dtype=float))


def test_a_large_constant_that_is_not_one_number_is_refused(capped_results):
    error = capped_results["arange_refused"].get("error", "")
    assert error.startswith("UnsupportedError"), capped_results["arange_refused"]
    assert "large_constant_programs.py:" in error and "100000000 elements" in error
    assert "pass it as an argument" in error


# ---- the attribute ----------------------------------------------------------------
def test_a_splat_attribute_stores_one_element():
    attr = dense_attr(1.5, TensorType(f64, [30000, 30000]))
    assert len(attr.data.data) == 8
    assert str(attr) == "dense<1.500000e+00> : tensor<30000x30000xf64>"
    view = constant_array(attr)
    assert view.shape == (30000, 30000) and view[123, 456] == 1.5 and not view.flags.writeable
    assert splat_element(attr) == 1.5
    # an array of one number is stored once too; -0.0 and 0.0 are two numbers
    assert len(dense_attr(np.full((5, 5), 7), TensorType(i64, [5, 5])).data.data) == 8
    signed_zeros = dense_attr(np.array([0.0, -0.0]), TensorType(f64, [2]))
    assert splat_element(signed_zeros) is None
    assert str(signed_zeros) == "dense<[0.000000e+00, -0.000000e+00]> : tensor<2xf64>"  # xDSL printed dense<0.0>
    assert math.isnan(splat_element(dense_attr(math.nan, TensorType(f64, [4]))))


@pytest.mark.parametrize("literal, stored", [
    ("dense<1.5> : tensor<20000x20000xf64>", 8),
    ('dense<"0x000000000000F83F"> : tensor<20000x20000xf64>', 8),  # one element in hex: a splat
    ("dense<true> : tensor<20000x20000xi1>", 1),
    ("dense<-3> : tensor<20000x20000xi64>", 8),
    ("dense<1.5> : tensor<f64>", 8),
    ('dense<"0x000000000000F83F0000000000000000"> : tensor<2xf64>', 16),
    ("dense<[1.5, 0.0]> : tensor<2xf64>", 16),
])
def test_a_splat_literal_parses_into_one_element(literal, stored):
    op = Parser(pipeline.context(), f"%c = arith.constant {literal}").parse_op()
    assert len(op.value.data.data) == stored
    assert str(op.value) == str(Parser(pipeline.context(), f"%c = arith.constant {op.value}").parse_op().value)


def test_a_large_constant_of_many_numbers_is_refused(monkeypatch):
    monkeypatch.setattr(constants, "MAX_CONSTANT_ELEMENTS", 10)
    with pytest.raises(ConstantTooLarge, match="11 elements"):
        dense_attr(np.arange(11.0), TensorType(f64, [11]))
    assert len(dense_attr(np.ones(11), TensorType(f64, [11])).data.data) == 8  # one number: never too large


def test_a_computed_band_equals_numpy():
    n, m = 260, 270  # above LARGE_SPLAT: computed from ramps
    assert n * m > LARGE_SPLAT

    def f(x):
        return (np.eye(n, m) * x).sum() + np.tril(x)[5, 3] + np.triu(x, 2)[1, 4]

    x = np.random.default_rng(0).normal(size=(n, m))
    value, grad = irad.value_and_grad(f)(x)
    expected = np.eye(n, m)
    expected[5, 3] += 1.0
    expected[1, 4] += 1.0
    np.testing.assert_allclose(value, np.trace(x) + x[5, 3] + x[1, 4], rtol=1e-12)
    np.testing.assert_array_equal(grad, expected)


# ---- the native backend --------------------------------------------------------------
@pytest.mark.native
@pytest.mark.skipif(NATIVE_MISSING is not None, reason=str(NATIVE_MISSING))
def test_native_fills_large_splats_when_run():
    from irad.backends.native.compile import for_mlir_opt

    n = 1000  # a million elements: a 20 MB constant in LLVM IR before
    g = irad.value_and_grad(lambda x: (np.ones((n, n)) * x).sum() + np.full((n, n), 0.5)[2, 2], backend="native")
    value, grad = g(3.0)
    assert (value, grad) == (3.0 * n * n + 0.5, float(n * n))
    ready, _ = for_mlir_opt(g.lower(3.0).clone())
    for op in ready.walk():
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, DenseIntOrFPElementsAttr):
            assert math.prod(op.value.get_shape()) <= LARGE_SPLAT, op
