"""Large matrix products split between the caller and a helper thread.

irad's BLAS runs on one thread (irad/backends/native/lapack.py): OpenBLAS's own
threads wait for each other, and on a machine other processes keep busy a
product waited for a descheduled thread, 8-38x slower. A product of at least
`min_flops()` multiply-adds instead calls `irad_split_dgemm` (or `sgemm`),
with cblas_dgemm's arguments, in a process-wide module compiled once
(native/split.ll): it computes C in CHUNKS chunks (rows of C, or columns if
C has more columns than rows), each one single-threaded BLAS call. The
calling thread posts the job to a helper thread, which sleeps on a condition
variable, and runs chunks itself; when none is left it takes the job back if
the helper has not started it, and otherwise waits for the helper's chunk,
which is running. A busy machine thus costs no more than one thread does; a
quiet one runs the product on two cores.

* Results do not depend on scheduling: the chunks are decided by the shape
  alone, and each is the same BLAS call whoever runs it, so a gradient is the
  same bits from call to call. A chunk may round differently from the whole
  product (another OpenBLAS kernel for a smaller block): by up to 2.3e-15 of
  the largest element in the MLP's products (docs/backends/native.md).
* One job at a time: a thread that finds the helper busy with another
  thread's product runs its chunks itself.
* The helper is kept off the CPU the caller runs on (its affinity is the
  caller's minus that CPU, set again when the caller moves): woken with no
  CPU idle, Linux put it on the caller's CPU, where it preempted the caller
  and the two chunks ran one after the other (docs/benchmarks.md).
  `set_keep_off(False)` lets it run anywhere (benchmarks compare the two).
* The helper is started by the process's first split product and lives as
  long as the process (the module and its state are never freed). A child
  forked through os.fork (multiprocessing's "fork") gets fresh state and its
  own helper; forked otherwise, it runs every product on the calling thread.

The same helper runs the rows of large loop nests (native/split_loops.py,
@irad_split_rows in native/split.ll), one job at a time with the products.

irad.config's `native_split_products` turns splitting off; it is off too
when BLAS runs on more than one thread (`native_blas_threads`) and when the
process may use only one core. `native_split_min_flops` sets the threshold
(2**22 multiply-adds by default: split, smaller products lost in wall time
to a wake-up, a mutex and a second call, docs/benchmarks.md; those of
2**20-2**21, the MLP's at batch 256 and 1024, took 1.0-1.2x the wall time
and 1.3-1.4x the CPU time of one call, and the MLP at batch 256 1.1-1.25x;
the narrow ones still go in blocks, narrow()). Both are read when a module
is compiled; the choice is in its IR, so the object cache keeps the two
apart.
"""

from __future__ import annotations

import ctypes
import os
import platform
import string
import threading
from importlib import resources
from typing import NamedTuple

from irad.backends.native import lapack
from irad.base import config

CHUNKS = 2
# Narrow products: C with fewer than NARROW columns (and op(B) not transposed)
# of more than SMALL multiply-adds is computed in blocks of rows of at most
# SMALL, one BLAS call each (native/split.ll, told so by the entry compiled
# code calls: narrow() is the rule's one place): OpenBLAS multiplies up to 10**6
# multiply-adds with its small-matrix kernels (SkylakeX, which it picks on
# AVX-512 CPUs), which neither pack the operands nor zero C first. On the
# MLP's h @ w2 (4096x10x128) and hT @ dlogits (128x10x4096) the blocks took
# 1.5-3x less CPU time than one call (docs/benchmarks.md).
NARROW = 16
SMALL = 10**6
# the rows of split loop nests (run, task, rows): native/split.ll, passes/split_loops.py
from irad.passes.split_loops import MIN_ROWS, ROWS  # noqa: E402

HELPER_NAME = "irad-split"  # the helper thread's name (native/split.ll)
ALIGN = 16  # chunk bounds are multiples of it (native/split.ll)
# Cycles (of the time-stamp counter, about 2.6 per ns on the machine measured)
# the helper watches for the next job before it sleeps, and the caller
# watches for the helper's last chunk before it sleeps. None: under load,
# spinning cost CPU time without a gain in wall time (docs/benchmarks.md).
HELPER_SPIN = 0
CALLER_SPIN = 0
# the instruction a spin waits with (LLVM's intrinsic), by architecture
_PAUSE = {"x86_64": "llvm.x86.sse2.pause()", "aarch64": "llvm.aarch64.hint(i32 1)"}
PREFIX = "irad_split_"
_PER_TYPE = "; ---- products, one copy per element type"
_TYPES = {"d": "double", "s": "float"}


def enabled() -> bool:
    """Whether products are split: on unless switched off, with BLAS on one
    thread and more than one core for this process."""
    return config.read("native_split_products") and lapack.threads() == 1 and cores() > 1


def cores() -> int:
    """The cores this process may run on."""
    affinity = getattr(os, "sched_getaffinity", None)  # Linux
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1


def min_flops() -> int:
    return config.read("native_split_min_flops")


def splits(m: int, n: int, k: int) -> bool:
    """Whether a product C (m x n) = A (m x k) B (k x n) is split."""
    return max(m, n) >= CHUNKS * ALIGN and m * n * k >= min_flops() and enabled()


