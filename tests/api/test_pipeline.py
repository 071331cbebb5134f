"""The pipelines are defined once (irad/pipeline.py) from pass names, and say what they run."""

import pytest

import irad
from irad import compiled, pipeline
from tests import programs


def test_specs_name_the_passes_irad_opt_takes():
    names = [p.name for p in pipeline.pipeline(pipeline.gradient_spec(checkpoint=True)).passes]
    assert names == ["irad-differentiate", "irad-lower-tape", "irad-optimize", "irad-sink-accumulations",
                     "irad-hoist-loop-invariants", "irad-symbol-dce"]
    assert pipeline.pipeline(pipeline.gradient_spec(checkpoint=True)).passes[0].checkpoint
    # forward mode follows a tape as memref code: lowered first
    assert [p.name for p in pipeline.pipeline(pipeline.jvp_spec()).passes][:2] == ["irad-lower-tape", "irad-jvp"]
    # a module to be differentiated again is not inlined, and keeps its tape ops
    assert pipeline.pipeline(pipeline.optimise_spec(inline=False)).passes[0].max_depth == 0
    names = [p.name for p in pipeline.pipeline(pipeline.gradient_spec(inline=False)).passes]
    assert names == ["irad-differentiate", "irad-optimize", "irad-symbol-dce"]


def test_callbacks_see_every_pass_of_an_api_call(monkeypatch):
    monkeypatch.setattr(compiled, "_CACHE", {})  # compile afresh, whatever ran before
    seen = []

    def record(previous, module, last):
        seen.append((previous.name, last))

    pipeline.AFTER_PASS.append(record)
    try:
        g = irad.grad(programs.twice)(0.7)
    finally:
        pipeline.AFTER_PASS.remove(record)
    assert g == pytest.approx(4 * 0.7**3)  # d/dx x**4
    assert seen == [
        ("irad-differentiate", False), ("irad-lower-tape", False),
        ("irad-optimize", False), ("irad-sink-accumulations", False), ("irad-hoist-loop-invariants", False),
        ("irad-symbol-dce", True),
    ]


def test_an_unknown_pass_name_is_refused():
    with pytest.raises(ValueError, match="irad-nonsense"):
        pipeline.pipeline("irad-optimize,irad-nonsense")
