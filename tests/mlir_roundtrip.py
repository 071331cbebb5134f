"""The modules the current test emitted, for the upstream mlir-opt round trip
(tests/conftest.py parses them at teardown). Pipelines record through a callback;
tests that run a pass or the differentiator directly call `record`."""

from irad.ir.scan import expand_scans

EMITTED: list[str] | None = None  # None while the round trip is off


def record(module) -> None:
    if EMITTED is None:
        return
    if any(op.name in SCANS for op in module.walk()):  # upstream gets their loop nests (irad/ir/scan.py)
        module = module.clone()
        expand_scans(module)
    EMITTED.append(str(module))


# the passes after which a pipeline's module is recorded (and the last pass of
# each pipeline): after differentiating, once the tape ops (which mlir-opt does
# not know) are lowered
_RECORDED_AFTER = frozenset({"irad-lower-tape", "irad-jvp"})
SCANS = ("irad.cumsum", "irad.linear_scan")  # array ops, not requests: recorded as the native backend expands them


def wanted(previous, module, last: bool) -> bool:
    """Is the module a pipeline has after the pass `previous` one for upstream?
    Not while it still holds irad ops: an irad.jvp the next pass rewrites, or
    the tape of a gradient built to be differentiated again (the pipeline that
    differentiates it lowers it)."""
    return (last or previous.name in _RECORDED_AFTER) and not any(
        op.name.startswith("irad.") and op.name not in SCANS for op in module.walk())
