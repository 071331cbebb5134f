"""Tiered compilation of native code (irad/backends/native/tiers.py).

- The first call runs tier 0 (-O0); the background -O2 compile is held back
  by a gate here, so the test knows which tier ran. Calls switch to -O2
  once it is loaded, and the gradients of both tiers are the same bits, on
  several workloads (arrays with exp/log/tanh, a loop, scalars), and agree
  with central finite differences in float64.
- Tier 0's runtime is compiled while the tools run, from the C interface
  predicted from the function types: the prediction is MLIR's on every
  kind of signature, and a wrong one only costs the time.
- Vector math gives an element the same bits wherever it sits in an array.
- The -O2 child and the next compile's tools start after the first call.
- `native_tiered` off compiles -O2 first; a bad IRAD_NATIVE_TIERED is a clear error.
- A module with a recursion is not tiered: how deep it may go does not
  depend on the tier (tier 0's frames are larger).
- A failing background compile warns once and tier 0 keeps running.
- A cache hit (the -O2 code the child stored) runs neither mlir-opt nor
  mlir-translate, in this process and in another one.
- An interpreter that exits, or forks, while -O2 compiles neither hangs nor
  crashes; with the cache on, the child finishes the entry for the next
  process.
"""

import ctypes
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import irad
from irad import compiled, config
from irad.backends.native import compile as native
from irad.backends.native import object_cache
from irad.backends.native import tiers, warm_tools
from irad.base.errors import BackendError, IradWarning
from tests.reference import NATIVE_MISSING, central_difference

pytestmark = [
    pytest.mark.native,
    pytest.mark.skipif(NATIVE_MISSING is not None, reason=str(NATIVE_MISSING)),
]
CACHE = config.switch("native_cache").variable
TIERED = config.switch("native_tiered").variable
BUILD = os.path.join(os.path.dirname(tiers.__file__), "llvm_build.py")


@pytest.fixture(autouse=True)
def fresh(monkeypatch, tmp_path):
    """Each test compiles afresh, into a cache of its own, tiered."""
    monkeypatch.setattr(compiled, "_CACHE", {})
    monkeypatch.setenv(CACHE, str(tmp_path / "cache"))
    monkeypatch.delenv(TIERED, raising=False)


@pytest.fixture
def gate(tmp_path, monkeypatch):
    """The background compile waits until the returned file exists."""
    opened = tmp_path / "gate"
    command = [
        sys.executable, "-c",
        f"import os, runpy, sys, time\nwhile not os.path.exists({str(opened)!r}): time.sleep(0.01)\n"
        f"sys.argv = [{BUILD!r}, sys.argv[1]]\nrunpy.run_path({BUILD!r}, run_name='__main__')",
    ]
    monkeypatch.setattr(tiers, "child_command", lambda: command)
    return opened


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def lstm(wx, wh, b, xs):
    h = np.zeros((xs.shape[1], wh.shape[0]))
    c = np.zeros((xs.shape[1], wh.shape[0]))
    n = wh.shape[0]
    for t in range(xs.shape[0]):
        gates = xs[t] @ wx + h @ wh + b
        c = sigmoid(gates[:, n:2 * n]) * c + sigmoid(gates[:, 0:n]) * np.tanh(gates[:, 3 * n:4 * n])
        h = sigmoid(gates[:, 2 * n:3 * n]) * np.tanh(c)
    return np.sum(h**2)


def softmax_xent(w, x, labels):
    logits = np.tanh(x @ w)
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    return -np.mean(np.sum(labels * (shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))), axis=1))


def scalar(x, y):
    s = 0.0
    for i in range(5):
        s = s + np.tanh(x * i - y) * np.exp(-x * x) + np.log(1.0 + y * y + i)
    return s


rng = np.random.default_rng(7)
WORKLOADS = {
    "lstm": (lstm, (0.5 * rng.normal(size=(3, 8)), 0.5 * rng.normal(size=(2, 8)), 0.1 * rng.normal(size=8),
                    rng.normal(size=(3, 5, 3))), (0, 1, 2)),
    "softmax": (softmax_xent, (0.3 * rng.normal(size=(4, 3)), rng.normal(size=(7, 4)),
                               np.eye(3)[rng.integers(0, 3, size=7)]), (0,)),
    "scalar": (scalar, (0.3, -0.7), (0, 1)),
}


