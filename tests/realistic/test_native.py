"""The realistic programs on the native backend: each program's first
transformation (the python backend's tests run them all), against the same
references. One compile per program: ~1-3 s each."""

from __future__ import annotations

import pytest

from tests.realistic.cases import CASES, marked
from tests.realistic.check import check
from tests.reference import NATIVE_MISSING

pytestmark = [pytest.mark.native, pytest.mark.skipif(NATIVE_MISSING is not None, reason=str(NATIVE_MISSING))]


@pytest.mark.parametrize("case", [marked(case, case.refused) for case in CASES if case.native])
def test_program_native(case):
    check(case, "native", case.transforms[:1])
