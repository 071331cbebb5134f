"""What the numpy backend's saved temporaries buy: each array workload of
`make bench` (bench/native.py) differentiated on the numpy backend with and
without them, side by side in one run, against the numpy primal and autograd
(if installed: `make bench` installs it).

Run: .venv/bin/python bench/numpy_temporaries.py [substring of a row ...]

"before" generates code as before the rewrites (irad/backends/python/temporaries.py:
out= into owned, dead operands, fused sums;
python/arrays.py: tape records that are the arrays themselves) and calls it
through np.errstate, by switching those decisions off while the gradient is
compiled; only the inline conversion of array arguments is in both. Each
time is the middle of three medians of 7 repeats, the three systems
interleaved per row.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent))
import native  # noqa: E402  (sets OPENBLAS_NUM_THREADS=1 before numpy loads)
import numpy as np  # noqa: E402
from timing import median_seconds, optional  # noqa: E402

import irad  # noqa: E402
from irad.backends.python import translate as python_backend  # noqa: E402
from irad.backends.python import arrays as python_arrays  # noqa: E402
from irad.backends.python import temporaries as python_temporaries


@contextmanager
def without_saved_temporaries():
    with mock.patch.object(python_temporaries, "expression", lambda tr, op: None), \
            mock.patch.object(python_temporaries, "absorbed", lambda op: False), \
            mock.patch.object(python_arrays, "_carries_push", lambda buf: False), \
            mock.patch.object(python_arrays, "_carries_pop", lambda buf: False), \
            mock.patch.object(python_backend, "_ERROR_STATE", None):
        yield


def measure(label, make, args, argnums, autograd) -> dict:
    f = make(np)
    with without_saved_temporaries():
        before = irad.grad(make(np), argnums)  # a new function: compiled apart
        expected = before(*args)
    after = irad.grad(f, argnums)
    for a, b in zip(after(*args), expected):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12, err_msg=label)
    systems = {"primal": f, "before": before, "after": after}
    if autograd is not None:
        import autograd.numpy as anp

        systems["autograd"] = autograd.grad(make(anp), argnum=argnums)
    row = {name: [] for name in systems}
    for _ in range(3):  # interleaved, so load on the machine hits all alike
        for name, fn in systems.items():
            row[name].append(median_seconds(fn, *args))
    return {k: sorted(v)[1] for k, v in row.items()}


def main() -> None:
    wanted = sys.argv[1:]
    autograd = optional("autograd")
    print("| workload | numpy primal µs | before µs | after µs | autograd µs | before / primal | "
          "after / primal | before / after | autograd / after |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label, (make, args, argnums) in native.WORKLOADS.items():
        if not any(isinstance(a, np.ndarray) for a in args) or (wanted and not any(w in label for w in wanted)):
            continue
        r = measure(label, make, args, argnums, autograd)
        us = lambda key: f"{r[key] * 1e6:.0f}" if key in r else "–"  # noqa: E731
        ratio = lambda a, b: f"{r[a] / r[b]:.2f}" if a in r and b in r else "–"  # noqa: E731
        print(f"| {label} | {us('primal')} | {us('before')} | {us('after')} | {us('autograd')} | "
              f"{ratio('before', 'primal')} | {ratio('after', 'primal')} | {ratio('before', 'after')} | "
              f"{ratio('autograd', 'after')} |", flush=True)


if __name__ == "__main__":
    main()
