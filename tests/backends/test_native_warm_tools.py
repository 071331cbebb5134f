"""mlir-opt and mlir-translate started before they are needed (irad/backends/native/warm_tools.py).

- The command-line passes become the textual pipeline --run-reproducer reads
  (func.func passes nested); anything else is not run warm.
- A started pair gives the LLVM IR the tools give with the passes on their
  command lines, on a tensor module and a scalar one, and is used once; a
  native compile starts the next pair; a compile no pair waited for starts
  one of its own.
- A module mlir-opt rejects fails through a pair as it does cold (lowered
  again cold): a BackendError naming the tool with its diagnostics.
- A second gradient (through the pair) agrees with central differences.
- The LLVM IR is read as mlir-translate writes it, before the tools end;
  a tool that fails after writing it fails the compile (the JIT checks
  the statuses before it keeps code), and the pair's named pipes are removed.
- A forked child neither uses the parent's pair nor holds its pipes open (the
  parent's compile would wait for its end).
"""

import os
import time

import numpy as np
import pytest

import irad
from irad import compiled
from irad.backends.native import compile as native
from irad.backends.native import warm_tools
from irad.base.errors import BackendError
from tests.reference import NATIVE_MISSING, central_difference

needs_native = pytest.mark.skipif(NATIVE_MISSING is not None, reason=str(NATIVE_MISSING))

TENSORS = """
func.func @f(%x: tensor<8xf64>) -> f64 attributes {llvm.emit_c_interface} {
  %e = math.exp %x : tensor<8xf64>
  %zero = arith.constant dense<0.0> : tensor<f64>
  %s = linalg.reduce ins(%e : tensor<8xf64>) outs(%zero : tensor<f64>) dimensions = [0]
    (%a: f64, %b: f64) { %t = arith.addf %a, %b : f64
      linalg.yield %t : f64 }
  %r = tensor.extract %s[] : tensor<f64>
  return %r : f64
}
"""
SCALARS = """
func.func @g(%x: f64) -> f64 attributes {llvm.emit_c_interface} {
  %y = math.tanh %x : f64
  %z = arith.mulf %y, %x : f64
  return %z : f64
}
"""
PASSES = {"tensors": native.BUFFERIZATION + native.tracked_lowering(), "scalars": native.tracked_lowering()}


def test_passes_become_a_pipeline():
    text = warm_tools.pipeline_text(("--cse", "--promote-buffers-to-stack=max-alloc-size-in-bytes=64",
                                     "--one-shot-bufferize=bufferize-function-boundaries allow-return-allocs-from-loops"))
    assert text == ("builtin.module(cse,func.func(promote-buffers-to-stack{max-alloc-size-in-bytes=64}),"
                    "one-shot-bufferize{bufferize-function-boundaries allow-return-allocs-from-loops})")
    assert warm_tools.pipeline_text(("--cse", "-o")) is None
    assert warm_tools.pipeline_text(('--pass="x"',)) is None


def _cold(text: str, passes) -> str:
    """Lowered with no pair waiting (one is started for it)."""
    warm_tools.discard()
    return native.lower_to_llvm_ir(text, passes)


def _through_stdout(text: str, passes) -> str:
    """Lowered by the tools given the passes on their command lines, writing to their stdout."""
    opt, translate = native.require_tool("mlir-opt"), native.require_tool("mlir-translate")
    return native._run_tools([[opt, *passes, "--verify-each=false", "--emit-bytecode"], [translate, "--mlir-to-llvmir"]],
                             text, ["mlir-opt", "mlir-translate"])


def _warm(text: str, passes, succeeds: bool = True) -> str:
    """The LLVM IR lowered through a started pair (which `succeeds`, or fails and the module is lowered cold)."""
    warm_tools.prepare(native.require_tool("mlir-opt"), native.require_tool("mlir-translate"))
    pair = warm_tools._waiting
    assert pair is not None
    out = native.lower_to_llvm_ir(text, passes)
    assert warm_tools._waiting is None  # it was this compile's
    assert (pair.opt.returncode == 0 and pair.translate.returncode == 0) == succeeds
    return out


