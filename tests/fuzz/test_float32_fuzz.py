"""The float32 long-sum fuzzer (tests/fuzz/float32_programs.py): random
programs summing expressions of 10^6-element float32 arrays, natively and on
IREE (where the extra is installed), against float64 and numpy's float32.
`FUZZ_EXAMPLES` scales the budget as for tests/fuzz/test_fuzz.py."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import Phase, given, seed
from hypothesis import strategies as st

from irad.backends.iree.compile import unavailable_reason as iree_missing
from irad.backends.native.compile import unavailable_reason as native_missing
from tests import generated_programs
from tests.fuzz.float32_programs import arguments, check, programs
from tests.fuzz.hypothesis_runs import fuzz_seed, fuzz_settings, work_folder

SEED = fuzz_seed(20261206)
WORK = work_folder("float32")
# each example compiles once and runs on 10^6 elements: a small share of the
# budget, and no shrinking (minutes per step); a failure prints its program
SETTINGS = fuzz_settings(2, 100, phases=[Phase.explicit, Phase.generate])


def _load(source: str):
    return generated_programs.load(source, "f32_" + hashlib.sha1(source.encode()).hexdigest()[:12], WORK)


@pytest.mark.native
@pytest.mark.skipif(native_missing() is not None, reason=str(native_missing()))
def test_long_float32_programs_natively():
    @seed(SEED)
    @SETTINGS
    @given(source=programs(), data_seed=st.integers(0, 2**16))
    def run(source, data_seed):
        check(_load(source), *arguments(data_seed), "native")

    run()


@pytest.mark.iree
@pytest.mark.skipif(iree_missing() is not None, reason=str(iree_missing()))
def test_long_float32_programs_on_iree():
    @seed(SEED + 1)
    @SETTINGS
    @given(source=programs(), data_seed=st.integers(0, 2**16))
    def run(source, data_seed):
        check(_load(source), *arguments(data_seed), "iree")

    run()
