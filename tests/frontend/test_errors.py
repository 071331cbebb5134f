"""Everything outside irad's Python subset is rejected with an irad.IradError
whose message starts with `file:line:col:` of the offending construct (in this
file) and gives a hint -- never an internal exception (KeyError,
AttributeError, AssertionError, xDSL VerifyException, ...).

Each offending line below ends with a marker comment `# E:<tag>`; the expected
line number is read from this file, and the expected column is where the
construct's text starts on that line.
"""

from __future__ import annotations

import functools
import inspect
import math
import pathlib
import random
import re
from dataclasses import dataclass

import numpy as np
import pytest

import irad

THIS_FILE = pathlib.Path(__file__).resolve()
SOURCE_LINES = THIS_FILE.read_text().splitlines()
LOCATION = re.compile(r"^(?P<file>[^\n]+?):(?P<line>\d+):(?P<col>\d+): ")


def marker_line(tag: str) -> int:
    hits = [i + 1 for i, text in enumerate(SOURCE_LINES) if text.rstrip().endswith(f"# E:{tag}")]
    assert len(hits) == 1, f"marker {tag!r} found {len(hits)} times"
    return hits[0]


# ---------------------------------------------------------------------------
# Helpers the programs below call
# ---------------------------------------------------------------------------


def square(v):
    return v * v


def pair(a, b):
    return a + b, a * b


def returns_nothing(v):
    pass


def helper_returns_module(v):
    return math  # E:returns_module


def passthrough(fn):
    """A decorator that returns the function itself."""
    return fn


class Scaler:
    def __init__(self, k):
        self.k = k

    def scale(self, v):
        return self.k * v

    def __call__(self, v):
        return self.k * v


SCALER = Scaler(2.0)
COEFFS = [1.0, 2.0]
TUP = (1.0, 2.0)
NAME = "abc"
BIG = 2**80
_namespace: dict = {}
exec("def from_exec(x):\n    return x * x\n", _namespace)
FROM_EXEC = _namespace["from_exec"]


def make_nonlocal():
    total = 0.0

    def uses_nonlocal(x):
        nonlocal total  # E:nonlocal
        return x + total

    return uses_nonlocal


def make_closure_with_loop(k):
    def closure_loop(x):
        while (y := x - 1.0) > k:  # E:closure_while
            x = y
        return x

    return closure_loop


# ---------------------------------------------------------------------------
# Unsupported statements
# ---------------------------------------------------------------------------


def s_if(x):
    if x > 0.0:
        y = (x, x)
    else:
        y = x
    return y[0]  # where y is read (Python's holds one of them) # E:if


def s_while(x):
    while (y := x / 2.0) > 1.0:  # E:while
        x = y
    return x


def s_try(x):
    try:  # E:try
        y = 1.0 / x
    except ZeroDivisionError:
        y = 0.0
    return y


def s_raise(x):
    raise  # E:raise


def s_with(x):
    with open("f") as fh:  # E:with
        pass
    return x


def s_import(x):
    import irad_no_such_module  # E:import

    return x


def s_import_from(x):
    from math import no_such_function  # E:import_from

    return no_such_function(x)


def s_class(x):
    class Inner:  # E:class
        pass

    return x


def s_global(x):
    global COEFFS  # E:global
    return x


def s_del(x):
    y = x
    del y  # E:del
    return x


def s_match(x):
    match (x, x):
        case (a, b):  # E:match
            return a
    return x


def s_yield(x):
    yield x  # E:yield


def s_yield_from(x):
    yield from (x, x)  # E:yield_from


@passthrough
def s_decorated_if(x):
    if x > 0.0:
        x = math
    return x  # E:decorated_if


def s_aug_subscript(x):
    t = (x, x)
    t[0] += x  # E:aug_subscript
    return x


def s_assign_subscript(x):
    t = (x, x)
    t[0] = x  # E:assign_subscript
    return x


def s_assign_attribute(x):
    x.real = 1.0  # E:assign_attribute
    return x


# ---------------------------------------------------------------------------
# Unsupported expressions
# ---------------------------------------------------------------------------


def e_set(x):
    s = {x, 2.0}  # E:set
    return x


def e_setcomp(x):
    s = {t for t in (x, x)}  # E:setcomp
    return x


def e_dictcomp(x):
    s = {t: t for t in (x, x)}  # E:dictcomp
    return x


