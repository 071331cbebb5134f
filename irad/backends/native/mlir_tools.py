"""Locating upstream MLIR 22 tools (Debian package `mlir-22-tools`).

Search order: the tool's switch of irad.config (`mlir_opt`, `mlir_translate`:
IRAD_MLIR_OPT, ...), then PATH, then the Debian llvm-22 folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess

from irad.base import config

LLVM_BIN = "/usr/lib/llvm-22/bin"
INSTALL_HINT = "install the Debian package mlir-22-tools (apt-get install mlir-22-tools)"
# the tools irad runs -> their switches (others, such as the tests' mlir-runner, have none)
TOOL_SWITCHES = {"mlir-opt": "mlir_opt", "mlir-translate": "mlir_translate"}


def find_tool(name: str) -> str | None:
    chosen = config.read(TOOL_SWITCHES[name]) if name in TOOL_SWITCHES else ""
    for candidate in (chosen, shutil.which(name), os.path.join(LLVM_BIN, name)):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def mlir_opt_parses(text: str, *, split: bool = False) -> tuple[bool, str]:
    """Run mlir-opt on `text`; (accepted, diagnostics). Requires mlir-opt."""
    tool = find_tool("mlir-opt")
    if tool is None:
        raise FileNotFoundError(f"mlir-opt not found: {INSTALL_HINT}")
    args = [tool, "-o", os.devnull] + (["--split-input-file"] if split else [])
    proc = subprocess.run(args, input=text, capture_output=True, text=True, timeout=120)
    return proc.returncode == 0, proc.stderr
