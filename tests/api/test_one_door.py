"""Only the passes construct the differentiators: everything else asks with
request ops (irad/frontend/transformations.py, irad/pipeline.py) and runs the
one pipeline."""

import ast

from tests.test_layers import modules


def test_only_the_passes_construct_a_differentiator():
    found = []
    for name, path in modules().items():
        if name.startswith("irad.passes"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)):
                called = node.func.id if isinstance(node.func, ast.Name) else node.func.attr
                if called in ("Differentiator", "ForwardDifferentiator"):
                    found.append(f"{path}:{node.lineno}: {called}(...)")
    assert not found, "\n".join(found)
