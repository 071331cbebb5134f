"""The random-program fuzzer (issue 13): hypothesis draws programs in irad's
documented subset (tests/fuzz/generator.py) and tests/fuzz/checks.py checks
each against plain Python, central differences, forward mode and the native
backend.

`make test` runs a fixed-seed budget (derandomized); `make fuzz` runs
FUZZ_EXAMPLES programs (10,000 by default) from a random seed it prints
(`FUZZ_SEED=<n> make fuzz` repeats a run). A failure is shrunk by hypothesis,
printed, and saved under tests/fuzz/regressions/, which test_regressions.py runs.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irad.backends.native import unavailable_reason
from tests.fuzz.checks import check_program, save_regression
from tests.fuzz.generator import programs

LONG = os.environ.get("FUZZ_EXAMPLES")
SETTINGS = settings(
    max_examples=max(1, int(LONG) // 3) if LONG else 60,  # per part
    deadline=None,
    derandomize=LONG is None,  # the suite's budget: the same programs on every run
    database=None,
    suppress_health_check=list(HealthCheck),
)
WORK = Path(tempfile.mkdtemp(prefix="irad-fuzz-"))

inputs = st.tuples(
    st.sampled_from([0.3, -0.8, 1.3]),
    st.sampled_from([(0.5, -1.2, 0.9), (1.1, 0.2, -0.4)]),
    st.sampled_from([np.float64, np.float32]),
    st.integers(0, 3),
)


def _run(source, drawn, native=False):
    x, w, dtype, k = drawn
    args = (x, np.array(w, dtype=dtype), k)
    try:
        check_program(source, args, WORK, native=native)
    except BaseException as error:
        if LONG:  # the long run keeps what it finds
            print(f"saved {save_regression(source, args, error)}")
        raise


@pytest.mark.parametrize("part", range(3))  # three parts, so xdist spreads them
@SETTINGS
@given(source=programs(), drawn=inputs)
def test_random_programs(part, source, drawn):
    _run(source, drawn)


@pytest.mark.native
@pytest.mark.skipif(unavailable_reason() is not None, reason=str(unavailable_reason()))
@settings(SETTINGS, max_examples=int(LONG) // 10 if LONG else 12)
@given(source=programs(), drawn=inputs)
def test_random_programs_natively(source, drawn):
    _run(source, drawn, native=True)