@pytest.mark.native
@needs_native
@pytest.mark.parametrize("kind", ["tensors", "scalars"])
def test_a_started_pair_gives_the_cold_llvm_ir(kind):
    text = TENSORS if kind == "tensors" else SCALARS
    assert _warm(text, PASSES[kind]) == _through_stdout(text, PASSES[kind]) == _cold(text, PASSES[kind])


@pytest.mark.native
@needs_native
def test_a_rejected_module_fails_as_cold():
    bad = SCALARS.replace("arith.mulf %y, %x", "arith.mulf %y, %w")
    errors = []
    for lower in (_warm_failing, _cold):
        with pytest.raises(BackendError) as caught:
            lower(bad, PASSES["scalars"])
        errors.append(str(caught.value))
    assert errors[0] == errors[1]
    assert "mlir-opt" in errors[0] and "%w" in errors[0]


def _warm_failing(text: str, passes) -> str:
    warm_tools.prepare(native.require_tool("mlir-opt"), native.require_tool("mlir-translate"))
    return native.lower_to_llvm_ir(text, passes)


@pytest.mark.native
@needs_native
def test_gradients_compiled_through_a_pair(monkeypatch):
    monkeypatch.setattr(compiled, "_CACHE", {})

    def loss(w, x):
        return np.sum(np.log(1.0 + np.exp(-(x @ w))))

    w, x = np.linspace(-0.5, 0.5, 3), np.linspace(-1.0, 1.0, 12).reshape(4, 3)
    g = irad.grad(loss, backend="native")
    g(w, x)
    g.wait_optimised()  # (the pair is started after the first call, with the -O2 compile)
    assert warm_tools._waiting is not None  # the first compile started the next one's pair
    used = warm_tools._waiting

    def loss2(w, x):
        return np.sum(np.tanh(x @ w) ** 2)

    got = irad.grad(loss2, backend="native")(w, x)
    assert used.opt.returncode == 0 and used.translate.returncode == 0
    assert not os.path.exists(used.folder)  # its named pipes
    assert np.allclose(got, central_difference(loss2, (w, x), 0), rtol=1e-7, atol=1e-9)


@pytest.mark.native
@needs_native
def test_a_forked_child_holds_no_pipe_of_the_parents_pair():
    opt, translate = native.require_tool("mlir-opt"), native.require_tool("mlir-translate")
    warm_tools.prepare(opt, translate)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the pair is not its own; it lives on, holding what it inherited
        try:
            os.write(write, b"1" if warm_tools.take(opt, translate) is None else b"0")
            time.sleep(120)
        finally:
            os._exit(0)
    try:
        os.close(write)
        assert os.read(read, 1) == b"1"
        start = time.perf_counter()
        assert "define" in _warm(SCALARS, PASSES["scalars"])  # mlir-opt saw the end of its input
        assert time.perf_counter() - start < 60
    finally:
        os.close(read)
        os.kill(pid, 9)  # the child this test forked, by its pid
        os.waitpid(pid, 0)


@pytest.mark.native
@needs_native
def test_a_pair_that_fails_on_its_own_is_not_trusted(monkeypatch):
    cold = _through_stdout(SCALARS, PASSES["scalars"])
    real = warm_tools.pipeline_resource
    monkeypatch.setattr(warm_tools, "pipeline_resource", lambda pipeline, verify_each: real(
        "builtin.module(no-such-pass)", verify_each))
    assert _warm(SCALARS, PASSES["scalars"], succeeds=False) == cold


# reads its input (a pair's: the named pipe $2; cold: stdin), writes IR cut short (a pair's: to $4), fails
FAILING_TRANSLATE = """#!/bin/sh
if [ -n "$4" ]; then cat "$2" > /dev/null; echo "; cut short" > "$4"; else cat > /dev/null; fi
exit 3
"""


