"""irad.ir.tensor.broadcast_shapes follows numpy's broadcasting rule, for shapes of
any size: np.broadcast_shapes refuses shapes of 2^63 bytes or more ("array is too
big") as if they did not broadcast, which irad reported as "shapes ... cannot be
broadcast together"."""

import itertools

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from irad.ir.tensor import broadcast_shapes

SHAPES = st.lists(st.sampled_from([0, 1, 2, 3]), max_size=3).map(tuple)


@given(st.lists(SHAPES, min_size=1, max_size=3))
def test_as_numpy_broadcasts(shapes):
    try:
        expected = tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        expected = None
    assert broadcast_shapes(*shapes) == expected


def test_shapes_beyond_memory_broadcast():
    assert broadcast_shapes((2**32, 2**32), ()) == (2**32, 2**32)
    assert broadcast_shapes((2**40, 1), (1, 2**40)) == (2**40, 2**40)
    assert broadcast_shapes((2**40,), (3,)) is None
    assert all(broadcast_shapes(s) == s for s in itertools.product([0, 1, 5], repeat=2))
