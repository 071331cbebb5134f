"""Loop nests split by rows between the caller and irad's helper thread
(irad/backends/native/split_loops.py).

Split and unsplit code give the same bits (f32 and f64, row counts that are
and are not multiples of the chunks' alignment, reductions within rows,
both tiers); loops below the threshold, and loops that sum over rows, are
not split; an MLP gradient with every large nest split against central
differences in float64; the switch and the threshold; float splats that
have no decimal form survive the pass (xDSL).
"""

import os

import numpy as np
import pytest

import irad
from irad import compiled, config
from irad.backends.native import compile as native
from irad.backends.native import split as native_split
from irad.backends.native import split_loops as native_split_loops
from irad.passes import split_loops as split_loops_pass
from irad.base.errors import BackendError
from tests.backends.test_native_blas import mlp
from tests.reference import NATIVE_MISSING, central_difference

pytestmark = [
    pytest.mark.native,
    pytest.mark.skipif(NATIVE_MISSING is not None, reason=str(NATIVE_MISSING)),
    pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="loops are split only with two cores or more"),
]


SPLIT = config.switch("native_split_loops").variable
MIN_WORK = config.switch("native_split_min_work")


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    monkeypatch.setattr(compiled, "_CACHE", {})
    monkeypatch.delenv(SPLIT, raising=False)
    monkeypatch.delenv(MIN_WORK.variable, raising=False)


def _compile(f, args, monkeypatch, split: bool, min_work: int = 0):
    monkeypatch.setenv(SPLIT, "1" if split else "0")
    monkeypatch.setenv(MIN_WORK.variable, str(min_work))
    module = native.compile_module(irad.lower(f, *args))
    (name,) = module.functions
    return module, module.function(name)


def _both_tiers(module, run, args):
    first = run(*args)
    module.wait_optimised()
    return first, run(*args)


def tanh_layer(z, b):
    return np.tanh(z + b)


def tanh_backward(dh, h):
    return dh * (1.0 - h * h)


def row_softmax(x):
    shifted = x - np.max(x, axis=1, keepdims=True)
    e = np.exp(shifted)
    return e / np.sum(e, axis=1, keepdims=True)


def column_sums(x):
    return np.sum(np.tanh(x), axis=0)


def _args(program, rows, columns, dtype, rng):
    x = rng.normal(size=(rows, columns)).astype(dtype)
    if program is tanh_layer:
        return x, rng.normal(size=columns).astype(dtype)
    if program is tanh_backward:
        return x, np.tanh(rng.normal(size=(rows, columns))).astype(dtype)
    return (x,)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("rows,columns", [(32, 7), (33, 16), (97, 13), (256, 128), (1001, 3)])
@pytest.mark.parametrize("program", [tanh_layer, tanh_backward, row_softmax])
def test_split_loops_give_the_same_bits(program, rows, columns, dtype, monkeypatch):
    args = _args(program, rows, columns, dtype, np.random.default_rng(rows * columns))
    split_module, split = _compile(program, args, monkeypatch, True)
    assert split_loops_pass.FUNCTION_PREFIX in split_module.llvm_ir, "nothing was split"
    whole_module, whole = _compile(program, args, monkeypatch, False)
    assert split_loops_pass.FUNCTION_PREFIX not in whole_module.llvm_ir
    before = native_split.counts()
    for a, b in zip(_both_tiers(split_module, split, args), _both_tiers(whole_module, whole, args)):
        (a,), (b,) = a, b
        assert a.dtype == b.dtype == dtype
        np.testing.assert_array_equal(a, b)
    after = native_split.counts()
    assert after.caller_chunks + after.helper_chunks > before.caller_chunks + before.helper_chunks
    (expected,) = (program(*args),)
    np.testing.assert_allclose(a, expected, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-6)


