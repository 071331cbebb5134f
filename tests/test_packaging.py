"""The non-editable install (`pip install .`, `make install-check`) ships only
the packages pyproject.toml lists: every package of the source tree must be
there, or the installed irad fails on import (irad.passes.batching once did)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_is_listed_in_pyproject():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    roots = {name: ROOT / folder for name, folder in config.get("package-dir", {}).items()}
    roots.setdefault("irad", ROOT / "irad")
    found = set()
    for name, folder in roots.items():
        for init in folder.rglob("__init__.py"):
            parts = init.parent.relative_to(folder).parts
            found.add(".".join((name, *parts)))
    assert found - listed == set(), "packages missing from pyproject.toml's [tool.setuptools] packages"
