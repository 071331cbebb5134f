"""Random compositions of scipy.linalg's functions (tests/fuzz/linalg_programs.py):
irad's value equals scipy's and its gradient central differences', on the
Python backend and on a few programs natively. `FUZZ_EXAMPLES` scales the
budget as for tests/fuzz/test_fuzz.py; a failure is saved as a regression."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, seed, settings

from irad.backends.native.compile import unavailable_reason
from tests.fuzz.linalg_programs import arguments, check, programs, save_regression

LONG = os.environ.get("FUZZ_EXAMPLES")
SEED = int(os.environ.get("FUZZ_SEED", "20261207"))
WORK = Path(tempfile.mkdtemp(prefix="irad-linalg-fuzz-"))
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


def test_random_linalg_programs():
    @seed(SEED)
    @_settings(max(1, int(LONG) // 10) if LONG else 15)
    @given(source=programs(), args=arguments)
    def run(source, args):
        _run(source, args, "python")

    run()


@pytest.mark.native
@pytest.mark.skipif(unavailable_reason() is not None, reason=str(unavailable_reason()))
def test_random_linalg_programs_natively():
    @seed(SEED + 1)
    @_settings(max(1, int(LONG) // 100) if LONG else 2)
    @given(source=programs(), args=arguments)
    def run(source, args):
        _run(source, args, "native")

    run()
