"""The ops of MLIR 22's math and arith dialects: a checked-in list, and the same
read from the installed mlir-opt 22 (tests/ir/test_mlir_ops.py keeps the list
honest; tests/passes/test_mlir_ops.py checks every op has a derivative entry).
"""

from __future__ import annotations

import glob
import os
import re
import subprocess

from irad.backends.native.mlir_tools import find_tool

MATH_OPS = frozenset(
    f"math.{name}"
    for name in (
        "absf absi acos acosh asin asinh atan atan2 atanh cbrt ceil clampf copysign cos cosh "
        "ctlz ctpop cttz erf erfc exp exp2 expm1 floor fma fpowi ipowi isfinite isinf isnan "
        "isnormal log log10 log1p log2 powf round roundeven rsqrt sin sincos sinh sqrt tan "
        "tanh trunc"
    ).split()
)

# arith ops that take or give floats (select, constant and bitcast may do either)
ARITH_FLOAT_OPS = frozenset(
    f"arith.{name}"
    for name in (
        "addf subf mulf divf remf negf maximumf minimumf maxnumf minnumf cmpf extf truncf "
        "fptosi fptoui sitofp uitofp bitcast select constant scaling_extf scaling_truncf"
    ).split()
)

ARITH_INTEGER_OPS = frozenset(
    f"arith.{name}"
    for name in (
        "addi subi muli divsi divui ceildivsi ceildivui floordivsi remsi remui andi ori xori "
        "shli shrsi shrui maxsi maxui minsi minui cmpi extsi extui trunci index_cast "
        "index_castui addui_extended mulsi_extended mului_extended"
    ).split()
)

_IDENTIFIER = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.")


def _candidates(paths: list[str], dialect: str) -> set[str]:
    """Strings `<dialect>.<name>` in the binaries: op names, and some that are not."""
    pattern = re.compile(re.escape(dialect.encode()) + rb"\.[a-z][a-z0-9_]*")
    found = set()
    for path in paths:
        with open(path, "rb") as binary:
            data = binary.read()
        for match in pattern.finditer(data):
            if match.start() == 0 or data[match.start() - 1] not in _IDENTIFIER:
                found.add(match.group().decode())
    return found


def ops_in_mlir_opt(dialect: str) -> set[str]:
    """The ops of `dialect` registered in the installed mlir-opt: the names in its
    binary and its MLIR library that it accepts as an op (an op without operands
    fails its verifier; a name that is not an op is an "unregistered operation")."""
    opt = os.path.realpath(find_tool("mlir-opt"))
    paths = [opt, *glob.glob(os.path.join(os.path.dirname(opt), "..", "lib", "libMLIR.so*"))]
    names = sorted(_candidates(paths, dialect))
    text = "\n// -----\n".join(f'"{name}"() : () -> ()' for name in names)
    proc = subprocess.run(
        [opt, "--split-input-file", "-o", os.devnull], input=text, capture_output=True, text=True, timeout=120
    )
    return {name for name in names if f"unregistered operation '{name}'" not in proc.stderr}