def test_only_the_optimised_code_is_split(monkeypatch):
    """Tier 0 (the first calls) runs the loops unsplit, the -O2 code split
    (split_loops.unsplit says why); untiered, the one compile is split. The
    bits are the same either way (test_split_loops_give_the_same_bits)."""
    monkeypatch.setenv(config.switch("native_cache").variable, "0")  # compiled here, not loaded
    args = _args(tanh_layer, 256, 128, np.float64, np.random.default_rng(0))
    module, run = _compile(tanh_layer, args, monkeypatch, True)
    assert module.jit.tiered
    assert split_loops_pass.FUNCTION_PREFIX not in module.first_tier_llvm_ir
    before = native_split.counts()
    first = run(*args)
    assert native_split.counts() == before, "tier 0 ran split loops"
    assert module.wait_optimised()
    assert split_loops_pass.FUNCTION_PREFIX in module.llvm_ir
    np.testing.assert_array_equal(run(*args)[0], first[0])
    assert native_split.counts() != before
    monkeypatch.setenv(config.switch("native_tiered").variable, "0")
    module, run = _compile(tanh_layer, args, monkeypatch, True)
    assert not module.jit.tiered
    before = native_split.counts()
    np.testing.assert_array_equal(run(*args)[0], first[0])
    assert native_split.counts() != before


def test_a_sum_over_rows_and_small_loops_are_not_split(monkeypatch):
    """A loop over rows that adds into each column in turn is an scf.for,
    never outlined. The column sum of 512 rows is blocked (backends/blocked_sums.py):
    its first level sums blocks of 16 rows, in parallel over the blocks, and
    is outlined beside its tanh (a parallel nest); its last level, 32 partial
    sums a column, is not. Below the threshold, and with fewer rows than two
    aligned chunks, nothing is."""
    args = (np.random.default_rng(0).normal(size=(512, 64)),)
    module, run = _compile(column_sums, args, monkeypatch, True)
    assert module.llvm_ir.count(f"define void @{split_loops_pass.FUNCTION_PREFIX}") == 2
    # a column's terms nearly cancel: bound the error by the sum of their sizes (tanh's ulps, the order of adds)
    scale = np.abs(np.tanh(args[0])).sum(axis=0)
    np.testing.assert_allclose(run(*args)[0], column_sums(*args), rtol=0, atol=1e-14 * scale.max())
    module, _ = _compile(column_sums, args, monkeypatch, True, min_work=512 * 64 * (1 + split_loops_pass.MATH_WORK) + 1)
    assert split_loops_pass.FUNCTION_PREFIX not in module.llvm_ir
    small = (np.random.default_rng(1).normal(size=(31, 64)),)
    module, run = _compile(tanh_backward, small * 2, monkeypatch, True)
    assert split_loops_pass.FUNCTION_PREFIX not in module.llvm_ir


def test_mlp_gradient_with_split_loops_against_central_differences(monkeypatch):
    rng = np.random.default_rng(4)
    batch, features, width, classes = 97, 5, 40, 3
    args = (0.5 * rng.normal(size=(features, width)), 0.1 * rng.normal(size=width),
            0.5 * rng.normal(size=(width, classes)), 0.1 * rng.normal(size=classes),
            rng.normal(size=(batch, features)), np.eye(classes)[rng.integers(0, classes, size=batch)])
    monkeypatch.setenv(MIN_WORK.variable, "0")
    gradient = irad.grad(mlp, (0, 1, 2, 3), backend="native")
    module = native.compile_module(gradient.lower(*args))
    assert module.llvm_ir.count(f"define void @{split_loops_pass.FUNCTION_PREFIX}") >= 3
    grads = gradient(*args)
    gradient.wait_optimised()
    for first, again in zip(grads, gradient(*args)):
        np.testing.assert_array_equal(first, again)
    for i, g in enumerate(grads):
        np.testing.assert_allclose(g, central_difference(mlp, args, i), rtol=1e-6, atol=1e-8, err_msg=f"d/d arg {i}")


