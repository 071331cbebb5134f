"""Closures and functions as values: lambdas and nested defs closing over
run-time values (differentiated through), functools.partial, functions handed
to helpers (specialised while lowering), methods of objects known while
lowering, decorated functions. Values against the programs run as numpy,
gradients against central differences in float64, on both backends."""

import re
import warnings

import numpy as np
import pytest

import irad
from irad.base.errors import IradWarning
from irad.frontend import signature_of
from irad.pipeline import lowered
from tests.frontend import closure_programs as cp
from tests.reference import BACKENDS, check_against_numpy, check_refused, refused_line



@pytest.mark.filterwarnings("ignore::irad.base.errors.IradWarning")  # the native backend drops prints
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", cp.PROGRAMS, ids=[c[0].__name__ for c in cp.PROGRAMS])
def test_closures_match_numpy(case, backend):
    f, make = case
    check_against_numpy(f, make(np.random.default_rng(1)), backend)


def _module(f, *args):
    module, *_ = lowered(f, signature_of(f, args))
    return module


def _functions(module) -> dict[str, str]:
    from xdsl.dialects import func

    return {op.sym_name.data: str(op) for op in module.ops if isinstance(op, func.FuncOp)}


def test_a_closure_is_a_function_of_what_it_captures():
    # closure conversion: the lambda becomes its own func.func whose leading
    # arguments are the run-time values it reads from lambda_closure (x and y)
    functions = _functions(_module(cp.lambda_closure, 0.7, -1.3))
    (name,) = [n for n in functions if n.endswith(".lambda")]
    assert re.search(r"func.func private @lambda_closure\.lambda\(%y: f64, %x: f64, %t: f64\)",
                     functions[name]), functions[name]
    assert functions["lambda_closure"].count(f"func.call @{name}") == 2


def test_a_helper_is_specialised_per_function_argument():
    functions = _functions(_module(cp.function_arguments, 0.6, 1.2))
    applies = [n for n in functions if n.startswith("apply")]
    assert len(applies) == 4  # one per function handed to it: a lambda, np.sin, math.cos, CUBE
    bodies = "\n".join(functions[n] for n in applies)
    assert "math.sin" in bodies and "math.cos" in bodies
    for n in applies:  # the function is not an argument at run time: only the number is
        assert re.search(rf"@{re.escape(n)}\((%\w+: f64(, )?)+\)", functions[n]), functions[n]


def test_model_weights_are_hidden_arguments_read_at_each_call():
    x = np.ones(3)
    functions = _functions(_module(cp.model_forward, x))
    # one specialisation of Dense.__call__ per layer object; its weights are the
    # hidden arguments named after where they live (irad/frontend/globals.py)
    calls = sorted(n for n in functions if n.startswith("__call__"))
    assert len(calls) == 2
    for k, n in enumerate(calls):
        assert f"%MODEL.layers.{k}.W: tensor" in functions[n]
        assert "arith.constant dense<[[" not in functions[n]  # no weights baked in
    g = irad.grad(cp.model_forward)
    before = g(x)
    W = cp.MODEL.layers[0].W
    saved = W.copy()
    try:
        W *= 2.0  # the next call reads the new weights
        np.testing.assert_allclose(g(x), irad.grad(cp.model_forward)(x))
        assert not np.allclose(g(x), before)
        check_against_numpy(cp.model_forward, (x,))
    finally:
        W[:] = saved


def test_a_wrapper_irad_cannot_lower_falls_back_on_wrapped_with_a_warning():
    with pytest.warns(IradWarning, match=r"closure_programs\.py:\d+:1: irad cannot lower the wrapper "
                      r"timed.<locals>.wrapper that a decorator put around .*timed_exp \(.*call to "
                      r"time.perf_counter is not supported.*differentiates the wrapped function"):
        value, grad = irad.value_and_grad(cp.timed_exp)(0.5)
    assert value == cp.timed_exp(0.5)
    assert abs(grad - (np.exp(0.5) * 1.5)) < 1e-12


def test_a_wrapper_irad_lowers_is_differentiated_with_it():
    assert irad.grad(cp.doubled_sin)(0.3) == 2.0 * np.cos(0.3)


def test_a_wrapper_that_prints_prints_once_per_call(capsys):
    irad.grad(cp.logged_poly, argnums=(0, 1))(0.9, 1.4)
    assert capsys.readouterr().out == "calling logged_poly\n"


def test_a_decorated_entry_lowers_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_against_numpy(cp.calls_decorated, (0.9, 1.4))


# ---- refused -------------------------------------------------------------------------------
def returns_a_closure(k):
    return lambda t: t * k


def calls_a_closure_factory(x):
    return returns_a_closure(x)(x)


def mutual_recursion(x):
    def even(n):
        return x if n == 0 else odd(n - 1)

    def odd(n):  # <- refused
        return 2.0 * x if n == 0 else even(n - 1)

    return even(3)


