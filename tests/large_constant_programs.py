"""The programs of tests/test_large_constants.py, run in a child process whose
writable memory is capped: each makes an array whose dense form needs 3.2 GB.
Apart from the test module, so the child imports numpy and irad alone."""

from __future__ import annotations

import json
import resource

import numpy as np

import irad

N = 20000  # N×N float64 is 3.2 GB
CAP = int(1.5 * 2**30)


# ---- the programs the child runs (module-level: irad reads their source) ----
def ones_sum(x):
    return np.ones((N, N)).sum() * x


def scaled_ones(x):
    return (x * np.ones((N, N))).sum()


def zeros_element(x):
    return (np.zeros((N, N))[5, 7] + 1.0) * x


def full_element(x):
    return np.full((N, N), 2.5)[1, 2] * x


def ones_like_empty(x):
    return np.ones_like(np.empty((N, N)))[0, 0] * x


def int_zeros(x):
    return (np.zeros((N, N), dtype=np.int64)[3, 4] + 2) * x


def folded(x):
    return (np.ones((N, N)) * 0.0 + 1.0)[3, 3] * x


def broadcast(x):
    return (np.ones((N, 1)) + np.full((1, N), 2.0))[2, 3] * x


def eye_times(x):
    return (np.eye(N) * x).sum()


def identity_times(x):
    return (np.identity(N) * x)[0, 0]


def tril_of(x):
    return np.tril(np.ones((N, N)) * x)[1, 0]


def first_times_sum(x):
    return np.ones((N, N))[0, 0] * x[0] ** 2 + x[1]


def mapped(x):
    return np.full((N, N), 3.0)[0, 1] * x


def constant_only():
    return np.full((N, N), 3.0)[4, 4]


def big_arange(x):
    return (np.arange(10**8) * x).sum()


def _cases():
    """name -> a thunk giving what the program returns (as a list)."""
    def lowered(f):  # lowered, differentiated and compiled, not run
        return lambda: [len(str(irad.grad(f).lower(2.0))) < 2_000_000]

    return {
        "ones_sum": lambda: list(irad.value_and_grad(ones_sum)(3.0)),
        "scaled_ones": lambda: list(irad.value_and_grad(scaled_ones)(3.0)),
        "zeros_element": lambda: list(irad.value_and_grad(zeros_element)(3.0)),
        "full_element": lambda: list(irad.value_and_grad(full_element)(3.0)),
        "ones_like_empty": lambda: list(irad.value_and_grad(ones_like_empty)(3.0)),
        "int_zeros": lambda: list(irad.value_and_grad(int_zeros)(3.0)),
        "folded": lambda: list(irad.value_and_grad(folded)(3.0)),
        "broadcast": lambda: list(irad.value_and_grad(broadcast)(3.0)),
        "eye": lowered(eye_times),
        "identity": lowered(identity_times),
        "tril": lowered(tril_of),
        "jacfwd": lambda: irad.jacfwd(first_times_sum)(np.array([3.0, 1.0])).tolist(),
        "jacrev": lambda: irad.jacrev(first_times_sum)(np.array([3.0, 1.0])).tolist(),
        "hessian": lambda: irad.hessian(first_times_sum)(np.array([3.0, 1.0])).tolist(),
        "vmap": lambda: irad.vmap(mapped)(np.arange(3.0)).tolist(),
        "vmap_axis_size": lambda: irad.vmap(constant_only, axis_size=2)().tolist(),
        "arange_refused": lambda: irad.grad(big_arange)(2.0),
    }


EXPECTED = {
    "ones_sum": [3.0 * N * N, N * N],
    "scaled_ones": [3.0 * N * N, N * N],
    "zeros_element": [3.0, 1.0],
    "full_element": [7.5, 2.5],
    "ones_like_empty": [3.0, 1.0],
    "int_zeros": [6.0, 2.0],
    "folded": [3.0, 1.0],
    "broadcast": [9.0, 3.0],
    "eye": [True],
    "identity": [True],
    "tril": [True],
    "jacfwd": [6.0, 1.0],
    "jacrev": [6.0, 1.0],
    "hessian": [[2.0, 0.0], [0.0, 0.0]],
    "vmap": [0.0, 3.0, 6.0],
    "vmap_axis_size": [3.0, 3.0],
}


def main() -> None:
    """Run every case under the cap; print one JSON line per case."""
    resource.setrlimit(resource.RLIMIT_DATA, (CAP, resource.getrlimit(resource.RLIMIT_DATA)[1]))
    for name, thunk in _cases().items():
        try:
            result = {"value": thunk()}
        except MemoryError as error:
            result = {"memory": str(error)[:300]}
        except Exception as error:  # noqa: BLE001 - reported to the parent, which judges it
            result = {"error": f"{type(error).__name__}: {error}"}
        print(json.dumps({"case": name, **result}), flush=True)
