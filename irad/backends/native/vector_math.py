"""exp, log and tanh over arrays in vector registers, from a vector math library.

mlir-translate writes `math.exp` as a call of the intrinsic `llvm.exp.f64`.
LLVM's loop vectoriser turns a loop of such calls into `llvm.exp.v4f64`,
which the code generator splits back into four calls of libm's scalar `exp`:
the loop runs at libm's scalar speed. LLVM calls a vector function instead
when the scalar callee names one in its `vector-function-abi-variant`
attribute (`_ZGV_LLVM_N4v_<scalar>(<vector>)`). clang and opt add these from
`-vector-library=LIBMVEC`, but the LLVM 22 inside llvmlite has no such option
(llvmlite's `set_option` ignores it), so this module adds them: it renames
each call of an intrinsic of FUNCTIONS to `irad.vm.<scalar>`, declared
`memory(none)` with its vector variants, and keeps those alive
(`@llvm.compiler.used`) until the vectoriser has run. Only calls inside loops
are renamed (`in_loops`): the others cannot be vectorised with a vector
function, and stay libm's.

One vector function per scalar one computes every element: the one of the
widest instruction set the target runs and its vector width allows (LLVM's
`prefer-256-bit` or `prefer-128-bit` tuning caps the width the vectoriser
uses: with `IRAD_NATIVE_TUNING=+prefer-256-bit` an AVX-512 host takes AVX2's
`_ZGVdN4v_exp`). libmvec's instruction sets are different implementations
(AVX2's and AVX-512's `log` or `tanh` differ in the last bits), so a module
calls one of them only. The vectoriser may still pick a narrower width (a
vectorised remainder, a loop that mixes f32 and f64, a CPU whose LLVM tuning
prefers narrower vectors than its registers): every width from two lanes up
to the function's own is declared as a variant, the narrower ones
(`irad.vm.<scalar>.n<lanes>`) computing their lanes with that same function,
so such loops are vectorised too, with the same bits.
`irad.vm.<scalar>` itself computes its argument as one lane of the same
vector function: loop remainders and loops LLVM does not vectorise get the
bits a vectorised loop gets, so an element's result depends neither on its
position nor on whether LLVM vectorised the loop (at -O0 it does not: tiered
compilation, tiers.py, relies on this). Every name is bound to an address
taken from the library chosen (`add_symbol`), not found by a search of the
process.

The library is glibc's libmvec (documented ≤ 4 ulp), which every glibc
installation has, under the x86-64 vector function ABI's names
(`_ZGVdN4v_exp`: AVX2, 4 lanes). docs/backends/native.md ("Vector math") gives the
error of each function measured against libm and a correctly rounded
reference, and why libmvec and not SLEEF or MLIR's polynomial approximations
(bench/vector_math.py measures all of them). irad.config's
`native_vector_math` = 0 keeps libm's scalar functions everywhere (results
then equal libm's to the bit).

Only x86-64 is mapped; elsewhere, or without the library, the module is left
as it is and loops call libm.

`tanh` is the exception: libmvec's is slow on AMD's Zen 4 (2.1× the time of
irad's own, docs/benchmarks.md), so where the target has fused multiply-adds,
loops call irad's own tanh instead (native/tanh_ir.py: LLVM IR, inlined and
vectorised with the loop, within 2.5 ulp; an element's bits do not depend on
the vector width by construction). Without fused multiply-adds, loops call
libmvec's tanh as they call its exp and log.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import platform
import re
from collections.abc import Callable

from irad.backends.native import tanh_ir
from irad.base import config

PREFIX = "irad.vm."

# library -> the name ctypes.util.find_library knows it by (bench/vector_math.py
# adds SLEEF's GNU-ABI build, whose functions have the same names, to compare)
LIBRARIES = {"libmvec": "mvec"}

# function -> its libm names, f64 then f32
FUNCTIONS = {"exp": ("exp", "expf"), "log": ("log", "logf"), "tanh": ("tanh", "tanhf")}

# The vector ABI's instruction sets (glibc's libmvec has all four), widest
# first: (letter, CPU feature, f64 lanes); f32 has twice the lanes.
ISAS = (("e", "avx512f", 8), ("d", "avx2", 4), ("c", "avx", 4), ("b", "sse4.1", 2))
# LLVM tuning features that cap the vectoriser's width, in bits
WIDTH_CAPS = (("prefer-128-bit", 128), ("prefer-256-bit", 256))

_TYPES = (("f64", "double", 1), ("f32", "float", 2))


def cache_key() -> str:
    """What the machine code depends on here, for the object cache's key."""
    return f"{choice()}, irad's tanh with FMA, scalar calls and narrower widths as lanes of one width"


def choice() -> str | None:
    """The library irad.config's `native_vector_math` chooses, or None for libm."""
    value = config.read("native_vector_math")
    return None if value == "0" else value