def e_fstring(x):
    s = f"{x}"  # E:fstring
    return x


def e_complex_literal(x):
    return x * 1j  # E:complex_literal


def e_walrus(x):
    return x if x > 0.0 else (y := x * 2.0) * y  # E:walrus


def e_starred_call(x):
    t = (x, x)
    return square(*t)  # E:starred_call


def e_kwargs_call(x):  # a dict expands (tests/frontend/test_program_idioms.py); a list does not
    pairs = [("v", x)]
    return square(**pairs)  # E:kwargs_call


def e_attribute(x):
    return x.real  # E:attribute


def e_method(x):
    return x.conjugate()  # E:method


def e_recursion(x):  # E:recursion
    if x > 0.0:
        return e_recursion(x - 1.0)


def e_erfc(x):
    return math.erfc(x)  # E:erfc


def e_comb(x):
    return math.comb(x, 2)  # E:comb


def e_hash(x):
    return hash(x) * x  # E:hash


def e_complex_call(x):
    return complex(x)  # E:complex_call


def e_numpy_fft(x):
    return np.fft.fft(x)  # E:numpy_fft


def e_random(x):
    return random.random() * x  # E:random


def e_is(x, y):
    return x if x is y else y  # E:is


def e_in(x, y):
    return x if x in y else y  # E:in


def e_bitand(x, n, m):
    return x * (n & m)  # E:bitand


def e_bitor(x, n, m):
    return x * (n | m)  # E:bitor


def e_bitxor(x, n, m):
    return x * (n ^ m)  # E:bitxor


def e_lshift(x, n, m):
    return x * (n << m)  # E:lshift


def e_rshift(x, n, m):
    return x * (n >> m)  # E:rshift


def e_invert(x, n, m):
    return x * ~n  # E:invert


def e_matmul(x, y):
    return x @ y  # E:matmul


def e_subscript_number(x):
    return x[0]  # E:subscript_number


def e_tuple_index_range(x):
    t = (x, x)
    return t[5]  # E:tuple_index_range


def e_unpack_count(x):
    a, b = (x, x, x)  # E:unpack_count
    return a


def e_unpack_number(x):
    a, b = x  # E:unpack_number
    return a


def e_sin_keyword(x):
    return math.sin(x=x)  # E:sin_keyword


def e_log_base(x):
    return math.log(x, 2.0)  # E:log_base


def e_max_one(x):
    return max(x)  # E:max_one


def e_sin_two(x):
    return math.sin(x, x)  # E:sin_two


def e_call_number(x):
    return x(1.0)  # E:call_number


def e_undefined(x):
    return x + undefined_name  # noqa: F821  # E:undefined


def e_missing_attribute(x):
    return math.foo(x)  # E:missing_attribute


def e_module_number(x):
    return x + math  # E:module_number


def e_function_number(x):
    return x + square  # E:function_number


def e_global_string(x):
    return NAME * x  # E:global_string


def e_int_pow_runtime(x, n, m):
    return x * n**m  # E:int_pow_runtime


def e_bad_arity(x):
    return square(x, x)  # E:bad_arity


def e_bad_keyword(x):
    return square(x, q=1.0)  # E:bad_keyword


def e_returns_nothing(x):
    return returns_nothing(x) + 1.0  # E:returns_nothing


def e_tuple_arithmetic(x):
    return pair(x, x) + 1.0  # E:tuple_arithmetic


def adds_one(v):
    return v + 1.0  # E:tuple_argument


def e_tuple_argument(x):
    return adds_one((x, x))


def e_none_branch(x):
    return x if x > 0.0 else None  # E:none_branch


def e_class_call(x):
    return Scaler(x)  # E:class_call


def e_returns_module(x):
    return helper_returns_module(x)


def e_return_module(x):
    return math  # E:return_module


def e_return_function(x):
    return square  # E:return_function


def e_comprehension_runtime_if(x):
    return [t for t in (x, 2.0) if t > 0.0][0]  # E:comprehension_runtime_if


def e_iterate_float(x):
    for t in x:  # E:iterate_float
        x = x * t
    return x


def e_decorated_nested_def(x):
    @passthrough  # E:decorated_nested_def
    def inner(t):
        return t

    return inner(x)


def e_kwargs_of_number(x):
    return square(**x)  # E:kwargs_of_number