def narrow(m: int, n: int, k: int, b_transposed: bool) -> bool:
    """Whether a product not split goes through the module all the same, as
    one chunk on the calling thread, to be computed in blocks (with BLAS on
    one thread: OpenBLAS's own threads divide a whole product)."""
    return n < NARROW and not b_transposed and m * n * k > SMALL and lapack.threads() == 1


def symbol(letter: str, library: lapack.Library, blocked: bool = False, narrow: bool = False) -> str:
    """The name compiled code calls a split ?gemm by (`letter` d or s), with
    `narrow` one whose chunks go in blocks, or with `blocked` the ?gemm that
    runs one chunk on the caller in blocks, bound in this process to the
    helper's module. Which products are narrow is narrow()'s to say: the
    module computes blocks for those it is told are."""
    import llvmlite.binding as llvm

    if blocked:
        name = f"irad_blocked_{letter}gemm"
    else:
        name = f"{PREFIX}narrow_{letter}gemm" if narrow else f"{PREFIX}{letter}gemm"
    llvm.add_symbol(name, _module(library).address(name))
    return name


def rows_symbol(library: lapack.Library) -> str:
    """The name compiled code calls to run an outlined loop nest's rows on
    the caller and the helper (native/split_loops.py), bound in this process
    to the helper's module."""
    import llvmlite.binding as llvm

    llvm.add_symbol(ROWS, _module(library).address(ROWS))
    return ROWS


def _ir(library: lapack.Library) -> str:
    text = resources.files(__package__).joinpath("split.ll").read_text()
    common, per_type = text.split(_PER_TYPE)
    pause = _PAUSE.get(platform.machine())  # native code runs where it is compiled
    pause = f"call void @{pause}" if pause else ""
    parts = [string.Template(common).substitute(HELPER_SPIN=HELPER_SPIN, CALLER_SPIN=CALLER_SPIN, PAUSE=pause,
                                                SMALL=SMALL, CHUNKS=CHUNKS, ALIGN=ALIGN)]
    wide = library.int_bits == 64  # BLAS's integers to and from the i64 of @irad_bound
    for letter, t in _TYPES.items():
        parts.append(string.Template(_PER_TYPE + per_type).substitute(
            L=letter, T=t, INT=f"i{library.int_bits}", CHUNKS=CHUNKS, ALIGN=ALIGN, SMALL=SMALL,
            TO_I64="bitcast" if wide else "sext", FROM_I64="bitcast" if wide else "trunc",
            GEMM=library.symbol(f"cblas_{letter}gemm"),
        ))
    return "\n".join(parts)


def _module(library: lapack.Library):
    """The process-wide module, compiled (or loaded from the object cache)
    once and kept for the life of the process: the helper runs its code."""
    with _building:  # one module, one helper, even if threads compile at once
        if library not in _built:
            from irad.backends.native.llvm_jit import JitModule

            module = JitModule(_ir(library), libraries=[library.path], where="irad's split products (native/split.ll)")
            after_fork = ctypes.CFUNCTYPE(None)(module.address("irad_split_after_fork"))
            os.register_at_fork(after_in_child=after_fork)
            _built[library] = (module, after_fork)
            _set_keep_off(module, True)  # narrow products in blocks: @irad_blocks starts at 1
        return _built[library][0]


def set_blocks(on: bool) -> None:
    """Compute narrow products in blocks (the default) or in one call per
    chunk, from now on (benchmarks compare the two in one process)."""
    for module, _ in _built.values():
        _set_blocks(module, on)


def _set_blocks(module, on: bool) -> None:
    ctypes.CFUNCTYPE(None, ctypes.c_int32)(module.address("irad_split_blocks"))(int(on))


def set_keep_off(on: bool) -> None:
    """Keep the helper off the caller's CPU (the default) or not, from now on
    (benchmarks compare the two in one process)."""
    for module, _ in _built.values():
        _set_keep_off(module, on)


def _set_keep_off(module, on: bool) -> None:
    ctypes.CFUNCTYPE(None, ctypes.c_int32)(module.address("irad_split_keep_off"))(int(on))


_built: dict = {}  # never emptied
_building = threading.Lock()


class Counts(NamedTuple):
    """What the split products of this process did so far."""

    helper_chunks: int  # chunks the helper thread ran
    caller_chunks: int  # chunks the calling threads ran
    taken_back: int  # products the caller finished before the helper attached
    busy: int  # products run whole on the caller: the helper had another's
    moves: int  # times the helper was moved off a caller's CPU


def counts() -> Counts:
    """The counters (zeros if no module split a product yet)."""
    if not _built:
        return Counts(0, 0, 0, 0, 0)
    module, _ = next(iter(_built.values()))
    out = (ctypes.c_int64 * len(Counts._fields))()
    ctypes.CFUNCTYPE(None, ctypes.c_void_p)(module.address("irad_split_counts"))(out)
    return Counts(*out)

assert CHUNKS * ALIGN == MIN_ROWS, "passes/split_loops.py outlines nests of at least CHUNKS * ALIGN rows"
