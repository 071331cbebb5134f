"""Errors a user of irad can see.

Every message names where the problem is (a Python file:line:col or an IR
location), what is unsupported, and what to do about it.
"""

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


class IradWarning(UserWarning):
    """Something irad does differently from Python, said while compiling: a
    `print` the native backend drops, a decorator's wrapper it cannot lower."""