def test_the_switch_and_the_threshold(monkeypatch):
    args = (np.ones((64, 64)),)
    module = irad.lower(tanh_backward, *args * 2)
    _, passes = native.for_mlir_opt(module, split_loops=True)
    assert f"{native_split_loops.PASS_NAME}={MIN_WORK.default}" not in passes  # 64x64: too small
    monkeypatch.setenv(MIN_WORK.variable, "1000")
    _, passes = native.for_mlir_opt(module, split_loops=True)
    assert f"{native_split_loops.PASS_NAME}=1000" in passes and native_split_loops.PARALLEL_LOOPS in passes
    _, exported = native.for_mlir_opt(module)  # irad.export's pipeline is mlir-opt's alone
    assert not any(p.startswith(native_split_loops.PASS_NAME) for p in exported)
    monkeypatch.setenv(SPLIT, "0")
    _, passes = native.for_mlir_opt(module, split_loops=True)
    assert not any(p.startswith(native_split_loops.PASS_NAME) for p in passes)
    assert "--convert-linalg-to-loops" in passes
    monkeypatch.setenv(SPLIT, "yes")
    with pytest.raises(BackendError, match=f"{SPLIT} must be 0 or 1"):
        native_split_loops.enabled()
    monkeypatch.setenv(SPLIT, "1")
    monkeypatch.setenv(MIN_WORK.variable, "many")
    with pytest.raises(BackendError, match=f"{MIN_WORK.variable} must be a whole number"):
        native_split_loops.min_work()


def test_float_splats_without_a_decimal_form_survive_the_pass():
    """mlir-opt prints -inf as dense<0xFFF0000000000000>; xDSL would read
    that as the integer's value."""
    text = ('"builtin.module"() ({\n  "memref.global"() <{constant, initial_value = dense<0xFFF0000000000000> : '
            'tensor<40xf64>, sym_name = "c", sym_visibility = "private", type = memref<40xf64>}> : () -> ()\n'
            '  "memref.global"() <{constant, initial_value = dense<0x7FC00000> : tensor<3xf32>, sym_name = "d", '
            'sym_visibility = "private", type = memref<3xf32>}> : () -> ()\n}) : () -> ()\n')
    blobs = native_split_loops._HEX_SPLAT.sub(native_split_loops._as_blob, text)
    assert 'dense<"0x000000000000F0FF">' in blobs and 'dense<"0x0000C07F">' in blobs
    from xdsl.parser import Parser

    module = Parser(native_split_loops._context(), blobs).parse_module()
    values = [op.initial_value.get_values()[0] for op in module.ops]
    assert values[0] == -np.inf and np.isnan(values[1])



def test_the_object_cache_keeps_split_and_unsplit_code_apart(monkeypatch):
    """The switch and the threshold are in the pipeline, which is in the
    cache's key: code compiled under one setting is never loaded under another."""
    args = _args(tanh_layer, 256, 64, np.float64, np.random.default_rng(6))
    keys = set()
    for split, min_work in [(True, 0), (True, 1000), (False, 0)]:
        module, _ = _compile(tanh_layer, args, monkeypatch, split, min_work)
        keys.add(module.jit._name)
    assert len(keys) == 3


def masked_tanh(x):
    return np.tanh(np.tril(x, k=1))


def test_a_module_xdsl_cannot_read_runs_unsplit(monkeypatch):
    """np.tril's mask is an i1 array constant, whose hex blob mlir-opt packs
    in bits: xDSL 0.75 refuses it, and the module compiles unsplit. (A 64x64
    mask fails before: irad's own xDSL prints it one byte per element, which
    mlir-opt refuses, split or not.)"""
    text = ('"builtin.module"() ({\n  "memref.global"() <{constant, initial_value = dense<"0x10730F"> : '
            'tensor<5x4xi1>, sym_name = "m", sym_visibility = "private", type = memref<5x4xi1>}> : () -> ()\n'
            '}) : () -> ()\n')
    assert native_split_loops.run_on_text(text, 0) is text
    x = np.random.default_rng(7).normal(size=(5, 5))
    module, run = _compile(masked_tanh, (x,), monkeypatch, True)
    assert any(p.startswith(native_split_loops.PASS_NAME) for p in module._mlir[1])
    np.testing.assert_allclose(run(x)[0], masked_tanh(x), rtol=1e-12)
