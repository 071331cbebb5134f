"""A native backend without llvmlite or mlir-opt is irad's BackendError carrying
the command that fixes it, raised at the backend's entry; `python -m irad.demo`
then shows the Python backend and that command."""

import subprocess
import sys

import pytest

import irad
from irad import demo
from irad.backends.native import compile as native


def test_missing_llvmlite_is_a_backend_error_naming_the_install(tmp_path):
    program = tmp_path / "without_llvmlite.py"
    program.write_text(
        "import sys; sys.modules['llvmlite'] = None\n"  # as if it were not installed
        "import irad\n"
        "try:\n"
        "    irad.grad(lambda x: x * x, backend='native')(2.0)\n"
        "except irad.BackendError as exc:\n"
        "    print(exc)\n"
    )
    run = subprocess.run([sys.executable, str(program)], capture_output=True, text=True, timeout=120)
    assert "needs llvmlite" in run.stdout and "pip install 'irad[native]'" in run.stdout, run.stdout + run.stderr


def test_missing_mlir_tools_is_a_backend_error_naming_the_install(monkeypatch):
    monkeypatch.setattr(native, "native_tools_available", lambda: False)
    with pytest.raises(irad.BackendError, match=r"needs mlir-opt and mlir-translate 22.*\n  hint: .*apt-get install mlir-22-tools"):
        irad.grad(lambda x: x * x + 1.0, backend="native")(2.0)


def test_demo_shows_source_gradient_and_backends_and_the_ir_behind_a_flag(monkeypatch, capsys):
    monkeypatch.setattr(native, "native_tools_available", lambda: False)  # quick, and the graceful path
    demo.main([])
    out = capsys.readouterr().out
    assert "def pendulum(k, x0):" in out and "finite difference" in out and "func.func" not in out
    python_row = next(line for line in out.splitlines() if line.strip().startswith("python "))
    assert python_row.count(",") == 1 and "native  not available here" in out and "apt-get install mlir-22-tools" in out
    errors = [float(line.split()[-1]) for line in out.splitlines() if line.strip()[:1] in "01" and "e-" in line]
    assert len(errors) == 2 and max(errors) < 1e-6
    demo.main(["--ir"])
    assert "pendulum(%k: f64, %x0: f64) -> f64" in capsys.readouterr().out
