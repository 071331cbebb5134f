"""tanh as LLVM IR of irad's own: plain arithmetic that LLVM inlines and vectorises.

glibc's libmvec `tanh` is slow on AMD's Zen 4 (its AVX-512 `_ZGVeN8v_tanh`
took 2.1× the time of this function over a 4096×128 float64 array, AVX2's
`_ZGVdN4v_tanh` 2.7×, numpy's 1.9×; docs/benchmarks.md), and `tanh` was
most of the MLP gradient's time outside its matrix products. For |x| = a:

    u = expm1(2a)    tanh(a) = u / (u + 2)    tanh(x) = copysign(tanh(a), x)

u ≥ 0, so nothing cancels: the quotient's relative error is at most u's
(times 2 / (u + 2) ≤ 1) plus two roundings. expm1(y) = 2^k (1 + p) - 1 with
k = round(y / ln 2), r = y - k ln 2 (ln 2 in two parts, fused
multiply-adds) in [-ln2/2, ln2/2] and p = expm1(r) from its Taylor series
(degree 13 for float64, 8 for float32: the first omitted term is below
2^-56 resp. 2^-30 of r); 2^k is built in the exponent bits. y is capped
at 44 (float32: 20), beyond which tanh rounds to ±1, so k stays small (no
overflow: inf gives ±1) and NaN takes the cap's path and is then returned
as itself. A subnormal or zero x gives x (signs of zero included): p = r
exactly, and 2x / 2 is exact.

Measured against mpmath (bench/vector_math.py): at most 2.36 ulp in float64
and 1.96 in float32 (libmvec documents 4). Every operation is one IEEE
operation per element (the fused multiply-adds are `llvm.fma`, never
contracted or reassociated: no fast-math flags), so an element's bits are
the same at any vector width, in a remainder loop and unvectorised (tier 0):
the determinism vector_math.py keeps for libmvec's functions by calling one
vector function for every width holds here by construction. Written for
irad from the formulas above, not taken from any library.
"""

from __future__ import annotations

import math
import struct

# c_type -> (LLVM's suffix, integer type, mantissa bits, exponent bias, cap on 2|x|, Taylor degree)
_FORMATS = {"double": ("f64", "i64", 52, 1023, 44.0, 13), "float": ("f32", "i32", 23, 127, 20.0, 8)}

# ln 2 in two parts per type: ln 2 rounded to the type, and the rest (ln 2
# minus that, from mpmath at 200 bits) rounded to the type
_LN2 = {"double": (0.6931471805599453, 2.3190468138462996e-17), "float": (0.6931471824645996, -1.9046542121259336e-09)}


def _rounded(value: float, c_type: str) -> float:
    """`value` rounded to `c_type` (a float32 value is exact as a double)."""
    return struct.unpack("<f", struct.pack("<f", value))[0] if c_type == "float" else value


def _literal(value: float, c_type: str) -> str:
    """An LLVM constant: a float's value is written as the double it equals."""
    return "0x%016X" % struct.unpack("<Q", struct.pack("<d", _rounded(value, c_type)))[0]


def definition(name: str, c_type: str) -> str:
    """`define internal <c_type> @<name>(<c_type> %x)`: tanh(x), always inlined.
    (It calls LLVM's intrinsics undeclared: the parser declares them, and
    declaring one the module declares too would be an error.)"""
    suffix, int_type, mantissa, bias, cap, degree = _FORMATS[c_type]
    magic = 1.5 * 2.0**mantissa  # adding it rounds to an integer, kept in the low mantissa bits
    ln2_high, ln2_low = _LN2[c_type]

    def k(value: float) -> str:
        return _literal(value, c_type)

    fma = f"call {c_type} @llvm.fma.{suffix}"
    horner, previous = [], k(1 / math.factorial(degree))
    for n in range(degree - 1, 1, -1):  # q = 1/2! + r (1/3! + r (... 1/degree!))
        horner.append(f"  %q{n} = {fma}({c_type} %r, {c_type} {previous}, {c_type} {k(1 / math.factorial(n))})")
        previous = f"%q{n}"
    return "\n".join([
        f"define internal {c_type} @{name}({c_type} %x) alwaysinline nounwind willreturn memory(none) {{",
        f"  %a = call {c_type} @llvm.fabs.{suffix}({c_type} %x)",
        f"  %y0 = fadd {c_type} %a, %a",
        f"  %below = fcmp olt {c_type} %y0, {k(cap)}",
        f"  %y = select i1 %below, {c_type} %y0, {c_type} {k(cap)}",  # NaN and large |x| -> the cap
        f"  %s = {fma}({c_type} %y, {c_type} {k(1 / ln2_high)}, {c_type} {k(magic)})",
        f"  %kf = fsub {c_type} %s, {k(magic)}",
        f"  %nk = fneg {c_type} %kf",
        f"  %r1 = {fma}({c_type} %nk, {c_type} {k(ln2_high)}, {c_type} %y)",
        f"  %r = {fma}({c_type} %nk, {c_type} {k(ln2_low)}, {c_type} %r1)",
        *horner,
        f"  %rr = fmul {c_type} %r, %r",
        f"  %p = {fma}({c_type} %rr, {c_type} %q2, {c_type} %r)",  # expm1(r)
        f"  %bits = bitcast {c_type} %s to {int_type}",  # its low bits: the integer k
        f"  %biased = add {int_type} %bits, {bias}",
        f"  %scale.bits = shl {int_type} %biased, {mantissa}",
        f"  %scale = bitcast {int_type} %scale.bits to {c_type}",  # 2^k
        f"  %scale.m1 = fsub {c_type} %scale, {k(1.0)}",
        f"  %u = {fma}({c_type} %scale, {c_type} %p, {c_type} %scale.m1)",  # expm1(y)
        f"  %d = fadd {c_type} %u, {k(2.0)}",
        f"  %t = fdiv {c_type} %u, %d",
        f"  %signed = call {c_type} @llvm.copysign.{suffix}({c_type} %t, {c_type} %x)",
        f"  %nan = fcmp uno {c_type} %x, %x",
        f"  %result = select i1 %nan, {c_type} %x, {c_type} %signed",
        f"  ret {c_type} %result",
        "}",
    ])

