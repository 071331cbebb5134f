"""What a ctypes call of JIT-compiled code costs, by how the arrays are passed.

Run: .venv/bin/python bench/ctypes_call.py   (needs llvmlite: the native extra)

A function that returns 0 at once, compiled by llvmlite, called through
ctypes with no argument, with numpy arrays as `py_object`, and with their
addresses as `c_void_p` (from `id`, from `arr.ctypes.data`, from
`__array_interface__`). Medians of 7 rounds in one process, beside a Python
function call, so the ratios hold under load. The native backend's call path
(irad/backends/native/call.py) passes all the arrays of a call in one tuple,
one `py_object`, because ctypes converts each argument it passes.
"""

from __future__ import annotations

import ctypes
import statistics
import timeit

import llvmlite.binding as llvm
import numpy as np


def main() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    ir = "\n".join(
        f"define i32 @f{n}({', '.join(['ptr'] * n)}) {{\n  ret i32 0\n}}" for n in (0, 1, 4)
    )
    machine = llvm.Target.from_default_triple().create_target_machine()
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(ir), machine)
    engine.finalize_object()

    def function(n: int, argtype) -> ctypes._CFuncPtr:
        return ctypes.PYFUNCTYPE(ctypes.c_int32, *[argtype] * n)(engine.get_function_address(f"f{n}"))

    a = b = c = d = np.ones(4)
    names = {
        "a": a, "b": b, "c": c, "d": d, "t": (a, b, c, d), "ia": id(a), "noop": lambda: None,
        "f0": function(0, None), "p1": function(1, ctypes.py_object), "p4": function(4, ctypes.py_object),
        "v1": function(1, ctypes.c_void_p), "v4": function(4, ctypes.c_void_p),
    }
    statements = {
        "a Python function call": "noop()",
        "no argument": "f0()",
        "1 py_object (a tuple of the 4 arrays)": "p1(t)",
        "4 py_object": "p4(a, b, c, d)",
        "1 c_void_p from an int": "v1(ia)",
        "4 c_void_p from id()": "v4(id(a), id(b), id(c), id(d))",
        "4 c_void_p from arr.ctypes.data": "v4(a.ctypes.data, b.ctypes.data, c.ctypes.data, d.ctypes.data)",
        "4 c_void_p from __array_interface__": "v4(*(x.__array_interface__['data'][0] for x in t))",
    }
    times: dict[str, list[float]] = {k: [] for k in statements}
    for _ in range(7):
        for label, statement in statements.items():
            best = min(timeit.repeat(statement, globals=names, number=20000, repeat=3)) / 20000
            times[label].append(best)
    print("| call | ns |\n|---|---|")
    for label, runs in times.items():
        print(f"| {label} | {statistics.median(runs) * 1e9:.0f} |")


if __name__ == "__main__":
    main()
