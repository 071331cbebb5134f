"""Progress of compiles on the `irad` logger (irad/base/progress.py), and
`wait_optimised` on every compiled transformation.

- With the switch `log_compile`, a compile logs each stage with its time, in
  order (python: lowering, differentiation, optimisation; native: then the
  tools and LLVM, and the background -O2 compile once loaded); without it,
  nothing below WARNING.
- A compile past SLOW_SECONDS warns once, naming the function and the stage.
- grad, value_and_grad, jacfwd, jacrev, hessian, vmap and vjp's pullback have
  `wait_optimised()`: True once calls run the final code, and the values
  are the same before and after (checked against closed forms).
"""

import logging
import time

import numpy as np
import pytest

import irad
from irad import compiled, config, pipeline
from irad.backends.native import tiers
from irad.base import progress
from tests.reference import NATIVE_MISSING

IRAD = "irad"


def loss(x):
    return np.sum(np.sin(x) ** 2)


def loss_gradient(x):
    return 2.0 * np.sin(x) * np.cos(x)


def loss_hessian(x):
    return np.diag(2.0 * np.cos(2.0 * x))


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    monkeypatch.setattr(compiled, "_CACHE", {})


def _stages(caplog) -> list[str]:
    return [r.irad_stage for r in caplog.records if r.name == IRAD and hasattr(r, "irad_stage")]


def test_stages_are_logged_in_order_with_the_switch(caplog):
    caplog.set_level(logging.INFO, logger=IRAD)
    with config.overriding(log_compile=True):
        g = irad.grad(loss)(np.linspace(0.0, 1.0, 4))
    assert np.allclose(g, loss_gradient(np.linspace(0.0, 1.0, 4)))
    assert _stages(caplog) == ["lowering", "differentiation", "optimisation"]
    assert all(r.irad_seconds >= 0.0 for r in caplog.records if hasattr(r, "irad_stage"))
    assert any("compiled grad of loss in" in r.getMessage() for r in caplog.records)


def test_nothing_is_logged_without_the_switch(caplog):
    caplog.set_level(logging.DEBUG, logger=IRAD)
    with config.overriding(log_compile=False):
        irad.grad(loss)(np.linspace(0.0, 1.0, 4))
    assert not [r for r in caplog.records if r.name == IRAD]


def test_the_switch_gives_the_logger_a_level_and_a_handler(monkeypatch):
    logger = logging.getLogger(IRAD)
    monkeypatch.setattr(logger, "level", logging.NOTSET)
    monkeypatch.setattr(logger, "handlers", [])
    monkeypatch.setattr(logger, "propagate", False)  # no handler above it, as in a script that configured none
    with config.overriding(log_compile=True):
        assert progress.enabled()
    assert logger.level == logging.INFO and len(logger.handlers) == 1


@pytest.mark.native
@pytest.mark.skipif(NATIVE_MISSING is not None, reason=str(NATIVE_MISSING))
def test_native_stages_and_the_background_compile(caplog, monkeypatch, tmp_path):
    monkeypatch.setenv(config.switch("native_cache").variable, str(tmp_path))  # compiled here: tiered
    tiers.wait_all()  # an earlier test's background compile would log its stage into this one's
    caplog.set_level(logging.INFO, logger=IRAD)
    x = np.linspace(0.0, 1.0, 4)
    with config.overriding(log_compile=True):
        g = irad.grad(loss, backend="native")
        assert np.allclose(g(x), loss_gradient(x))
        optimised = g.wait_optimised(120)
    stages = _stages(caplog)
    first = ["lowering", "differentiation", "optimisation", "preparing for mlir-opt", "mlir-opt and mlir-translate",
             "LLVM parse and link", "LLVM -O0 (tier 0)"]
    assert stages[:len(first)] == first
    assert optimised and stages[len(first):] == ["LLVM -O2 (background)"]


def test_a_slow_compile_warns_once_with_its_stage(caplog, monkeypatch):
    monkeypatch.setattr(progress, "SLOW_SECONDS", 0.05)
    real = pipeline.lower_function

    def slow(*args, **kwargs):
        time.sleep(0.5)
        return real(*args, **kwargs)

    monkeypatch.setattr(pipeline, "lower_function", slow)
    caplog.set_level(logging.WARNING, logger=IRAD)
    with config.overriding(log_compile=False):
        irad.grad(loss)(np.linspace(0.0, 1.0, 4))
    warnings = [r.getMessage() for r in caplog.records if r.name == IRAD and r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "compiling grad of loss has taken" in warnings[0] and "now in lowering" in warnings[0]
    assert config.switch("log_compile").variable in warnings[0]


def _every_kind(backend: str):
    x = np.linspace(0.1, 0.9, 3)
    _, pullback = irad.vjp(loss, x, backend=backend)
    return [
        (irad.grad(loss, backend=backend), (x,), loss_gradient(x)),
        (irad.value_and_grad(loss, backend=backend), (x,), (loss(x), loss_gradient(x))),
        (irad.jacfwd(loss, backend=backend), (x,), loss_gradient(x)),
        (irad.jacrev(loss, backend=backend), (x,), loss_gradient(x)),
        (irad.hessian(loss, backend=backend), (x,), loss_hessian(x)),
        (irad.vmap(loss, backend=backend), (np.stack([x, 2 * x]),), np.array([loss(x), loss(2 * x)])),
        (pullback, (1.0,), (loss_gradient(x),)),
    ]


def _check(backend: str):
    for transformed, args, expected in _every_kind(backend):
        before = transformed(*args)
        assert transformed.wait_optimised(120) is True
        after = transformed(*args)
        for b, a, e in zip(np.atleast_1d(before) if not isinstance(before, tuple) else before,
                           np.atleast_1d(after) if not isinstance(after, tuple) else after,
                           np.atleast_1d(expected) if not isinstance(expected, tuple) else expected):
            assert np.array_equal(b, a)  # the same bits in either tier
            assert np.allclose(a, e, rtol=1e-12, atol=1e-12)


def test_every_transformation_waits_for_its_code_python():
    _check("python")


@pytest.mark.native
@pytest.mark.skipif(NATIVE_MISSING is not None, reason=str(NATIVE_MISSING))
def test_every_transformation_waits_for_its_code_native(monkeypatch, tmp_path):
    monkeypatch.setenv(config.switch("native_cache").variable, str(tmp_path))  # compiled here: tiered
    _check("native")
