"""One lowering pipeline: every mlir-opt command the docs and the lit tests show
is the native backend's (irad.backends.native.compile.LOWERING, after BUFFERIZATION for
tensors), so what the docs say to run is what the tests run; and the
documented line from a hand-written request to a printed gradient runs."""

from __future__ import annotations

import math
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from irad.backends.native.mlir_tools import find_tool
from irad.backends.native.compile import BUFFERIZATION, LOWERING

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
LIT_TESTS = sorted((ROOT / "filecheck").rglob("*.mlir"))
FENCE = re.compile(r"^ *```[^\n]*\n(.*?)^ *```", re.M | re.S)


COMMAND = re.compile(r"""%?mlir-opt((?:\s+(?:"--[^"]*"|'--[^']*'|--[^\s|]+))+)""")


def _commands(text: str) -> list[tuple[str, ...]]:
    """The flags after each `mlir-opt` (or lit's `%mlir-opt`) that lowers (has a
    --convert- pass) in shell text, continuation lines (lit's too) joined."""
    joined = re.sub(r"\\\n(\s*//\s*RUN:)?", " ", text)
    found = []
    for match in COMMAND.finditer(joined):
        flags = tuple(shlex.split(match.group(1)))
        if any(flag.startswith("--convert-") for flag in flags):
            found.append(flags)
    return found


CANONICAL = {LOWERING, BUFFERIZATION + LOWERING}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_page_shows_the_one_lowering_pipeline(page):
    text = page.read_text()
    blocks = FENCE.findall(text)
    for flags in _commands("\n".join(blocks)):
        assert flags in CANONICAL, f"{page.name} shows mlir-opt {' '.join(flags)}"
    # a pass named in a sentence is fine; a list of them is a pipeline outside a command
    # (IREE's compiler flags, `--iree-...`, are not mlir-opt passes)
    listed = re.search(r"--(?!iree-)[a-z-]+\S*`?\s+`?--(?!iree-)[a-z]", FENCE.sub("", text))
    assert listed is None, f"{page.name} lists lowering passes outside a command block: {listed.group()}"


@pytest.mark.parametrize("test", [t for t in LIT_TESTS if "--convert-" in t.read_text()], ids=lambda t: t.name)
def test_lit_tests_lower_with_the_same_pipeline(test):
    commands = _commands(test.read_text())
    assert commands
    for flags in commands:
        assert flags in CANONICAL, f"{test.name} lowers with mlir-opt {' '.join(flags)}"


def test_the_request_to_gradient_line_is_documented_and_tested():
    page = (ROOT / "docs" / "ir-conventions.md").read_text()
    run = (ROOT / "filecheck" / "for-mlir-opt" / "run.mlir").read_text()
    for text in (page, run):
        assert "-p irad-for-mlir-opt" in text and "mlir-runner -e main --entry-point-result=void" in text
        assert LOWERING in _commands(text)


def _section(page: str, title: str) -> str:
    return page.split(f"## {title}", 1)[1].split("\n## ", 1)[0]


@pytest.mark.mlir
@pytest.mark.skipif(
    any(find_tool(t) is None for t in ("mlir-opt", "mlir-runner")), reason="needs mlir-opt and mlir-runner 22"
)
def test_the_documented_example_runs_as_documented(tmp_path):
    """The file and the command of docs/ir-conventions.md, run as they are
    written, print what the page says, and that is the closed form."""
    section = _section((ROOT / "docs" / "ir-conventions.md").read_text(), "From a request to a printed gradient")
    source, command = FENCE.findall(section)[:2]
    (tmp_path / "grad.mlir").write_text(source)
    tools = os.pathsep.join({str(Path(sys.executable).parent), *(os.path.dirname(find_tool(t)) for t in ("mlir-opt", "mlir-runner"))})
    run = subprocess.run(
        ["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PATH": tools + os.pathsep + os.environ.get("PATH", "")},
    )
    assert run.returncode == 0, run.stderr
    printed = run.stdout.split()
    said = re.search(r"^print `([-0-9.e]+)` and `([-0-9.e]+)`", section, re.M).groups()
    assert tuple(printed) == said
    x, y = 0.5, 1.25  # d/dx (e^x + sin(xy)), d/dy
    assert float(printed[0]) == pytest.approx(math.exp(x) + y * math.cos(x * y), rel=1e-15)
    assert float(printed[1]) == pytest.approx(x * math.cos(x * y), rel=1e-15)
    assert all(len(p.replace(".", "").lstrip("0")) >= 16 for p in printed)
