"""The vmap fuzzer: generated programs (tests/fuzz/generator.py) under drawn
batchings (tests/fuzz/vmap_checks.py: in_axes per argument, an int batch of
ks, out_axes, batch sizes 1-3, vmap composed with grad, jacrev, jvp, jacfwd
and itself), each against a Python loop over the batch.

`make test` runs a small fixed-seed budget; `make fuzz` runs FUZZ_EXAMPLES
programs from FUZZ_SEED (as tests/fuzz/test_fuzz.py). A failure is shrunk by
hypothesis, printed, and in the long run saved under
tests/fuzz/regressions/ (as `vmap_<hash>.py`, with its batching), which
tests/fuzz/test_regressions.py runs.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from irad.backends.native.compile import unavailable_reason
from tests.fuzz.generator import arguments, programs
from tests.fuzz.vmap_checks import batchings, check_vmap, save_vmap_regression

LONG = os.environ.get("FUZZ_EXAMPLES")
SEED = int(os.environ.get("FUZZ_SEED", "20261207"))
SETTINGS = settings(max_examples=max(1, int(LONG) // 5) if LONG else 4, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))
WORK = Path(tempfile.mkdtemp(prefix="irad-vmapfuzz-"))


def _run(source, args, batching, backend="python"):
    try:
        check_vmap(source, args, batching, WORK, backend)
    except BaseException as error:
        if LONG and not isinstance(error, KeyboardInterrupt):
            print(f"saved {save_vmap_regression(source, args, batching, error)}")
        raise


def _cases(**kinds):
    return st.tuples(programs(**kinds), arguments()).flatmap(
        lambda pa: st.tuples(st.just(pa[0]), st.just(pa[1]), batchings(pa[0])))


# the generator's kinds of programs, each drawn from its own seed (SEED + part)
KINDS = {"modes": {"with_modes": True}, "guards": {"guards": True, "with_modes": True}, "lists": {"lists": True},
         "aliases": {"aliases": True}, "plain": {}}


@pytest.mark.parametrize("kind", KINDS)
def test_vmapped_programs(kind):
    @seed(SEED + list(KINDS).index(kind))
    @SETTINGS
    @given(case=_cases(**KINDS[kind]))
    def run(case):
        _run(*case)

    run()


@pytest.mark.native
@pytest.mark.skipif(unavailable_reason() is not None, reason=str(unavailable_reason()))
def test_vmapped_programs_natively():
    @seed(SEED + 100)
    @settings(SETTINGS, max_examples=max(1, int(LONG) // 20) if LONG else 1)
    @given(case=_cases(with_modes=True, guards=True))
    def run(case):
        _run(*case, backend="native")

    run()
