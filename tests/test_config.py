"""irad.config: every switch declared once (irad/base/config.py), the only
reader of IRAD_* variables, one rule for booleans, validated updates, the
cache key, and docs/configuration.md against the declarations."""

from __future__ import annotations

import ast
import pathlib
import re

import pytest

import irad
from irad import compiled, config, pipeline
from irad.base import config as base_config

ROOT = pathlib.Path(__file__).resolve().parent.parent
CONFIG_MODULE = ROOT / "irad" / "base" / "config.py"


# ---- the only reader ------------------------------------------------------------
def _sources() -> list[pathlib.Path]:
    return [p for folder in ("irad", "passes") for p in sorted((ROOT / folder).rglob("*.py")) if p != CONFIG_MODULE]


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _environment_reads(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, why) for each read of the environment other than of a variable
    named by a literal outside IRAD_*: os.environ[...], os.environ.get(...),
    os.getenv(...), and os.environ used whole (iterated, copied)."""
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = []

    def literal(node) -> str | None:
        return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None

    def check(line: int, key_node) -> None:
        key = literal(key_node) if key_node is not None else None
        if key is None:
            found.append((line, "a variable whose name is not written out"))
        elif key.startswith("IRAD_"):
            found.append((line, key))

    for node in ast.walk(tree):
        is_environ = (isinstance(node, ast.Attribute) and node.attr == "environ"
                      and isinstance(node.value, ast.Name) and node.value.id == "os")
        if is_environ:
            parent = parents.get(node)
            if isinstance(parent, ast.Subscript):
                check(node.lineno, parent.slice)
            elif isinstance(parent, ast.Attribute) and parent.attr in ("get", "setdefault", "pop"):
                call = parents.get(parent)
                check(node.lineno, call.args[0] if isinstance(call, ast.Call) and call.args else None)
            else:
                found.append((node.lineno, "os.environ as a whole"))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "getenv":
            check(node.lineno, node.args[0] if node.args else None)
        if isinstance(node, ast.ImportFrom) and node.module == "os" and any(a.name in ("environ", "getenv")
                                                                              for a in node.names):
            found.append((node.lineno, "imports os.environ or os.getenv"))
    return found


def test_no_module_but_the_config_reads_an_irad_variable():
    """Nothing outside irad/base/config.py reads the environment for an IRAD_*
    variable, or names one in code: a name built at run time ("IRAD_" +
    tool) is a string constant with IRAD_ in it too."""
    problems = []
    for path in _sources():
        tree = ast.parse(path.read_text(), str(path))
        where = path.relative_to(ROOT)
        problems += [f"{where}:{line}: reads {why}" for line, why in _environment_reads(tree)]
        docstrings = _docstrings(tree)
        problems += [
            f"{where}:{node.lineno}: the string {node.value!r} names an IRAD_* variable"
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and "IRAD_" in node.value
            and id(node) not in docstrings
        ]
    assert not problems, "use irad.base.config instead:\n" + "\n".join(problems)


def test_the_scan_finds_what_it_forbids():
    sources = [
        'import os\nos.environ.get("IRAD_X")', 'import os\nos.environ["IRAD_X"]', 'import os\nos.getenv(name)',
        'import os\nos.environ.get("IRAD_" + tool.upper())', 'import os\ndict(os.environ)',
        'from os import environ',
    ]
    for source in sources:
        assert _environment_reads(ast.parse(source)), source
    assert not _environment_reads(ast.parse('import os\nos.environ.get("XDG_CACHE_HOME")'))


def test_every_variable_is_its_switch_in_capitals():
    for switch in config.SWITCHES.values():
        assert switch.variable == "IRAD_" + switch.name.upper()
        assert switch.kind in ("bool", "int", "str", "choice")
        assert switch.validate(switch.default) == switch.default, switch.name


# ---- values: the environment, update, overriding, reset --------------------------
def test_the_environment_is_read_when_a_switch_is_read_and_update_wins(monkeypatch):
    monkeypatch.delenv("IRAD_NATIVE_OPT_LEVEL", raising=False)
    assert config.read("native_opt_level") == config.default("native_opt_level") == 2
    monkeypatch.setenv("IRAD_NATIVE_OPT_LEVEL", "1")
    assert config.read("native_opt_level") == config.native_opt_level == 1
    with config.overriding(native_opt_level=3):
        assert config.read("native_opt_level") == 3
        with config.overriding(native_opt_level=0):
            assert config.read("native_opt_level") == 0
        assert config.read("native_opt_level") == 3
    assert config.read("native_opt_level") == 1
    config.update("native_opt_level", 0)
    try:
        assert config.read("native_opt_level") == 0
    finally:
        config.reset("native_opt_level")
    assert config.read("native_opt_level") == 1


def test_overriding_puts_back_what_update_had_set():
    before = config.read("verify")
    config.update("verify", not before)
    try:
        with config.overriding(verify=before):
            assert config.read("verify") is before
        assert config.read("verify") is (not before)
    finally:
        config.update("verify", before)  # the suite runs with verify on (tests/conftest.py)


@pytest.mark.parametrize("text, value", [("0", False), ("1", True), ("false", False), ("true", True),
                                         ("FALSE", False), ("True", True), (" 1 ", True)])
def test_one_rule_for_booleans(text, value, monkeypatch):
    monkeypatch.setenv("IRAD_NATIVE_TIERED", text)
    assert config.read("native_tiered") is value
    monkeypatch.setenv("IRAD_NATIVE_SPLIT_PRODUCTS", text)
    assert config.read("native_split_products") is value


@pytest.mark.parametrize("text", ["yes", "2", "", "on", "-1"])
def test_another_boolean_is_an_error_naming_the_variable_and_the_values(text, monkeypatch):
    monkeypatch.setenv("IRAD_KEEP_FAILED_MODULES", text)
    with pytest.raises(config.ConfigError, match=r"IRAD_KEEP_FAILED_MODULES must be 0 or 1 \(or false or true, "
                                                 r"in any case\), not") as info:
        config.read("keep_failed_modules")
    assert isinstance(info.value, irad.BackendError)  # as bad values of the backends' switches were
    assert "docs/configuration.md" in str(info.value)


@pytest.mark.parametrize("variable, text, message", [
    ("IRAD_NATIVE_OPT_LEVEL", "4", "a whole number from 0 to 3, not '4'"),
    ("IRAD_NATIVE_OPT_LEVEL", "-1", "a whole number from 0 to 3"),
    ("IRAD_NATIVE_STACK_KB", "1.5", "a whole number, 0 or more, not '1.5'"),
    ("IRAD_BACKEND", "cuda", "one of python, native or iree, not 'cuda'"),
    ("IRAD_NATIVE_VECTOR_MATH", "svml", "one of libmvec or 0, not 'svml'"),
    ("IRAD_NATIVE_TUNING", "avx2", "LLVM target features"),
])
def test_a_bad_value_in_the_environment_names_the_variable_and_what_it_may_be(variable, text, message, monkeypatch):
    monkeypatch.setenv(variable, text)
    with pytest.raises(config.ConfigError, match=f"{variable} must be {re.escape(message)}"):
        config.read(variable[len("IRAD_"):].lower())


@pytest.mark.parametrize("name, value, message", [
    ("native_tiered", "0", "True or False, not '0'"),
    ("native_tiered", 1, "True or False, not 1"),
    ("native_opt_level", 4, "a whole number from 0 to 3, not 4"),
    ("native_opt_level", True, "a whole number from 0 to 3, not True"),
    ("native_keep_shared", 2.5, "a whole number, 0 or more"),
    ("backend", "cuda", "one of python, native or iree"),
    ("native_tuning", "avx2", "LLVM target features"),
    ("iree_flags", None, "iree-compile flags"),
])
def test_update_validates_values(name, value, message):
    before = config.read(name)
    with pytest.raises(config.ConfigError, match=f"the switch {name} must be {re.escape(message)}"):
        config.update(name, value)
    assert config.read(name) == before


def test_update_validates_names(monkeypatch):
    monkeypatch.delenv("IRAD_NATIVE_OPT_LEVEL", raising=False)
    with pytest.raises(config.ConfigError, match="irad.config has no switch 'native_opt_levl'") as info:
        config.update("native_opt_levl", 3)
    assert "did you mean native_opt_level" in str(info.value)
    with pytest.raises(config.ConfigError, match="no switch 'tanh'"):
        with config.overriding(native_opt_level=1, tanh="libmvec"):
            pass
    assert config.read("native_opt_level") == config.default("native_opt_level")  # nothing was set
    with pytest.raises(config.ConfigError, match="no switch 'opt'"):
        config.read("opt")
    with pytest.raises(AttributeError, match="no switch or attribute 'opt'"):
        config.opt  # noqa: B018


def test_unknown_variables_are_named(monkeypatch):
    monkeypatch.setenv("IRAD_NATIVE_TANH", "libmvec")  # retired
    monkeypatch.setenv("IRAD_NATIVE_OPT_LEVEL", "2")
    assert "IRAD_NATIVE_TANH" in base_config.unknown_variables()
    assert "IRAD_NATIVE_OPT_LEVEL" not in base_config.unknown_variables()


# ---- the default backend ------------------------------------------------------------
def square(x):
    return x * x


def test_a_transformation_without_backend_takes_the_configured_one(monkeypatch):
    assert irad.grad(square).backend.name == "python"
    with config.overriding(backend="native"):
        assert irad.grad(square).backend.name == "native"
        assert irad.jacrev(square).backend.name == "native"
        assert irad.grad(square, backend="python").backend.name == "python"  # an explicit backend= wins
    monkeypatch.setenv("IRAD_BACKEND", "native")
    assert irad.value_and_grad(square).backend.name == "native"
    monkeypatch.setenv("IRAD_BACKEND", "c")
    with pytest.raises(irad.BackendError, match="IRAD_BACKEND must be one of python, native or iree, not 'c'"):
        irad.grad(square)


# ---- the cache key ----------------------------------------------------------------
@pytest.fixture
def lowerings(monkeypatch):
    """The functions the frontend lowers, in order (pipeline.lower_function counted)."""
    monkeypatch.setattr(compiled, "_CACHE", {})
    calls = []
    original = pipeline.lower_function

    def counting(f, signature, table=None):
        calls.append(getattr(f, "f", f).__name__)  # a transformation's function
        return original(f, signature, table)

    monkeypatch.setattr(pipeline, "lower_function", counting)
    return calls


def poly(x):
    return x**3 - 2.0 * x


def test_changing_a_switch_of_the_cache_key_compiles_again(lowerings, monkeypatch):
    assert config.SWITCHES["native_keep_shared"].cache_key and not config.SWITCHES["native_tiered"].cache_key
    monkeypatch.delenv("IRAD_NATIVE_KEEP_SHARED", raising=False)
    assert irad.grad(poly)(2.0) == 10.0
    assert irad.grad(poly)(2.0) == 10.0
    assert len(lowerings) == 1  # the same switches: the cache holds the code
    with config.overriding(native_keep_shared=3):
        assert irad.grad(poly)(2.0) == 10.0
    assert len(lowerings) == 2
    monkeypatch.setenv("IRAD_NATIVE_KEEP_SHARED", "5")  # read when the next transformation looks its code up
    assert irad.grad(poly)(2.0) == 10.0
    assert irad.vjp(poly, 2.0)[1](1.0) == (10.0,)
    assert len(lowerings) == 4  # a grad and a vjp
    monkeypatch.delenv("IRAD_NATIVE_KEEP_SHARED")
    assert irad.grad(poly)(2.0) == 10.0
    assert len(lowerings) == 4  # back to the first key: compiled before
    with config.overriding(native_tiered=False):  # not in the key
        assert irad.grad(poly)(2.0) == 10.0
    assert len(lowerings) == 4


def test_a_gradient_keeps_the_code_of_its_first_call(lowerings):
    g = irad.grad(poly)
    with config.overriding(native_keep_shared=7):
        g(1.0)
    g(1.0)
    assert lowerings == ["poly"]


def test_the_cache_key_follows_the_environment_and_updates(monkeypatch):
    monkeypatch.setenv("IRAD_NATIVE_STACK_KB", "64")
    first = config.cache_key()
    assert 64 in first
    monkeypatch.setenv("IRAD_NATIVE_STACK_KB", "32")
    assert config.cache_key() != first and 32 in config.cache_key()
    with config.overriding(native_stack_kb=64):
        assert config.cache_key() == first
    assert len(config.cache_key()) == sum(s.cache_key for s in config.SWITCHES.values())


# ---- docs/configuration.md ------------------------------------------------------------
def _documented() -> dict[str, list[str]]:
    """The rows of the page's table of switches, by switch name."""
    text = (ROOT / "docs" / "configuration.md").read_text()
    table = text.split("\n## The switches\n", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in table.splitlines():
        if line.startswith("| `"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            rows[cells[0].strip("`")] = cells
    return rows


def _text(value: object) -> str:
    """A default as the environment variable would spell it."""
    return ("1" if value else "0") if isinstance(value, bool) else str(value)


def test_the_page_lists_every_switch_and_nothing_else():
    rows = _documented()
    missing, extra = sorted(set(config.SWITCHES) - set(rows)), sorted(set(rows) - set(config.SWITCHES))
    assert not missing and not extra, f"undocumented: {missing}; documented but no switch: {extra}"
    for name, (_, variable, kind, default, key, what) in rows.items():
        switch = config.SWITCHES[name]
        assert variable == f"`{switch.variable}`", name
        assert re.split("[,:]", kind)[0] == switch.kind, name
        if switch.kind == "choice":
            assert kind == "choice: " + ", ".join(switch.choices), name
        if switch.kind == "int":
            bounds = f"{switch.least}–{switch.most}" if switch.most is not None else f"≥ {switch.least}"
            assert kind == f"int, {bounds}", name
        expected = _text(switch.default)
        assert (default == "empty") if expected == "" else default.split("`")[1] == expected, name
        assert key == ("yes" if switch.cache_key else "no"), name
        assert what, name


def test_the_retired_switches_are_not_switches():
    text = (ROOT / "docs" / "configuration.md").read_text()
    retired = re.findall(r"^\| `(IRAD_\w+)`", text.split("\n## Retired switches\n", 1)[1], re.M)
    assert "IRAD_NATIVE_TANH" in retired
    assert not set(retired) & {s.variable for s in config.SWITCHES.values()}
