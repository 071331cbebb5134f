"""Transformations pickle by what they are (irad/api.py `TransformationFunction`,
`Pullback`) and run in other processes: a spawn-based process pool and a
dask.distributed LocalCluster of two worker processes (docs/scaling-out.md).

Values are checked against closed forms and central differences. The pool
and the cluster are started once for the module: each costs about a second.
"""

import concurrent.futures
import multiprocessing
import pickle
import runpy
from pathlib import Path

import numpy as np
import pytest

import irad
from irad.api import TransformationFunction
from tests.api import pickled_programs as P
from tests.reference import BACKENDS, central_difference, central_jacobian

ROOT = Path(__file__).resolve().parents[2]
RNG = np.random.default_rng(7)
X = RNG.normal(size=(8, 3))
Y = RNG.normal(size=8)
W = np.array([0.3, -0.2, 0.5])
SHARDS = [(W, X[:4], Y[:4]), (W, X[4:], Y[4:])]


def round_trip(obj):
    return pickle.loads(pickle.dumps(obj))


def sin_sum(x):
    return np.sum(np.sin(x) * x)


def pair(x, y):
    return np.sum(x * y) + x[0] ** 2, x[1]


MAKERS = {
    "grad": lambda: irad.grad(P.least_squares),
    "value_and_grad": lambda: irad.value_and_grad(P.least_squares, (0, 1)),
    "grad has_aux checkpoint": lambda: irad.grad(pair, has_aux=True, checkpoint=True),
    "jacfwd": lambda: irad.jacfwd(np.sin),
    "jacrev": lambda: irad.jacrev(sin_sum),
    "hessian": lambda: irad.hessian(sin_sum),
    "vmap": lambda: irad.vmap(P.least_squares, in_axes=(None, 0, 0)),
}
CALLS = {  # the arguments, and what the call must return against an independent reference
    "grad": ((W, X, Y), lambda r: np.testing.assert_allclose(r, P.least_squares_gradient(W, X, Y), rtol=1e-12)),
    "value_and_grad": ((W, X, Y), lambda r: (
        np.testing.assert_allclose(r[0], P.least_squares(W, X, Y), rtol=1e-12),
        np.testing.assert_allclose(r[1][0], P.least_squares_gradient(W, X, Y), rtol=1e-12),
        np.testing.assert_allclose(r[1][1], central_difference(P.least_squares, (W, X, Y), 1), rtol=1e-6))),
    "grad has_aux checkpoint": ((W, X[0]), lambda r: (
        np.testing.assert_allclose(r[0], X[0] + np.array([2 * W[0], 0, 0]), rtol=1e-12),
        np.testing.assert_equal(r[1], W[1]))),
    "jacfwd": ((W,), lambda r: np.testing.assert_allclose(r, np.diag(np.cos(W)), rtol=1e-12)),
    "jacrev": ((W,), lambda r: np.testing.assert_allclose(r, np.cos(W) * W + np.sin(W), rtol=1e-12)),
    "hessian": ((W,), lambda r: np.testing.assert_allclose(
        r, central_jacobian(lambda x: np.cos(x) * x + np.sin(x), (W,), 0), rtol=1e-6)),
    "vmap": ((W, X[:, None, :], Y[:, None]), lambda r: np.testing.assert_allclose(
        r, [P.least_squares(W, X[i:i + 1], Y[i:i + 1]) for i in range(len(Y))], rtol=1e-12)),
}


def what_it_is(t) -> tuple:
    f = what_it_is(t.f) if isinstance(t.f, TransformationFunction) else t.f  # hessian: jacfwd(grad(f))
    return (t.kind, f, t.argnums, t.has_aux, t.backend, getattr(t, "checkpoint", None),
            getattr(t, "in_axes", None), getattr(t, "out_axes", None), getattr(t, "axis_size", None))


