"""The int and bool dtype fuzzer (tests/fuzz/int_programs.py): random programs
on int arrays of every numpy width and on bool arrays, checked against numpy
on the python backend, and on a few programs natively. `FUZZ_EXAMPLES` scales
the budget as for tests/fuzz/test_fuzz.py."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, seed, settings

from irad.backends.native.compile import unavailable_reason
from tests import generated_programs
from tests.fuzz.int_programs import check, int_arguments, int_programs

LONG = os.environ.get("FUZZ_EXAMPLES")
SEED = int(os.environ.get("FUZZ_SEED", "20261206"))
WORK = Path(tempfile.mkdtemp(prefix="irad-int-fuzz-"))


def _load(source: str):
    return generated_programs.load(source, "ints_" + hashlib.sha1(source.encode()).hexdigest()[:12], WORK).f


def _settings(examples: int):
    return settings(max_examples=max(1, int(LONG) // 5) if LONG else examples, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))


def test_random_int_programs():
    @seed(SEED)
    @_settings(40)
    @given(source=int_programs(), args=int_arguments())
    def run(source, args):
        check(_load(source), args)

    run()


@pytest.mark.native
@pytest.mark.skipif(unavailable_reason() is not None, reason=str(unavailable_reason()))
def test_random_int_programs_natively():
    @seed(SEED + 1)
    @_settings(4)
    @given(source=int_programs(), args=int_arguments())
    def run(source, args):
        check(_load(source), args, "native")

    run()
