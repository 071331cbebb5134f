"""The Python API: grad, value_and_grad, vjp, lower, and compiled-code caching."""

import math

import pytest
from xdsl.dialects import func

import irad
from tests import generated_programs as testing
from irad import pipeline
from tests import programs
from tests.reference import central_difference


def test_grad_returns_python_floats_and_tuples():
    g = irad.grad(programs.uses_helper)(0.3, 1.2)
    assert type(g) is float
    gs = irad.grad(programs.uses_helper, argnums=(0, 1))(0.3, 1.2)
    assert isinstance(gs, tuple) and all(type(v) is float for v in gs)
    for i, v in enumerate(gs):
        assert v == pytest.approx(central_difference(programs.uses_helper, (0.3, 1.2), i), rel=1e-6)


def test_value_and_grad():
    value, grad = irad.value_and_grad(programs.chain6)(0.4)
    assert value == pytest.approx(programs.chain6(0.4), rel=1e-14)
    assert grad == pytest.approx(central_difference(programs.chain6, (0.4,), 0), rel=1e-6)


def test_vjp_returns_one_cotangent_per_primal():
    out, pullback = irad.vjp(programs.two_outputs, 2.0, 3.0)
    assert out == (6.0, 5.0)
    assert pullback((1.0, 0.0)) == (3.0, 2.0)
    assert pullback((0.0, 1.0)) == (1.0, 1.0)
    out, pullback = irad.vjp(programs.mixed, 2.0, 3)
    assert pullback(1.0) == (3.0 + programs.SCALE, None)


def test_lower_returns_the_module_the_backend_runs():
    module = irad.grad(programs.uses_helper).lower(0.3, 1.2)
    names = {op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)}
    assert "uses_helper.grad" in names
    assert "uses_helper" not in names  # the bare primal is dead after differentiation
    module.verify()


def test_compiled_once_per_signature(monkeypatch):
    calls = []
    original = pipeline.lower_function

    def counting(f, signature, table=None):
        calls.append(signature)
        return original(f, signature, table)

    monkeypatch.setattr(pipeline, "lower_function", counting)
    g = irad.grad(programs.twice)
    g(1.5), g(2.5)
    assert len(calls) == 1
    irad.grad(programs.twice)(3.5)  # a new grad object shares the cache
    assert len(calls) == 1
    with pytest.raises(irad.IradError, match="not a float"):
        g(2)  # an int is another signature, and cannot be differentiated
    assert len(calls) == 1


def test_int_argument_cannot_be_differentiated():
    with pytest.raises(irad.IradError, match=r"argument 1 \('n'\): it is int"):
        irad.grad(programs.mixed, argnums=1)(1.0, 2)


def test_entry_keywords_and_defaults_are_bound():
    g = irad.grad(programs.helper_sum, argnums=0)
    assert g(1.0) == g(1.0, b=2.0) == g(1.0, 2.0) == pytest.approx(2.0 + math.cos(1.0) + 1.0)
    value, _ = irad.value_and_grad(programs.helper_sum)(1.0, b=3.0)
    assert value == pytest.approx(programs.helper_sum(1.0, 3.0))


def test_deep_call_chain_needs_no_recursion_limit_change(tmp_path):
    depth = 300  # about 12 Python frames per level in the frontend: far past the default limit
    lines = ["import math", "def f0(x):", "    return math.sin(x) + x"]
    for i in range(1, depth):
        lines += [f"def f{i}(x):", f"    return f{i - 1}(x) * 0.999 + 0.001"]
    # its own module name: test_inline's chain is another `deep_chain` in sys.modules
    deep_chain = testing.load("\n".join(lines) + "\n", "deep_chain_of_300", tmp_path)

    x = 0.3
    expected = 0.999 ** (depth - 1) * (math.cos(x) + 1.0)
    assert irad.grad(getattr(deep_chain, f"f{depth - 1}"))(x) == pytest.approx(expected, rel=1e-12)