def e_print_to_file(x):
    print(x, file=SCALER)  # E:print_to_file
    return x


def helper_returns_lambda(v):
    return lambda t: t * v


def e_returns_lambda(x):  # the transformed function returns data (a helper may return a function)
    return helper_returns_lambda(x)  # E:returns_lambda


def e_calls_exec(x):
    return FROM_EXEC(x) * 2.0  # E:calls_exec


def e_big_literal(x):
    return x * 100000000000000000000000  # E:big_literal


def e_big_global(x):
    return x * BIG  # E:big_global


async def e_async(x):  # E:async
    return x


e_nonlocal = make_nonlocal()
e_closure_while = make_closure_with_loop(3.0)


@dataclass
class Case:
    tag: str
    fn: object
    args: tuple
    snippet: str | None  # where on the marked line the construct starts (None: any column)
    kind: type = irad.UnsupportedError


CASES = [
    # statements
    Case("if", s_if, (1.0,), "y[0]"),
    Case("while", s_while, (1.0,), "y :="),
    Case("try", s_try, (1.0,), "try"),
    Case("raise", s_raise, (1.0,), "raise"),
    Case("with", s_with, (1.0,), "with"),
    Case("import", s_import, (1.0,), "import"),
    Case("import_from", s_import_from, (1.0,), "from"),
    Case("class", s_class, (1.0,), "class"),
    Case("global", s_global, (1.0,), "global"),
    Case("nonlocal", e_nonlocal, (1.0,), "nonlocal"),
    Case("del", s_del, (1.0,), "del"),
    Case("match", s_match, (1.0,), "(a, b)"),
    Case("yield", s_yield, (1.0,), "yield"),
    Case("yield_from", s_yield_from, (1.0,), "yield"),
    Case("decorated_if", s_decorated_if, (1.0,), "x  #"),
    Case("aug_subscript", s_aug_subscript, (1.0,), "t[0]"),
    Case("assign_subscript", s_assign_subscript, (1.0,), "t[0]"),
    Case("assign_attribute", s_assign_attribute, (1.0,), "x.real"),
    Case("closure_while", e_closure_while, (5.0,), "y :="),
    # expressions
    Case("set", e_set, (1.0,), "{"),
    Case("setcomp", e_setcomp, (1.0,), "{"),
    Case("dictcomp", e_dictcomp, (1.0,), "{"),
    Case("fstring", e_fstring, (1.0,), 'f"'),
    Case("complex_literal", e_complex_literal, (1.0,), "1j"),
    Case("walrus", e_walrus, (1.0,), "y :="),
    Case("starred_call", e_starred_call, (1.0,), "square("),
    Case("kwargs_call", e_kwargs_call, (1.0,), "pairs"),
    Case("attribute", e_attribute, (1.0,), "x.real"),
    Case("method", e_method, (1.0,), "x.conjugate"),
    Case("recursion", e_recursion, (1.0,), None),
    Case("erfc", e_erfc, (1.0,), "math.erfc("),
    Case("comb", e_comb, (3,), "math.comb("),
    Case("hash", e_hash, (1.0,), "hash("),
    Case("complex_call", e_complex_call, (1.0,), "complex("),
    Case("numpy_fft", e_numpy_fft, (1.0,), "np.fft.fft("),
    Case("random", e_random, (1.0,), "random.random("),
    Case("is", e_is, (1.0, 2.0), "x is y"),
    Case("in", e_in, (1.0, 2.0), "x in y"),
    Case("bitand", e_bitand, (1.0, 6, 3), "n & m"),
    Case("bitor", e_bitor, (1.0, 6, 3), "n | m"),
    Case("bitxor", e_bitxor, (1.0, 6, 3), "n ^ m"),
    Case("lshift", e_lshift, (1.0, 6, 3), "n << m"),
    Case("rshift", e_rshift, (1.0, 6, 3), "n >> m"),
    Case("invert", e_invert, (1.0, 6, 3), "~n"),
    Case("matmul", e_matmul, (1.0, 2.0), "x @ y"),
    Case("subscript_number", e_subscript_number, (1.0,), "x[0]"),
    Case("tuple_index_range", e_tuple_index_range, (1.0,), "t[5]"),
    Case("unpack_count", e_unpack_count, (1.0,), "a, b"),
    Case("unpack_number", e_unpack_number, (1.0,), "a, b"),
    Case("sin_keyword", e_sin_keyword, (1.0,), "math.sin("),
    Case("log_base", e_log_base, (1.0,), "math.log("),
    Case("max_one", e_max_one, (1.0,), "max("),
    Case("sin_two", e_sin_two, (1.0,), "math.sin("),
    Case("call_number", e_call_number, (1.0,), "x(1.0)"),
    Case("undefined", e_undefined, (1.0,), "undefined_name"),
    Case("missing_attribute", e_missing_attribute, (1.0,), "math.foo"),
    Case("module_number", e_module_number, (1.0,), "math"),
    Case("function_number", e_function_number, (1.0,), "square"),
    Case("global_string", e_global_string, (1.0,), "NAME"),
    Case("int_pow_runtime", e_int_pow_runtime, (1.0, 2, 3), "n**m"),
    Case("bad_arity", e_bad_arity, (1.0,), "square("),
    Case("bad_keyword", e_bad_keyword, (1.0,), "square("),
    Case("returns_nothing", e_returns_nothing, (1.0,), "returns_nothing("),
    Case("tuple_arithmetic", e_tuple_arithmetic, (1.0,), "pair("),
    Case("tuple_argument", e_tuple_argument, (1.0,), "v + 1.0"),
    Case("none_branch", e_none_branch, (1.0,), "None"),
    Case("class_call", e_class_call, (1.0,), "Scaler("),
    Case("returns_module", e_returns_module, (1.0,), "return"),
    Case("return_module", e_return_module, (1.0,), "return"),
    Case("return_function", e_return_function, (1.0,), "return"),
    Case("calls_exec", e_calls_exec, (1.0,), "FROM_EXEC("),
    Case("async", e_async, (1.0,), "async"),
    Case("comprehension_runtime_if", e_comprehension_runtime_if, (1.0,), "t > 0.0"),
    Case("iterate_float", e_iterate_float, (1.0,), None),
    Case("decorated_nested_def", e_decorated_nested_def, (1.0,), "passthrough"),
    Case("kwargs_of_number", e_kwargs_of_number, (1.0,), None),
    Case("print_to_file", e_print_to_file, (1.0,), "print("),
    Case("returns_lambda", e_returns_lambda, (1.0,), "return"),
]