@pytest.mark.native
@needs_native
def test_a_tool_failing_after_its_output_fails_the_compile(tmp_path, monkeypatch):
    translate = tmp_path / "mlir-translate"
    translate.write_text(FAILING_TRANSLATE)
    translate.chmod(0o755)
    opt = native.require_tool("mlir-opt")
    monkeypatch.setattr(native, "require_tool", lambda name: str(translate) if name == "mlir-translate" else opt)
    warm_tools.prepare(opt, str(translate))
    checks = []
    assert native.lower_to_llvm_ir(SCALARS, PASSES["scalars"], checked_later=checks).strip() == "; cut short"
    assert len(checks) == 1
    with pytest.raises(BackendError, match=r"mlir-translate --mlir-to-llvmir failed \(exit status 3\)"):
        checks[0]()  # its error, from the cold run


@pytest.mark.native
@needs_native
def test_a_compile_whose_tool_failed_after_writing_raises(tmp_path, monkeypatch):
    """The IR of a tool that then failed is not run, whatever LLVM makes of it."""
    monkeypatch.setattr(compiled, "_CACHE", {})
    translate = tmp_path / "mlir-translate"
    translate.write_text(FAILING_TRANSLATE)
    translate.chmod(0o755)
    opt = native.require_tool("mlir-opt")
    monkeypatch.setattr(native, "require_tool", lambda name: str(translate) if name == "mlir-translate" else opt)
    warm_tools.discard()
    warm_tools.prepare(opt, str(translate))
    pair = warm_tools._waiting

    def cut_short(x):
        return np.sum(np.sinh(x) * 0.375)

    with irad.config.overriding(native_cache="0"), pytest.raises(BackendError, match=r"mlir-translate --mlir-to-llvmir failed \(exit status 3\)"):
        irad.grad(cut_short, backend="native")(np.ones(3))
    assert not os.path.exists(pair.folder)
    warm_tools.discard()  # the pair the failed compile may have started, of the fake tool


@pytest.mark.native
@needs_native
def test_a_killed_process_takes_its_pair_along(tmp_path):
    """The started tools die with the process that started them (setpriv
    --pdeathsig), and the next pair removes the dead process's named pipes."""
    if not warm_tools._DIES_WITH_US:
        pytest.skip("setpriv is missing: no pair is started")
    import signal
    import subprocess
    import sys
    code = ("import time\nfrom irad.backends.native import warm_tools\n"
            f"warm_tools.prepare({native.require_tool('mlir-opt')!r}, {native.require_tool('mlir-translate')!r})\n"
            "p = warm_tools._waiting\nprint(p.opt.pid, p.translate.pid, p.folder, flush=True)\ntime.sleep(120)\n")
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        opt, translate, folder = child.stdout.readline().split()
        for pid, tool in ((opt, "mlir-opt"), (translate, "mlir-translate")):  # setpriv has run (and set the signal)
            deadline = time.monotonic() + 30
            while not os.path.realpath(f"/proc/{pid}/exe").endswith(tool) and time.monotonic() < deadline:
                time.sleep(0.01)
    finally:
        os.kill(child.pid, signal.SIGKILL)  # the process this test started, by its pid
        child.wait()
    for pid in (int(opt), int(translate)):
        deadline = time.monotonic() + 30
        while _running(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _running(pid)
    assert os.path.exists(folder)
    warm_tools._orphans_checked.clear()
    warm_tools.start(native.require_tool("mlir-opt"), native.require_tool("mlir-translate")).end()
    assert not os.path.exists(folder)


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.native
@needs_native
def test_a_pair_asked_for_while_the_interpreter_exits_is_none(monkeypatch):
    """The next compile's pair is started from a thread after a first call, which
    may run while the interpreter exits; concurrent.futures then refuses new work
    (RuntimeError), which printed an internal traceback at exit. A starter that
    takes no work now means no pair, as a tool that cannot start does."""
    import concurrent.futures

    opt, translate = native.require_tool("mlir-opt"), native.require_tool("mlir-translate")
    closed = concurrent.futures.ThreadPoolExecutor(1)
    closed.shutdown()
    monkeypatch.setattr(warm_tools, "_starter", closed)
    monkeypatch.setattr(warm_tools, "_waiting", None)
    warm_tools.prepare(opt, translate)
    assert warm_tools._waiting is None
    assert warm_tools.start(opt, translate) is None