def decorated_nested(x):
    @staticmethod  # <- refused
    def f(t):
        return t

    return f(x)


def creates_an_object(x):
    return cp.Scaler(x).scale(x)  # <- refused


def _apply(f, v):
    return f(v)


def nonlocal_passed_on(x):
    y = x

    def bump(v):
        nonlocal y
        y = y + v

    def apply(f, v):
        return f(v)  # <- refused

    apply(bump, 1.0)
    return y


def nonlocal_called_by_another_closure(x):
    y = x

    def bump():
        nonlocal y
        y = y + 1.0

    def twice():
        bump()  # <- refused
        bump()

    twice()
    return y


def nonlocal_read_before_assigned(x):
    def bump():  # <- refused
        nonlocal y
        y = y + 1.0

    bump()
    y = x
    return y


def bad_call_of_a_lambda(x):
    f = lambda a, b: a * b  # noqa: E731
    return f(x)  # <- refused


def writes_a_captured_array(x):
    y = x * 1.0

    def fill():
        y[0] = 1.0  # <- refused

    fill()
    return np.sum(y)


def reads_a_function_the_loop_rebinds(x, n):
    g = lambda t: t  # noqa: E731
    s = 0.0
    for i in range(n):
        s = s + g(x)  # <- refused
        g = lambda t: t * x  # noqa: E731
    return s


def reads_after_a_loop_that_may_not_run(x, n):
    g = lambda t: t  # noqa: E731
    for i in range(n):
        g = lambda t: t * x  # noqa: E731
    return g(x)  # <- refused


def reads_after_a_break_before_the_binding(x):
    g = lambda t: t  # noqa: E731
    for i in range(3):
        if x > 1.0:
            break
        g = lambda t: t * x  # noqa: E731
    return g(x)  # <- refused


def reads_defaults_of_the_last_iteration(x):
    g = lambda t: t  # noqa: E731
    for i in range(3):
        g = lambda t, a=x * i: t * a  # noqa: E731
    return g(x)  # <- refused


REFUSED = [
    (mutual_recursion, (1.0,), "the nested functions mutual_recursion.odd and mutual_recursion.even call each other"),
    (decorated_nested, (1.0,), "a decorator on a nested function is not supported"),
    (creates_an_object, (1.0,), "creating a .*Scaler object inside a program is not supported"),
    (nonlocal_passed_on, (1.0,), "nonlocal_passed_on.bump writes 'y' of the function that defines it "
     r"\(`nonlocal`\), and is called where that function's variables cannot be written"),
    (nonlocal_called_by_another_closure, (1.0,), "nonlocal_called_by_another_closure.bump writes 'y' of the "
     "function that defines it .*called by another nested function"),
    (nonlocal_read_before_assigned, (1.0,), "nonlocal_read_before_assigned.bump reads 'y', which has no value "
     "where it is called"),
    (bad_call_of_a_lambda, (1.0,), "bad call to bad_call_of_a_lambda.lambda: missing a required argument: 'b'"),
    (writes_a_captured_array, (np.ones(2),), "in-place write to the argument array 'y'"),
    (reads_a_function_the_loop_rebinds, (1.0, 2), "'g' has no value here: it is a function the loop at "
     r"\S*test_closures.py:\d+:5 binds anew, and a loop lowered to scf.for or scf.while carries only run-time "
     "values .*: before the body binds it again, it would be the one from before the loop in the first iteration"),
    (reads_after_a_loop_that_may_not_run, (1.0, 2), "'g' has no value here: it is a function the loop at .*"
     "after it, irad cannot tell it from the one before the loop: the body may not run"),
    (reads_after_a_break_before_the_binding, (1.0,), "after it, irad cannot tell it from the one before the loop: "
     r"the body may not run, or not reach its binding \(a `break`, `continue` or `return` in the loop\)"),
    (reads_defaults_of_the_last_iteration, (1.0,), "after it, it would be the last iteration's, whose run-time "
     r"values \(its defaults\) the loop does not carry"),
]


@pytest.mark.parametrize("f, args, message", REFUSED, ids=[c[0].__name__ for c in REFUSED])
def test_refused_closures_name_the_line(f, args, message):
    check_refused(f, args, message)


def test_a_returned_closure_is_called_by_its_caller():
    # tests/api/test_returned_functions.py has the JAX idioms on both backends
    assert irad.grad(calls_a_closure_factory)(1.5) == pytest.approx(2 * 1.5, rel=1e-14)


def test_the_nonlocal_rewrite_its_refusal_gives_runs():
    """The hint of a closure with `nonlocal` handed on: pass the value in and return it."""
    def step(y, v):
        return y + v

    def passed_on(x):
        y = x
        y = _apply(lambda v: step(y, v), 1.0)
        return y * y

    check_against_numpy(passed_on, (1.5,), "python")