def native_module(g) -> native.NativeModule:
    (variants,) = g._by_signature.values()
    return variants[0].run.native_module


@pytest.mark.parametrize("name", WORKLOADS)
def test_calls_switch_to_o2_with_the_same_bits(name, gate):
    f, args, argnums = WORKLOADS[name]
    g = irad.grad(f, argnums, backend="native")
    first = g(*args)
    jit = native_module(g).jit
    assert jit.tiered and not jit.optimised and not g.wait_optimised(timeout=0)
    assert jit.extended_ahead  # the runtime's code was made while the tools ran
    entry = f"{native.native_checks.ENTRY_PREFIX}{native.symbol(next(iter(native_module(g).functions)))}"
    slot = ctypes.c_void_p.from_address(jit._engine.get_global_value_address(entry + tiers.SLOT_SUFFIX))
    tier0 = slot.value
    gate.touch()
    assert g.wait_optimised(timeout=300)
    assert jit.optimised and slot.value != tier0  # calls go to the -O2 code now
    second = g(*args)
    first, second = (x if isinstance(x, tuple) else (x,) for x in (first, second))
    for i, a, b in zip(argnums, first, second):
        assert np.array_equal(a, b), f"{name}: the tiers differ in argument {i}"
        np.testing.assert_allclose(b, central_difference(f, args, i), rtol=1e-6, atol=1e-8)


C_INTERFACES = """
func.func @none() attributes {llvm.emit_c_interface} { func.return }
func.func @scalars(%a: f64, %b: f32, %c: i1, %d: i64, %e: index, %f: i8) -> f32 attributes {llvm.emit_c_interface} {
  func.return %b : f32
}
func.func @flag(%a: i32) -> i1 attributes {llvm.emit_c_interface} {
  %t = arith.constant true
  func.return %t : i1
}
func.func @two(%a: f64, %m: memref<3xf64>) -> (f64, i64) attributes {llvm.emit_c_interface} {
  %i = arith.constant 1 : i64
  func.return %a, %i : f64, i64
}
func.func @buffer(%m: memref<2x3xf64>, %a: f64) -> memref<2x3xf64> attributes {llvm.emit_c_interface} {
  func.return %m : memref<2x3xf64>
}
func.func @scalar_memref(%m: memref<f64>) -> (memref<f64>, f64) attributes {llvm.emit_c_interface} {
  %z = arith.constant 0.0 : f64
  func.return %m, %z : memref<f64>, f64
}
"""


def test_the_predicted_c_interface_is_mlirs():
    """`c_interface` gives the LLVM types MLIR gives each `_mlir_ciface_`
    wrapper (scalars of each width, no result, one, several, memrefs)."""
    from xdsl.context import Context
    from xdsl.dialects import arith, builtin, func
    from xdsl.dialects import memref as memref_dialect
    from xdsl.parser import Parser

    from irad.backends.native.llvm_jit import _llvm, signature

    context = Context()
    for dialect in (builtin.Builtin, func.Func, arith.Arith, memref_dialect.MemRef):
        context.load_dialect(dialect)
    module = Parser(context, C_INTERFACES).parse_module()
    llvm = _llvm().parse_assembly(native.lower_to_llvm_ir(C_INTERFACES))
    for fn in module.ops:
        name = fn.sym_name.data
        assert native.c_interface(fn.function_type) == signature(llvm, f"_mlir_ciface_{name}"), name


