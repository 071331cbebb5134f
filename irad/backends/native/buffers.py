"""The native runtime's cache of large buffers, one per process.

A gradient over large arrays allocates its temporaries afresh on every call,
several megabytes each. glibc serves such a block with mmap (or trims it off
the top of the heap when it is freed), so every page of every temporary is
faulted in, zeroed by the kernel and given back, call after call: on the
vectorised GMM at N=3000 that was most of the gradient's time. So the runtime
(native/runtime.ll) keeps the large buffers native code frees, up to a
capacity, and hands them out again: `_mlir_memref_to_llvm_alloc` takes the
smallest cached block that fits (and is at most twice the size asked for)
before it calls malloc; `_mlir_memref_to_llvm_free` caches a block while the
cache has room, and frees it otherwise.

The cache is process-wide (buffers allocated on one thread may be freed on
another) and guarded by a mutex; it lives in memory Python allocated once, so
it outlives every compiled module. Buffers handed over to Python (a tape
returned by a vjp, owned by a NativeBuffer) never enter it; they go back to
libc's free. A block in the cache is marked in its header, so freeing it a
second time aborts instead of handing it out twice.

irad.config's `native_buffer_cache_mb` sets the capacity when the process
first compiles native code (0 turns the cache off); `set_capacity` and `release`
change it and empty it later.
"""

from __future__ import annotations

import ctypes
import functools
from dataclasses import dataclass

from irad.base import config
from irad.base.errors import BackendError

# Smaller blocks (header included) go straight to malloc and free: glibc keeps
# them in its bins, without page faults.
MIN_BYTES = 1 << 16

# The state, at `address()` (the symbol `SYMBOL` in native code): a pthread
# mutex, then the first cached block's header, the bytes cached, the capacity,
# and counters of blocks handed out again (hits) and blocks of a cacheable size
# malloc had to provide (misses).
MUTEX_BYTES = 64  # glibc's pthread_mutex_t is 40 bytes on x86-64, 48 on aarch64
FIRST, BYTES, CAPACITY, HITS, MISSES = (MUTEX_BYTES + 8 * i for i in range(5))
STATE_WORDS = (MUTEX_BYTES + 8 * 5) // 8

_libc = ctypes.CDLL(None)
for _name in ("pthread_mutex_init", "pthread_mutex_lock", "pthread_mutex_unlock", "free"):
    getattr(_libc, _name).argtypes = [ctypes.c_void_p] * (2 if _name == "pthread_mutex_init" else 1)


@functools.cache
def _state() -> ctypes.Array:
    """The cache of this process, made once and never freed."""
    state = (ctypes.c_int64 * STATE_WORDS)()
    if _libc.pthread_mutex_init(ctypes.addressof(state), None) != 0:
        raise BackendError("the native backend could not make the mutex of its buffer cache")
    state[CAPACITY // 8] = config.read("native_buffer_cache_mb") << 20
    return state


SYMBOL = "irad_buffer_cache"


def address() -> int:
    return ctypes.addressof(_state())


def symbol() -> str:
    """The symbol the runtime finds the cache by (substituted into
    native/runtime.ll), bound to its address in this process: the machine code
    holds no address of this process, so another can reuse it (object_cache.py)."""
    import llvmlite.binding as llvm

    llvm.add_symbol(SYMBOL, address())
    return SYMBOL


@dataclass(frozen=True)
class Stats:
    bytes: int  # cached now
    capacity: int
    hits: int  # allocations served from the cache
    misses: int  # allocations of a cacheable size served by malloc


def stats() -> Stats:
    state = _state()
    with _locked(state):
        return Stats(*(state[field // 8] for field in (BYTES, CAPACITY, HITS, MISSES)))


def set_capacity(megabytes: float) -> None:
    """Cache at most `megabytes` from now on (0: none); blocks over it are freed."""
    if megabytes < 0:
        raise BackendError(f"the buffer cache's capacity must be 0 or more megabytes, not {megabytes}")
    state = _state()
    with _locked(state):
        state[CAPACITY // 8] = int(megabytes * (1 << 20))
    release()


def release() -> None:
    """Free the cached blocks beyond the capacity (all of them if it is 0)."""
    state = _state()
    with _locked(state):
        kept, link = 0, ctypes.addressof(state) + FIRST
        while (header := ctypes.c_void_p.from_address(link).value) is not None:
            block = ctypes.c_int64.from_address(header + 24).value
            if kept + block <= state[CAPACITY // 8]:
                kept += block
                link = header
                continue
            ctypes.c_void_p.from_address(link).value = ctypes.c_void_p.from_address(header).value  # unlink
            _libc.free(ctypes.c_void_p.from_address(header + 16).value)
        state[BYTES // 8] = kept


class _locked:
    def __init__(self, state: ctypes.Array):
        self.mutex = ctypes.addressof(state)

    def __enter__(self):
        _libc.pthread_mutex_lock(self.mutex)

    def __exit__(self, *exc):
        _libc.pthread_mutex_unlock(self.mutex)
