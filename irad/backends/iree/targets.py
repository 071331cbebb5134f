"""The targets IREE compiles for, and the runtime device each runs on: what
`irad.IREE(target=..., device=...)` accepts (checked without IREE installed)."""

from __future__ import annotations

from irad.base.errors import BackendError

# Target -> (its compiler flags, the runtime device it runs on by default).
# llvm-cpu: a shared library loaded by the system loader (not IREE's embedded
# ELF loader) tuned for this machine's CPU (IREE warns if none is named);
# `local-sync` runs dispatches on the calling thread (no worker pool to
# wake: lower latency for irad's many small calls; `device="local-task"`
# uses IREE's thread pool). The GPU targets compile with IREE's defaults and
# are untested here (no GPU): irad.config's `iree_flags` adds flags such as
# `--iree-cuda-target=sm_80` or `--iree-hip-target=gfx942`.
TARGETS: dict[str, tuple[tuple[str, ...], str]] = {
    "llvm-cpu": (("--iree-llvmcpu-link-embedded=false", "--iree-llvmcpu-target-cpu=host"), "local-sync"),
    "cuda": ((), "cuda"),
    "rocm": ((), "hip"),
    "vulkan-spirv": ((), "vulkan"),
}


def options(target: str | None, device: str | None) -> tuple[str, str]:
    """The target and device the IREE backend uses for these options (None:
    llvm-cpu, and the target's default device)."""
    target = "llvm-cpu" if target is None else target
    if target not in TARGETS:
        raise BackendError(
            f"unknown IREE target {target!r}\n  hint: use one of {', '.join(map(repr, TARGETS))}"
        )
    if device is not None and not (isinstance(device, str) and device):
        raise BackendError(
            f"an IREE device is named by a string, not {device!r}\n"
            f"  hint: leave it out for the target's default ({TARGETS[target][1]!r})"
        )
    return target, TARGETS[target][1] if device is None else device
