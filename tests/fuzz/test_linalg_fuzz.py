"""Random compositions of scipy.linalg's functions (tests/fuzz/linalg_programs.py):
irad's value equals scipy's and its gradient central differences', on the
Python backend and on a few programs natively. `FUZZ_EXAMPLES` scales the
budget as for tests/fuzz/test_fuzz.py; a failure is saved as a regression."""

from __future__ import annotations

import pytest
from hypothesis import given, seed

from irad.backends.native.compile import unavailable_reason
from tests.fuzz.hypothesis_runs import KeptFailure, fuzz_seed, fuzz_settings, work_folder
from tests.fuzz.linalg_programs import arguments, check, programs, save_regression

SEED = fuzz_seed(20261207)
WORK = work_folder("linalg")
FAILURES = KeptFailure(save_regression)


def test_random_linalg_programs():
    @seed(SEED)
    @fuzz_settings(15, 10)
    @given(source=programs(), args=arguments)
    def run(source, args):
        FAILURES.run(check, source, args, WORK, "python")

    run()


@pytest.mark.native
@pytest.mark.skipif(unavailable_reason() is not None, reason=str(unavailable_reason()))
def test_random_linalg_programs_natively():
    @seed(SEED + 1)
    @fuzz_settings(2, 100)
    @given(source=programs(), args=arguments)
    def run(source, args):
        FAILURES.run(check, source, args, WORK, "native")

    run()