def _lower_error(case: Case) -> BaseException:
    with pytest.raises(irad.IradError) as info:
        irad.lower(case.fn, *case.args)
    return info.value


@pytest.mark.parametrize("case", CASES, ids=[c.tag for c in CASES])
def test_unsupported_construct_is_located(case: Case):
    error = _lower_error(case)
    assert isinstance(error, case.kind), type(error)
    message = str(error)
    line = marker_line(case.tag)
    match = LOCATION.match(message)
    assert match, f"message does not start with file:line:col: -- {message!r}"
    assert pathlib.Path(match["file"]).name == THIS_FILE.name, message
    assert int(match["line"]) == line, f"expected line {line}: {message!r}"
    if case.snippet is not None:
        col = SOURCE_LINES[line - 1].index(case.snippet) + 1
        assert int(match["col"]) == col, f"expected column {col}: {message!r}"


@pytest.mark.parametrize(
    "case", [c for c in CASES if isinstance(c.args[0], float)], ids=lambda c: c.tag
)
def test_grad_of_unsupported_construct_raises_the_same_error(case: Case):
    expected = str(_lower_error(case))
    for transform in (irad.grad(case.fn), irad.value_and_grad(case.fn)):
        with pytest.raises(irad.IradError) as info:
            transform(*case.args)
        assert str(info.value) == expected
    with pytest.raises(irad.IradError) as info:
        irad.vjp(case.fn, *case.args)
    assert str(info.value) == expected


def test_every_error_has_a_hint():
    missing = []
    for case in CASES:
        message = str(_lower_error(case))
        if "\n  hint: " not in message:
            missing.append(f"{case.tag}: {message}")
    assert not missing, "errors without a hint:\n" + "\n".join(missing)


def test_error_is_not_cached_and_repeats():
    first = str(_lower_error(CASES[0]))
    assert str(_lower_error(CASES[0])) == first


