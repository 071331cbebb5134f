"""The fuzzer's programs (tests/fuzz/generator.py) written with `import
jax.numpy as np` lower to the module their numpy form lowers to
(irad/frontend/jax_numpy.py runs each `jnp.f` as `np.f`): the same text but for
the function's target name. The numpy form's values and derivatives are what
tests/fuzz/test_fuzz.py checks against numpy and central differences, so an
equal module carries those checks over; a refusal must be the numpy form's
refusal, at the same line. `FUZZ_EXAMPLES` scales the budget."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

import irad
from tests.fuzz.checks import load
from tests.fuzz.generator import arguments, programs
from tests.reference import lowered_text

pytest.importorskip("jax")

LONG = os.environ.get("FUZZ_EXAMPLES")
SEED = int(os.environ.get("FUZZ_SEED", "20261207"))
WORK = Path(tempfile.mkdtemp(prefix="irad-jnp-fuzz-"))
_NAMES = re.compile(r'irad\.target = "[^"]*"|fuzz_[0-9a-f]{12}')  # the module's name, in targets and messages


def _lowered(source: str, args) -> str:
    module = load(source, WORK)
    try:
        return _NAMES.sub("", lowered_text(module.f, *args))
    except irad.UnsupportedError as error:  # the same refusal at the same line, but for the file
        return "refused: " + _NAMES.sub("", str(error).splitlines()[0])


def test_programs_written_with_jax_numpy_lower_as_numpys():
    @seed(SEED)
    @settings(max_examples=max(1, int(LONG) // 10) if LONG else 30, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(source=st.one_of(programs(), programs(int_arrays=True), programs(lists=True), programs(static=True),
                            programs(aliases=True)), args=arguments())
    def run(source, args):
        jnp_source = source.replace("\nimport numpy as np\n", "\nimport jax.numpy as np\n", 1)
        assert jnp_source != source
        numpy_module = _lowered(source, args)
        assert _lowered(jnp_source, args) == numpy_module, jnp_source

    run()


# numpy's scalar types and JAX's compare equal (jnp.bool_ == np.bool_), so a
# cache keyed by the callee held JAX's outcome for numpy's call, and the module
# depended on which form lowered first
SCALAR_TYPES = """import numpy as np


def f(x, w, u, A, B, k):
    m8 = np.copy((np.arange(3) * x)) > 0.25
    b9 = (max((not m8[-3]), np.bool_(False)) + (m8[1 % 3] & m8[(3 - 2) % 3]))
    b19 = min((np.bool_(False) + 1), (False + 1))
    return x + b9 * np.float32(2.5) + b19 + np.sum(A) + np.sum(B) + np.sum(u) + np.sum(w)
"""


@pytest.mark.parametrize("jax_first", [True, False])
def test_scalar_types_lower_alike_in_either_order(jax_first):
    args = (-0.03, np.array([-0.74, 1.28, -0.78]), np.zeros(4), np.zeros((2, 3)), np.zeros((3, 3)), 2)
    jnp_source = SCALAR_TYPES.replace("import numpy as np\n", "import jax.numpy as np\n", 1)
    order = [jnp_source, SCALAR_TYPES] if jax_first else [SCALAR_TYPES, jnp_source]
    first, second = (_lowered(source, args) for source in order)
    assert first == second and not first.startswith("refused")
