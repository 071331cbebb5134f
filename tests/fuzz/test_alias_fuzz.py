"""A helper's result that may be the array it was given, carried through
loops, lists, dicts and branches, then the array written
(tests/fuzz/alias_programs.py): numpy's value or a refusal, on the Python
backend, all 288 combinations (half a minute). Before call_aliases followed
loops and while loops, 12 of them gave a different value."""

import hashlib
import tempfile
from pathlib import Path

import numpy as np
import pytest

import irad
from tests import generated_programs
from tests.fuzz.alias_programs import COMBINATIONS, program

WORK = Path(tempfile.mkdtemp(prefix="irad-alias-fuzz-"))
X = np.array([0.5, -1.5, 2.0])


@pytest.mark.parametrize("combination", COMBINATIONS, ids="-".join)
def test_numpy_value_or_a_refusal(combination):
    source = program(*combination)
    f = generated_programs.load(source, "alias_" + hashlib.sha1(source.encode()).hexdigest()[:12], WORK).f
    expected = f(X.copy(), 2)
    try:
        got = irad.value_and_grad(f)(X.copy(), 2)[0]
    except irad.UnsupportedError:
        return
    assert got == pytest.approx(expected, rel=1e-12, abs=1e-12), source