def test_a_wrong_prediction_links_the_runtime_as_text(monkeypatch):
    """Runtime texts made ahead that are not those of the LLVM IR are not
    used: tier 0 compiles the runtime with the module, with the same result."""
    f, args, argnums = WORKLOADS["softmax"]
    right = native.NativeModule._runtime_ahead
    monkeypatch.setattr(native.NativeModule, "_runtime_ahead",
                        lambda self: [right(self)[0], right(self)[1].replace("irad_entry_", "irad_entry_x")])
    g = irad.grad(f, argnums, backend="native")
    (got,) = g(*args)
    jit = native_module(g).jit
    assert jit.tiered and not jit.extended_ahead
    np.testing.assert_allclose(got, central_difference(f, args, 0), rtol=1e-6, atol=1e-8)
    assert g.wait_optimised(timeout=300)
    assert np.array_equal(g(*args)[0], got)


def exp_tanh_log(x):
    return np.exp(x) + np.tanh(x) * np.log(2.0 + x * x)


def test_an_element_gets_the_same_bits_wherever_it_sits():
    """Vectorised loop bodies, their remainders and scalar code compute exp,
    tanh and log by one vector function: rolling the input rolls the output
    exactly, for lengths that are not a multiple of the vector width."""
    x = np.random.default_rng(3).normal(size=11) * 3
    module = native.compile_module(irad.lower(exp_tanh_log, x))
    (name,) = module.functions
    run = module.function(name)
    assert module.wait_optimised(timeout=300)
    (y,) = run(x)
    for shift in (1, 2, 3, 5):
        (rolled,) = run(np.roll(x, shift))
        assert np.array_equal(rolled, np.roll(y, shift)), shift
    np.testing.assert_allclose(y, exp_tanh_log(x), rtol=1e-13, atol=1e-15)


def test_background_processes_start_after_the_first_call(monkeypatch):
    """A compile starts neither its -O2 child nor the next compile's tools
    before its first call has returned (tiers.Deferred); waiting for the -O2
    code starts them, as does the first call through the API."""
    monkeypatch.setattr(warm_tools, "_waiting", None)  # (an earlier compile's pair: the test's own is looked for)
    x = np.linspace(0.1, 0.9, 5)
    module = native.compile_module(irad.lower(exp_tanh_log, x))
    assert module.jit.tiered and module.jit.upgrade is None and warm_tools._waiting is None
    (name,) = module.functions
    module.function(name)(x)  # called directly, not through irad/compiled.py: nothing started
    assert module.jit.upgrade is None
    assert module.wait_optimised(timeout=300) and module.jit.upgrade is not None and warm_tools._waiting is not None
    f, args, argnums = WORKLOADS["scalar"]
    g = irad.grad(f, argnums, backend="native")
    for got, i in zip(g(*args), argnums):
        assert got == pytest.approx(central_difference(f, args, i), rel=1e-7)
    jit = native_module(g).jit
    assert jit.tiered and g.wait_optimised(timeout=300) and jit.upgrade is not None and jit.optimised


def test_tiering_can_be_turned_off(monkeypatch, switches):
    switches(native_tiered=False)
    f, args, argnums = WORKLOADS["softmax"]
    g = irad.grad(f, argnums, backend="native")
    g(*args)
    jit = native_module(g).jit
    assert not jit.tiered and jit.upgrade is None and jit.optimised and g.wait_optimised(timeout=0)
    monkeypatch.setenv(TIERED, "sometimes")
    config.reset("native_tiered")  # the variable decides again
    monkeypatch.setattr(compiled, "_CACHE", {})  # not a switch of the cache key: compiled afresh
    with pytest.raises(BackendError, match="IRAD_NATIVE_TIERED must be 0 or 1"):
        irad.grad(f, argnums, backend="native")(*args)


def power(x, n):
    return 1.0 if n == 0 else x * power(x, n - 1)


def test_a_recursion_goes_as_deep_on_its_first_call(gate):
    """At tier 0, 20,000 calls of power's gradient overran the 8 MiB stack's
    depth check that -O2 code passes: the first call failed where a later one
    ran. A module with a depth check compiles at -O2 first (the gate would
    hold a background compile back; opened at the end, so no child is left
    waiting for it)."""
    try:
        g = irad.grad(power, backend="native")
        assert g(1.0001, 20_000) == pytest.approx(20_000 * 1.0001**19_999, rel=1e-12)
        jit = native_module(g).jit
        assert not jit.tiered and jit.upgrade is None and jit.optimised
    finally:
        gate.touch()


