"""Where native code finds LAPACK (and BLAS): one library, looked up once.

irad calls LAPACK through its C interface, LAPACKE, in row-major layout, so
native code passes numpy's C-ordered buffers as they are. The library is, in
this order:

1. irad.config's `lapack_library`, a path to a shared library with LAPACKE;
2. the `scipy-openblas64` package (`pip install scipy-openblas64`, part of
   `irad[native]`): its `lib/libscipy_openblas*` (found without importing it);
3. the copy of the same OpenBLAS that numpy's wheels bundle (numpy >= 2 on
   Linux, in `numpy.libs`).

Its symbol names are found, not assumed: scipy-openblas64 names LAPACKE's
`LAPACKE_dgesv` `scipy_LAPACKE_dgesv64_` and takes 64-bit integers (ILP64); a
plain LAPACKE library takes 32-bit ones. `Library.symbol` gives the name,
`Library.int_bits` the integer width. The same library provides BLAS
(`Library.symbol("cblas_dgemm")`), for whoever wants matrix products from it.

Threads: when it is found, an OpenBLAS gets `native_blas_threads` (irad.config)
threads, 1 unless set (0 leaves OpenBLAS's own choice: OPENBLAS_NUM_THREADS
when it loaded, else every core). OpenBLAS's threads wait for each other by
spinning and yielding the core, so on a machine other processes keep busy
a product on two threads waited for a descheduled one: the MLP gradient of
`make bench` took 8-38x longer with OpenBLAS's default than on one thread,
at load 5-15 on 2 cores (docs/benchmarks.md, bench/blas_threads.py). numpy's
bundled copy is numpy's own BLAS, and is left as it is.
"""

from __future__ import annotations

import ctypes
import functools
import glob
import importlib.util
import os
from dataclasses import dataclass

from irad.base import config
from irad.base.errors import BackendError

NUMPY_BUNDLED = "numpy's bundled OpenBLAS"
INSTALL_HINT = (f"pip install scipy-openblas64 (or 'irad[native]'), or set {config.switch('lapack_library').variable} "
                "to a LAPACKE library")

# (prefix, suffix, integer bits) of the naming conventions tried, by the name of dgesv
_CONVENTIONS = (("scipy_", "64_", 64), ("", "64_", 64), ("", "", 32))


@dataclass(frozen=True)
class Library:
    path: str
    prefix: str
    suffix: str
    int_bits: int
    origin: str

    def symbol(self, name: str) -> str:
        """The library's name for LAPACKE's or CBLAS's `name` (LAPACKE_dgesv, cblas_dgemm)."""
        return f"{self.prefix}{name}{self.suffix}"


def _candidates() -> list[tuple[str, str]]:
    """(path, where it came from), in the order of the module docstring."""
    found = []
    path = config.read("lapack_library")
    if path:
        found.append((path, f"${config.switch('lapack_library').variable}"))
    # Found where scipy_openblas64.get_lib_dir() and get_library() look, without
    # importing it: its import reads its own metadata (importlib.metadata, email,
    # ...), 0.05-0.1 s of a native first call.
    spec = importlib.util.find_spec("scipy_openblas64")
    if spec is not None and spec.origin:
        lib_dir = os.path.join(os.path.dirname(spec.origin), "lib")
        try:
            names = sorted(x for x in os.listdir(lib_dir) if x.startswith("libscipy_openblas"))
        except OSError:
            names = []
        found += [(os.path.join(lib_dir, name), "scipy-openblas64") for name in names[:1]]
    import numpy

    bundled = os.path.join(os.path.dirname(os.path.dirname(numpy.__file__)), "numpy.libs")
    found += [(p, NUMPY_BUNDLED) for p in sorted(glob.glob(os.path.join(bundled, "lib*openblas*.so*")))]
    return found


def _open(path: str, origin: str) -> Library | None:
    try:
        handle = ctypes.CDLL(path)
    except OSError:
        return None
    for prefix, suffix, bits in _CONVENTIONS:
        if hasattr(handle, f"{prefix}LAPACKE_dgesv{suffix}"):
            return Library(path, prefix, suffix, bits, origin)
    return None


@functools.cache
def find() -> Library:
    """The LAPACK library native code calls; BackendError if there is none."""
    tried, count = [], threads()
    for path, origin in _candidates():
        library = _open(path, origin)
        if library is not None:
            if origin != NUMPY_BUNDLED and count > 0:
                set_threads(library, count)
            return library
        tried.append(f"{path} ({origin})")
    where = "; tried " + ", ".join(tried) if tried else ""
    raise BackendError(f"the native backend found no LAPACK library with LAPACKE{where}\n  hint: {INSTALL_HINT}")


def threads() -> int:
    """The BLAS threads `native_blas_threads` asks for (0: OpenBLAS's own choice)."""
    return config.read("native_blas_threads")


def _threads_function(library: Library, name: str):
    """OpenBLAS's `openblas_{name}` in `library`, or None (not an OpenBLAS)."""
    return getattr(ctypes.CDLL(library.path), library.symbol(f"openblas_{name}"), None)


def set_threads(library: Library, count: int) -> None:
    """Run `library`'s products on `count` threads, if it is an OpenBLAS
    (process-wide: every caller of this copy of the library)."""
    setter = _threads_function(library, "set_num_threads")
    if setter is not None:
        setter.argtypes = [ctypes.c_int]
        setter(count)


def get_threads(library: Library) -> int | None:
    """How many threads `library` runs products on, if it is an OpenBLAS."""
    getter = _threads_function(library, "get_num_threads")
    if getter is None:
        return None
    getter.restype = ctypes.c_int
    return getter()
