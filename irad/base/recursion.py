"""A scoped, higher Python recursion limit.

The frontend recurses once per nested helper call (about a dozen frames per
level), and the Python backend runs each generated function as a Python call,
so call chains a few hundred deep exceed Python's default limit of 1000. Since
Python 3.11, Python-to-Python calls do not grow the C stack, so a higher limit
is safe for this pure-Python recursion.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager

DEEP_LIMIT = 60_000


@contextmanager
def deep_recursion(limit: int = DEEP_LIMIT):
    previous = sys.getrecursionlimit()
    if previous < limit:
        sys.setrecursionlimit(limit)
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)
