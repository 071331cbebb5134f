"""Errors a user of irad can see.

Every message names where the problem is (a Python file:line:col or an IR
location), what is unsupported, and what to do about it.
"""

import builtins
import re
import sys

from xdsl.utils.exceptions import DiagnosticException


class IradError(DiagnosticException):
    """Base class of every error irad raises on purpose.

    An xDSL diagnostic: xDSL's tools report it as they report a verifier error,
    so stock `xdsl-opt --verify-diagnostics` prints the message (location and
    hint included) without a traceback, as `irad-opt` always does."""


class UnsupportedError(IradError):
    """A construct outside the subset irad can lower or differentiate."""


class DifferentiationError(IradError):
    """The differentiation pass could not differentiate a function or call."""


class BatchingError(IradError):
    """irad-vmap could not batch an op (a value varying along the batch reaches
    an op without a batching rule, or where one value is needed)."""


class BackendError(IradError):
    """A backend cannot run an op of the module it was given."""


class ConfigError(BackendError):
    """A switch of irad.config has an unknown name or a bad value (from its
    environment variable or irad.config.update). A BackendError, as a bad
    value of a backend's switch was before the switches had one home."""


class RuntimeCheckError(IradError):
    """A check compiled into the program failed while it ran: an index out of
    bounds, a range step of zero, int overflow or division by zero, a float ->
    int of inf or NaN (where Python or numpy would raise); or its recursion
    nested deeper than the stack allows. The same on both backends."""


class OutOfMemoryError(RuntimeCheckError, MemoryError):
    """Native code could not allocate a buffer (malloc failed: the process's
    memory limit or the machine's). A MemoryError, as numpy's
    `_ArrayMemoryError` is on the Python backend."""


# A `raise E(text)` of a program is a check that always fails, its message
# "file:line:col: E: text" (E a builtin's name, or module.qualname).
_RAISED = re.compile(r"^.*?:\d+:\d+: ([A-Za-z_][\w.]*): ")
_RAISED_CLASSES: dict[type, type] = {}
_ASSERTED = re.compile(r"^.*?:\d+:\d+: assertion failed: ")  # a failed `assert` (frontend/statements.py)


def raised_name(cls: type) -> str:
    """How a check's message names the exception class a program raises."""
    if getattr(builtins, cls.__name__, None) is cls:
        return cls.__name__
    return f"{cls.__module__}.{cls.__qualname__}"


def _raised_class(name: str) -> type | None:
    """The exception class a message names (raised_name), if it still names one."""
    module, _, qualname = name.rpartition(".")
    obj = sys.modules.get(module) if module else builtins
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    if isinstance(obj, type) and issubclass(obj, Exception) and not issubclass(obj, IradError):
        return obj
    return None


def check_failure(message: str) -> RuntimeCheckError:
    """The error a failed run-time check raises. For the program's own `raise
    E(...)` it is both a RuntimeCheckError and an E (for a failed `assert`, an
    AssertionError), so the caller's `except E` catches it as it catches Python's (an E whose instances cannot also be a
    RuntimeCheckError gives a plain RuntimeCheckError)."""
    match = _RAISED.match(message)
    cls = _raised_class(match.group(1)) if match else None
    if cls is None and _ASSERTED.match(message):  # a failed `assert`: Python's AssertionError
        cls = AssertionError
    if cls is None:
        return RuntimeCheckError(message)
    if cls not in _RAISED_CLASSES:
        try:
            _RAISED_CLASSES[cls] = type(cls.__name__, (RuntimeCheckError, cls), {"__module__": cls.__module__})
        except TypeError:  # an instance layout of its own (OSError's): the two cannot combine
            _RAISED_CLASSES[cls] = RuntimeCheckError
    try:
        return _RAISED_CLASSES[cls](message)
    except Exception:  # an __init__ of the user's that does not take one message
        return RuntimeCheckError(message)


class IradWarning(UserWarning):
    """Something irad does differently from Python, said while compiling: a
    `print` the native backend drops, a decorator's wrapper it cannot lower."""
