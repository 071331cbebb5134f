"""`irad.IREE(target=..., device=...)`: IREE's compiler builds a module for a
target and its runtime runs it on a device (compile.py). IREE is an optional
extra, imported only when a module is compiled; the options are checked
without it (targets.py)."""

from __future__ import annotations

from dataclasses import dataclass

from irad.backends.iree.targets import options
from irad.backends.protocol import Backend


@dataclass(frozen=True)
class IREE(Backend):
    """The IREE backend (`backend="iree"`). `target`: the compiler's target
    ("llvm-cpu", "cuda", "rocm", "vulkan-spirv"); `device`: the runtime's
    device (None: the target's default, "local-sync" for llvm-cpu)."""

    target: str = "llvm-cpu"
    device: str | None = None
    name = "iree"
    tape_form = "tensor"  # IREE takes tensors only

    def __post_init__(self) -> None:
        target, device = options(self.target, self.device)
        object.__setattr__(self, "target", target)
        object.__setattr__(self, "device", device)  # IREE("cuda") == IREE("cuda", "cuda")

    def compile(self, module):
        from irad.backends.iree.compile import compile_module

        return compile_module(module, self.target, self.device)

    def unavailable_reason(self) -> str | None:
        from irad.backends.iree.compile import unavailable_reason

        return unavailable_reason()