@pytest.mark.parametrize(
    "fn,tag,snippet",
    [(e_big_literal, "big_literal", "100000000000000000000000"), (e_big_global, "big_global", "BIG")],
    ids=["literal", "global"],
)
def test_int_beyond_i64_is_correct_or_rejected(fn, tag, snippet):
    # x * 10**23: Python gives a float; irad must agree or raise a located error
    try:
        value, g = irad.value_and_grad(fn)(1.5)
    except irad.IradError as error:
        match = LOCATION.match(str(error))
        assert match and int(match["line"]) == marker_line(tag), str(error)
        return
    assert value == fn(1.5) and g == fn(1.0)


# ---------------------------------------------------------------------------
# Decorated functions: the decorator's behaviour must not be silently dropped
# ---------------------------------------------------------------------------


def doubled(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        return 2.0 * fn(*args)

    return wrapper


@doubled
def decorated_square(x):
    return x * x


@functools.lru_cache(maxsize=None)
def cached_square(x):
    return x * x


def test_wrapped_function_is_correct_or_rejected():
    # decorated_square(x) == 2 x^2: the gradient at 3 is 12, or irad must refuse
    try:
        g = irad.grad(decorated_square)(3.0)
    except irad.IradError:
        return
    assert g == 12.0, f"grad of a functools.wraps-decorated function ignores the decorator: {g}"


def test_lru_cached_function_is_correct_or_rejected():
    try:
        g = irad.grad(cached_square)(3.0)
    except irad.IradError:
        return
    assert g == 6.0


# ---------------------------------------------------------------------------
# Functions without usable source
# ---------------------------------------------------------------------------

@pytest.mark.parametrize(
    "fn",
    [FROM_EXEC, np.spacing, Scaler, cached_square],
    ids=["exec", "np.spacing", "class", "lru_cache"],
)
def test_entry_without_source(fn):
    with pytest.raises(irad.IradError):
        irad.grad(fn)(1.0)
    with pytest.raises(irad.IradError):
        irad.lower(fn, 1.0)
    with pytest.raises(irad.IradError):
        irad.vjp(fn, 1.0)


# ---------------------------------------------------------------------------
# Bad example arguments
# ---------------------------------------------------------------------------


def two_args(x, y):
    return x * y


def returns_tuple(x, y):
    return x * y, x + y


def returns_int(x, n):
    return n * 2


def returns_bool(x):
    return x > 0.0


def returns_none(x):
    pass


def returns_floor(x):
    return math.floor(x)


BAD_VALUES = [
    "1.0", 1 + 2j, np.array([1j]), np.float16(1.0), np.array([1.0], dtype=np.float16), {1.0},
    [1.0, "a"], {"x": (1.0, None, 1j)}, {1: 2.0}, object(),
]
BAD_IDS = [
    "str", "complex", "complex ndarray", "float16", "float16 ndarray", "set",
    "list with a str", "dict with a complex", "dict with int keys", "object",
]
BAD_TYPES = ["str", "complex", "complex128", "float16", "float16", "set", "str", "complex", "dict", "object"]
BAD_PATHS = ["{}", "{}", "{}", "{}", "{}", "{}", "{}[1]", "{}['x'][2]", "{}", "{}"]


@pytest.mark.parametrize("bad,type_name,path", list(zip(BAD_VALUES, BAD_TYPES, BAD_PATHS)), ids=BAD_IDS)
@pytest.mark.parametrize("position", [0, 1])
def test_bad_example_arguments(bad, type_name, path, position):
    """A bad argument names the caller's line, the function and its def line,
    the argument (its name and the path to the bad value), its type and what
    irad takes."""
    args = [1.0, 2.0]
    args[position] = bad
    name = ("x", "y")[position]
    calls = [
        lambda: irad.grad(two_args, argnums=1 - position)(*args),
        lambda: irad.value_and_grad(two_args, argnums=1 - position)(*args),
        lambda: irad.vjp(two_args, *args),
        lambda: irad.lower(two_args, *args),
        lambda: irad.grad(two_args, argnums=1 - position).lower(*args),
        lambda: irad.jacrev(two_args, argnums=1 - position)(*args),
        lambda: irad.jvp(two_args, tuple(args), (1.0, 1.0)),
    ]
    for call in calls:
        with pytest.raises(irad.IradError) as info:
            call()
        message = str(info.value)
        call_line = inspect.getsourcelines(call)[1]
        assert message.startswith(f"{THIS_FILE}:{call_line}: "), message
        assert f"two_args cannot take argument {position} ('{name}'): {path.format(name)} is a" in message
        assert type_name in message.splitlines()[0], message
        assert f"two_args is defined at {THIS_FILE}:{inspect.getsourcelines(two_args)[1]}" in message
        assert "hint: irad takes float, int or bool scalars" in message


def test_wrong_number_of_example_arguments():
    for args in ((1.0,), (1.0, 2.0, 3.0)):
        with pytest.raises(irad.IradError) as info:
            irad.grad(two_args)(*args)
        assert f"{THIS_FILE.name}:" in str(info.value)


# ---------------------------------------------------------------------------
# argnums
# ---------------------------------------------------------------------------


def mixed(x, n, flag, y):
    return x * n + (y if flag else -y)


MIXED_ARGS = (1.0, 3, True, 2.0)


@pytest.mark.parametrize("argnums", [4, -5, 100, (0, 4), (-5,)])
def test_argnums_out_of_range(argnums):
    with pytest.raises(irad.IradError) as info:
        irad.grad(mixed, argnums=argnums)(*MIXED_ARGS)
    assert "out of range" in str(info.value)
    with pytest.raises(irad.IradError):
        irad.value_and_grad(mixed, argnums=argnums)(*MIXED_ARGS)


@pytest.mark.parametrize("argnums", [1, 2, -2, -3, (0, 1), (2, 3)])
def test_argnums_pointing_at_int_or_bool(argnums):
    with pytest.raises(irad.IradError) as info:
        irad.grad(mixed, argnums=argnums)(*MIXED_ARGS)
    assert "hint:" in str(info.value)


@pytest.mark.parametrize("argnums", [(), (0, 0), (3, -1), 1.0, "x", None, (0.0,)])
def test_argnums_malformed(argnums):
    with pytest.raises(irad.IradError):
        irad.grad(mixed, argnums=argnums)(*MIXED_ARGS)


def test_argnums_error_from_lower_method():
    with pytest.raises(irad.IradError):
        irad.grad(mixed, argnums=1).lower(*MIXED_ARGS)


# ---------------------------------------------------------------------------
# grad of functions not returning one float; vjp pullback misuse
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fn,args",
    [
        (returns_tuple, (1.0, 2.0)),
        (returns_int, (1.0, 2)),
        (returns_bool, (1.0,)),
        (returns_none, (1.0,)),
        (returns_floor, (1.0,)),
    ],
    ids=["tuple", "int", "bool", "none", "floor"],
)
def test_grad_needs_one_float_output(fn, args):
    for transform in (irad.grad, irad.value_and_grad):
        with pytest.raises(irad.IradError) as info:
            transform(fn)(*args)
        assert "hint:" in str(info.value)


