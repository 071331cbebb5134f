"""Gradient time against problem size for every system: the plot of `make bench`.

Run: .venv/bin/python bench/scaling.py [--out docs/img/bench-scaling.png]

Two of `bench/native.py`'s workloads swept over their size: the two-layer tanh
MLP with softmax cross-entropy (64 features, width 128, 10 classes) over a
batch of 16 to 4096 rows, and the vectorised GMM (d=10, K=25) over 100 to
10,000 points. Each point is `bench/native.py`'s `measure`: medians of 7
repeats of the numpy primal and of the gradient on irad's native and numpy
backends, JAX jit and autograd, side by side in one run (the run also checks
that both irad backends agree). The figure has one panel per workload, log-log,
one line per system; the table printed beside it has the same points.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
# One thread for numpy's BLAS, as in bench/native.py; set before numpy loads it.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from arrays import make_gmm, make_mlp  # noqa: E402
from native import _mlp_arguments, measure, prepare  # noqa: E402
from timing import optional  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SYSTEMS = {  # row key -> legend label
    "python primal": "numpy primal (the function itself)",
    "native grad": "irad native",
    "python grad": "irad numpy backend",
    "jax grad": "JAX jit",
    "autograd grad": "autograd",
}


def _mlp(batch: int):
    return make_mlp, _mlp_arguments(np.random.default_rng(batch), batch, 64, 128, 10), (0, 1, 2, 3)


def _gmm(points: int):
    rng = np.random.default_rng(points)
    args = (rng.normal(size=25), rng.normal(size=(25, 10)), 0.1 * rng.normal(size=(25, 10)), rng.normal(size=(points, 10)))
    return make_gmm, args, (0, 1, 2)


SWEEPS = {  # panel title -> (size label, sizes, workload at a size)
    "MLP 64-128-10, tanh, softmax-xent": ("batch", (16, 64, 256, 1024, 4096), _mlp),
    "GMM d=10 K=25 (vectorised)": ("points N", (100, 300, 1000, 3000, 10000), _gmm),
}


def sweep(autograd, jax) -> dict[str, list[tuple[int, dict]]]:
    results = {}
    for title, (_, sizes, workload) in SWEEPS.items():
        results[title] = [(n, measure(f"{title} at {n}", *workload(n), autograd, jax)) for n in sizes]
    return results


def print_points(results) -> None:
    keys = [k for k in SYSTEMS if any(k in row for points in results.values() for _, row in points)]
    print("| workload | size | " + " | ".join(f"{SYSTEMS[k]} µs" for k in keys) + " |")
    print("|" + "---|" * (len(keys) + 2))
    for title, points in results.items():
        for n, row in points:
            cells = [f"{row[k] * 1e6:.0f}" if k in row else "–" for k in keys]
            print(f"| {title} | {n} | " + " | ".join(cells) + " |")


def plot(results, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(6 * len(results), 4.5), constrained_layout=True)
    for ax, (title, points) in zip(np.atleast_1d(axes), results.items()):
        sizes = [n for n, _ in points]
        for key, label in SYSTEMS.items():
            if all(key in row for _, row in points):
                style = "--" if key == "python primal" else "-"
                ax.loglog(sizes, [row[key] * 1e6 for _, row in points], style, marker="o", label=label)
        ax.set_title(title)
        ax.set_xlabel(SWEEPS[title][0])
        ax.set_ylabel("gradient time, µs (median of 7)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "bench-scaling.png")
    args = parser.parse_args()
    autograd, jax = optional("autograd"), optional("jax")
    prepare(jax)
    results = sweep(autograd, jax)
    print_points(results)
    plot(results, args.out)


if __name__ == "__main__":
    main()
