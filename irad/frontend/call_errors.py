"""What is wrong with a call inside a program that its callee's signature
refuses, in Python's words, and the call that would work.

`inspect.Signature.bind` reports a missing argument before an unexpected
keyword; Python's own call names the unexpected keyword first, and a
misspelt keyword (`mod=` for `mode=`) is the mistake to show.
"""

from __future__ import annotations

import inspect


def call_problem(signature: inspect.Signature, kwargs: dict, exc: TypeError) -> str:
    """Why the call is refused: an unexpected keyword first, as Python says it."""
    takes_any = any(p.kind == p.VAR_KEYWORD for p in signature.parameters.values())
    positional_only = {p.name for p in signature.parameters.values() if p.kind == p.POSITIONAL_ONLY}
    for name in kwargs:
        if not takes_any and (name not in signature.parameters or name in positional_only):
            return f"got an unexpected keyword argument '{name}'"
    return str(exc)


def call_hint(name: str, signature: inspect.Signature) -> str:
    """The rewrite: the callee's parameters."""
    return f"call it as {name}{signature.replace(return_annotation=inspect.Signature.empty)}"