def single_output(x, y):
    return x * y


@pytest.mark.parametrize("cotangent", [(1.0, 2.0), (1.0,), [1.0, 2.0, 3.0]], ids=str)
def test_pullback_of_single_output_with_tuple(cotangent):
    _, pullback = irad.vjp(single_output, 1.0, 2.0)
    with pytest.raises(irad.IradError):
        pullback(cotangent)


@pytest.mark.parametrize(
    "cotangent", [(1.0,), (1.0, 2.0, 3.0), 1.0, [], "ab"], ids=["one", "three", "float", "empty", "str"]
)
def test_pullback_of_tuple_output_with_wrong_cotangents(cotangent):
    _, pullback = irad.vjp(returns_tuple, 1.0, 2.0)
    with pytest.raises(irad.IradError):
        pullback(cotangent)


def test_pullback_with_non_number_cotangent():
    _, pullback = irad.vjp(single_output, 1.0, 2.0)
    with pytest.raises(irad.IradError):
        pullback("1.0x")
    with pytest.raises(irad.IradError):
        pullback(None)


def test_vjp_still_works_after_errors():
    _, pullback = irad.vjp(returns_tuple, 1.0, 2.0)
    with pytest.raises(irad.IradError):
        pullback((1.0,))
    assert pullback((1.0, 1.0)) == (3.0, 2.0)


@pytest.mark.parametrize("fn, derivative", [(math.sin, math.cos), (abs, lambda x: -1.0)])
def test_library_function_as_entry(fn, derivative):
    """A library function the frontend knows needs no source: its op is the body."""
    assert irad.grad(fn)(-0.7) == pytest.approx(derivative(-0.7), rel=1e-15)
