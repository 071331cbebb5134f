"""The int and bool dtype fuzzer (tests/fuzz/int_programs.py): random programs
on int arrays of every numpy width and on bool arrays, checked against numpy
on the python backend, and on a few programs natively. `FUZZ_EXAMPLES` scales
the budget as for tests/fuzz/test_fuzz.py."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, seed

from irad.backends.native.compile import unavailable_reason
from tests import generated_programs
from tests.fuzz.hypothesis_runs import fuzz_seed, fuzz_settings, work_folder
from tests.fuzz.int_programs import check, int_arguments, int_programs

SEED = fuzz_seed(20261206)
WORK = work_folder("int")


def _load(source: str):
    return generated_programs.load(source, "ints_" + hashlib.sha1(source.encode()).hexdigest()[:12], WORK).f


def test_random_int_programs():
    @seed(SEED)
    @fuzz_settings(40, 5)
    @given(source=int_programs(), args=int_arguments())
    def run(source, args):
        check(_load(source), args)

    run()


@pytest.mark.native
@pytest.mark.skipif(unavailable_reason() is not None, reason=str(unavailable_reason()))
def test_random_int_programs_natively():
    @seed(SEED + 1)
    @fuzz_settings(4, 5)
    @given(source=int_programs(), args=int_arguments())
    def run(source, args):
        check(_load(source), args, "native")

    run()
