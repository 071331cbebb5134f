"""Progress of compiles, on the `irad` logger (`logging.getLogger("irad")`).

With irad.config's `log_compile` on, each stage of a compile is logged at
INFO level with its wall time when it ends: lowering, differentiation,
optimisation, then the backend's (native: preparing the module for mlir-opt,
mlir-opt and mlir-translate, LLVM, and later the background -O2 compile).
A record carries the stage's name and seconds as `irad_stage` and
`irad_seconds`, for programs that collect them (bench/first_call.py). The
switch sets the logger's level to INFO if it has none, and gives it a
handler printing to stderr if no logger above it has one.

Whatever the switch, a compile still running after SLOW_SECONDS logs one
WARNING with the function, the stage it is in and for how long (Python's
last-resort handler prints warnings to stderr when none is configured).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Iterator

from irad.base import config, recursion

logger = logging.getLogger("irad")
SLOW_SECONDS = 10.0

_local = threading.local()  # this thread's stages under way: [(name, start)]


def _stages() -> list[tuple[str, float]]:
    stages = getattr(_local, "stages", None)
    if stages is None:
        stages = _local.stages = []
    return stages


def enabled() -> bool:
    """Whether stage times are logged (the switch), the logger set up for it."""
    if not config.read("log_compile"):
        return False
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.INFO)
    if not logger.hasHandlers():
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
        logger.addHandler(handler)
    return True


def record(name: str, seconds: float, detail: str = "") -> None:
    """Log that stage `name` took `seconds` (when the switch is on)."""
    if enabled():
        logger.info("%s: %.3f s%s", name, seconds, f" ({detail})" if detail else "",
                    extra={"irad_stage": name, "irad_seconds": seconds})


@contextlib.contextmanager
def stage(name: str) -> Iterator[None]:
    """A stage of a compile: what the slow-compile warning names while it
    runs, logged with its time when it ends."""
    stages = _stages()
    start = time.perf_counter()
    stages.append((name, start))
    try:
        yield
    finally:
        stages.pop()
        record(name, time.perf_counter() - start)


@contextlib.contextmanager
def compiling(what: str) -> Iterator[None]:
    """One compile (of `what`, a transformation of a function): warns once
    if it runs past SLOW_SECONDS."""
    stages = _stages()
    start = time.perf_counter()
    timer = threading.Timer(SLOW_SECONDS, _slow, (what, start, stages))
    timer.daemon = True
    timer.name = recursion.SHALLOW_THREAD_PREFIX + "compile-watchdog"
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        timer.join()
    if enabled():
        logger.info("compiled %s in %.3f s", what, time.perf_counter() - start)


def _slow(what: str, start: float, stages: list[tuple[str, float]]) -> None:
    now, current = time.perf_counter(), stages[-1:]  # (the compiling thread may pop it meanwhile)
    doing = f"; now in {current[0][0]}, for {now - current[0][1]:.1f} s" if current else ""
    logger.warning("compiling %s has taken %.0f s so far%s (%s=1 logs each stage's time)",
                   what, now - start, doing, config.switch("log_compile").variable)
