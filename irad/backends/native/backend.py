"""`irad.Native()`: upstream MLIR 22 lowers a module and llvmlite compiles it
to machine code (compile.py). It needs mlir-22-tools and llvmlite, imported
only when a module is compiled."""

from __future__ import annotations

from dataclasses import dataclass

from irad.backends.protocol import Backend
from irad.base import config
from irad.base.errors import BackendError


@dataclass(frozen=True)
class Native(Backend):
    """The native backend (`backend="native"`). `keep_shared`: irad-inline's
    keep-shared for its gradients, the size in ops from which a callee called
    from several places stays a function rather than being compiled again at
    every call site (0 inlines all, as the Python backend does); None takes
    irad.config's `native_keep_shared`."""

    keep_shared: int | None = None
    name = "native"

    def __post_init__(self) -> None:
        value = self.keep_shared
        if value is None:
            value = config.read("native_keep_shared")
        elif isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise BackendError(
                f"irad.Native(keep_shared=...) takes a count of ops, not {value!r}\n"
                f"  hint: 0 inlines all; the default is {config.default('native_keep_shared')}"
            )
        object.__setattr__(self, "keep_shared", value)  # fixed here, so equal objects compile alike

    def compile(self, module):
        # imports llvmlite only when used; a missing llvmlite or mlir-opt is a
        # BackendError with its fix, before anything else imports them
        from irad.backends.native.compile import compile_module, unavailable_reason

        reason = unavailable_reason()
        if reason is not None:
            raise BackendError(reason)
        return compile_module(module)

    def unavailable_reason(self) -> str | None:
        from irad.backends.native.compile import unavailable_reason

        return unavailable_reason()
