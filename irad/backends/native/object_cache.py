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

Each entry is one file, `<key>.o`: a magic line, the SHA-256 of the rest,
the symbols the code needs from the process (its external functions and
globals: a loader checks them before it links the code, since an unresolved
one would abort the process) and the object code; an entry whose digest does
not match (truncated, overwritten, from another format) is a miss and is
written again. Entries are
written to a temporary file and renamed, so concurrent processes never read a
half-written one. Nothing is ever evicted: delete the directory to empty it.

irad.config's `native_cache` names the directory (default:
$XDG_CACHE_HOME/irad/native, else ~/.cache/irad/native); 0 turns the cache
off. A cache that cannot be written (read-only, no home) is skipped silently:
it only saves time. This module imports nothing of irad: the background
compile (llvm_build.py) loads it by its path.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

MAGIC = b"irad-native-object 2\n"
_DIGEST = hashlib.sha256().digest_size


def directory(setting: str) -> Path | None:
    """Where entries live for the switch's `setting`, or None if the cache is off."""
    if setting == "0":
        return None
    if setting:
        return Path(setting)
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


class Entry(NamedTuple):
    code: bytes
    needs: tuple[str, ...]  # symbols the code calls or reads from the process


def load(where: Path | None, name: str) -> Entry | None:
    """The entry stored under `name`, or None (a miss, or a damaged entry)."""
    if where is None:
        return None
    try:
        data = (where / f"{name}.o").read_bytes()
    except OSError:
        return None
    head, rest = data[: len(MAGIC)], data[len(MAGIC):]
    stored, payload = rest[:_DIGEST], rest[_DIGEST:]
    if head != MAGIC or len(payload) < 4 or hashlib.sha256(payload).digest() != stored:
        return None
    size = int.from_bytes(payload[:4], "little")
    needs, code = payload[4 : 4 + size].decode(), payload[4 + size :]
    if not code:
        return None
    return Entry(code, tuple(needs.split("\n")) if needs else ())


def store(where: Path | None, name: str, code: bytes, needs: Sequence[str]) -> None:
    """Keep `code`, which needs the symbols `needs`, under `name`; a cache that
    cannot be written is skipped."""
    if where is None:
        return
    listed = "\n".join(needs).encode()
    payload = len(listed).to_bytes(4, "little") + listed + code
    try:
        where.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=where, prefix=f".{name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(MAGIC + hashlib.sha256(payload).digest() + payload)
            os.replace(temporary, where / f"{name}.o")
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError:
        return