@pytest.mark.parametrize("name", MAKERS)
def test_round_trip_before_and_after_the_first_call(name):
    args, check = CALLS[name]
    t = MAKERS[name]()
    before = round_trip(t)
    check(t(*args))
    t(*args)  # twice: a gradient of plain arguments gets its call entry (a class of its own)
    after = round_trip(t)
    for u in (before, after):
        assert what_it_is(u) == what_it_is(t)
        check(u(*args))


def test_pickled_size_is_what_it_is():
    g = irad.grad(P.least_squares)
    size = len(pickle.dumps(g))
    g(W, X, Y)
    assert len(pickle.dumps(g)) == size < 400  # compiled code stays behind


def test_backend_object_and_options_travel():
    g = irad.grad(P.least_squares, backend=irad.Native(keep_shared=2), checkpoint=True)
    u = round_trip(g)  # not called: no native compile needed
    assert u.backend == irad.Native(keep_shared=2) and u.checkpoint
    assert round_trip(irad.jacrev(sin_sum, backend="python")).backend == irad.Python()


@pytest.mark.parametrize("backend", BACKENDS)
def test_pullback_pickles_as_its_vjp_request(backend):
    x = W.copy()
    out, pullback = irad.vjp(sin_sum, x, backend=backend)
    x[:] = 0.0  # the pullback, and its pickle, hold the primals of the vjp
    received = round_trip(pullback)
    expected = np.cos(W) * W + np.sin(W)
    np.testing.assert_allclose(received(2.0)[0], 2 * expected, rtol=1e-12)
    np.testing.assert_allclose(pullback(2.0)[0], 2 * expected, rtol=1e-12)


def test_pullback_of_a_function_reading_global_arrays_refuses():
    _, pullback = irad.vjp(P.weighted, W)
    with pytest.raises(irad.IradError, match="reads global arrays"):
        pickle.dumps(pullback)
    g = round_trip(irad.grad(P.weighted))  # a transformation reads the receiver's globals at each call
    np.testing.assert_allclose(g(W), 2 * P.COEFFICIENTS * W, rtol=1e-12)


def test_a_rule_that_cannot_travel_with_a_function_sent_by_value_is_an_error():
    cloudpickle = pytest.importorskip("cloudpickle")

    def snap(x):  # nested: cloudpickle sends it by value
        return x * x

    @irad.rrule(snap)
    def _(x):
        def pullback(dy):
            return 3.0 * dy
        return snap(x), pullback

    g = irad.grad(lambda x: snap(x) + x)
    assert g(2.0) == 4.0  # the rule's 3, not AD's 2x = 4, plus 1
    payload = cloudpickle.dumps(g)
    irad.rules.remove(snap)  # the receiver has no such rule, as a worker would not
    with pytest.raises(irad.IradError, match=r"snap has a rule in the process that sent it.*\n  hint: define snap"):
        cloudpickle.loads(payload)


def test_a_rule_registered_beside_a_function_sent_by_value_must_be_in_the_receiver():
    cloudpickle = pytest.importorskip("cloudpickle")

    @irad.rrule(P.square)  # registered here, for a module's function
    def _(x):
        def pullback(dy):
            return 3.0 * dy
        return P.square(x), pullback

    g = irad.grad(lambda x: P.square(x) + x)  # a lambda: sent by value, with this file's source
    assert g(2.0) == 4.0
    payload = cloudpickle.dumps(g)
    irad.rules.remove(P.square)
    with pytest.raises(irad.IradError, match=r"the rule for tests.api.pickled_programs.square registered there"):
        cloudpickle.loads(payload)


# ---- other processes ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def spawn_pool():
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=context) as pool:
        yield pool


@pytest.mark.parametrize("backend", BACKENDS)
def test_spawn_pool_maps_a_gradient_over_shards(spawn_pool, backend):
    g = irad.grad(P.least_squares, backend=backend)
    total = sum(spawn_pool.map(g, *zip(*SHARDS)))
    np.testing.assert_allclose(total, P.least_squares_gradient(W, X, Y), rtol=1e-12)


