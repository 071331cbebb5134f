"""The protocol every backend follows: a `Backend` object compiles a module
into a `CompiledModule`, whose functions the API calls.

A backend object names its backend and carries the options that change the
code it compiles (`irad.IREE(target="cuda")`); it is hashable, equal by its
class and options, and picklable, so compiled code is cached per backend
object. The API asks nothing else of a backend: what it does with a module is
its subpackage's business (irad/backends/python/, native/, iree/).
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from irad.backends import entry

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp


class CompiledModule(abc.ABC):
    """A module compiled by a backend."""

    @abc.abstractmethod
    def function(self, name: str) -> Callable[..., tuple]:
        """The public function `name`, a Python callable taking its arguments
        positionally and returning a tuple of its results."""

    def entry(self, name: str, plan: entry.EntryPlan) -> Callable:
        """The call entry (entry.py) of public function `name`: the generic
        one, which calls `function(name)`, for a backend without entries of
        its own."""
        return entry.generic(plan, self.function(name), name)

    def recursion_error(self, exc: RecursionError) -> Exception | None:
        """The error to raise for a RecursionError that running this module
        raised even with irad's raised recursion limit (irad/compiled.py),
        or None to let it propagate."""
        return None

    def called(self) -> None:
        """A function of the module has returned (irad/compiled.py's
        run_compiled): a backend may start work it left for after the first
        call (native: the background -O2 compile, tiers.Deferred)."""

    def wait_optimised(self, timeout: float | None = None) -> bool:
        """Wait until calls run the module's final code (a backend compiling
        in tiers, as native does, first runs quicker-compiled code); False
        if that will not happen."""
        return True


class Backend(abc.ABC):
    """A backend and the options that change the code it compiles.

    Subclasses are frozen dataclasses whose fields are those options (so
    equal options make equal, equally hashed objects: one cache entry).
    `tape_form` is the form irad-lower-tape gives the tape ("memref",
    "tensor", or "objects": memref code whose list keeps a record's array
    in one slot), `keep_shared` irad-inline's keep-shared for this backend's
    gradients (0 inlines all)."""

    name: ClassVar[str]
    tape_form: ClassVar[str] = "memref"
    keep_shared: int = 0

    @abc.abstractmethod
    def compile(self, module: ModuleOp) -> CompiledModule:
        """`module` compiled; a BackendError for what this backend cannot run."""

    def unavailable_reason(self) -> str | None:
        """Why this backend cannot run here (a missing tool or extra), or
        None if it can."""
        return None
