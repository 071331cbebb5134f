"""`irad lower --transform vmap` and `irad explain --mode vmap` (with the
masked loops of varying trip counts)."""

import pytest

from irad.cli import main


def prefix(x, n):
    s = 0.0
    for i in range(n):
        s = s + x[i] * x[i]
    return s


def halve(x, w):
    if x > 0.0:
        y = x * w
    else:
        y = -x
    while y > 1.0:
        y = y / 2.0
    return y


def test_lower_shows_the_vmap_request_and_the_pipeline_rewrites_it(capsys):
    main(["lower", f"{__file__}:prefix", "[[1.0, 2.0], [3.0, 4.0]]", "[1, 2]", "--transform", "vmap"])
    out = capsys.readouterr().out
    assert "irad.vmap @prefix(%x, %n) {in_axes = [0, 0], out_axes = [0], axis_size = 2}" in out
    main(["lower", f"{__file__}:prefix", "[[1.0, 2.0], [3.0, 4.0]]", "[1, 2]", "--transform", "vmap", "--pipeline"])
    out = capsys.readouterr().out
    assert "irad.vmap" not in out and "func.func @prefix.vmap(%x: tensor<2x2xf64>, %n: tensor<2xi64>)" in out


def test_explain_reports_the_batching_decisions(capsys):
    main(["explain", f"{__file__}:halve", "[1.0, -2.0, 3.0]", "2.0", "--mode", "vmap", "--in-axes", "(0, None)"])
    assert capsys.readouterr().out.splitlines() == [
        "irad explain: vmap of halve, in_axes=(0, None), out_axes=0",
        "  @halve as @halve.vmap.bu (x batched, w shared) -> (batched)",
        "    scf.if: its condition varies along the batch: both branches run, each element's result selected",
        "    scf.while: its condition varies along the batch: it runs to the largest trip count, with a mask",
    ]
    main(["explain", f"{__file__}:prefix", "[[1.0, 2.0], [3.0, 4.0]]", "3", "--mode", "vmap", "--in-axes", "(0, None)"])
    assert "scf.for: its trip count is shared by the batch" in capsys.readouterr().out


def test_bad_axes_are_an_error(capsys):
    with pytest.raises(SystemExit):
        main(["lower", f"{__file__}:prefix", "[[1.0]]", "[1]", "--transform", "vmap", "--in-axes", "(0, x)"])
    assert "--in-axes and --out-axes must be Python literals" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["explain", f"{__file__}:prefix", "[[1.0], [2.0]]", "[1, 2, 3]", "--mode", "vmap"])
    assert "irad: error:" in capsys.readouterr().err
