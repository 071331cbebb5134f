"""tanh (and exp, expm1, log) over a 4096×128 array, per implementation: time per
element and, for tanh's candidates, accuracy in ulp.

Run: .venv/bin/python bench/vector_tanh.py   (make bench installs mpmath and JAX)

The MLP's hidden layer is a (batch, 128) tanh; at batch 4096 libmvec's tanh
was 17.6% of the native gradient's samples (perf). This measures, in one
process, loops over 4096×128 elements of float64 and float32 that LLVM
compiles for this CPU (llvmlite, -O2, as irad's JIT does):

- libmvec AVX-512: a loop 8 doubles (16 floats) wide calling `_ZGVeN8v_<f>`;
- libmvec AVX2 ×2: the same 8-wide loop calling AVX2's `_ZGVdN4v_<f>` twice
  per step; libmvec AVX2: a loop 4 wide calling it once;
- irad's tanh (irad/backends/native/tanh_ir.py): a scalar loop calling its
  definition, which LLVM inlines and vectorises; "irad native" is
  `np.tanh(x)` compiled by irad itself (what a gradient's loop runs, with its
  call overhead: it writes into a new array);
- tanh from libmvec's expm1: u = _ZGVeN8v_expm1(2|x|), tanh = copysign(u / (u + 2), x),
  |x| capped at 22 (the candidate built on a library's expm1);
- numpy (`out=` a preallocated array) and JAX-jit.

Each is timed in blocks taken in turns (CPU time of the whole process, whose
other threads JAX uses; median of 9 blocks of 5 calls), ns per element. Then, for tanh's candidates, the error
in ulp against mpmath (128 bits) over bench/vector_math.py's sample, and how
many of its special inputs give another result than libm's.
"""

from __future__ import annotations

import ctypes
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import irad  # noqa: E402
from irad.backends.native import llvm_build  # noqa: E402
from irad.backends.native import llvm_jit
from irad.backends.native import compile as native
from irad.backends.native import tanh_ir
from irad.backends.native import vector_math
from timing import optional  # noqa: E402
from vector_math import correctly_rounded_error, same, sample  # noqa: E402

SHAPE = (4096, 128)
TYPES = {np.float64: ("double", "", 8), np.float32: ("float", "f", 16)}  # c type, libm suffix, AVX-512 lanes


