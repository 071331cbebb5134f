"""A higher Python recursion limit while irad recurses deeply, safe with threads.

The frontend recurses once per nested helper call (about a dozen frames per
level), and the Python backend runs each generated function as a Python call,
so call chains a few hundred deep exceed Python's default limit of 1000. Since
Python 3.11, Python-to-Python calls do not grow the C stack, so a higher limit
is safe for this pure-Python recursion.

The limit is the interpreter's, shared by every thread, and lowering it under a
thread that is deeper than the new limit kills the process ("Fatal Python
error: Cannot recover from stack overflow": the RecursionError cannot even be
raised). So `deep_recursion` raises it (never lowers it) on entry, counts the
blocks open in all threads, and restores the earlier limit only when the last
one closes while the calling thread is the only thread of the process (then no
other thread can be deep), irad's shallow threads aside (the compile watchdog
of progress.py, which only sleeps and logs). With other threads alive it stays raised: a server
calling irad from threads keeps the higher limit for its lifetime.
"""

from __future__ import annotations

import sys
import threading
from contextlib import contextmanager

DEEP_LIMIT = 60_000

# Threads of irad's that never recurse deeply (progress.py's compile watchdog):
# one of them running does not keep the limit raised
SHALLOW_THREAD_PREFIX = "irad-shallow-"

_lock = threading.Lock()
_open = 0  # deep_recursion blocks open, in all threads
_saved: int | None = None  # the limit before irad raised it; None while it is not raised


@contextmanager
def deep_recursion(limit: int = DEEP_LIMIT):
    global _open, _saved
    with _lock:
        current = sys.getrecursionlimit()
        if current < limit:
            if _saved is None:
                _saved = current
            sys.setrecursionlimit(limit)
        _open += 1
    try:
        yield
    finally:
        with _lock:
            _open -= 1
            if _open == 0 and _saved is not None and _alone():
                sys.setrecursionlimit(_saved)
                _saved = None


def _alone() -> bool:
    """No thread runs but this one and shallow ones of irad's (SHALLOW_THREAD_PREFIX)."""
    if threading.active_count() == 1:
        return True
    me = threading.current_thread()
    return all(t is me or t.name.startswith(SHALLOW_THREAD_PREFIX) for t in threading.enumerate())
