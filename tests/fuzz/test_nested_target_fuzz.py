"""An array's item written through an expression, held by containers and other
names (tests/fuzz/nested_target_programs.py): numpy's value and a gradient
that matches central differences, or a refusal, on the Python backend, every
combination. A floor on how many run keeps the refusals honest."""

import hashlib
import tempfile
from pathlib import Path

import numpy as np
import pytest

import irad
from tests import generated_programs
from tests.fuzz.nested_target_programs import COMBINATIONS, program
from tests.reference import central_difference

WORK = Path(tempfile.mkdtemp(prefix="irad-nested-fuzz-"))
X = np.array([0.5, -1.5, 2.0])
RAN: list[str] = []


@pytest.mark.parametrize("combination", COMBINATIONS, ids="-".join)
def test_numpy_value_or_a_refusal(combination):
    source = program(*combination)
    f = generated_programs.load(source, "nested_" + hashlib.sha1(source.encode()).hexdigest()[:12], WORK).f
    expected = f(X.copy())
    try:
        value, g = irad.value_and_grad(f)(X.copy())
    except irad.UnsupportedError:
        return
    assert value == pytest.approx(expected, rel=1e-12, abs=1e-12), source
    np.testing.assert_allclose(g, central_difference(f, (X.copy(),), 0), rtol=1e-5, atol=1e-7, err_msg=source)
    RAN.append("-".join(combination))


def test_the_plain_forms_run():
    """With no other holder, every container and write form runs (not refused)."""
    for container in ("dict", "list", "tuple", "record", "dict_in_list", "list_in_dict", "named"):
        for write in ("item", "row_add", "view_item", "transposed", "masked", "masked_rows", "masked_copy",
                      "popped_items", "popped_mask"):
            source = program(container, "array_named" if container == "named" else "none", write)
            f = generated_programs.load(source, "nested_" + hashlib.sha1(source.encode()).hexdigest()[:12], WORK).f
            value, _ = irad.value_and_grad(f)(X.copy())
            assert value == pytest.approx(f(X.copy()), rel=1e-12), source
