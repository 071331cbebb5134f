"""The Python examples in README.md and docs/**/*.md run, in order, per file,
and their relative links lead to a file and a heading that exist.

Each file's ```python blocks are written to one temporary module and run, so
irad can read the examples' source like any user file.
"""

import re
import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
FENCE = re.compile(r"^ *```.*?^ *```", re.S | re.M)
LINK = re.compile(r"\]\(([^)\s]+)\)")


def name(doc: Path) -> str:
    return str(doc.relative_to(ROOT))


@pytest.mark.parametrize("doc", DOCS, ids=name)
def test_examples_run(doc, tmp_path, capsys):
    blocks = BLOCK.findall(doc.read_text())
    if not blocks:
        pytest.skip(f"{doc.name} has no Python examples")
    script = tmp_path / f"{doc.stem.replace('-', '_')}_examples.py"
    script.write_text("\n\n".join(blocks))
    runpy.run_path(str(script), run_name="__main__")


def anchors(doc: Path) -> set[str]:
    """The headings' anchors, as GitHub makes them."""
    text = FENCE.sub("", doc.read_text())
    titles = (line.lstrip("#").strip().lower() for line in text.splitlines() if line.startswith("#"))
    return {re.sub(r"[^\w\- ]", "", title).replace(" ", "-") for title in titles}


@pytest.mark.parametrize("doc", DOCS, ids=name)
def test_links_resolve(doc):
    broken = []
    for target in LINK.findall(FENCE.sub("", doc.read_text())):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        path, _, anchor = target.partition("#")
        linked = (doc.parent / path).resolve() if path else doc
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target}: no such heading")
    assert not broken, f"{name(doc)} links to:\n" + "\n".join(broken)
