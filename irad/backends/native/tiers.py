"""Tiered compilation: the first call runs quickly compiled code, -O2 follows.

LLVM's -O2 pipeline and code generator take most of a native module's first
call (seconds for an unrolled array LSTM, growing faster than the function).
With tiering on (the default; irad.config's `native_tiered` turns it off),
llvm_jit compiles a module whose machine code is not in the object cache twice:

* tier 0, in the caller's thread: LLVM at -O0 (fast instruction selection,
  the fast register allocator, no vectoriser), in a fraction of the time;
* -O2, in a child process (native/llvm_build.py run as a script), started
  once the module's first call has returned (`Deferred`), which stores its
  object code in the object cache (so a later process loads -O2 directly)
  and hands it back; a daemon thread of this process waits for it and
  loads it.

Python never calls tier 0's functions directly: each function it calls,
`f`, is called through `f.call` in the tier-0 module, which calls whatever
the global `f.tier` points to, first tier 0's `f`. Loading the -O2 code
stores the -O2 addresses into those globals (aligned 8-byte stores: a call
in flight finishes in the code it started in, the next one runs -O2). Both
tiers see the same process-wide state (the pthread keys of the checks, the
buffer cache), so they are interchangeable between any two calls.

Results do not depend on the tier: the IR asks for no FP contraction, LLVM
reorders no floating-point arithmetic without fast-math flags, and vector
math (vector_math.py) gives an element the same bits whether a vectorised
loop or a scalar one computes it (calls outside loops are libm's in both).
Tier 0's large loop nests run on one thread, the -O2 code's split by rows
over two (split_loops.unsplit), which gives the same bits.
Nor do failed checks: tier 0's frames are larger than -O2's, so a recursion
that fits the stack at -O2 could fail its depth check at tier 0; a module
with a recursion (native_checks.guard: `depth_checked`) is not tiered, and
compiles at -O2 before its first call.

`JitModule.wait_optimised()` (and the compiled gradient's) waits for the
-O2 code, as `make bench` does before it times a call. A background compile
that fails leaves tier 0 running, with one warning per process naming the
error. At interpreter exit, nothing more is loaded (a load under way
finishes first); a child still compiling finishes for the object cache, or,
with the cache off, is killed. In a process forked while a compile runs, the
forked process keeps tier 0.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path

from irad.backends.native import background
from irad.base import config, progress
from irad.base.errors import IradWarning

TIER0_LEVEL = 0
SLOT_SUFFIX = ".tier"
CALL_SUFFIX = ".call"


def enabled() -> bool:
    return config.read("native_tiered")


def child_command() -> list[str]:
    """The background compile's command (tests replace it with one that fails)."""
    return [sys.executable, os.path.join(os.path.dirname(__file__), "llvm_build.py")]


# ---- the tier-0 module's indirection -------------------------------------------------------------
def dispatch_ir(signatures: dict[str, tuple[str, Sequence[str]]]) -> str:
    """LLVM IR that calls each function `f` of `signatures` (name -> (result,
    parameter) LLVM types) through the global `f.tier`: `f.call` is what
    Python calls."""
    parts = []
    for name, (result, params) in signatures.items():
        typed = ", ".join(f"{t} %a{i}" for i, t in enumerate(params))
        slot = f'@"{name}{SLOT_SUFFIX}"'
        parts.append(f'declare {result} @"{name}"({", ".join(params)})')
        parts.append(f'{slot} = global ptr @"{name}", align 8')
        call = f"call {result} %f({typed})"
        body = f"  {call}\n  ret void" if result == "void" else f"  %r = {call}\n  ret {result} %r"
        parts.append(
            f'define {result} @"{name}{CALL_SUFFIX}"({typed}) {{\n'
            f"  %f = load atomic ptr, ptr {slot} monotonic, align 8\n{body}\n}}"
        )
    return "\n".join(parts) + "\n"


# ---- the background compile ------------------------------------------------------------------------
_loading = threading.Lock()  # held while a daemon thread loads -O2 code into this process
_exiting = False
_ending = False  # the interpreter exits: a Deferred runs only its tasks `at_exit`
_running: set[Upgrade] = set()
_warned = False
_TIMEOUT_AT_EXIT = 30.0  # seconds a started Deferred may take to start its processes at exit


