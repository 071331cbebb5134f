"""Programs the fuzzer found failing, kept under tests/fuzz/regressions/ (one
file each: the program's source, with its arguments in an `# ARGS =` line),
checked as the fuzzer checks them, on the Python backend and natively; the
vmap fuzzer's (`vmap_*.py`, with a `# BATCHING =` line) as it checks them
(tests/fuzz/vmap_checks.py), the Python-constructs and scipy.linalg fuzzers'
(`python_*.py`, `linalg_*.py`) as theirs do, on the Python backend."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import numpy as np
import pytest

from irad.backends.native.compile import unavailable_reason
from tests.fuzz import linalg_programs, python_programs
from tests.fuzz.checks import REGRESSIONS, check_program
from tests.fuzz.vmap_checks import Batching, check_vmap

CASES = sorted(REGRESSIONS.glob("case_*.py"))
VMAP_CASES = sorted(REGRESSIONS.glob("vmap_*.py"))
OTHER_CASES = sorted([*REGRESSIONS.glob("python_*.py"), *REGRESSIONS.glob("linalg_*.py")])


def _run(path: Path, compiled: tuple[str, ...]) -> None:
    source = path.read_text()
    args = eval(re.search(r"^# ARGS = (.*)$", source, re.M).group(1), {"np": np})
    check_program(source, args, Path(tempfile.mkdtemp(prefix="irad-regression-")), compiled)


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_saved_program(path: Path):
    _run(path, ())


@pytest.mark.native
@pytest.mark.skipif(unavailable_reason() is not None, reason=str(unavailable_reason()))
@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_saved_program_natively(path: Path):
    _run(path, ("native",))


@pytest.mark.parametrize("path", VMAP_CASES, ids=[p.stem for p in VMAP_CASES])
def test_saved_vmap_program(path: Path):
    source = path.read_text()
    args = eval(re.search(r"^# ARGS = (.*)$", source, re.M).group(1), {"np": np})
    batching = eval(re.search(r"^# BATCHING = (.*)$", source, re.M).group(1), {"Batching": Batching})
    check_vmap(source, args, batching, Path(tempfile.mkdtemp(prefix="irad-regression-")))


@pytest.mark.parametrize("path", OTHER_CASES, ids=[p.stem for p in OTHER_CASES])
def test_saved_python_or_linalg_program(path: Path):
    source = path.read_text()
    args = eval(re.search(r"^# ARGS = (.*)$", source, re.M).group(1))
    check = (python_programs if path.name.startswith("python_") else linalg_programs).check
    check(source, args, Path(tempfile.mkdtemp(prefix="irad-regression-")))
