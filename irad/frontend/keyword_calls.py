"""Keyword-only arguments given to a transformed function at the top level:
`irad.grad(f)(x, scale=2.0)` for `def f(x, *, scale=1.0)`.

irad passes a transformation's arguments by position (the signature is the
tree of the positional arguments). A call with keyword-only arguments is
therefore a call to `KeywordCall(f, ("scale",))`, a callable whose positional
parameters are f's positional ones and then the keywords given: its entry
(callable_entries.entry_function) is `def entry(x, scale): return f(x,
scale=scale)`. As in JAX, the keywords are never differentiated (`argnums`
counts f's positional parameters only) and are run-time values, or values
known while lowering when `static_argnames` names them (irad/keywords.py
applies the transformation to the KeywordCall).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Callable

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


@dataclass(frozen=True)
class KeywordCall:
    """`fn` called with its first `positional_count` positional arguments (the
    ones after them take fn's defaults), then `names` by keyword."""

    fn: Callable
    names: tuple[str, ...]
    positional_count: int

    @property
    def __signature__(self) -> inspect.Signature:
        """fn's positional parameters, then the keywords as positional ones."""
        params = [p for p in inspect.signature(self.fn).parameters.values() if p.kind in _POSITIONAL]
        params = [p.replace(kind=inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in params[:self.positional_count]]
        # placeholders: the call gives every keyword it names (a keyword's default stays fn's own)
        default = inspect.Parameter.empty if all(p.default is p.empty for p in params) else None
        params += [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default)
                   for name in self.names]
        return inspect.Signature(params)

    def call_text(self, holder: str, written: list[str]) -> str:
        """The entry's call of fn (see the module's docstring)."""
        n = len(written) - len(self.names)
        return f"{holder}({', '.join([*written[:n], *(f'{k}={p}' for k, p in zip(self.names, written[n:]))])})"

    def __call__(self, *args):
        n = len(args) - len(self.names)
        return self.fn(*args[:n], **dict(zip(self.names, args[n:])))


__all__ = ["KeywordCall"]
