"""The native runtime's cache of large buffers (irad/backends/native/buffers.py).

A gradient with a large materialised temporary (an exp used twice) is called
again and again, with new data each time, from one thread and from several at
once, with the cache on, small and off: every result must match its closed
form, so a buffer handed out while still in use, or a block cached twice,
shows as a wrong gradient. The cache's counters show the buffers are reused.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import irad
from irad.backends.native import buffers as native_buffers
from irad.base.errors import RuntimeCheckError
from tests.backends.test_backend_native import needs_native

pytestmark = [pytest.mark.native, needs_native]

SHAPE = (300, 100)  # 240 KB an array: above native_buffers.MIN_BYTES


def twice_exp(x, y):
    e = np.exp(x * y)  # exp is not recomputed: e is a buffer of its own, read by both sums and the pullback
    return np.sum(e * y) + np.sum(e * e)


def twice_exp_gradient(x, y):
    e = np.exp(x * y)
    return e * y * y + 2 * e * e * y, e + e * y * x + 2 * e * e * x


def _check(grad, seed: int) -> None:
    rng = np.random.default_rng(seed)
    x, y = 0.3 * rng.normal(size=SHAPE), 0.3 * rng.normal(size=SHAPE)
    for got, expected in zip(grad(x, y), twice_exp_gradient(x, y)):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@pytest.fixture
def capacity():
    """Set the cache's capacity for a test, and restore it after."""
    before = native_buffers.stats().capacity
    yield native_buffers.set_capacity
    native_buffers.set_capacity(before / (1 << 20))


def test_buffers_are_reused_across_calls_and_results_stay_right(capacity):
    capacity(64)
    grad = irad.grad(twice_exp, (0, 1), backend="native")
    _check(grad, 0)
    before = native_buffers.stats()
    for seed in range(1, 6):
        _check(grad, seed)
    after = native_buffers.stats()
    assert after.hits > before.hits, "no buffer was reused"
    assert 0 < after.bytes <= after.capacity


def test_a_small_capacity_bounds_what_is_kept(capacity):
    capacity(0.3)  # room for one 240 KB buffer
    grad = irad.grad(twice_exp, (0, 1), backend="native")
    for seed in range(4):
        _check(grad, seed)
        assert native_buffers.stats().bytes <= 0.3 * (1 << 20)


def test_without_a_cache_nothing_is_kept(capacity):
    capacity(64)
    grad = irad.grad(twice_exp, (0, 1), backend="native")
    _check(grad, 0)
    capacity(0)
    assert native_buffers.stats().bytes == 0  # what was cached is freed
    hits = native_buffers.stats().hits
    for seed in range(3):
        _check(grad, seed)
    assert native_buffers.stats().hits == hits
    assert native_buffers.stats().bytes == 0


def test_threads_share_the_cache(capacity):
    capacity(64)
    grad = irad.grad(twice_exp, (0, 1), backend="native")
    _check(grad, 0)  # compiled before the threads start
    failures = []

    def work(first_seed: int) -> None:
        try:
            for seed in range(first_seed, first_seed + 15):
                _check(grad, seed)
        except AssertionError as exc:  # pragma: no cover - reported below
            failures.append(exc)

    threads = [threading.Thread(target=work, args=(100 * t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures[0]


def exp_then_index(x, i):
    e = np.exp(x)
    return np.sum(e * e) * e[i, 0]  # a failed index check once e and its square are allocated


def test_a_failed_check_leaves_the_cache_sound(capacity):
    capacity(64)
    grad = irad.grad(exp_then_index, backend="native")
    x = 0.1 * np.random.default_rng(3).normal(size=SHAPE)
    for _ in range(3):
        with pytest.raises(RuntimeCheckError):
            grad(x, SHAPE[0] + 5)
        e = np.exp(x)
        expected = 2 * e * e * e[2, 0]
        expected[2, 0] += np.sum(e * e) * e[2, 0]
        np.testing.assert_allclose(grad(x, 2), expected, rtol=1e-12)


def test_the_capacity_must_be_a_size():
    with pytest.raises(irad.BackendError, match="0 or more megabytes"):
        native_buffers.set_capacity(-1)
