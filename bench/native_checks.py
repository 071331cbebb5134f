"""What the native backend's checked errors cost on the normal path
(irad/backends/native/checks.py, docs/backends/native.md "Checked errors natively").

Run: .venv/bin/python bench/native_checks.py

Three side-by-side pairs, each compiled in this process:

- a call: a scalar gradient's C interface called directly through ctypes,
  against the same function through its entry (_setjmp, pthread keys);
- a recursive function: the gradient of `power` at depth 1,000 with the stack
  check on every call of the cycle, against a build without it;
- allocations: an array function whose temporaries come from irad's tracked
  allocator, against a build calling malloc and free directly (both called
  through their entries, so only the allocator differs).

Times are thread CPU time (so the other processes of a busy machine do not
count), the best of 30 alternating rounds, with the median beside it.
"""

from __future__ import annotations

import ctypes
import math
import statistics
import os
import sys
import time
from pathlib import Path

# The -O2 code throughout: this compares the entry with the `_mlir_ciface_`
# function it calls directly, and only the entries switch tiers (tiers.py).
os.environ["IRAD_NATIVE_TIERED"] = "0"
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

import irad  # noqa: E402
from irad.backends.native import compile as native  # noqa: E402
from irad.backends.native import checks as native_checks
from irad.backends.native.llvm_jit import JitModule, signature  # noqa: E402
from irad.compiled import _CACHE  # noqa: E402


def energy(x, y):
    return x * y + math.sin(x)


def power(x, n):
    return 1.0 if n == 0 else x * power(x, n - 1)


def layer(w):
    return np.sum(np.tanh(np.tanh(w * 2.0) * w + 1.0))


def module_of(f, *args):
    """The compiled native gradient of `f` (irad's cache entry)."""
    before = set(_CACHE)
    irad.grad(f, backend="native")(*args)
    (key,) = set(_CACHE) - before
    return _CACHE[key]


def cpu_ns(fn, n: int) -> float:
    start = time.thread_time_ns()
    for _ in range(n):
        fn()
    return (time.thread_time_ns() - start) / n


def compare(label: str, unit: str, a, b, n: int, scale: float = 1.0) -> None:
    first, second = [], []
    for _ in range(30):
        first.append(cpu_ns(a, n) / scale)
        second.append(cpu_ns(b, n) / scale)
    print(f"| {label} | {min(first):.1f} {unit} (median {statistics.median(first):.1f}) "
          f"| {min(second):.1f} {unit} (median {statistics.median(second):.1f}) |")


def direct(module: native.NativeModule, name: str, restype, *argtypes):
    return ctypes.CFUNCTYPE(restype, *argtypes)(module.jit.address(native_checks.CIFACE_PREFIX + name))


def main() -> None:
    print("| pair | without | with |")
    print("|---|---|---|")

    compiled = module_of(energy, 1.0, 2.0)
    nm = compiled.run.native_module
    c_interface = direct(nm, "energy.grad", ctypes.c_double, ctypes.c_double, ctypes.c_double)
    entry = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double, ctypes.c_double)(
        nm.jit.address(native_checks.ENTRY_PREFIX + "energy.grad"))
    compare("scalar gradient, one call (C interface / entry)", "ns",
            lambda: c_interface(1.0, 2.0), lambda: entry(1.0, 2.0), 20_000)

    compiled = module_of(power, 1.0, 3)
    checked = compiled.run
    cycles = native_checks.call_cycles
    native_checks.call_cycles = lambda module: []
    try:
        unchecked = native.NativeModule(compiled.module).function("power.grad")
    finally:
        native_checks.call_cycles = cycles
    compare("grad of power at depth 1,000, per level (no stack check / stack check)", "ns",
            lambda: unchecked(1.0001, 1000), lambda: checked(1.0001, 1000), 100, scale=1000)

    w = np.linspace(0.1, 1.0, 64)
    module = irad.lower(layer, w)
    descriptor = native._array_descriptor(next(iter(module.ops)).function_type.inputs.data[0])(w)
    calls = []
    for tracked in (False, True):
        ready, passes = native.for_mlir_opt(module, tracked=tracked)
        native_checks.guard(ready)
        llvm_ir = native.lower_to_llvm_ir(str(ready), passes)
        jit = JitModule(llvm_ir, libraries=native.runtime_libraries(),
                        extend=lambda m: native_checks.runtime({"layer": signature(m, "_mlir_ciface_layer")}))
        c_function = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.POINTER(type(descriptor)))(
            jit.address(native_checks.ENTRY_PREFIX + "layer"))
        calls.append((jit, c_function))
    (_, untracked), (_, tracked_call) = calls
    compare("array function with temporaries, one call (malloc / tracked)", "ns",
            lambda: untracked(descriptor), lambda: tracked_call(descriptor), 20_000)


if __name__ == "__main__":
    main()
