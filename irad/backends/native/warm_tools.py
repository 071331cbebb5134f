"""mlir-opt and mlir-translate started before a compile needs them.

Each tool takes 30-40 ms to start (loading libMLIR and libLLVM, registering
every dialect and pass), more than either spends on a medium gradient's
module; a compile runs both, one piped into the other. So after a native
compile, this process starts the next compile's pair: `mlir-opt
--run-reproducer --emit-bytecode` piped into `mlir-translate --mlir-to-llvmir`,
both then blocked reading their input, started up. mlir-opt takes its pass
pipeline from the input itself (`pipeline_resource`: the `mlir_reproducer`
resource that --run-reproducer reads), so one started pair serves any
module. The passes and the tools are the same as a cold run's, so is the
LLVM IR (tests/backends/test_native_warm_tools.py compares them). A
pair that fails is not trusted with the error: the module is lowered again
cold, which reports it (or, should the pair have failed for a reason of its
own, lowers it).

At most one pair waits, per process (the pid it was started in): a forked
child closes its copies of the pair's pipes (else the parent's mlir-opt
would never see the end of its input) and starts its own. At exit the
waiting pair is ended, by its own handles; if this process is killed
instead, the pair reads the end of its input and exits.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import contextlib
import os
import select
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence

# passes MLIR anchors on func.func: nested in the pipeline (mlir-opt's
# command line nests them by itself)
_FUNCTION_PASSES = frozenset({"promote-buffers-to-stack"})
_POLL_MS = 20  # how often a wait for the output looks whether the tools are still running
_FOLDER_PREFIX = "irad-tools-"  # then the pid of the process that made it

# A started mlir-translate waits in opening its named pipes; should this
# process die without ending it (SIGKILL, os._exit in a forked worker), it
# would wait forever. util-linux's setpriv has the kernel kill it (and
# mlir-opt) when the thread that started it ends: pairs are started only
# where setpriv is found (elsewhere each compile runs the tools cold), and
# by one thread of irad's that lives as long as the process (`_started`),
# not by the compiling thread, which may end while another uses its pair.
_SETPRIV = shutil.which("setpriv")
_DIES_WITH_US = (_SETPRIV, "--pdeathsig", "KILL", "--") if _SETPRIV else ()
_starter: concurrent.futures.ThreadPoolExecutor | None = None


def _started(opt: str, translate: str) -> Pair:
    """A Pair, started by irad's starter thread."""
    global _starter
    with _starter_lock:
        if _starter is None:
            _starter = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="irad-warm-tools")
    try:
        future = _starter.submit(Pair, opt, translate)
    except RuntimeError:  # the interpreter exits (concurrent.futures takes no new work): no pair, as if none started
        raise OSError("the interpreter is exiting") from None
    return future.result()


_starter_lock = threading.Lock()


def pipeline_text(passes: Sequence[str]) -> str | None:
    """mlir-opt's textual pipeline for command-line `passes` (--name or
    --name=options); None if one is not a pass of this form."""
    parts = []
    for p in passes:
        if not p.startswith("--") or '"' in p or "\\" in p:
            return None
        name, _, options = p[2:].partition("=")
        part = f"{name}{{{options}}}" if options else name
        parts.append(f"func.func({part})" if name in _FUNCTION_PASSES else part)
    return f"builtin.module({','.join(parts)})"


def pipeline_resource(pipeline: str, verify_each: bool) -> str:
    """The resource that has `mlir-opt --run-reproducer` run `pipeline` on
    the module before it."""
    return ("\n{-#\n  external_resources: {\n    mlir_reproducer: {\n"
            f'      pipeline: "{pipeline}",\n      disable_threading: true,\n'
            f"      verify_each: {'true' if verify_each else 'false'}\n    }}\n  }}\n#-}}\n")


