"""Shared fixtures.

Every module the differentiation passes produce during a test, and every module the
API optimises (inlined), is also parsed by upstream mlir-opt 22 when it is
installed, so irad never drifts from MLIR.
"""

import pytest

from irad import api
from irad.backends.mlir_tools import find_tool, mlir_opt_parses
from irad.passes import differentiate, forward

api.VERIFY = True  # every module the API builds is verified during the tests

MLIR_OPT = find_tool("mlir-opt")


@pytest.fixture(autouse=True)
def emitted_modules_parse_in_mlir_opt(monkeypatch):
    """Record the module after each differentiation; parse them all at teardown."""
    if MLIR_OPT is None:
        yield
        return
    emitted: list[str] = []
    inside_requests = []
    original_requests = differentiate.Differentiator.rewrite_requests
    original_reverse = differentiate.Differentiator.reverse

    def rewrite_requests(self):
        inside_requests.append(True)
        try:
            original_requests(self)
        finally:
            inside_requests.pop()
        emitted.append(str(self.module))

    def reverse(self, name, active):
        gen = original_reverse(self, name, active)
        if not inside_requests:  # a request op is still in the module then
            emitted.append(str(self.module))
        return gen

    original_jvp_requests = forward.ForwardDifferentiator.rewrite_requests

    def jvp_requests(self):
        original_jvp_requests(self)
        emitted.append(str(self.module))

    def optimise(module, inline=True):
        original_optimise(module, inline)
        emitted.append(str(module))  # after inlining too

    original_optimise = api._optimise
    monkeypatch.setattr(differentiate.Differentiator, "rewrite_requests", rewrite_requests)
    monkeypatch.setattr(forward.ForwardDifferentiator, "rewrite_requests", jvp_requests)
    monkeypatch.setattr(differentiate.Differentiator, "reverse", reverse)
    monkeypatch.setattr(api, "_optimise", optimise)
    yield
    if emitted:
        ok, diagnostics = mlir_opt_parses("\n// -----\n".join(emitted), split=True)
        assert ok, f"mlir-opt rejected a module irad emitted:\n{diagnostics}"


@pytest.fixture
def rule_table():
    """The default rule table, restored to its entries after the test."""
    from irad.rules import default_table

    table = default_table()
    before = table.rules()
    yield table
    for rule in table.rules():
        if not any(rule is b for b in before):
            table.remove(rule.target, rule.signature, rule.mode)
    for rule in before:
        if not any(rule is r for r in table.rules()):
            table.register(rule)
