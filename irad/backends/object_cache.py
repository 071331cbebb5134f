"""A cache of native machine code across processes.

The key is a SHA-256 over everything that decides the machine code: the LLVM IR
the JIT compiles (irad's module, what is linked into it, the runtime and the
trampolines), the target (triple, CPU name and features), the optimisation
level, the vector math library, and the llvmlite and LLVM versions. The native
backend keys its IR by what mlir-opt was given (the module's text, the passes,
the tools' version): mlir-opt's output varies from run to run (the order and
names of the globals bufferization makes), its input does not. The IR holds
no address of the process that made it (symbols are resolved when the code is
loaded: native_call.NDARRAY_SYMBOL), so another process that builds the same
module loads the object code instead of running LLVM's pipeline and code
generator.

Each entry is one file, `<key>.o`: a magic line, the SHA-256 of the object
code, and the object code; an entry whose digest does not match (truncated,
overwritten, from another format) is a miss and is written again. Entries are
written to a temporary file and renamed, so concurrent processes never read a
half-written one. Nothing is ever evicted: delete the directory to empty it.

IRAD_NATIVE_CACHE names the directory (default: $XDG_CACHE_HOME/irad/native,
else ~/.cache/irad/native); IRAD_NATIVE_CACHE=0 turns the cache off. A cache
that cannot be written (read-only, no home) is skipped silently: it only saves
time.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

VARIABLE = "IRAD_NATIVE_CACHE"
MAGIC = b"irad-native-object 1\n"
_DIGEST = hashlib.sha256().digest_size


def directory() -> Path | None:
    """Where entries live, or None if the cache is off."""
    value = os.environ.get(VARIABLE)
    if value == "0":
        return None
    if value:
        return Path(value)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "irad" / "native"


def key(texts: Iterable[str], target: Iterable[str]) -> str:
    """The key of the machine code compiled from `texts` (LLVM IR) for `target`
    (triple, CPU, features, level, versions)."""
    digest = hashlib.sha256()
    for part in (*target, *texts):
        data = part.encode()
        digest.update(len(data).to_bytes(8, "little"))  # no two splits of one string hash alike
        digest.update(data)
    return digest.hexdigest()


def load(where: Path | None, name: str) -> bytes | None:
    """The object code stored under `name`, or None (a miss, or a damaged entry)."""
    if where is None:
        return None
    try:
        data = (where / f"{name}.o").read_bytes()
    except OSError:
        return None
    head, rest = data[: len(MAGIC)], data[len(MAGIC):]
    stored, code = rest[:_DIGEST], rest[_DIGEST:]
    if head != MAGIC or not code or hashlib.sha256(code).digest() != stored:
        return None
    return code


def store(where: Path | None, name: str, code: bytes) -> None:
    """Keep `code` under `name`; a cache that cannot be written is skipped."""
    if where is None:
        return
    try:
        where.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=where, prefix=f".{name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(MAGIC + hashlib.sha256(code).digest() + code)
            os.replace(temporary, where / f"{name}.o")
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError:
        return
