"""Locating upstream MLIR 22 tools (Debian package `mlir-22-tools`).

Search order: the environment variable (IRAD_MLIR_OPT, ...), then PATH, then
the Debian llvm-22 folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess

LLVM_BIN = "/usr/lib/llvm-22/bin"
INSTALL_HINT = "install the Debian package mlir-22-tools (apt-get install mlir-22-tools)"


def find_tool(name: str) -> str | None:
    env = os.environ.get("IRAD_" + name.upper().replace("-", "_"))
    for candidate in (env, shutil.which(name), os.path.join(LLVM_BIN, name)):
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