class Pair:
    """mlir-opt --run-reproducer piped into mlir-translate, started, waiting
    for their input; diagnostics go to files (a pipe nobody read would
    fill).

    Each tool writes to a named pipe (a FIFO in a private folder) rather than
    to its stdout: it closes a file it opened when its main function
    returns, but stdout only when the process ends, and ending takes each
    tool 7 ms or more (its destructors, unmapping libMLIR): 14 ms of a
    medium module's 30 on the compile's path, more under load. So
    mlir-translate reads mlir-opt's bytecode, and this process the LLVM IR,
    as soon as they are written; the tools' exit statuses come later
    (`statuses`)."""

    def __init__(self, opt: str, translate: str):
        self.tools = (opt, translate)
        self.pid = os.getpid()
        self.errors = [tempfile.TemporaryFile(), tempfile.TemporaryFile()]
        _remove_orphans()
        self.folder = tempfile.mkdtemp(prefix=f"{_FOLDER_PREFIX}{os.getpid()}-")
        bytecode, llvm_ir = os.path.join(self.folder, "bytecode"), os.path.join(self.folder, "llvm-ir")
        os.mkfifo(bytecode, 0o600)
        os.mkfifo(llvm_ir, 0o600)
        # open before mlir-translate opens it to write (which waits for a reader)
        self.output = os.open(llvm_ir, os.O_RDONLY | os.O_NONBLOCK)
        self.opt = self.translate = None
        try:
            self.opt = subprocess.Popen([*_DIES_WITH_US, opt, "--run-reproducer", "--emit-bytecode", "-o", bytecode],
                                        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=self.errors[0])
            self.translate = subprocess.Popen([*_DIES_WITH_US, translate, "--mlir-to-llvmir", bytecode, "-o", llvm_ir],
                                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                              stderr=self.errors[1])
        except OSError:
            self.end()
            raise
        _live.add(self)

    def run(self, text: str, timeout: float, meanwhile: Callable[[], None] | None = None) -> bytes:
        """mlir-translate's output for `text` (a module with its pipeline
        resource), read until mlir-translate closes it: empty if either tool
        failed (mlir-opt writes no bytecode then, and mlir-translate no IR).
        `meanwhile` runs once mlir-opt has its input. The tools may still be
        running: `statuses` waits for them."""
        try:
            self.opt.stdin.write(text.encode())
            self.opt.stdin.close()
        except BrokenPipeError:  # mlir-opt ended early: its status and diagnostics say why
            pass
        if meanwhile is not None:
            meanwhile()
        chunks: list[bytes] = []
        deadline = time.monotonic() + timeout
        poller = select.poll()
        poller.register(self.output, select.POLLIN)
        while True:
            # a FIFO's reader sees no event until a writer has opened it; then data, or its close
            if poller.poll(_POLL_MS):
                chunk = os.read(self.output, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
            elif self.translate.poll() is not None or (self.opt.poll() or 0) != 0:
                chunks.extend(self._drain())  # (what it wrote just before it ended)
                break
            elif time.monotonic() > deadline:
                self.end()
                raise subprocess.TimeoutExpired(self.tools[1], timeout)
        return b"".join(chunks)

    def _drain(self) -> list[bytes]:
        chunks = []
        with contextlib.suppress(BlockingIOError):
            while chunk := os.read(self.output, 1 << 20):
                chunks.append(chunk)
        return chunks

    def statuses(self, timeout: float) -> list[tuple[int, str]]:
        """Each tool's (exit status, diagnostics), once both ended (a tool
        that waits on the other, which failed, is ended)."""
        try:
            for proc in (self.opt, self.translate):
                try:
                    proc.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
                if proc.returncode != 0:  # the other may wait forever on a named pipe this one never opened
                    break
        finally:
            self.end()
        statuses = []
        for proc, error in zip((self.opt, self.translate), self.errors):
            error.seek(0)
            statuses.append((proc.returncode, error.read().decode(errors="replace")))
            error.close()
        return statuses

    def end(self) -> None:
        """Kill whichever tool is still running (ours: by its own handle),
        and remove the named pipes."""
        _live.discard(self)
        for proc in (self.opt, self.translate):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
        if self.output is not None:
            os.close(self.output)
            self.output = None
            shutil.rmtree(self.folder, ignore_errors=True)

    def close_copies(self) -> None:
        """In a forked child: close the copies of the pair's pipes and files
        (the named pipes are the parent's to remove)."""
        for stream in (self.opt.stdin, *self.errors):
            with contextlib.suppress(OSError):
                stream.close()
        if self.output is not None:
            with contextlib.suppress(OSError):
                os.close(self.output)
            self.output = None


_lock = threading.Lock()
_waiting: Pair | None = None
_live: set[Pair] = set()


def take(opt: str, translate: str) -> Pair | None:
    """The started pair of these tools, if one waits (then it is this
    caller's); None if none does."""
    global _waiting
    with _lock:
        pair, _waiting = _waiting, None
    if pair is not None and (pair.pid != os.getpid() or pair.tools != (opt, translate) or pair.opt.poll() is not None
                             or pair.translate.poll() is not None):
        if pair.pid == os.getpid():
            pair.end()
        return None
    return pair


def _remove_orphans() -> None:
    """Remove the named pipes' folders of processes that died without
    ending their pair (killed): their tools died with them."""
    if _orphans_checked:
        return
    _orphans_checked.append(True)
    with contextlib.suppress(OSError):
        for entry in os.scandir(tempfile.gettempdir()):
            pid = entry.name[len(_FOLDER_PREFIX):].split("-")[0]
            if entry.name.startswith(_FOLDER_PREFIX) and pid.isdigit() and not _alive(int(pid)):
                shutil.rmtree(entry.path, ignore_errors=True)


_orphans_checked: list[bool] = []  # once per process


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # signal 0: only whether it exists
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's
        return True
    return True


def start(opt: str, translate: str) -> Pair | None:
    """A pair started now, for a compile none waited for (a process's first):
    it too hands over its output before the tools end. None if the tools
    cannot start, or setpriv is missing (a cold run then)."""
    if not _DIES_WITH_US:
        return None
    try:
        return _started(opt, translate)
    except OSError:
        return None


def prepare(opt: str, translate: str) -> None:
    """Start a pair for the next compile, unless one waits."""
    global _waiting
    if not _DIES_WITH_US:
        return
    with _lock:
        if _waiting is not None and _waiting.pid == os.getpid():
            return
        try:
            _waiting = _started(opt, translate)
        except OSError:  # a cold start will say what is wrong
            _waiting = None


@atexit.register
def discard() -> None:
    """End the waiting pair, if any (at exit; bench/first_call.py's cold column)."""
    global _waiting
    with _lock:
        pair, _waiting = _waiting, None
    if pair is not None and pair.pid == os.getpid():
        pair.end()


def _after_fork_in_child() -> None:
    global _lock, _waiting, _starter, _starter_lock
    _lock = threading.Lock()
    _starter, _starter_lock = None, threading.Lock()  # its thread is not in the child
    for pair in list(_live):
        pair.close_copies()
    _live.clear()
    _waiting = None


os.register_at_fork(after_in_child=_after_fork_in_child)
