"""The reference values the realistic programs are checked against, computed by JAX
in float64 from each program's twin (tests/realistic/twins.py) or, for programs JAX
cannot run, by numpy and central differences, and stored in references.npz so the
tests do not pay JAX's compile times (minutes on a loaded machine).

The file records a hash of the programs' source and example arguments; when they
change, the tests fail until it is rebuilt:

    .venv/bin/python -m tests.realistic.references
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import sys
import types
from pathlib import Path

import numpy as np

from tests.realistic.cases import CASES, Case
from tests.reference import copies, tree_central_difference

HERE = Path(__file__).parent
STORE = HERE / "references.npz"


def leaves(tree) -> list[np.ndarray]:
    """The array leaves of a result, dicts in key order, dataclasses in field
    order, None skipped."""
    if dataclasses.is_dataclass(tree) and not isinstance(tree, type):
        return leaves([getattr(tree, field.name) for field in dataclasses.fields(tree)])
    if isinstance(tree, dict):
        return [leaf for key in sorted(tree) for leaf in leaves(tree[key])]
    if isinstance(tree, (tuple, list)):
        return [leaf for item in tree for leaf in leaves(item)]
    if tree is None:
        return []
    return [np.asarray(tree, dtype=np.float64)]


def program_module(f) -> types.ModuleType:
    while isinstance(f, (functools.partial, types.MethodType)):
        f = f.func if isinstance(f, functools.partial) else f.__func__
    return sys.modules[f.__module__ if isinstance(f, types.FunctionType) else type(f).__module__]


def case_hash(case: Case) -> str:
    """A hash of what a case's references depend on: the programs' source, the
    case's transformations, arguments and reference kind (not its xfail marks)."""
    digest = hashlib.sha256(Path(program_module(case.f).__file__).read_bytes() + (HERE / "twins.py").read_bytes())
    digest.update(repr((case.name, case.transforms, case.argnums, case.reference)).encode())
    for leaf in leaves(case.args()):
        digest.update(leaf.tobytes())
    return digest.hexdigest()


def compute(case: Case, transform: str):
    """The reference result of `transform` (a name of JAX's API) of the program."""
    args = copies(case.args())
    argnums = case.argnums if isinstance(case.argnums, tuple) else (case.argnums,)
    if case.reference == "fd":
        assert transform == "value_and_grad", "central differences check values and gradients"
        grads = tuple(tree_central_difference(case.f, args, i) for i in argnums)
        return case.f(*copies(args)), grads if isinstance(case.argnums, tuple) else grads[0]
    import jax
    from tests.realistic.twins import twin
    f = twin(case.f)

    # over the differentiated arguments only: the others (ints, trees of ints)
    # stay Python values, as jax.grad leaves them
    def of_wrt(*wrt):
        full = list(args)
        for i, a in zip(argnums, wrt):
            full[i] = a
        return f(*full)

    inner = tuple(range(len(argnums))) if isinstance(case.argnums, tuple) else 0
    made = getattr(jax, transform)(of_wrt, argnums=inner)
    # eager gradients: XLA compiles the unrolled loops slowly; jit for the Jacobians
    made = made if transform == "value_and_grad" else jax.jit(made)
    return made(*(args[i] for i in argnums))


def stored() -> dict[str, np.ndarray]:
    if not STORE.exists():
        return {}
    with np.load(STORE) as data:
        return dict(data)


STORED = functools.cache(stored)


def key(case: Case, what: str) -> str:
    return f"{case.name}/{what}"


def expected(case: Case, transform: str) -> list[np.ndarray]:
    """The stored reference leaves; an error saying how to rebuild a stale store."""
    data = STORED()
    if str(data.get(key(case, "hash"))) != case_hash(case):
        raise AssertionError(f"tests/realistic/references.npz has no current reference for {case.name} "
                             "(the programs or their arguments changed): rebuild it with "
                             "`python -m tests.realistic.references`")
    found = []
    while key(case, f"{transform}/{len(found)}") in data:
        found.append(data[key(case, f"{transform}/{len(found)}")])
    return found


def main():
    """Rebuild the references of the cases whose hash changed; keep the others."""
    merged = stored()
    for case in CASES:
        if str(merged.get(key(case, "hash"))) == case_hash(case):
            continue
        merged = {name: value for name, value in merged.items() if not name.startswith(case.name + "/")}
        for transform in case.transforms:
            for k, leaf in enumerate(leaves(compute(case, transform))):
                merged[key(case, f"{transform}/{k}")] = leaf
        merged[key(case, "hash")] = np.array(case_hash(case))
        np.savez_compressed(STORE, **merged)  # after each case: a long run keeps what it did
        print(case.name, flush=True)
    names = {case.name for case in CASES}
    np.savez_compressed(STORE, **{name: value for name, value in merged.items() if name.split("/")[0] in names})


if __name__ == "__main__":
    main()
