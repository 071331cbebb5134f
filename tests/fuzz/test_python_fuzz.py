"""Python's constructs around run-time values (tests/fuzz/python_programs.py):
checks that raise (`raise` with f-string messages, helpers that always raise,
`assert`), isinstance of joins, imports in the body, lazy `and`/`or` in
`while` and `if` conditions, chained comparisons. irad raises where CPython
raises, the same class, or gives CPython's value and a gradient matching
central differences. `FUZZ_EXAMPLES` scales the budget as for
tests/fuzz/test_fuzz.py; a failure is saved as a regression."""

from __future__ import annotations

import pytest
from hypothesis import given, seed

from irad.backends.native.compile import unavailable_reason
from tests.fuzz.hypothesis_runs import KeptFailure, fuzz_seed, fuzz_settings, work_folder
from tests.fuzz.python_programs import arguments, blocks, check, program, save_regression

SEED = fuzz_seed(20261207)
WORK = work_folder("python")
FAILURES = KeptFailure(save_regression)


def test_random_python_programs():
    @seed(SEED)
    @fuzz_settings(40, 5)
    @given(drawn=blocks, args=arguments)
    def run(drawn, args):
        FAILURES.run(check, program(drawn), args, WORK, "python")

    run()


@pytest.mark.native
@pytest.mark.skipif(unavailable_reason() is not None, reason=str(unavailable_reason()))
def test_random_python_programs_natively():
    @seed(SEED + 1)
    @fuzz_settings(3, 50)
    @given(drawn=blocks, args=arguments)
    def run(drawn, args):
        FAILURES.run(check, program(drawn), args, WORK, "native")

    run()