def _vector_loop(name: str, callee: str, lanes: int, step: int, c_type: str) -> str:
    """`void name(ptr x, ptr y, i64 n)`: y = callee(x), `step` elements per
    iteration in calls of `lanes` (n a multiple of step)."""
    vector = f"<{lanes} x {c_type}>"
    body = []
    for j in range(step // lanes):
        body += [f"  %o{j} = add i64 %i, {j * lanes}", f"  %px{j} = getelementptr {c_type}, ptr %x, i64 %o{j}",
                 f"  %v{j} = load {vector}, ptr %px{j}, align 8", f"  %r{j} = call {vector} @{callee}({vector} %v{j})",
                 f"  %py{j} = getelementptr {c_type}, ptr %y, i64 %o{j}", f"  store {vector} %r{j}, ptr %py{j}, align 8"]
    return "\n".join([f"define void @{name}(ptr noalias %x, ptr noalias %y, i64 %n) {{", "entry:", "  br label %loop",
                      "loop:", "  %i = phi i64 [0, %entry], [%next, %loop]", *body, f"  %next = add i64 %i, {step}",
                      "  %more = icmp ult i64 %next, %n", "  br i1 %more, label %loop, label %done", "done:",
                      "  ret void", "}"])


def _scalar_loop(name: str, callee: str, c_type: str) -> str:
    return "\n".join([f"define void @{name}(ptr noalias %x, ptr noalias %y, i64 %n) {{", "entry:", "  br label %loop",
                      "loop:", "  %i = phi i64 [0, %entry], [%next, %loop]",
                      f"  %px = getelementptr {c_type}, ptr %x, i64 %i", f"  %v = load {c_type}, ptr %px",
                      f"  %r = call {c_type} @{callee}({c_type} %v)", f"  %py = getelementptr {c_type}, ptr %y, i64 %i",
                      f"  store {c_type} %r, ptr %py", "  %next = add i64 %i, 1", "  %more = icmp ult i64 %next, %n",
                      "  br i1 %more, label %loop, label %done", "done:", "  ret void", "}"])


def _expm1_tanh(name: str, expm1: str, lanes: int, c_type: str) -> str:
    """tanh from a vector expm1: copysign(u / (u + 2), x), u = expm1(2 min(|x|, cap))."""
    vector, mask, suffix = f"<{lanes} x {c_type}>", f"<{lanes} x i1>", f"v{lanes}{'f64' if c_type == 'double' else 'f32'}"
    cap = "22.0" if c_type == "double" else "10.0"
    return "\n".join([
        f"define {vector} @{name}({vector} %x) {{",
        f"  %a = call {vector} @llvm.fabs.{suffix}({vector} %x)",
        f"  %below = fcmp olt {vector} %a, splat ({c_type} {cap})",
        f"  %c = select {mask} %below, {vector} %a, {vector} splat ({c_type} {cap})",
        f"  %y = fadd {vector} %c, %c",
        f"  %u = call {vector} @{expm1}({vector} %y)",
        f"  %d = fadd {vector} %u, splat ({c_type} 2.0)",
        f"  %t = fdiv {vector} %u, %d",
        f"  %s = call {vector} @llvm.copysign.{suffix}({vector} %t, {vector} %x)",
        f"  %nan = fcmp uno {vector} %x, %x",
        f"  %r = select {mask} %nan, {vector} %x, {vector} %s",
        f"  ret {vector} %r", "}"])


class Loops:
    """The loops of one type, compiled for this CPU; name -> fn(x, y)."""

    def __init__(self, dtype) -> None:
        c_type, suffix, lanes = TYPES[dtype]
        llvm = llvm_jit._llvm()
        cpu, features, _ = llvm_jit._host()
        mvec = ctypes.CDLL("libmvec.so.1")
        texts, self.names, declared = [], {}, set()

        def vector_function(symbol: str, n: int) -> str:
            llvm.add_symbol(symbol, ctypes.cast(getattr(mvec, symbol), ctypes.c_void_p).value)
            if symbol not in declared:
                declared.add(symbol)
                texts.append(f"declare <{n} x {c_type}> @{symbol}(<{n} x {c_type}>)")
            return symbol

        for function in ("tanh", "exp", "expm1", "log"):
            wide, narrow = f"_ZGVeN{lanes}v_{function}{suffix}", f"_ZGVdN{lanes // 2}v_{function}{suffix}"
            for label, callee, n, step in (("libmvec AVX-512", wide, lanes, lanes), ("libmvec AVX2 ×2", narrow, lanes // 2, lanes),
                                           ("libmvec AVX2", narrow, lanes // 2, lanes // 2)):
                name = f"loop{len(self.names)}"
                texts.append(_vector_loop(name, vector_function(callee, n), n, step, c_type))
                self.names[function, label] = name
        texts.append(tanh_ir.definition("irad_tanh", c_type))
        texts.append(_scalar_loop("loop_irad", "irad_tanh", c_type))
        self.names["tanh", "irad's tanh"] = "loop_irad"
        texts.append(_expm1_tanh("expm1_tanh", vector_function(f"_ZGVeN{lanes}v_expm1{suffix}", lanes), lanes, c_type))
        texts.append(_vector_loop("loop_expm1_tanh", "expm1_tanh", lanes, lanes, c_type))
        self.names["tanh", "tanh from libmvec's expm1"] = "loop_expm1_tanh"
        machine = llvm_build.target_machine(llvm, cpu, features, 2)
        module = llvm_build.parse(llvm, "\n".join(texts), machine)
        module.verify()
        self._keep = (machine, module, *llvm_build.optimise(llvm, module, machine, 2))
        self.engine = llvm.create_mcjit_compiler(module, machine)
        self.engine.finalize_object()
        kind = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
        self.functions = {key: kind(self.engine.get_function_address(name)) for key, name in self.names.items()}

    def run(self, key, x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
        """key's loop over x (padded with zeros to a multiple of 16 elements)."""
        padded = np.zeros(-(-x.size // 16) * 16, x.dtype)
        padded[:x.size] = x.ravel()
        out = np.empty_like(padded) if y is None else y
        self.functions[key](padded.ctypes.data, out.ctypes.data, padded.size)
        return out[:x.size].reshape(x.shape)


def tanh_array(x):
    return np.tanh(x)


def exp_array(x):
    return np.exp(x)


def log_array(x):
    return np.log(x)


def _irad_native(name: str, x: np.ndarray):
    f = {"tanh": tanh_array, "exp": exp_array, "log": log_array}[name]
    module = native.compile_module(irad.lower(f, x))
    run = module.function(f.__name__)
    run(x)
    module.wait_optimised()  # its -O2 code, not tier 0's
    return lambda: run(x)


def speed(jax, blocks: int = 9) -> list[str]:
    rng = np.random.default_rng(0)
    labels = ["numpy", "JAX-jit", "libmvec AVX-512", "libmvec AVX2 ×2", "libmvec AVX2", "irad's tanh",
              "tanh from libmvec's expm1", "irad native"]
    lines = ["| function | dtype | " + " | ".join(f"{label} ns" for label in labels) + " |", "|---|---|" + "---|" * len(labels)]
    for dtype in TYPES:
        loops = Loops(dtype)
        x = rng.normal(0.0, 2.0, SHAPE).astype(dtype)
        y = np.empty_like(x)
        for function in ("tanh", "exp", "expm1", "log"):
            v = np.abs(x) + dtype(0.1) if function == "log" else x
            calls = {"numpy": lambda f=getattr(np, function): f(v, out=y)}
            if jax is not None:
                jitted, device = jax.jit(getattr(jax.numpy, function)), jax.device_put(v)
                calls["JAX-jit"] = lambda: jitted(device).block_until_ready()
            for (f, label), fn in loops.functions.items():
                if f == function:
                    calls[label] = lambda fn=fn: fn(v.ctypes.data, y.ctypes.data, v.size)
            if function != "expm1":
                calls["irad native"] = _irad_native(function, v)
            times = {label: [] for label in calls}
            for call in calls.values():
                call()
            number = 5
            for _ in range(blocks):
                for label, call in calls.items():
                    start = time.process_time()
                    for _ in range(number):
                        call()
                    times[label].append((time.process_time() - start) / number)
            cells = [function, np.dtype(dtype).name]
            cells += [f"{statistics.median(times[label]) / v.size * 1e9:.2f}" if label in times else "—" for label in labels]
            lines.append("| " + " | ".join(cells) + " |")
    return lines


def accuracy(n: int) -> list[str]:
    rng = np.random.default_rng(1)
    labels = ["irad's tanh", "tanh from libmvec's expm1", "libmvec AVX-512", "libmvec AVX2", "numpy"]
    lines = ["| dtype | " + " | ".join(f"{label} max / median ulp" for label in labels) + " | "
             + " | ".join(f"{label} ≠ libm on specials" for label in labels[:-1]) + " |", "|---|" + "---|" * (2 * len(labels) - 1)]
    for dtype in TYPES:
        loops = Loops(dtype)
        x, n_special = sample("tanh", dtype, n, rng)
        with np.errstate(all="ignore"):
            results = {label: loops.run(("tanh", label), x) for label in labels[:-1]}
            results["numpy"] = np.tanh(x)
        with irad.config.overriding(native_vector_math="0"):
            libm = native.compile_module(irad.lower(tanh_array, x)).function("tanh_array")(x)[0]
        cells = [np.dtype(dtype).name]
        for label in labels:
            err = correctly_rounded_error("tanh", x, results[label])
            cells.append(f"{err.max():.2f} / {np.median(err):.2f}")
        special = slice(len(x) - n_special, None)
        for label in labels[:-1]:
            differ = ~same(results[label][special], libm[special])
            cells.append(f"{differ.sum()} of {n_special}" + (f": x = {x[special][differ].tolist()}" if differ.any() else ""))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def main() -> None:
    if not native.native_tools_available():
        sys.exit(f"bench/vector_tanh.py needs mlir-opt and mlir-translate 22: {native.INSTALL_HINT}")
    features = llvm_jit._host()[2]
    if not (vector_math.available("libmvec") and features.get("avx512f")):
        sys.exit("bench/vector_tanh.py needs glibc's libmvec and an AVX-512 CPU")
    jax = optional("jax")
    if jax is not None:
        jax.config.update("jax_enable_x64", True)
    print(f"{time.strftime('%Y-%m-%d %H:%M')}, {llvm_jit._host()[0]}, load {os.getloadavg()[0]:.1f}, "
          f"ns per element over {SHAPE[0]}×{SHAPE[1]}, CPU time of the process (all threads: JAX computes on its own)\n")
    print("\n".join(speed(jax)))
    print(f"\nload {os.getloadavg()[0]:.1f}\n")
    if optional("mpmath") is not None:
        print("\n".join(accuracy(int(os.environ.get("SAMPLE", "20000")))))


if __name__ == "__main__":
    main()
