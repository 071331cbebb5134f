"""The modules the current test emitted, for the upstream mlir-opt round trip
(tests/conftest.py parses them at teardown). Pipelines record through a callback;
tests that run a pass or the differentiator directly call `record`."""

EMITTED: list[str] | None = None  # None while the round trip is off


def record(module) -> None:
    if EMITTED is not None:
        EMITTED.append(str(module))
