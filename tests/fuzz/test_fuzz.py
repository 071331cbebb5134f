"""The random-program fuzzer (issue 13): hypothesis draws programs in irad's
documented subset (tests/fuzz/generator.py) and tests/fuzz/checks.py checks
each against plain Python, central differences, forward mode and the native
backend.

`make test` runs a fixed-seed budget (the same programs on every run); `make
fuzz` runs FUZZ_EXAMPLES programs (10,000 by default) from a random seed it
prints (`FUZZ_SEED=<n> make fuzz` repeats a run). Each part draws from its own
seed (FUZZ_SEED + part), so the parts run different programs. A failure is
shrunk by hypothesis, printed, and saved under tests/fuzz/regressions/, which
test_regressions.py runs.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from irad.backends.iree.compile import unavailable_reason as iree_unavailable
from irad.backends.native.compile import unavailable_reason
from tests.fuzz.calltime import check_mutations, mutation_cases
from tests.fuzz.checks import check_program, failure_kind, save_regression
from tests.fuzz.generator import arguments, programs

LONG = os.environ.get("FUZZ_EXAMPLES")
SEED = int(os.environ.get("FUZZ_SEED", "20261203"))  # fixed for the suite's budget
SETTINGS = settings(
    # per part; programs grew (issue-14 constructs), so fewer per part keep the suite's time
    max_examples=max(1, int(LONG) // 3) if LONG else 40,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
WORK = Path(tempfile.mkdtemp(prefix="irad-fuzz-"))
SAVED: dict[str, Path] = {}  # per kind of failure, the smallest program saved so far


def _run(source, args, compiled=()):
    try:
        check_program(source, args, WORK, compiled)
    except BaseException as error:
        if LONG:  # the long run keeps what it finds; shrinking replaces it by smaller ones
            kind = failure_kind(error)
            if kind in SAVED:
                SAVED[kind].unlink(missing_ok=True)
            SAVED[kind] = save_regression(source, args, error)
            print(f"saved {SAVED[kind]}")
        raise


@pytest.mark.parametrize("part", range(3))  # three parts, so xdist spreads them
def test_random_programs(part):
    @seed(SEED + part)
    @SETTINGS
    @given(source=programs(), args=arguments())
    def run(source, args):
        _run(source, args)

    run()


@pytest.mark.parametrize("part", range(2))
def test_random_transformations(part):
    """Programs in every mode (generator.Mode): array, tuple and dict results,
    tree arguments, aux values; checked by vjp, jacrev, jacfwd, grad or
    value_and_grad."""
    @seed(SEED + 10 + part)
    @settings(SETTINGS, max_examples=max(1, int(LONG) // 6) if LONG else 15)
    @given(source=programs(with_modes=True), args=arguments())
    def run(source, args):
        _run(source, args)

    run()


@pytest.mark.native
@pytest.mark.skipif(unavailable_reason() is not None, reason=str(unavailable_reason()))
def test_random_programs_natively():
    @seed(SEED + 3)
    @settings(SETTINGS, max_examples=max(1, int(LONG) // 10) if LONG else 12)
    @given(source=programs(with_modes=True), args=arguments())
    def run(source, args):
        _run(source, args, ("native",))

    run()


@pytest.mark.iree
@pytest.mark.skipif(iree_unavailable() is not None, reason=str(iree_unavailable()))
def test_random_programs_on_iree():
    """The differential check with IREE as a third backend (`make test-iree`):
    every generated program IREE compiles agrees with the Python and native
    backends; what it cannot compile is refused by name."""
    compiled = ("iree",) if unavailable_reason() is not None else ("native", "iree")

    @seed(SEED + 4)
    @settings(SETTINGS, max_examples=max(1, int(LONG) // 10) if LONG else 12)
    @given(source=programs(with_modes=True), args=arguments())
    def run(source, args):
        _run(source, args, compiled)

    run()


def test_random_list_programs():
    """Programs that grow lists in loops and read them (generator._grow_list),
    checked as the others."""
    @seed(SEED + 20)
    @settings(SETTINGS, max_examples=max(1, int(LONG) // 10) if LONG else 12)
    @given(source=programs(lists=True), args=arguments())
    def run(source, args):
        _run(source, args)

    run()


def test_values_changed_between_calls():
    """Globals, dict items, attributes, a list's length, a tuple, a closure cell
    and a helper's name changed between calls (tests/fuzz/calltime.py); every
    few programs also called from four threads at once."""
    @seed(SEED + 30)
    @settings(SETTINGS, max_examples=max(1, int(LONG) // 10) if LONG else 15)
    @given(case=mutation_cases(), threads=st.sampled_from((0, 0, 4)))
    def run(case, threads):
        check_mutations(*case, WORK, threads=threads)

    run()


@pytest.mark.native
@pytest.mark.skipif(unavailable_reason() is not None, reason=str(unavailable_reason()))
def test_values_changed_between_calls_natively():
    @seed(SEED + 31)
    @settings(SETTINGS, max_examples=max(1, int(LONG) // 50) if LONG else 2)
    @given(case=mutation_cases())
    def run(case):
        check_mutations(*case, WORK, backends=("python", "native"), threads=3)

    run()


def test_random_static_programs():
    """Programs calling helpers with an axis, a count or a length known while
    lowering (generator.STATIC_HELPERS), which irad specialises on them."""
    @seed(SEED + 40)
    @settings(SETTINGS, max_examples=max(1, int(LONG) // 10) if LONG else 10)
    @given(source=programs(static=True), args=arguments())
    def run(source, args):
        _run(source, args)

    run()


def test_random_alias_programs():
    """Programs keeping helpers' results that may be their argument (a view, a
    tuple's item) through loops, while loops, branches, lists and dicts, then
    writing the argument or the result (generator.Generator._alias_block):
    numpy's value or a refusal at a line of the block."""
    @seed(SEED + 50)
    @settings(SETTINGS, max_examples=max(1, int(LONG) // 5) if LONG else 12)
    @given(source=programs(aliases=True), args=arguments())
    def run(source, args):
        _run(source, args)

    run()