def test_spawn_pool_runs_every_kind_of_transformation(spawn_pool):
    names = ["value_and_grad", "jacrev", "hessian"]
    futures = [spawn_pool.submit(MAKERS[name](), *CALLS[name][0]) for name in names]
    for name, future in zip(names, futures):
        CALLS[name][1](future.result())


def test_rules_travel_with_their_module(spawn_pool):
    g = irad.grad(P.clipped_square)
    # the straight-through rule: 2 clip01(x), where AD of the body would give 0 beyond 1
    assert list(spawn_pool.map(g, [0.25, 2.0, -1.0])) == [0.5, 2.0, 0.0]
    out, pullback = irad.vjp(P.clipped_square, 3.0)
    assert spawn_pool.submit(pullback, 1.5).result() == (3.0,)


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster:
        with distributed.Client(cluster) as client:
            yield client


@pytest.mark.parametrize("backend", BACKENDS)
def test_dask_maps_a_gradient_and_tree_reduces(client, backend):
    g = irad.grad(P.least_squares, backend=backend)
    shards = [(W, X[i:i + 2], Y[i:i + 2]) for i in range(0, 8, 2)]
    futures = client.map(g, *zip(*shards))
    total = client.submit(sum, futures).result()  # a flat sum; the example reduces as a tree
    np.testing.assert_allclose(total, P.least_squares_gradient(W, X, Y), rtol=1e-12)
    assert sorted(client.gather(client.map(irad.grad(P.clipped_square, backend=backend), [2.0, 0.5]))) == [1.0, 2.0]


def test_dask_ships_a_lambda_by_value_with_its_source_and_compiles_it_once(client):
    g = irad.grad(lambda x: np.sum(np.sin(x) * x))  # cloudpickle sends it by value: its source goes along
    for _ in range(2):
        got = client.gather(client.map(g, [W, 2 * W], pure=False))
        np.testing.assert_allclose(got[1], np.cos(2 * W) * 2 * W + np.sin(2 * W), rtol=1e-12)

    # each arrival is the first one's function object, so each worker compiled it once
    line = g.f.__code__.co_firstlineno
    compiles = client.run(lambda: sum(len(keys) for f, keys in irad.compiled._CACHE.items()
                                      if getattr(f, "__code__", None) is not None and f.__code__.co_firstlineno == line))
    assert set(compiles.values()) <= {0, 1} and sum(compiles.values()) >= 1, compiles


def test_dask_example_trains(client, capsys):
    # run on the module's cluster (the script starts its own); its functions are of no
    # importable module, so they travel by value, as a script's do
    example = runpy.run_path(str(ROOT / "examples" / "dask_data_parallel.py"), run_name="dask_data_parallel")
    X_, y_ = example["data"](256, 4)
    _, losses = example["train"](client, X_, y_, shards=4, epochs=4, hidden=8)
    printed = [line for line in capsys.readouterr().out.splitlines() if line.startswith("epoch")]
    assert len(printed) == 4 and losses[-1] < 0.6 * losses[0], printed


def test_ray_maps_a_gradient():
    """Ray is not in the test extra (a large wheel, ~10 s to start): this runs where it is installed."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        @ray.remote
        def call(fn, *args):
            return fn(*args)

        g = ray.put(irad.grad(P.least_squares))
        total = sum(ray.get([call.remote(g, *shard) for shard in SHARDS]))
        np.testing.assert_allclose(total, P.least_squares_gradient(W, X, Y), rtol=1e-12)
        by_value = irad.grad(lambda x: np.sum(np.sin(x) * x))
        np.testing.assert_allclose(ray.get(call.remote(by_value, W)), np.cos(W) * W + np.sin(W), rtol=1e-12)
    finally:
        ray.shutdown()
