"""Keyword-only arguments at the top level: `irad.grad(f)(x, scale=2.0)` for
`def f(x, *, scale=1.0)`, with JAX's meaning: a keyword argument is never
differentiated (`argnums` counts the positional arguments), it is a run-time
value when it is data (a number, an array, a container of them) and a value
known while lowering when `static_argnames` names it or when it is not data (a
string, None, a function: JAX passes those through as Python objects).

The call runs the same transformation of `KeywordCall(f, names)` (irad/frontend/
keyword_calls.py), whose positional parameters are f's and then the keywords,
made once per transformation and set of keyword names (its compiled code is
cached as any transformation's is).
"""

from __future__ import annotations

import inspect
import numbers

from irad.frontend.callable_entries import underlying_function
from irad.frontend.keyword_calls import KeywordCall
from irad.frontend.entry_arguments import is_data
from irad.frontend.source import error_at, name_of
from irad.frontend.transformations import Transformation


def keyword_form(t, n_args: int, kwargs: dict):
    """The transformation `t` to call instead when the call's `n_args`
    positional arguments and `kwargs` give keyword-only arguments (or ones f's
    **kwargs takes), or None when they do not."""
    target = t
    while isinstance(target, Transformation):
        target = target.f
    found = keyword_call(target, n_args, kwargs)
    if found is None:
        return None
    call, static = found
    forms = t.__dict__.setdefault("_keyword_forms", {})
    key = (call, static)
    if key not in forms:
        forms[key] = _rewrapped(t, call, static)
    return forms[key]


def keyword_call(f, n_args: int, kwargs: dict) -> tuple[KeywordCall, tuple[str, ...]] | None:
    """The KeywordCall a call of `f` with `n_args` positional arguments and
    `kwargs` is, and the keywords it takes as static (not data); None when the
    keywords are all positional parameters'."""
    try:
        parameters = inspect.signature(f).parameters
    except (TypeError, ValueError):
        return None
    takes_any = any(p.kind == p.VAR_KEYWORD for p in parameters.values())
    names = tuple(k for k in kwargs if (k in parameters and parameters[k].kind == inspect.Parameter.KEYWORD_ONLY)
                  or (k not in parameters and takes_any))
    if not names or any(p.kind == p.VAR_POSITIONAL for p in parameters.values()):
        return None  # bind_arguments reports what is wrong
    static = tuple(sorted(k for k in names if not is_data(kwargs[k])))
    positional = [k for k, p in parameters.items() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    count = max([n_args, *(positional.index(k) + 1 for k in kwargs if k in positional)])
    while count < len(positional) and is_data(parameters[positional[count]].default):
        count += 1  # the defaults after the given arguments are arguments while data, as without keywords
    return KeywordCall(f, names, count), static


def _rewrapped(t, call: KeywordCall, static: tuple[str, ...]):
    """`t` made again around `call`, nested transformations too."""
    make, args, keywords = t._recipe()
    f = t.f
    inner = _rewrapped(f, call, static) if isinstance(f, Transformation) else call
    names = call.names
    argnums = (t.argnums,) if isinstance(t.argnums, numbers.Integral) else tuple(t.argnums)
    n = inner.positional_count if isinstance(inner, KeywordCall) else None
    who = underlying_function(inner) or inner
    if any(a < 0 for a in (*argnums, *t.static_argnums)):
        raise error_at(who, f"{name_of(who)} is called with the keyword arguments {', '.join(names)}: "
                       "count argnums and static_argnums from the first argument (not negative)")
    if n is not None and any(a >= n for a in argnums):
        raise error_at(who, f"argnums {t.argnums!r} of {name_of(who)} selects a keyword argument: "
                       f"keyword arguments are not differentiated (it has {n} positional parameters); "
                       "make it a positional parameter to differentiate it")
    keywords["static_argnums"] = t.static_argnums
    keywords["static_argnames"] = tuple(dict.fromkeys((*t.static_argnames, *static)))
    return make(inner, *args[1:], **keywords)
