"""Native functions named like C-library symbols.

Lowered code calls libm (sin, pow, expm1, ...) and libc (malloc, free,
memcpy, ...) by name; a function of the user's with one of those names must
not become that symbol, or the call binds to it and recurses until the stack
overflows (native.namespace_symbols). Each name runs in a subprocess, so a
regression fails its test rather than killing the test run; results are
checked against numpy (values) and central finite differences (gradients).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from irad.backends.native import compile as native
from tests.backends.test_backend_native import needs_native
from tests.reference import central_difference, central_jacobian

pytestmark = [pytest.mark.native, needs_native]

NAMES = (
    "sin", "cos", "tan", "exp", "log", "pow", "sqrt", "fabs", "floor", "tanh", "atan2", "expm1", "log1p",
    "malloc", "free", "memcpy", "memset", "abort",
)

# `{name}` is both an entry (grad, and the primal compiled as is: a public
# @{name}) and a helper of `outer` and `total` (inlined, or kept as a private
# function by hessian's second differentiation).
PROGRAM = '''
import numpy as np


def body(x):
    return (np.sin(x) + np.cos(2.0 * x) + np.tan(x) + np.exp(x) * np.log(x + 2.0) + (x + 1.5) ** 2.5
            + np.sqrt(x + 1.0) + np.abs(x - 1.0) + np.floor(x) + np.tanh(x) + np.arctan2(x, 2.0)
            + np.expm1(x) + np.log1p(x))


def {name}(x):
    return body(x) * 2.0


def outer(x):
    return {name}(x) + {name}(0.5 * x)


def total(x):
    return np.sum({name}(x))
'''

RUNNER = r'''
import json, re, sys
import numpy as np
import irad
from irad.backends.native import compile as native
sys.path.insert(0, sys.argv[1])
import program as p

f = getattr(p, sys.argv[2])
x, xs = 0.3, np.linspace(0.1, 0.9, 8)
primal = native.compile_module(irad.lower(f, x))
print(json.dumps({
    "llvm_definitions": re.findall(r'^define [^@]*@"?([^"(]+)"?\(', primal.llvm_ir, re.M),
    "primal": primal.function(sys.argv[2])(x)[0],
    "primal_arrays": native.compile_module(irad.lower(f, xs)).function(sys.argv[2])(xs)[0].tolist(),
    "grad": irad.grad(f, backend="native")(x),
    "grad_helper": irad.grad(p.outer, backend="native")(x),
    "grad_arrays": irad.grad(p.total, backend="native")(np.linspace(0.1, 0.9, 1000)).tolist(),
    "hessian_helper": irad.hessian(p.outer, backend="native")(x),
}))
'''


def test_only_c_identifiers_are_renamed():
    assert native.symbol("sin") == "irad.sin"
    assert native.symbol("sin.grad") == "sin.grad"  # no C symbol has a dot


@pytest.mark.parametrize("name", NAMES)
def test_a_function_named_like_a_c_symbol_runs_natively(name, tmp_path):
    (tmp_path / "program.py").write_text(textwrap.dedent(PROGRAM.format(name=name)))
    run = subprocess.run(
        [sys.executable, "-c", RUNNER, str(tmp_path), name], capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, f"exit status {run.returncode}\n{run.stderr[-3000:]}"
    got = json.loads(run.stdout.splitlines()[-1])

    sys.path.insert(0, str(tmp_path))
    try:
        import program as p
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("program", None)
    assert name not in got["llvm_definitions"] and f"irad.{name}" in got["llvm_definitions"]
    f = getattr(p, name)
    x, xs = 0.3, np.linspace(0.1, 0.9, 8)
    assert got["primal"] == pytest.approx(float(f(x)), rel=1e-13)
    np.testing.assert_allclose(got["primal_arrays"], f(xs), rtol=1e-13)
    assert got["grad"] == pytest.approx(central_difference(f, (x,), 0), rel=1e-7)
    assert got["grad_helper"] == pytest.approx(central_difference(p.outer, (x,), 0), rel=1e-7)
    many = np.linspace(0.1, 0.9, 1000)  # large enough that copies are memcpy calls
    # f is elementwise: the gradient of total is the diagonal of f's Jacobian
    np.testing.assert_allclose(got["grad_arrays"], np.diagonal(central_jacobian(f, (many,), 0)), rtol=1e-7)
    h = 1e-4
    second = (p.outer(x + h) - 2 * p.outer(x) + p.outer(x - h)) / h**2
    assert got["hessian_helper"] == pytest.approx(second, rel=1e-5)
