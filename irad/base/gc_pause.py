"""Python's cyclic garbage collector, paused while a module is compiled.

IR is a large graph of cyclic objects (ops point at their blocks, blocks at
their ops, values at their uses) that stays alive until compilation ends.
While it grows, the collector's generational passes keep re-scanning it, and
on a 1,000-function call tree that cost about a quarter of lowering, differentiating and
optimising (bench/inlining.py). Nothing it could free exists before the
compile ends, so collection waits until then.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def gc_paused():
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
