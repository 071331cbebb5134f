"""Work the native backend hands to threads already running.

`threading.Thread.start` returns only once the new thread has run and said
so, and on a loaded machine (two shared cores, a dozen runnable processes)
that took 18-19 ms each time (median), twice on a native first call: for the
thread checking the tools' exit statuses while LLVM compiles tier 0, and for
the one starting the background processes after the first call
(tiers.Deferred). `submit` puts the work on a queue for daemon threads this
module keeps, and returns at once; a thread is started only when none is
idle. A forked child has none of them: the work queued or running at the
fork is over for it (as a thread of the parent is, for `Thread.join`).
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable

from irad.base import recursion

# shallow: a raised recursion limit may come back while they wait (irad/base/recursion.py)
NAME = recursion.SHALLOW_THREAD_PREFIX + "native-background"


class Task:
    """Work handed to a background thread: `wait` for it, `join` it (raising what it raised)."""

    def __init__(self, work: Callable[[], None]):
        self._work = work
        self._done = threading.Event()
        self.error: BaseException | None = None

    def _run(self) -> None:
        try:
            self._work()
        except BaseException as exc:  # noqa: BLE001 -- kept for join, in the thread that waits
            self.error = exc
        finally:
            _pending.discard(self)
            self._done.set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._done.wait(timeout)

    def join(self) -> None:
        self._done.wait()
        if self.error is not None:
            raise self.error


_queue: queue.SimpleQueue[Task] = queue.SimpleQueue()
_lock = threading.Lock()
_idle = 0  # threads waiting on the queue, not yet promised a task
_pending: set[Task] = set()


def submit(work: Callable[[], None]) -> Task:
    """`work` run by a background thread, soon."""
    global _idle
    task = Task(work)
    with _lock:
        _pending.add(task)
        idle = _idle > 0
        if idle:
            _idle -= 1
    if not idle:
        threading.Thread(target=_serve, name=NAME, daemon=True).start()
    _queue.put(task)
    return task


def _serve() -> None:
    global _idle
    while True:
        _queue.get()._run()
        with _lock:
            _idle += 1


def _after_fork_in_child() -> None:
    global _queue, _lock, _idle
    _queue, _lock, _idle = queue.SimpleQueue(), threading.Lock(), 0
    for task in list(_pending):
        task._done.set()
    _pending.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)