def own_tanh(features: str) -> bool:
    """Whether loops compute tanh with irad's own (native/tanh_ir.py) on this target:
    vector math on, and fused multiply-adds in hardware (without, each
    `llvm.fma` would be a call of libm's fma)."""
    return choice() is not None and target_features(features).get("fma", False)


@functools.cache
def _open(library: str) -> ctypes.CDLL | None:
    if platform.machine() not in ("x86_64", "AMD64"):
        return None
    path = ctypes.util.find_library(LIBRARIES[library])
    if path is None:
        return None
    try:
        return ctypes.CDLL(path)
    except OSError:
        return None


def available(library: str | None = None) -> bool:
    """Whether loops would call `library` (by default the one chosen) here."""
    library = library or choice()
    return library is not None and _open(library) is not None


def _address(lib: ctypes.CDLL, name: str) -> int | None:
    try:
        return ctypes.cast(getattr(lib, name), ctypes.c_void_p).value
    except AttributeError:
        return None


def vectorisable(llvm_ir: str, features: str, add_symbol: Callable[[str, int], None]) -> str:
    """`llvm_ir` with the intrinsics of FUNCTIONS called through `irad.vm.*`
    names that carry their vector variants (tanh where `own_tanh`: a name
    defined by irad's own code, which needs none); unchanged if vector math
    is off or there is no such call. `features`: the target machine's, as LLVM gets them
    ("+avx2,-avx512f,...,+prefer-256-bit"); `add_symbol(name, address)`
    binds a name for the JIT."""
    library = choice()
    if library is None or "@llvm.compiler.used" in llvm_ir or f"@{PREFIX}" in llvm_ir:  # (mlir-translate writes neither)
        return llvm_ir
    opened, own = _open(library) is not None, own_tanh(features)
    declarations, kept = [], []
    for function, scalars in FUNCTIONS.items():
        for (suffix, c_type, widen), scalar in zip(_TYPES, scalars):
            intrinsic, alias = f"@llvm.{function}.{suffix}(", PREFIX + scalar
            if intrinsic not in llvm_ir:
                continue
            if function == "tanh" and own:  # plain arithmetic, inlined into the loop and vectorised with it
                llvm_ir = in_loops(llvm_ir, intrinsic, f"@{alias}(")
                if f"@{alias}(" in llvm_ir:
                    declarations.append(tanh_ir.definition(alias, c_type))
                continue
            found = _variant(library, features, scalar, widen) if opened else None
            if found is None:
                continue
            name, lanes, address = found
            _bind(add_symbol, name, address)
            llvm_ir = in_loops(llvm_ir, intrinsic, f"@{alias}(")
            if f"@{alias}(" not in llvm_ir:
                continue
            declarations += _declarations(alias, name, lanes, c_type)
            kept += [f"ptr @{name}", *(f"ptr @{alias}.n{n}" for n in _narrower(lanes))]
    if not declarations:
        return llvm_ir
    if kept:
        # Nothing calls a vector function before the vectoriser does: without
        # this, global DCE would drop its declaration first.
        declarations.append(
            f"@llvm.compiler.used = appending global [{len(kept)} x ptr] [{', '.join(kept)}], section \"llvm.metadata\""
        )
    return llvm_ir + "\n" + "\n".join(declarations) + "\n"


def _narrower(lanes: int) -> list[int]:
    """The widths below `lanes` the vectoriser may also pick: halves, down to 2."""
    return [lanes >> k for k in range(1, lanes.bit_length() - 1)]


def _declarations(alias: str, name: str, lanes: int, c_type: str) -> list[str]:
    """`@alias`, one lane of the vector function `@name` (`lanes` wide), with
    `@name` as its variant at that width and, at each narrower one, a
    function that computes its lanes with `@name` too: scalar code, loop
    remainders and narrower loops get the bits a full-width loop gets."""
    vector_type = f"<{lanes} x {c_type}>"

    def through_name(n: int) -> str:  # n lanes in, n out, computed as lanes of @name
        small = f"<{n} x {c_type}>"
        widen = ", ".join(f"i32 {i % n}" for i in range(lanes))  # the n lanes repeated (no poison lanes)
        narrow = ", ".join(f"i32 {i}" for i in range(n))
        return (f"  %w = shufflevector {small} %x, {small} poison, <{lanes} x i32> <{widen}>\n"
                f"  %r = call {vector_type} @{name}({vector_type} %w)\n"
                f"  %y = shufflevector {vector_type} %r, {vector_type} poison, <{n} x i32> <{narrow}>\n"
                f"  ret {small} %y\n}}")

    attributes = "noinline nounwind willreturn memory(none)"
    variants = [f"_ZGV_LLVM_N{lanes}v_{alias}({name})", *(f"_ZGV_LLVM_N{n}v_{alias}({alias}.n{n})" for n in _narrower(lanes))]
    return [
        f"define internal {c_type} @{alias}({c_type} %x) {attributes} "
        f'"vector-function-abi-variant"="{",".join(variants)}" {{\n'
        f"  %v = insertelement {vector_type} poison, {c_type} %x, i64 0\n"
        f"  %s = shufflevector {vector_type} %v, {vector_type} poison, <{lanes} x i32> zeroinitializer\n"
        f"  %r = call {vector_type} @{name}({vector_type} %s)\n"
        f"  %y = extractelement {vector_type} %r, i64 0\n"
        f"  ret {c_type} %y\n}}",
        *(f"define internal <{n} x {c_type}> @{alias}.n{n}(<{n} x {c_type}> %x) {attributes} {{\n" + through_name(n)
          for n in _narrower(lanes)),
        f"declare {vector_type} @{name}({vector_type}) nounwind willreturn memory(none)",
    ]