def test_a_failing_background_compile_warns_once_and_tier_0_runs_on(monkeypatch):
    monkeypatch.setattr(tiers, "child_command", lambda: [sys.executable, "-c", "import sys; sys.exit('no LLVM today')"])
    monkeypatch.setattr(tiers, "_warned", False)
    f, args, argnums = WORKLOADS["softmax"]
    g = irad.grad(f, argnums, backend="native")
    with pytest.warns(IradWarning, match="background -O2 compile failed .*no LLVM today"):
        g(*args)
        assert not g.wait_optimised(timeout=120)
    jit = native_module(g).jit
    assert not jit.optimised and "no LLVM today" in jit.upgrade.error
    (dw,) = g(*args)
    np.testing.assert_allclose(dw, central_difference(f, args, 0), rtol=1e-6, atol=1e-8)
    h = irad.grad(scalar, (0, 1), backend="native")
    h(0.3, -0.7)  # a second failure: no second warning (pytest's filter turns warnings into errors)
    assert not h.wait_optimised(timeout=120)


def test_a_cache_hit_runs_no_mlir_tool(monkeypatch):
    f, args, argnums = WORKLOADS["lstm"]
    g = irad.grad(f, argnums, backend="native")
    expected = g(*args)
    assert g.wait_optimised(timeout=300)  # the child stored the -O2 code

    def unavailable(*_, **__):
        raise AssertionError("mlir-opt ran on a cache hit")

    monkeypatch.setattr(native, "lower_to_llvm_ir", unavailable)
    monkeypatch.setattr(native, "_run_tools", unavailable)
    monkeypatch.setattr(compiled, "_CACHE", {})
    again = irad.grad(f, argnums, backend="native")
    result = again(*args)
    jit = native_module(again).jit
    assert jit.cached is not None and not jit.tiered
    for a, b in zip(expected, result):
        assert np.array_equal(a, b)


EXITS = """
import numpy as np
import irad
from irad.backends.native import compile as native
from tests.backends.test_native_tiers import WORKLOADS
if HIT:
    native.lower_to_llvm_ir = None  # mlir-opt and mlir-translate must not run
f, args, argnums = WORKLOADS["lstm"]
print(float(np.sum(irad.grad(f, argnums, backend="native")(*args)[0])))
"""


def run_python(code: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True,
                          timeout=300, cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))


def test_exit_during_the_background_compile_leaves_the_entry_for_the_next_process(tmp_path):
    """The process exits right after its first call: no hang, no crash; the
    child finishes and stores -O2 code, which the next process loads without
    running the MLIR tools."""
    env = {**os.environ, CACHE: str(tmp_path / "exits")}
    first = run_python("HIT = False\n" + EXITS, env)
    assert first.returncode == 0, first.stderr
    deadline = time.monotonic() + 300
    while not list((tmp_path / "exits").glob("*.o")) and time.monotonic() < deadline:
        time.sleep(0.1)
    second = run_python("HIT = True\n" + EXITS, env)
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout


FORKS = """
import os, sys
import numpy as np
import irad
from irad.backends.native import tiers
tiers.child_command = lambda: [sys.executable, "-c", "import time; time.sleep(600)"]
from tests.backends.test_native_tiers import WORKLOADS, central_difference
f, args, argnums = WORKLOADS["softmax"]
g = irad.grad(f, argnums, backend="native")
g(*args)
pid = os.fork()
if pid == 0:
    ok = not g.wait_optimised(timeout=60)  # at once: this process keeps tier 0
    (dw,) = g(*args)
    ok = ok and np.allclose(dw, central_difference(f, args, 0), rtol=1e-6, atol=1e-8)
    os._exit(0 if ok else 3)
_, status = os.waitpid(pid, 0)
print("child", os.waitstatus_to_exitcode(status))
"""


def test_a_forked_process_keeps_tier_0(tmp_path):
    env = {**os.environ, CACHE: "0"}  # the sleeping child is killed at exit
    run = run_python(FORKS, env)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["child", "0"]
