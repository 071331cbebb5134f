"""Writes after an `if` whose other arms return, break or continue; and arrays
a jumping arm makes shared (irad/frontend/views.py's exits, control_flow.py's
_jumping_arms_first). Values and gradients against numpy and central
differences; a sharing irad cannot follow is refused, never a wrong value."""

import numpy as np
import pytest

import irad
from tests.frontend import jump_view_programs as jp
from tests.reference import NATIVE_MISSING, check_against_numpy

B = np.array([[0.5, -1.0], [2.0, 0.25]])
A0 = np.array([1.0, -2.0, 0.5])


@pytest.mark.parametrize("f", jp.WRITABLE, ids=[f.__name__ for f in jp.WRITABLE])
@pytest.mark.parametrize("x", [0.7, 2.7, 5.5, 6.5, -1.5, -2.5, 10.5, 11.5], ids=str)
def test_write_after_arms_that_jump(f, x):
    check_against_numpy(f, (x, A0 if f.__code__.co_varnames[1] == "A0" else B))


@pytest.mark.parametrize("f", jp.SHARED_ON_A_JUMP, ids=[f.__name__ for f in jp.SHARED_ON_A_JUMP])
def test_sharing_made_on_a_jump_is_followed_or_refused(f):
    for x in (1.5, -0.5, 4.0):
        try:
            check_against_numpy(f, (x, A0))
        except irad.UnsupportedError as error:
            assert "share one array on one path into the loop" in str(error), str(error)
            assert "jump_view_programs.py:" in str(error)


@pytest.mark.native
@pytest.mark.skipif(NATIVE_MISSING is not None, reason=str(NATIVE_MISSING))
def test_write_after_arms_that_jump_natively():
    for x in (0.7, 5.5, 6.5):
        check_against_numpy(jp.return_or_break_then_write, (x, B), backend="native")
