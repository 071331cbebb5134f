"""`irad lower` and `irad explain` with --static-argnums, as irad.grad's."""

import numpy as np
import pytest

from irad.cli import main


def head_squares(x, n):
    return np.sum(np.asarray(x)[:n] ** 2)


SPEC = f"{__file__}:head_squares"


def test_lower_and_explain_take_static_argnums(capsys):
    main(["lower", SPEC, "[1.0, 2.0, 3.0]", "2", "--static-argnums", "1"])
    assert "irad.static = {n = 2 : i64}" in capsys.readouterr().out
    main(["lower", SPEC, "[1.0, 2.0, 3.0]", "2", "--static-argnums", "1", "--transform", "grad", "--argnums", "0"])
    assert "irad.grad @head_squares" in capsys.readouterr().out
    main(["explain", SPEC, "[1.0, 2.0, 3.0]", "2", "--static-argnums", "1"])
    assert "@head_squares is specialised on n=2" in capsys.readouterr().out


def test_without_them_the_error_names_the_option(capsys):
    with pytest.raises(SystemExit):
        main(["lower", SPEC, "[1.0, 2.0, 3.0]", "2"])
    assert "static_argnums=(1,)" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["explain", SPEC, "[1.0, 2.0, 3.0]", "2", "--static-argnums", "n"])
    assert "expected comma-separated argument indices such as 0,2, got 'n'" in capsys.readouterr().err
