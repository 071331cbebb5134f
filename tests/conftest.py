"""Shared fixtures.

Every module an irad pipeline leaves after differentiating, and at its end, is
also parsed by upstream mlir-opt 22 when it is installed, so irad never drifts
from MLIR: a callback on the pipeline (irad.pipeline.AFTER_PASS) records them,
tests that run a pass directly record theirs (tests/mlir_roundtrip.py), and each
test parses its own at teardown. `pytest --no-mlir-roundtrip` skips
that check for quick local runs; `make test` and CI keep it on.

Each test process may write to at most half the machine's memory
(`cap_memory`): a test that asks for more fails with MemoryError where it
asked, rather than the kernel's OOM killer ending the process, which xdist
reports only as "worker 'gw1' crashed while running" a test.
"""

import contextlib
import os
import resource
import tempfile

import pytest

import irad.config
from irad import pipeline
from irad.backends.native.mlir_tools import find_tool, mlir_opt_parses
from tests import mlir_roundtrip

irad.config.update("verify", True)  # every module a pipeline builds is verified during the tests
# native machine code is cached in a directory of this run's own, not the user's
# (irad/backends/native/object_cache.py)
os.environ.setdefault("IRAD_NATIVE_CACHE", tempfile.mkdtemp(prefix="irad-test-native-cache-"))

MLIR_OPT = find_tool("mlir-opt")


def memory_cap() -> int:
    """Bytes of writable memory a test process may map: half the machine's."""
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2


def cap_memory() -> None:
    """Lower RLIMIT_DATA (private writable mappings: the heap, numpy's arrays)
    to `memory_cap()`, unless it is lower already. The child processes
    (mlir-opt, the -O2 compile) inherit it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    cap = memory_cap() if hard == resource.RLIM_INFINITY else min(memory_cap(), hard)
    if soft == resource.RLIM_INFINITY or soft > cap:
        resource.setrlimit(resource.RLIMIT_DATA, (cap, hard))


cap_memory()


def pytest_addoption(parser):
    parser.addoption(
        "--no-mlir-roundtrip", action="store_true",
        help="do not parse every module irad emits with upstream mlir-opt",
    )


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "test_backend_native" in item.nodeid:
            item.add_marker(pytest.mark.native)


@pytest.fixture(autouse=True)
def emitted_modules_parse_in_mlir_opt(request):
    """Record the modules pipelines emit during the test; parse them all at teardown."""
    if MLIR_OPT is None or request.config.getoption("--no-mlir-roundtrip"):
        yield
        return
    emitted = mlir_roundtrip.EMITTED = []

    def record(previous, module, last: bool):
        if mlir_roundtrip.wanted(previous, module, last):
            mlir_roundtrip.record(module)

    pipeline.AFTER_PASS.append(record)
    try:
        yield
    finally:
        pipeline.AFTER_PASS.remove(record)
        mlir_roundtrip.EMITTED = None
    for batch in _batches(emitted):
        ok, diagnostics = mlir_opt_parses("\n// -----\n".join(batch), split=True)
        assert ok, f"mlir-opt rejected a module irad emitted:\n{diagnostics}"


BATCH_CHARACTERS = 2_000_000  # one mlir-opt run each: a long fuzz part emits ~100 MB, past any one run's timeout


def _batches(texts: list[str]):
    """`texts` in runs of about BATCH_CHARACTERS characters (each text whole)."""
    batch: list[str] = []
    size = 0
    for text in texts:
        if batch and size + len(text) > BATCH_CHARACTERS:
            yield batch
            batch, size = [], 0
        batch.append(text)
        size += len(text)
    if batch:
        yield batch


@pytest.fixture
def switches():
    """`switches(name=value, ...)` sets switches of irad.config for this test;
    they are restored after it."""
    with contextlib.ExitStack() as stack:
        yield lambda **values: stack.enter_context(irad.config.overriding(**values))


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
