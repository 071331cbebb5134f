"""Running a realistic program through irad's transformations and checking every
value against its stored reference (tests/realistic/references.py)."""

from __future__ import annotations

import numpy as np

import irad
from tests.realistic.cases import Case
from tests.realistic.references import expected, leaves
from tests.reference import copies

RTOL = 1e-8  # both sides compute in float64; long loops reassociate a little


def assert_close(got: list[np.ndarray], want: list[np.ndarray], what: str):
    assert len(got) == len(want), f"{what}: {len(got)} leaves, the reference has {len(want)}"
    scale = max((float(np.max(np.abs(w))) for w in want if w.size), default=1.0)
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape, f"{what}, leaf {k}: shape {g.shape}, the reference's {w.shape}"
        np.testing.assert_allclose(g, w, rtol=RTOL, atol=RTOL * scale, err_msg=f"{what}, leaf {k}")


def run(case: Case, transform: str, backend: str):
    """irad's result of `transform` (a name of irad's API) of the program."""
    static = {"static_argnums": case.static_argnums} if case.static_argnums else {}
    made = getattr(irad, transform)(case.f, argnums=case.argnums, backend=backend, **static)
    return made(*copies(case.args()))


def check(case: Case, backend: str, transforms=None):
    for transform in transforms or case.transforms:
        assert_close(leaves(run(case, transform, backend)), expected(case, transform), f"{case.name}: {transform}")
