"""`import` statements inside a function: `import scipy.linalg as sla`,
`from scipy.special import logsumexp`, `from . import helpers`.

Python runs them at each call; their names are then read like globals of the
module they come from. irad imports while lowering (the module's code runs
once, as a module-level import would run it) and binds each name to a
`Global` of the module's namespace (or of sys.modules, for a module), so a
name read this way is baked in and guarded exactly as a global is
(globals.py), and an array read this way is a hidden argument.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys

from irad.frontend.globals import Global
from irad.frontend.values import Static


def bind(fl, stmt: ast.Import | ast.ImportFrom) -> None:
    """Bind the names `stmt` imports in the function's environment."""
    if isinstance(stmt, ast.Import):
        for alias in stmt.names:
            _module(fl, stmt, alias.name)
            if alias.asname:  # import a.b as c: c is a.b
                _bind(fl, stmt, alias.asname, Global(sys.modules, alias.name, guards=fl.owner.guards))
            else:  # import a.b: a (with a.b loaded, reached as its attribute)
                top = alias.name.split(".")[0]
                _bind(fl, stmt, top, Global(sys.modules, top, guards=fl.owner.guards))
        return
    name = stmt.module or ""
    if stmt.level:  # from . import x, from ..m import y: relative to the function's package
        package = fl.fn.__globals__.get("__package__") or ""
        try:
            name = importlib.util.resolve_name("." * stmt.level + name, package)
        except (ImportError, ValueError) as error:
            raise fl.src.error(stmt, f"relative import: {error}", "import by the module's full name") from None
    module = _module(fl, stmt, name)
    for alias in stmt.names:
        if not hasattr(module, alias.name):  # from package import submodule
            _module(fl, stmt, f"{name}.{alias.name}")
        if not hasattr(module, alias.name):
            raise fl.src.error(stmt, f"cannot import name '{alias.name}' from '{name}'", "check the name's spelling")
        _bind(fl, stmt, alias.asname or alias.name, Global(vars(module), alias.name, guards=fl.owner.guards))


def _module(fl, stmt: ast.stmt, name: str):
    try:
        return importlib.import_module(name)
    except ImportError as error:
        raise fl.src.error(stmt, f"import of '{name}' failed: {error}", "install the module, or fix its name") from None


def _bind(fl, stmt: ast.stmt, name: str, origin: Global) -> None:
    fl.env[name] = fl._static_value(Static(origin.read(), origin), stmt)
