"""What the native backend does to compile faster, and that gradients stay right.

- Shared callees stay functions (irad-inline's keep-shared, the native
  backend's default): an unrolled LSTM's step is compiled once, not once per
  step. Its gradient is checked against central finite differences in float64
  and against the program run as numpy (tests/reference.py).
- Buffers keep their provenance (the runtime's aligned allocation), so LLVM
  vectorises without runtime alias checks.
- mlir-opt reads the generic text the backend writes (irad/ir/text.py) as
  the module str() prints: the same ops, as mlir-opt prints them back, on
  programs with BLAS calls, loops, checks, a recursion and the tape.
- Machine code is cached across processes (object_cache.py): a hit, a miss on
  other IR, damaged entries, the opt-out, an unwritable directory, and an
  array gradient loaded by a second process (checked against central
  differences).
"""

import ctypes
import os
import subprocess
import sys

import numpy as np
import pytest
from xdsl.dialects import func

import irad
from irad import compiled
from irad import config
from irad.backends.native import compile as native
from irad.backends.native import object_cache
from irad.backends.native.llvm_jit import JitModule
from irad.base.errors import BackendError
from irad.frontend import signature_of
from irad.ir.text import generic_text
from irad.pipeline import gradient_module
from tests.backends.test_native_blas import _mlp_args, mlp
from tests.reference import NATIVE_MISSING, central_difference, check_against_numpy, copies

pytestmark = [
    pytest.mark.native,
    pytest.mark.skipif(NATIVE_MISSING is not None, reason=str(NATIVE_MISSING)),
]


@pytest.fixture(autouse=True)
def fresh_cache(monkeypatch):
    """Options are read when a module is compiled: no test reuses code another
    compiled under other options."""
    monkeypatch.setattr(compiled, "_CACHE", {})


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def step(wx, wh, b, h, c, x):
    gates = x @ wx + h @ wh + b
    n = h.shape[1]
    c = sigmoid(gates[:, n:2 * n]) * c + sigmoid(gates[:, 0:n]) * np.tanh(gates[:, 3 * n:4 * n])
    return sigmoid(gates[:, 2 * n:3 * n]) * np.tanh(c), c


def lstm3(wx, wh, b, xs):
    h = np.zeros((xs.shape[1], wh.shape[0]))
    c = np.zeros((xs.shape[1], wh.shape[0]))
    h, c = step(wx, wh, b, h, c, xs[0])
    h, c = step(wx, wh, b, h, c, xs[1])
    h, c = step(wx, wh, b, h, c, xs[2])
    return np.sum(h**2)


def lstm_arguments(batch=2, inputs=3, hidden=2):
    rng = np.random.default_rng(4)
    return (0.5 * rng.normal(size=(inputs, 4 * hidden)), 0.5 * rng.normal(size=(hidden, 4 * hidden)),
            0.1 * rng.normal(size=4 * hidden), rng.normal(size=(3, batch, inputs)))


def kept_calls(module) -> list[str]:
    return sorted(op.callee.root_reference.data for op in module.walk() if isinstance(op, func.CallOp))


def test_shared_callees_stay_functions_only_when_asked():
    args = lstm_arguments()
    signature = signature_of(lstm3, args)
    inlined, entry, *_ = gradient_module(lstm3, signature, (0, 1, 2), False)
    assert kept_calls(inlined) == []  # the Python backend's policy: everything inlined
    keep_shared = config.default("native_keep_shared")
    kept, entry, *_ = gradient_module(lstm3, signature, (0, 1, 2), False, keep_shared=keep_shared)
    calls = kept_calls(kept)
    # step's generated functions stay (two activities: the first step starts from
    # zeros); sigmoid, small, is inlined into them
    assert calls and all(name.startswith("step.") for name in calls)
    assert not any(name.startswith("sigmoid") for name in calls)


