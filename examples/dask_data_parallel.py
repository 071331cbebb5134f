"""Data-parallel training of a small model on a dask.distributed LocalCluster.

Each epoch maps one irad gradient over the data's shards (one task a shard,
on the workers that hold it), adds the shards' losses and gradients up in a
tree of pairwise sums, and takes one gradient-descent step in this process.
The gradient object is pickled to the workers by what it is (the function,
its options, its backend) and compiled there once (docs/scaling-out.md).

    python examples/dask_data_parallel.py [--backend native] [--workers 2] [--small]

Needs `pip install dask distributed` (the test extra has them).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import irad


def shard_loss(params, X, y):
    """The summed squared error of a one-hidden-layer tanh network on one shard."""
    W, b, v = params
    prediction = np.tanh(X @ W + b) @ v
    r = prediction - y
    return np.sum(r * r)


def add(a, b):
    """The sum of two (loss, gradient) pairs; the gradient is a tuple of arrays, as params."""
    (loss_a, grad_a), (loss_b, grad_b) = a, b
    return loss_a + loss_b, tuple(x + y for x, y in zip(grad_a, grad_b))


def tree_reduce(client, futures, combine):
    """`combine` over `futures` as a tree of pairwise tasks: depth log2(n), and no
    worker receives more than two results at a time."""
    while len(futures) > 1:
        pairs = [client.submit(combine, a, b) for a, b in zip(futures[0::2], futures[1::2])]
        futures = pairs + futures[2 * len(pairs):]
    return futures[0]


def data(n: int, features: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, features))
    y = np.sin(X @ rng.normal(size=features) / np.sqrt(features))
    return X, y


def train(client, X, y, shards: int, epochs: int, backend: str = "python", hidden: int = 16, rate: float = 0.2):
    rng = np.random.default_rng(1)
    params = (rng.normal(size=(X.shape[1], hidden)) / np.sqrt(X.shape[1]), np.zeros(hidden),
              rng.normal(size=hidden) / np.sqrt(hidden))
    # the shards go to the workers once; each epoch sends only the parameters
    Xs = client.scatter([X[i::shards] for i in range(shards)])
    ys = client.scatter([y[i::shards] for i in range(shards)])
    step = irad.value_and_grad(shard_loss, backend=backend)
    losses = []
    for epoch in range(epochs):
        start = time.perf_counter()
        futures = client.map(step, [params] * shards, Xs, ys, pure=False)
        loss, gradient = tree_reduce(client, futures, add).result()
        loss /= len(y)
        params = tuple(p - rate * g / len(y) for p, g in zip(params, gradient))
        losses.append(loss)
        print(f"epoch {epoch:3d}  {time.perf_counter() - start:6.3f} s  loss {loss:.6f}")
    return params, losses


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", default="python", help="python or native")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--small", action="store_true", help="a few epochs on little data (the tests run this)")
    options = parser.parse_args()
    if options.small:
        options.samples, options.epochs = 512, 5

    from distributed import Client, LocalCluster

    X, y = data(options.samples, 8)
    with LocalCluster(n_workers=options.workers, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        train(client, X, y, shards=2 * options.workers, epochs=options.epochs, backend=options.backend)


if __name__ == "__main__":
    main()
