"""Compiling inside one large chunk of CPython's frame stack.

CPython 3.11 keeps the frames of Python calls in chunks of 16 KB and frees a chunk
(munmap) as soon as the frame at its start returns. Code whose call depth keeps
crossing the start of a chunk, as the frontend's and the passes' recursive walks do
(millions of calls within a few frames of one depth), then maps and unmaps a chunk at
every crossing (CPython issue gh-142183, fixed in 3.13 and later by keeping one
spare chunk). Lowering a 1,000-function call tree made 55,000 such mmap/munmap calls
when it started at an unlucky depth and 7,500 at a lucky one, and its CPU time moved
by up to 60% with the depth it was called from.

`in_large_chunk(fn)` calls `fn` from a frame that opens a chunk of 16 MB and leaves
8 MB of it for the frames above it (tens of thousands of frames: compiling a
2,000-level call chain, through which the frontend recurses, maps no other chunk),
so what `fn` runs does not cross a chunk boundary however its depth moves; the
mmap/munmap calls of the same lowering drop to a few dozen. The frame's size is its
code object's stack size, which only reserves slots (none are initialised, and
untouched pages are never mapped in), so the chunk costs one mmap.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

# Slots (8 bytes) the opening frame reserves: 8 MB, just over it with CPython's
# minimum overhead, which rounds the chunk up to 16 MB and leaves the rest to the callees.
_RESERVED_SLOTS = 1 << 20


def _opening_frame(fn: Callable[[], T]) -> T:
    return fn()


_opening_frame.__code__ = _opening_frame.__code__.replace(co_stacksize=_RESERVED_SLOTS)


def in_large_chunk(fn: Callable[[], T]) -> T:
    """`fn()`, its frames in a chunk of their own (see the module docstring)."""
    return _opening_frame(fn)
