"""Generated Python programs with deep or wide call graphs, for tests and bench/.

A `Program` is a set of small scalar functions of one argument `x`, each a
list of statements: `("let", name, expression)` or `("call", name, callee,
argument)`, returning its last name. It prints two ways: as one `def` per
function (the call graph irad must see through) and as one flat function in
which every call is expanded in place, the same computation without calls.

irad lowers functions from their source, so `load` writes the source to a
file and imports it.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from dataclasses import dataclass
from pathlib import Path

Statement = tuple[str, ...]
_NAME = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")


@dataclass(frozen=True)
class Program:
    functions: dict[str, list[Statement]]  # callees before callers
    entry: str

    def source(self) -> str:
        """One `def` per function."""
        lines = ["import math", ""]
        for name, body in self.functions.items():
            lines.append(f"def {name}(x):")
            for statement in body:
                if statement[0] == "let":
                    lines.append(f"    {statement[1]} = {statement[2]}")
                else:
                    _, target, callee, arg = statement
                    lines.append(f"    {target} = {callee}({arg})")
            lines += [f"    return {body[-1][1]}", ""]
        return "\n".join(lines)

    def flat_source(self, name: str = "flat") -> str:
        """The entry as one function, every call expanded in place."""
        lines = ["import math", "", f"def {name}(x):"]
        result = self._expand(self.entry, "x", "", lines)
        lines += [f"    return {result}", ""]
        return "\n".join(lines)

    def _expand(self, fn: str, arg: str, prefix: str, lines: list[str]) -> str:
        names = {"x": arg}
        for statement in self.functions[fn]:
            target = prefix + statement[1]
            if statement[0] == "let":
                expr = _NAME.sub(lambda m: names.get(m.group(), m.group()), statement[2])
                lines.append(f"    {target} = {expr}")
                names[statement[1]] = target
            else:
                _, local, callee, callee_arg = statement
                names[local] = self._expand(callee, names[callee_arg], target + "_", lines)
        return names[self.functions[fn][-1][1]]


def chain(depth: int, affine: bool = False) -> Program:
    """f0 <- f1 <- ... : each level calls the one below and adds a little work.

    With `affine`, the levels above f0 are affine in what they call, so their
    pullbacks need no residuals of their own (only f0's are passed up).
    """
    functions = {"f0": [("let", "a", "math.sin(x) * x"), ("let", "r", "a + x * 0.5")]}
    for i in range(1, depth):
        step = ("let", "a", "t * 0.999") if affine else ("let", "a", "math.sin(t) * x")
        functions[f"f{i}"] = [("call", "t", f"f{i - 1}", "x"), step, ("let", "r", "a + x * 0.5")]
    return Program(functions, f"f{depth - 1}")


def shared_tree() -> Program:
    """A call tree whose callees are shared: @leaf is called from four sites."""
    functions = {
        "leaf": [("let", "a", "math.sin(x)"), ("let", "r", "a * x")],
        "mid1": [
            ("call", "p", "leaf", "x"),
            ("let", "y", "x * 2.0"),
            ("call", "q", "leaf", "y"),
            ("let", "r", "p + q * math.exp(x)"),
        ],
        "mid2": [
            ("let", "y", "x * 3.0"),
            ("call", "p", "leaf", "y"),
            ("call", "q", "mid1", "y"),
            ("let", "r", "p * q"),
        ],
        "top": [
            ("call", "p", "mid1", "x"),
            ("call", "q", "mid2", "x"),
            ("call", "s", "leaf", "x"),
            ("let", "r", "p * q + math.tanh(s)"),
        ],
    }
    return Program(functions, "top")


def tree(size: int, branching: int = 3) -> Program:
    """`size` functions in a complete `branching`-ary call tree rooted at f0.

    Each child gets its own argument, so no two nodes compute the same thing.
    """
    functions: dict[str, list[Statement]] = {}
    for i in reversed(range(size)):
        body: list[Statement] = [("let", "r0", "math.sin(x) * 1.5 + x")]
        children = [c for c in range(branching * i + 1, branching * i + branching + 1) if c < size]
        for k, c in enumerate(children):
            body += [
                ("let", f"y{k}", f"x * {1.0 + c / (4.0 * size)!r}"),
                ("call", f"t{k}", f"f{c}", f"y{k}"),
                ("let", f"r{k + 1}", f"math.sin(t{k}) * r{k} + x"),
            ]
        functions[f"f{i}"] = body
    return Program(functions, "f0")


def load(source: str, module_name: str, directory: Path):
    """Write `source` to `directory/module_name.py` and import it."""
    path = Path(directory) / f"{module_name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module