_LABEL = re.compile(r'\n("[^"]+"|[-\w.$]+):')  # a block's label, at the start of a line
_TARGET = re.compile(r'label %("[^"]+"|[-\w.$]+)')


def in_loops(llvm_ir: str, old: str, new: str) -> str:
    """`llvm_ir` with `old` replaced by `new` in the basic blocks that lie on a
    cycle of their function's control flow, as mlir-translate writes them (a
    label at column 0 starts a block; branches name their targets `label
    %N`). Calls outside loops keep libm's function: LLVM cannot vectorise
    them with a vector function (not even once it inlines them into a loop:
    the intrinsic then becomes libm's calls again), so they need not compute
    a lane of one, and they stay bit for bit libm's. (String searches over
    whole functions and blocks, not a loop over lines: this runs on every
    native first call.)"""
    pieces, done = [], 0
    while llvm_ir.find(old, done) >= 0:
        start = llvm_ir.find("\ndefine ", done)
        if start < 0:
            break
        body = llvm_ir.find("\n", start + 1)  # the body: after the define line, up to a line "}"
        end = llvm_ir.find("\n}\n", body)
        end = len(llvm_ir) if end < 0 else end + 1
        pieces += [llvm_ir[done:body], _replace_in_loops(llvm_ir[body:end], old, new)]
        done = end
    return "".join(pieces) + llvm_ir[done:]


def _replace_in_loops(body: str, old: str, new: str) -> str:
    """One function's body, from the newline that ends its define line."""
    if old not in body:
        return body
    parts = _LABEL.split(body)  # [entry block, label, block, label, block, ...]
    names = ["", *parts[1::2]]  # the entry block has no label
    blocks = parts[0::2]
    successors = {name: set(_TARGET.findall(block)) for name, block in zip(names, blocks)}
    for i, (name, block) in enumerate(zip(names, blocks)):
        if old not in block:
            continue
        seen, stack = set(), list(successors[name])
        while stack and name not in seen:  # does the block reach itself?
            b = stack.pop()
            if b not in seen:
                seen.add(b)
                stack.extend(successors.get(b, ()))
        if name in seen:
            parts[2 * i] = block.replace(old, new)
    return parts[0] + "".join(f"\n{label}:{block}" for label, block in zip(parts[1::2], parts[2::2]))


def target_features(features: str) -> dict[str, bool]:
    """LLVM's feature string as a dict: a later +name or -name overrides an
    earlier one, as LLVM reads it."""
    return {item[1:]: item[0] == "+" for item in features.split(",") if len(item) > 1 and item[0] in "+-"}


def _isa(features: str) -> tuple[str, int] | None:
    """The instruction set whose vector functions the target calls (its
    letter and f64 lanes): the widest it runs within the vector width its
    tuning lets the vectoriser use."""
    enabled = target_features(features)
    bits = min([cap for feature, cap in WIDTH_CAPS if enabled.get(feature)], default=512)
    return next(((letter, lanes) for letter, feature, lanes in ISAS if enabled.get(feature) and 64 * lanes <= bits), None)


def _variant(library: str, features: str, scalar: str, widen: int) -> tuple[str, int, int] | None:
    """The vector function of `library` for libm's `scalar` (`widen`: 2 for
    f32) on the target's instruction set (`_isa`): its name for the JIT, its
    lanes and its address; None if the library has none. One vector
    function per scalar one, so an element's bits do not depend on the width
    the vectoriser picks."""
    isa = _isa(features)
    if isa is None:
        return None
    letter, lanes = isa
    vector = f"_ZGV{letter}N{lanes * widen}v_{scalar}"
    address = _address(_open(library), vector)
    return (f"{PREFIX}{library}.{vector}", lanes * widen, address) if address else None


def bind_all(features: str, add_symbol: Callable[[str, int], None]) -> None:
    """Bind every name `vectorisable` could use here: code loaded from the
    cache needs them, and its IR is not made."""
    library = choice()
    if library is None or _open(library) is None:
        return
    for scalars in FUNCTIONS.values():
        for (_, _, widen), scalar in zip(_TYPES, scalars):
            found = _variant(library, features, scalar, widen)
            if found is not None:
                _bind(add_symbol, found[0], found[2])


@functools.cache
def _bind(add_symbol: Callable[[str, int], None], name: str, address: int) -> None:
    add_symbol(name, address)