class Upgrade:
    """One module's -O2 compile in a child process; `ready(object code)` runs
    in a daemon thread when it is done, under `_loading`."""

    def __init__(
        self, texts: Sequence[str] | Callable[[], Sequence[str]], cpu: str, features: str, level: int,
        cache: tuple[Path | None, str], ready: Callable[[bytes], None],
    ):
        """`texts`: the LLVM IR, or a function making it, called in a daemon
        thread first (-O2 code whose IR differs from tier 0's: large loop nests
        split, which the first call does not wait for). `cache`: the object
        cache's directory (None: off) and this code's key there."""
        self.done = threading.Event()
        self._start = time.perf_counter()
        self.error: str | None = None
        self.caches = cache[0] is not None
        self._process: subprocess.Popen | None = None
        if callable(texts):
            _running.add(self)
            threading.Thread(target=self._make_then_run, args=(texts, cpu, features, level, cache, ready),
                             name="irad-native-O2", daemon=True).start()
        elif self._begin(texts, cpu, features, level, cache):
            threading.Thread(target=self._run, args=(ready,), name="irad-native-O2", daemon=True).start()

    def _begin(self, texts: Sequence[str], cpu: str, features: str, level: int, cache: tuple[Path | None, str]) -> bool:
        """Start the child; False (and the failure reported) if it could not start."""
        request = {"texts": list(texts), "cpu": cpu, "features": features, "level": level,
                   "cache": None if cache[0] is None else str(cache[0]), "name": cache[1]}
        # a file, not a pipe: written now, it is whole even if this process exits at once
        fd, self._request = tempfile.mkstemp(prefix="irad-native-O2-", suffix=".json")
        try:
            with os.fdopen(fd, "w") as out:
                json.dump(request, out)
            self._process = subprocess.Popen(
                [*child_command(), self._request], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        except OSError as exc:
            _running.discard(self)
            self._failed(f"the background compile could not start: {exc}")
            self._remove_request()
            return False
        _running.add(self)
        return True

    def _make_then_run(self, make: Callable[[], Sequence[str]], cpu: str, features: str, level: int,
                       cache: tuple[Path | None, str], ready: Callable[[bytes], None]) -> None:
        try:
            texts = make()
        except Exception as exc:  # noqa: BLE001 -- reported, and tier 0 keeps running
            _running.discard(self)
            self._failed(f"making the LLVM IR of the -O2 code failed: {exc}")
            return
        if _exiting:  # nobody will load it
            _running.discard(self)
            self.done.set()
            return
        if self._begin(texts, cpu, features, level, cache):
            self._run(ready)

    def _remove_request(self) -> None:
        """The child deletes the request once read; one that failed first may not have."""
        try:
            os.unlink(self._request)
        except OSError:
            pass

    def _run(self, ready: Callable[[bytes], None]) -> None:
        try:
            code, errors = self._process.communicate()
            self._remove_request()
            if self._process.returncode != 0 or not code:
                if _exiting:  # ended by _at_exit: nobody waits for this code
                    return
                reason = errors.decode(errors="replace").strip().splitlines()[-1:] or ["no object code"]
                self._failed(f"the background -O2 compile failed (exit status {self._process.returncode}): {reason[0]}")
                return
            with _loading:
                if _exiting:
                    return
                ready(code)
            progress.record("LLVM -O2 (background)", time.perf_counter() - self._start, "calls now run it")
        except Exception as exc:  # noqa: BLE001 -- reported, and tier 0 keeps running
            self._failed(f"loading the background -O2 compile failed: {exc}")
        finally:
            _running.discard(self)
            self.done.set()

    def _failed(self, message: str) -> None:
        global _warned
        self.error = message
        self.done.set()
        if not _warned:
            _warned = True
            warnings.warn(f"{message}; the native code keeps running its tier-0 (-O0) compile", IradWarning, stacklevel=2)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the -O2 code; True once calls run it, False if it failed
        (or `timeout` passed)."""
        return self.done.wait(timeout) and self.error is None


# ---- started after the first call ---------------------------------------------------------------------
_deferred: weakref.WeakSet[Deferred] = weakref.WeakSet()  # of the modules alive


class Deferred:
    """The processes a native compile starts for later (its -O2 child, the
    next compile's mlir-opt and mlir-translate), started once its module's
    first call has returned (`start`, irad/compiled.py's run_compiled), from
    a thread: the first result waits neither for them to start nor shares
    the cores with their start-up (a second or more of CPU for the two
    tools and the child's Python). Anything that waits for them (`join`:
    wait_optimised, wait_all) starts them first; at exit, those started are
    waited for until they are under way (so a child compiling for the object
    cache still finishes)."""

    def __init__(self) -> None:
        self._tasks: list[tuple[Callable[[], None], bool]] = []
        self._started: background.Task | None = None
        self._lock = threading.Lock()
        _deferred.add(self)

    def add(self, task: Callable[[], None], at_exit: bool = False) -> None:
        """`task` to run once started; `at_exit`: even when the interpreter exits (a child that stores code
        in the object cache), else not once it exits."""
        self._tasks.append((task, at_exit))

    def start(self) -> None:
        if self._started is not None:  # every call of the general path comes here: kept cheap
            return
        with self._lock:
            if self._started is None:
                self._started = background.submit(self._run)  # (a thread already running: background.py)

    def _run(self) -> None:
        for task, at_exit in self._tasks:
            if _exiting or (_ending and not at_exit):
                return
            task()

    def join(self, timeout: float | None = None) -> None:
        self.start()
        self._started.wait(timeout)


def wait_all(timeout: float | None = None) -> bool:
    """Wait for every background compile of this process (a measurement of
    the heap or of speed must not overlap a load); True if all loaded."""
    for deferred in list(_deferred):
        deferred.join(timeout)
    return all([upgrade.wait(timeout) for upgrade in list(_running)])


@atexit.register
def _at_exit() -> None:
    """No load may start once the interpreter finalises. A child compiling
    for the object cache finishes on its own, for the next process; one
    compiling for nobody is ended (it is ours: killed by its own handle)."""
    global _exiting, _ending
    _ending = True
    for deferred in list(_deferred):
        if deferred._started is not None:
            deferred._started.wait(_TIMEOUT_AT_EXIT)
    with _loading:
        _exiting = True
    for upgrade in list(_running):
        if not upgrade.caches and upgrade._process is not None and upgrade._process.poll() is None:
            upgrade._process.kill()
            upgrade._remove_request()  # which the child, killed, would not delete


def _before_fork() -> None:
    """No load is under way while the process forks: a daemon thread holding
    llvmlite's lock then would leave it held forever in the child."""
    _loading.acquire()


def _after_fork_in_parent() -> None:
    _loading.release()


def _after_fork_in_child() -> None:
    """The daemon threads do not exist in a forked child: its modules keep tier 0."""
    global _loading
    _loading = threading.Lock()
    for deferred in list(_deferred):
        deferred._lock = threading.Lock()
    for upgrade in list(_running):
        upgrade.error = "the process forked while the -O2 code was compiling; this process keeps tier 0"
        upgrade.done.set()
    _running.clear()


os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent, after_in_child=_after_fork_in_child)
