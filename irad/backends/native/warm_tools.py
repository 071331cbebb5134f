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
import contextlib
import os
import subprocess
import tempfile
import threading
from collections.abc import Sequence

# passes MLIR anchors on func.func: nested in the pipeline (mlir-opt's
# command line nests them by itself)
_FUNCTION_PASSES = frozenset({"promote-buffers-to-stack"})


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
    fill)."""

    def __init__(self, opt: str, translate: str):
        self.tools = (opt, translate)
        self.pid = os.getpid()
        self.errors = [tempfile.TemporaryFile(), tempfile.TemporaryFile()]
        self.opt = subprocess.Popen([opt, "--run-reproducer", "--emit-bytecode"], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=self.errors[0])
        try:
            self.translate = subprocess.Popen([translate, "--mlir-to-llvmir"], stdin=self.opt.stdout,
                                              stdout=subprocess.PIPE, stderr=self.errors[1])
        except OSError:
            self.end()
            raise
        self.opt.stdout.close()  # mlir-translate holds it
        _live.add(self)

    def run(self, text: str, timeout: float) -> tuple[bytes, list[tuple[int, str]]]:
        """mlir-translate's output for `text` (a module with its pipeline
        resource), and each tool's (exit status, diagnostics)."""
        try:
            try:
                self.opt.stdin.write(text.encode())
                self.opt.stdin.close()
            except BrokenPipeError:  # mlir-opt ended early: its status and diagnostics say why
                pass
            output = self.translate.communicate(timeout=timeout)[0]
            self.opt.wait(timeout=timeout)
        finally:
            self.end()
        statuses = []
        for proc, error in zip((self.opt, self.translate), self.errors):
            error.seek(0)
            statuses.append((proc.returncode, error.read().decode(errors="replace")))
            error.close()
        return output, statuses

    def end(self) -> None:
        """Kill whichever tool is still running (ours: by its own handle)."""
        _live.discard(self)
        for proc in (self.opt, getattr(self, "translate", None)):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()

    def close_copies(self) -> None:
        """In a forked child: close the copies of the pair's pipes and files."""
        translate = getattr(self, "translate", None)
        for stream in (self.opt.stdin, translate.stdout if translate else None, *self.errors):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


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


def prepare(opt: str, translate: str) -> None:
    """Start a pair for the next compile, unless one waits."""
    global _waiting
    with _lock:
        if _waiting is not None and _waiting.pid == os.getpid():
            return
        try:
            _waiting = Pair(opt, translate)
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
    global _lock, _waiting
    _lock = threading.Lock()
    for pair in list(_live):
        pair.close_copies()
    _live.clear()
    _waiting = None


os.register_at_fork(after_in_child=_after_fork_in_child)
