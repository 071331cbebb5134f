"""Random compositions of scipy.linalg's functions (irad/scipy_linalg.py):
`cholesky` (upper and lower), `cho_factor`/`cho_solve`, `solve_triangular`
(`lower`, `trans`, `unit_diagonal`), `solve` (every `assume_a`, a vector or a
matrix right-hand side), `inv`, `det`, `eigh` and `expm`, on matrices made of
`f(a, v)`'s arguments (a (3, 3), v (3,)).

The generator keeps three pools of names: symmetric positive definite
matrices (`S0 = a @ a.T + 3 I`, and `M @ M.T / (1 + |M|^2) + 2 I` of any
matrix made later), general bounded matrices (`np.tanh` of products, `expm`
of a small multiple, inverses and triangles of SPD ones) and vectors. Each
function is called only on what it is well conditioned for (a factorisation
or `solve(assume_a="pos")` of an SPD matrix, a triangular solve of a
Cholesky factor), so central differences are exact to 1e-6. `scipy.linalg`
is imported at module level or inside the function body. The result is a
float mixing every name made.

test_linalg_fuzz.py checks irad's value against scipy's and the gradient in
`a` and `v` against central differences."""

from __future__ import annotations

from hypothesis import strategies as st

IMPORTS = ["import scipy.linalg\n", "from scipy import linalg as sla\n"]


@st.composite
def programs(draw):
    spd, mats, vecs = ["S0"], ["a"], ["v"]
    inside = draw(st.booleans())  # import scipy in the body, not the module
    la = draw(st.sampled_from(["scipy.linalg", "sla"]))
    lines = [("import scipy.linalg" if la == "scipy.linalg" else "from scipy import linalg as sla")] if inside else []
    lines.append("S0 = a @ a.T + 3.0 * np.eye(3)")
    scalars = []
    for k in range(draw(st.integers(2, 7))):
        name = f"t{k}"
        kind = draw(st.sampled_from(["cholesky", "cho_solve", "solve_triangular", "solve", "inv", "det", "eigh",
                                     "expm", "spd", "mix", "solve_matrix"]))
        S, M, y = draw(st.sampled_from(spd)), draw(st.sampled_from(mats)), draw(st.sampled_from(vecs))
        if kind == "cholesky":
            lower = draw(st.booleans())
            lines.append(f"{name} = {la}.cholesky({S}, lower={lower})")
            mats.append(name)
            if draw(st.booleans()):  # solve with the factor
                trans = draw(st.sampled_from([0, 1, "'T'", "'N'"]))
                unit = draw(st.booleans())
                lines.append(f"{name}y = {la}.solve_triangular({name}, {y}, lower={lower}, trans={trans}"
                             f", unit_diagonal={unit})")
                vecs.append(f"{name}y")
        elif kind == "cho_solve":
            lower = draw(st.booleans())
            if draw(st.booleans()):
                lines.append(f"{name}c = {la}.cho_factor({S}, lower={lower})")
                factor = f"{name}c"
            else:
                lines.append(f"{name}c = {la}.cholesky({S}, lower={lower})")
                factor = f"({name}c, {lower})"
            rhs = draw(st.sampled_from([y, M]))
            lines.append(f"{name} = {la}.cho_solve({factor}, {rhs})")
            (vecs if rhs == y else mats).append(name)
        elif kind == "solve_triangular":
            lower = draw(st.booleans())
            lines.append(f"{name}l = {la}.cholesky({S}, lower={lower})")
            trans = draw(st.sampled_from([0, 1, 2, "'C'"]))
            rhs = draw(st.sampled_from([y, M]))
            lines.append(f"{name} = {la}.solve_triangular({name}l, {rhs}, trans={trans}, lower={lower})")
            (vecs if rhs == y else mats).append(name)
        elif kind in ("solve", "solve_matrix"):
            assume = draw(st.sampled_from(["None", "'gen'", "'sym'", "'pos'", "'her'"]))
            rhs = y if kind == "solve" else M
            lower = draw(st.booleans())
            lines.append(f"{name} = {la}.solve({S}, {rhs}, assume_a={assume}, lower={lower})")
            (vecs if kind == "solve" else mats).append(name)
        elif kind == "inv":
            lines.append(f"{name} = {la}.inv({S})")
            mats.append(name)
        elif kind == "det":
            lines.append(f"{name} = {la}.det({S}) / (1.0 + {la}.det({S}))")
            scalars.append(name)
        elif kind == "eigh":
            # distinct eigenvalues (a repeated one has no derivative); V's signs are scipy's: sign-free forms
            lines.append(f"{name}w, {name}V = {la}.eigh({S} + np.diag([0.0, 1.5, 3.0]))")
            lines.append(f"{name} = np.sum({name}w * {y}) + np.sum(({name}V * {name}V) @ {y})")
            scalars.append(name)
        elif kind == "expm":
            lines.append(f"{name} = {la}.expm(0.2 * {M})")
            mats.append(name)
        elif kind == "spd":
            lines.append(f"{name} = {M} @ {M}.T / (1.0 + np.sum({M} * {M})) + 2.0 * np.eye(3)")
            spd.append(name)
        else:
            lines.append(f"{name} = np.tanh({M} @ {draw(st.sampled_from(mats))}) + {draw(st.sampled_from(spd))}"
                         " * 0.1")
            mats.append(name)
    terms = ([f"np.sum({m}) * {0.1 * (i + 1):.1f}" for i, m in enumerate(mats[1:] + spd[1:])]
             + [f"np.sum({u} * v)" for u in vecs[1:]] + scalars + ["np.sum(S0)"])
    lines.append("return " + " + ".join(terms))
    head = "import numpy as np\n" + ("" if inside else IMPORTS[la == "sla"]) + "\n\ndef f(a, v):\n"
    return head + "".join(f"    {line}\n" for line in lines)


arguments = st.tuples(
    st.lists(st.floats(-1.0, 1.0, allow_nan=False), min_size=9, max_size=9),
    st.lists(st.floats(-1.0, 1.0, allow_nan=False), min_size=3, max_size=3),
)


def check(source: str, args, directory, backend: str = "python") -> None:
    """irad's value equals scipy's, its gradient in (a, v) central differences'."""
    import hashlib
    from pathlib import Path

    import numpy as np
    import pytest

    import irad
    from tests import generated_programs
    from tests.reference import central_difference

    f = generated_programs.load(source, "fuzz_linalg_" + hashlib.sha1(source.encode()).hexdigest()[:12],
                                Path(directory)).f
    a, v = np.array(args[0]).reshape(3, 3), np.array(args[1])
    expected = f(a.copy(), v.copy())
    value, (ga, gv) = irad.value_and_grad(f, argnums=(0, 1), backend=backend)(a.copy(), v.copy())
    assert value == pytest.approx(expected, rel=1e-9, abs=1e-9), f"scipy {expected!r}, irad {value!r}"
    np.testing.assert_allclose(ga, central_difference(f, (a.copy(), v.copy()), 0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gv, central_difference(f, (a.copy(), v.copy()), 1), rtol=1e-5, atol=1e-6)


def save_regression(source: str, args, error: BaseException):
    """Keep a failing program as tests/fuzz/regressions/linalg_<hash>.py (test_regressions.py runs it)."""
    from tests.fuzz.hypothesis_runs import save_regression as save

    return save("linalg", "scipy.linalg", source, (list(args[0]), list(args[1])), error)
