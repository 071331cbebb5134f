"""Finding a function's definition in its source file (irad/frontend/source.py)."""

import ast
import textwrap

from irad.frontend import source

NESTED = textwrap.dedent(
    """
    import contextlib

    def top(x):
        def inner(y):
            return y
        return inner(x)

    class Holder:
        def method(self, x):
            return x

    if True:
        def in_if(x):
            return x
    else:
        def in_else(x):
            return x

    try:
        def in_try(x):
            return x
    except ValueError:
        def in_handler(x):
            return x
    finally:
        def in_finally(x):
            return x

    for _ in range(1):
        def in_for(x):
            return x

    with contextlib.nullcontext():
        def in_with(x):
            return x

    match 1:
        case 1:
            def in_case(x):
                return x

    f = lambda x: x
    """
)


def test_statements_find_every_def_that_ast_walk_finds():
    module = ast.parse(NESTED)
    expected = {node.name for node in ast.walk(module) if isinstance(node, ast.FunctionDef)}
    found = {node.name for node in source._statements(module) if isinstance(node, ast.FunctionDef)}
    assert found == expected
    assert len(expected) == 11


def test_functions_found_in_their_parsed_file(tmp_path):
    path = tmp_path / "nested_defs.py"
    path.write_text(NESTED)
    namespace: dict = {"__name__": "nested_defs"}
    exec(compile(NESTED, str(path), "exec"), namespace)
    for fn in (namespace["top"], namespace["Holder"].method, namespace["in_finally"], namespace["in_case"]):
        found = source.parse_function(fn)
        assert found.tree.name == fn.__name__
        assert found.tree.lineno == fn.__code__.co_firstlineno
