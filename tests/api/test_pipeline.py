"""The pipeline is defined once (passes/pipelines.py), every transformation
runs it, and its passes are the ones irad-opt takes by name."""

import numpy as np
import pytest

import irad
from irad import compiled, pipeline
from irad.backends import check_backend
from irad.passes.pipelines import Options, autodiff_passes, spec
from tests import programs

CODE_TO_RUN = [
    "irad-vmap", "irad-differentiate", "irad-jvp", "irad-lower-tape", "irad-optimize", "irad-sink-accumulations",
    "irad-hoist-loop-invariants", "irad-symbol-dce",
]


def test_the_spec_names_the_passes_irad_opt_takes():
    passes = autodiff_passes(Options(checkpoint=True, keep_shared=24, tape="tensor"))
    assert [p.name for p in passes] == CODE_TO_RUN
    parsed = pipeline.pipeline(spec(passes)).passes
    assert parsed == passes  # the spec round-trips through the pass registry
    assert parsed[1].checkpoint and parsed[1].inline and parsed[1].hoist and parsed[1].keep_shared == 24
    assert parsed[2].tape == "tensor" and parsed[3].form == "tensor"
    # a module to be differentiated again is not inlined, and keeps its tape ops
    again = autodiff_passes(Options(inline=False))
    assert [p.name for p in again] == ["irad-vmap", "irad-differentiate", "irad-jvp", "irad-optimize", "irad-symbol-dce"]
    assert again[3].max_depth == 0


def test_options_come_from_the_backend_and_the_transformation():
    native = pipeline.options(check_backend("native"), checkpoint=True)
    assert native.keep_shared == check_backend("native").keep_shared > 0 and native.checkpoint
    assert pipeline.options(check_backend("python")).keep_shared == 0
    assert pipeline.options(check_backend("native"), inline=False).keep_shared == 0


def _passes_of(call, monkeypatch) -> list:
    monkeypatch.setattr(compiled, "_CACHE", {})  # compile afresh, whatever ran before
    seen = []

    def record(previous, module, last):
        seen.append((previous.name, last))

    pipeline.AFTER_PASS.append(record)
    try:
        call()
    finally:
        pipeline.AFTER_PASS.remove(record)
    return seen


def test_callbacks_see_every_pass_of_an_api_call(monkeypatch):
    result = []
    seen = _passes_of(lambda: result.append(irad.grad(programs.twice)(0.7)), monkeypatch)
    assert result[0] == pytest.approx(4 * 0.7**3)  # d/dx x**4
    assert seen == [(name, name == CODE_TO_RUN[-1]) for name in CODE_TO_RUN]


@pytest.mark.parametrize("call", [
    lambda: irad.value_and_grad(programs.twice)(0.7),
    lambda: irad.grad(lambda x: (x * x, x), has_aux=True)(0.7),
    lambda: irad.vjp(programs.twice, 0.7)[1](1.0),
    lambda: irad.jvp(programs.twice, (0.7,), (1.0,)),
    lambda: irad.jacfwd(np.sin)(np.ones(2)),
    lambda: irad.jacrev(np.sin)(np.ones(2)),
    lambda: irad.hessian(programs.twice)(0.7),
], ids=["value_and_grad", "has_aux", "vjp", "jvp", "jacfwd", "jacrev", "hessian"])
def test_every_transformation_runs_the_one_pipeline(call, monkeypatch):
    assert [name for name, _ in _passes_of(call, monkeypatch)] == CODE_TO_RUN


def test_an_unknown_pass_name_is_refused():
    with pytest.raises(ValueError, match="irad-nonsense"):
        pipeline.pipeline("irad-optimize,irad-nonsense")
