"""irad.base.stack_chunk: compiling from a frame that opens a large stack chunk."""

import resource
import sys

import pytest

from irad.base.recursion import deep_recursion
from irad.base.stack_chunk import _RESERVED_SLOTS, _opening_frame, in_large_chunk


def test_returns_what_the_function_returns_and_raises_what_it_raises():
    assert in_large_chunk(lambda: 42) == 42
    with pytest.raises(ZeroDivisionError):
        in_large_chunk(lambda: 1 / 0)


def test_the_opening_frame_reserves_8_megabytes():
    assert _opening_frame.__code__.co_stacksize == _RESERVED_SLOTS == 1 << 20


def test_recursion_deeper_than_the_chunk_still_works():
    """Past the chunk the frames go on in ordinary chunks."""

    def depth(n: int) -> int:
        return 0 if n == 0 else 1 + depth(n - 1)

    with deep_recursion():
        assert in_large_chunk(lambda: depth(50_000)) == 50_000


def _f3():
    return 1


def _f2():
    return _f3()


def _f1():
    return _f2()


def _walk():
    for _ in range(2000):
        _f1()


def _page_faults(depth: int, fn) -> int:
    """Minor page faults while `fn()` runs `depth` frames deeper than here."""
    if depth > 0:
        return _page_faults(depth - 1, fn)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    fn()
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


@pytest.mark.skipif(sys.version_info >= (3, 13), reason="CPython 3.13 keeps a spare chunk")
def test_a_walk_across_a_chunk_start_maps_no_chunk_inside_the_large_one():
    """A call depth oscillating across the start of a chunk maps (and unmaps) a
    fresh chunk at every crossing on CPython 3.11, each first write to it a page
    fault; at some depth within 200 frames `_walk` does that 2,000 times. Inside
    the large chunk it does not, at any depth."""
    plain = [_page_faults(depth, _walk) for depth in range(200)]
    assert max(plain) >= 2000
    worst = plain.index(max(plain))
    inside = [_page_faults(depth, lambda: in_large_chunk(_walk)) for depth in range(worst - 2, worst + 3)]
    assert max(inside) < 100
