"""The Python examples in README.md and docs/*.md run, in order, per file.

Each file's ```python blocks are written to one temporary module and run, so
irad can read the examples' source like any user file.
"""

import re
import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_examples_run(doc, tmp_path, capsys):
    blocks = BLOCK.findall(doc.read_text())
    if not blocks:
        pytest.skip(f"{doc.name} has no Python examples")
    script = tmp_path / f"{doc.stem.replace('-', '_')}_examples.py"
    script.write_text("\n\n".join(blocks))
    runpy.run_path(str(script), run_name="__main__")