def test_native_gradient_with_a_shared_step_matches_finite_differences():
    args = lstm_arguments()
    check_against_numpy(lstm3, args, backend="native")
    native = irad.grad(lstm3, (0, 1, 2), backend="native")
    assert any(name.startswith("step.") for name in kept_calls(native.lower(*args)))
    python = irad.grad(lstm3, (0, 1, 2))(*copies(args))
    for a, b in zip(native(*copies(args)), python):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_keep_shared_is_read_from_the_environment_and_the_config(monkeypatch, switches):
    monkeypatch.setenv("IRAD_NATIVE_KEEP_SHARED", "0")
    assert irad.Native().keep_shared == 0
    monkeypatch.setenv("IRAD_NATIVE_KEEP_SHARED", "7")
    assert irad.Native().keep_shared == 7
    assert irad.Native(keep_shared=3).keep_shared == 3  # the object's option wins
    assert irad.Python().keep_shared == 0  # the Python backend inlines everything
    switches(native_keep_shared=3)  # irad.config wins over the environment
    assert irad.Native().keep_shared == 3
    config.reset("native_keep_shared")
    monkeypatch.setenv("IRAD_NATIVE_KEEP_SHARED", "many")
    with pytest.raises(BackendError, match="IRAD_NATIVE_KEEP_SHARED must be a whole number, 0 or more, not 'many'"):
        irad.grad(lstm3, (0, 1, 2), backend="native")(*lstm_arguments())


def test_buffers_keep_their_provenance_so_loops_need_no_alias_checks():
    """Buffers come from the runtime's aligned allocation, whose pointer LLVM can
    trace to malloc: the vectorised loops of an MLP's gradient, which read and
    write only such buffers, get no runtime alias checks (with MLIR's own
    alignment through inttoptr they got five), and the gradient is right."""
    rng = np.random.default_rng(2)
    args = (0.2 * rng.normal(size=(4, 16)), np.zeros(16), 0.2 * rng.normal(size=(16, 3)), np.zeros(3),
            rng.normal(size=(32, 4)), np.eye(3)[rng.integers(0, 3, size=32)])
    check_against_numpy(mlp, args, backend="native")
    module = irad.grad(mlp, (0, 1, 2, 3), backend="native").lower(*args)
    optimised = native.compile_module(module).jit.optimised_ir()
    assert "vector.body" in optimised  # it did vectorise
    assert "vector.memcheck" not in optimised


# ---- the cache of machine code across processes (irad/backends/native/object_cache.py) --------
CACHE = config.switch("native_cache").variable
SQUARE = "define double @square(double %x) {\n  %y = fmul double %x, %x\n  ret double %y\n}\n"
CUBE = "define double @square(double %x) {\n  %y = fmul double %x, %x\n  %z = fmul double %y, %x\n  ret double %z\n}\n"


def run_square(jit: JitModule, x: float) -> float:
    return ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)(jit.address("square"))(x)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE, str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_the_same_ir_loads_the_cached_code_and_other_ir_misses(cache):
    first = JitModule(SQUARE)
    assert first.cached is None and run_square(first, 3.0) == 9.0
    (entry,) = cache.glob("*.o")
    second = JitModule(SQUARE)
    assert second.cached is not None and run_square(second, -1.5) == 2.25
    assert "fmul double" in second.optimised_ir()  # optimised here, on request
    changed = JitModule(CUBE)  # other IR: another key
    assert changed.cached is None and run_square(changed, 2.0) == 8.0
    assert len(list(cache.glob("*.o"))) == 2


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty"])
def test_a_damaged_entry_is_a_miss_and_is_written_again(cache, damage):
    JitModule(SQUARE)
    (entry,) = cache.glob("*.o")
    data = entry.read_bytes()
    entry.write_bytes({"truncate": data[:-7], "garbage": data[:-7] + b"\xff" * 7, "empty": b""}[damage])
    again = JitModule(SQUARE)
    assert again.cached is None and run_square(again, 4.0) == 16.0
    assert entry.read_bytes() == data  # compiled and stored again
    assert JitModule(SQUARE).cached is not None


def test_the_cache_can_be_turned_off(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE, "0")
    assert object_cache.directory(config.read("native_cache")) is None
    assert JitModule(SQUARE).cached is None
    assert JitModule(SQUARE).cached is None
    monkeypatch.delenv(CACHE)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert object_cache.directory(config.read("native_cache")) == tmp_path / "irad" / "native"


