"""A test that asks for more memory than tests/conftest.py's cap fails with
MemoryError, in its own process, which lives on: the cap is in force in every
test process (it was a worker killed by the kernel for 23 GB)."""

import numpy as np
import pytest

from tests.conftest import memory_cap


def test_an_allocation_past_the_cap_is_a_memory_error():
    with pytest.raises(MemoryError):
        np.empty(memory_cap() + (1 << 20), dtype=np.uint8)  # np.empty touches nothing, were it allowed
    assert np.empty(1 << 20, dtype=np.uint8).nbytes == 1 << 20
