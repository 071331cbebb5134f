"""Python's constructs around run-time values (tests/fuzz/python_programs.py):
checks that raise (`raise` with f-string messages, helpers that always raise,
`assert`), isinstance of joins, imports in the body, lazy `and`/`or` in
`while` and `if` conditions, chained comparisons. irad raises where CPython
raises, the same class, or gives CPython's value and a gradient matching
central differences. `FUZZ_EXAMPLES` scales the budget as for
tests/fuzz/test_fuzz.py; a failure is saved as a regression."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, seed, settings

from irad.backends.native.compile import unavailable_reason
from tests.fuzz.python_programs import arguments, blocks, check, program, save_regression

LONG = os.environ.get("FUZZ_EXAMPLES")
SEED = int(os.environ.get("FUZZ_SEED", "20261207"))
WORK = Path(tempfile.mkdtemp(prefix="irad-python-fuzz-"))
SAVED: list[Path] = []


def _settings(examples: int):
    return settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))


def _run(source, args, backend):
    try:
        check(source, args, WORK, backend)
    except BaseException as error:
        if LONG:  # shrinking replaces it by smaller ones
            for old in SAVED:
                old.unlink(missing_ok=True)
            SAVED[:] = [save_regression(source, args, error)]
        raise


def test_random_python_programs():
    @seed(SEED)
    @_settings(max(1, int(LONG) // 5) if LONG else 40)
    @given(drawn=blocks, args=arguments)
    def run(drawn, args):
        _run(program(drawn), args, "python")

    run()


@pytest.mark.native
@pytest.mark.skipif(unavailable_reason() is not None, reason=str(unavailable_reason()))
def test_random_python_programs_natively():
    @seed(SEED + 1)
    @_settings(max(1, int(LONG) // 50) if LONG else 3)
    @given(drawn=blocks, args=arguments)
    def run(drawn, args):
        _run(program(drawn), args, "native")

    run()