def test_an_unwritable_cache_only_costs_the_compile(tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    monkeypatch.setenv(CACHE, str(blocked / "cache"))
    jit = JitModule(SQUARE)
    assert jit.cached is None and run_square(jit, 5.0) == 25.0


ANOTHER_PROCESS = """
import sys
import numpy as np
from irad.backends.native import compile as native
from irad.ir.dialect import make_context
from xdsl.parser import Parser
module = Parser(make_context(), open(sys.argv[1]).read()).parse_module()
compiled = native.compile_module(module)
x, w = np.linspace(-1.0, 1.0, 12).reshape(3, 4), np.full((4, 2), 0.1)
(dw,) = compiled.function("layer.grad")(x, w)
assert compiled.wait_optimised()  # the -O2 code is in the cache when this returns
print("hit" if compiled.jit.cached is not None else "miss", repr(dw.tolist()))
"""


def layer(x, w):
    return np.sum(np.tanh(x @ w))


def test_another_process_loads_an_array_gradient_from_the_cache(cache, tmp_path):
    """The trampoline names numpy's ndarray type by a symbol, not by its
    address in this process, so another process's IR is the same and hits;
    its gradient matches central differences."""
    x, w = np.linspace(-1.0, 1.0, 12).reshape(3, 4), np.full((4, 2), 0.1)
    module_file = tmp_path / "layer.mlir"
    module_file.write_text(str(irad.grad(layer, (1,)).lower(x, w)))
    env = {**os.environ, CACHE: str(cache)}
    runs = [
        subprocess.run([sys.executable, "-c", ANOTHER_PROCESS, str(module_file)], env=env,
                       capture_output=True, text=True, check=True).stdout.split(" ", 1)
        for _ in range(2)
    ]
    assert [status for status, _ in runs] == ["miss", "hit"]
    expected = central_difference(layer, (x, w), 1)
    for _, dw in runs:
        np.testing.assert_allclose(np.array(eval(dw)), expected, rtol=1e-6, atol=1e-8)


def logistic(w, b, x, y):
    return np.mean(np.log(1.0 + np.exp(-y * (x @ w + b))))


def checked_loop(x, n):
    s = 0.0
    i = 0
    while i < n:
        s = s + np.sin(x * i) / (1 + i % 3)
        i = i + 1
    return s * (n // 2)


def power(x, n):
    if n == 0:
        return 1.0
    return x * power(x, n - 1)


def array_loop(w, xs):
    h = np.zeros(w.shape[1])
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ w + h)
    return np.sum(h * h)


def shapes_and_selects(x, y):
    z = np.concatenate([x, y[::-1]]).reshape(2, -1).T
    m = np.where(z > 0.2, z * z, -z)
    return np.max(m) + np.sum(np.cumsum(m, axis=0)) + np.sum(np.exp(z - np.max(z, axis=1, keepdims=True)))


def integers(x, n):
    k = n * 3 % 7 - n // 2
    return x ** 2 * k + (x if k > 1 and n != 4 else -x) + float(abs(k))


class _Written(Exception):
    """Raised by the spy once the module's text is made: nothing more is compiled."""


GENERIC_PROGRAMS = {
    "logistic": (logistic, (0,), lambda rng: (rng.normal(size=4), 0.1, rng.normal(size=(6, 4)), np.sign(rng.normal(size=6)))),
    "lstm": (lstm3, (0, 1), lambda rng: lstm_arguments()),
    "blas": (mlp, (0, 2), lambda rng: _mlp_args(rng, np.float64, samples=600, features=16, width=32)),
    "checks": (checked_loop, (0,), lambda rng: (0.3, 5)),
    "recursion": (power, (0,), lambda rng: (1.1, 4)),
    "tape": (array_loop, (0,), lambda rng: (rng.normal(size=(3, 2)), rng.normal(size=(4, 3)))),
    "shapes": (shapes_and_selects, (0, 1), lambda rng: (rng.normal(size=4), rng.normal(size=4))),
    "integers": (integers, (0,), lambda rng: (0.7, 5)),
}


@pytest.mark.parametrize("name", GENERIC_PROGRAMS)
def test_mlir_opt_reads_the_generic_text_as_the_module(name, monkeypatch):
    """The text given to the tools is the generic form (but for ops that
    hide a region): mlir-opt, printing back what it read, prints the same
    for it and for str()'s text."""
    f, argnums, arguments = GENERIC_PROGRAMS[name]
    written = []

    def spy(op):
        written.append(op)
        raise _Written

    monkeypatch.setattr(native, "generic_text", spy)
    with pytest.raises(_Written):
        irad.grad(f, argnums, backend="native")(*arguments(np.random.default_rng(1)))
    (module,) = written
    opt = native.require_tool("mlir-opt")

    def read_back(text: str) -> str:
        return subprocess.run([opt, "--mlir-print-op-generic", "-"], input=text, capture_output=True, text=True,
                              check=True).stdout

    assert read_back(generic_text(module)) == read_back(str(module))
