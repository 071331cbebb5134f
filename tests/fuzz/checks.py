"""What the fuzzer checks of one program (tests/fuzz/generator.py):

* irad's value (its structure and every leaf, aux included) equals the program
  run as plain Python/numpy;
* the derivative the program's mode names (generator.Mode) equals central
  differences in float64, entry by entry, where the one-sided differences agree
  (the program is smooth there):
  - `value_and_grad` / `grad` (with has_aux where f returns aux): the gradient,
    of the arguments' structure (dicts, tuples and NamedTuples for tree entries),
    each array cotangent of its argument's shape and dtype;
  - `vjp`: the pullback of a random cotangent v (of the result's structure:
    floats, arrays, tuples, dicts) against the differences of <v, f(x)>;
  - `jacrev` / `jacfwd`: every column of the Jacobian against the differences
    of every result component;
* jvp agrees with the derivative checked: <J t, v> = <t, J^T v> for a random
  tangent t (J t itself for a Jacobian);
* on the compiled backends asked for (native, iree), value, derivative and jvp
  equal the Python backend's; IREE may refuse what it cannot compile, by name.

A refusal (irad.UnsupportedError) is accepted, in place of all of that, only
where it names a line the generator marked MAY_REFUSE (a float written into an
int numpy keeps and irad computes in float, numpy's bool scalars) and carries
a hint: `check_program` returns it (the campaign counts them).

Differences are taken on the program in float64 throughout: its float32
arguments are widened and `np.float32` in its source reads `np.float64`, so the
step is far above the rounding. Any other exception from irad is a failure:
the generator writes only the documented subset, so an "unsupported" error
elsewhere is a bug in irad or in the generator.
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

import numpy as np

import irad
from tests import generated_programs
from tests.fuzz.generator import MAY_REFUSE, Mode

REGRESSIONS = Path(__file__).parent / "regressions"


def load(source: str, directory: Path):
    """Import `source` as a module from a file (irad reads functions' source)."""
    return generated_programs.load(source, "fuzz_" + hashlib.sha1(source.encode()).hexdigest()[:12], directory)


# ---- trees, walked independently of irad's own flattening ----
def leaves(tree) -> list:
    """The leaves of a tree of dicts (in sorted key order), tuples, lists and NamedTuples."""
    if isinstance(tree, dict):
        return [leaf for key in sorted(tree) for leaf in leaves(tree[key])]
    if isinstance(tree, (tuple, list)):
        return [leaf for child in tree for leaf in leaves(child)]
    return [tree]


def rebuild(tree, values):
    """`tree` with its leaves replaced, in the order of `leaves`, from the iterator `values`."""
    if isinstance(tree, dict):
        new = {key: rebuild(tree[key], values) for key in sorted(tree)}
        return {key: new[key] for key in tree}
    if isinstance(tree, (tuple, list)):
        children = [rebuild(child, values) for child in tree]
        return type(tree)(*children) if hasattr(tree, "_fields") else type(tree)(children)
    return next(values)


def _is_active(leaf) -> bool:
    return (isinstance(leaf, float) and not isinstance(leaf, bool)) or (
        isinstance(leaf, np.ndarray) and leaf.dtype.kind == "f")


def _flat(values) -> np.ndarray:
    if not values:
        return np.zeros(0)
    return np.concatenate([np.atleast_1d(np.asarray(v, np.float64)).ravel() for v in values])


def same_structure(got, expected, where: str = "result", dtypes: bool = True) -> None:
    """`got` has `expected`'s structure: the same containers (NamedTuple classes by
    name), keys and lengths; arrays of the same shape (and dtype, with `dtypes`);
    numbers for numbers."""
    if isinstance(expected, dict):
        if not isinstance(got, dict) or set(got) != set(expected):
            raise AssertionError(f"{where}: {type(got).__name__} {_keys(got)}, expected a dict {sorted(expected)}")
        for key in expected:
            same_structure(got[key], expected[key], f"{where}[{key!r}]", dtypes)
    elif isinstance(expected, (tuple, list)):
        if type(got).__name__ != type(expected).__name__ or len(got) != len(expected):
            raise AssertionError(f"{where}: {type(got).__name__} of {_len(got)}, expected "
                                 f"{type(expected).__name__} of {len(expected)}")
        for i, (g, e) in enumerate(zip(got, expected)):
            same_structure(g, e, f"{where}[{i}]", dtypes)
    elif isinstance(expected, np.ndarray) and expected.ndim > 0:
        if not isinstance(got, np.ndarray) or got.shape != expected.shape or (dtypes and got.dtype != expected.dtype):
            raise AssertionError(f"{where}: {_describe(got)}, expected {_describe(expected)}")
    elif np.ndim(got) != 0 or isinstance(got, (dict, tuple, list)):
        raise AssertionError(f"{where}: {_describe(got)}, expected a number")


def _keys(t):
    return sorted(t) if isinstance(t, dict) else ""


def _len(t):
    return len(t) if hasattr(t, "__len__") else "-"


def _describe(v) -> str:
    return f"an array of {v.shape} and {v.dtype}" if isinstance(v, np.ndarray) else type(v).__name__


# ---- calling f as its mode says ----
def entry_arguments(module, args: tuple, mode: Mode) -> tuple:
    """f's arguments from the generator's (x, w, u, A, B, k)."""
    if mode.entry == "flat":
        return tuple(args)
    x, w, u, A, B, k = args
    return ({"x": x, "vs": (w, u)}, module.Mats(A, B), k)


def _argnums(call: tuple) -> tuple:
    """The arguments with float leaves."""
    return tuple(i for i, a in enumerate(call) if any(_is_active(leaf) for leaf in leaves(a)))


def _widened(tree):
    return rebuild(tree, iter([np.asarray(v, np.float64) if isinstance(v, np.ndarray) else v for v in leaves(tree)]))


def _out(result, mode: Mode):
    return result[0] if mode.aux else result


def _outputs(f, call, mode: Mode) -> np.ndarray:
    with np.errstate(all="ignore"):
        return _flat(leaves(_out(f(*call), mode)))


def differences(fun, call: tuple, nums: tuple, program: str | None = None):
    """(central, left, right, branches) differences in float64 of the vector
    `fun(*call)`, one row per component of it, one column per component of each
    float leaf of the arguments `nums`, in the order of `leaves`. `branches(c)`
    says whether the lines run in the file `program` at `call` differ from
    those at the stencil's points of column `c`: `call` is then on a boundary
    the stencil steps off (`not log(1 + x*x) > 0` holds at x = 0 alone), where
    the derivative of the path taken is right and the differences see another."""
    given, call = call, tuple(_widened(a) for a in call)
    f0 = fun(*call)
    columns, stencils = [], []
    for i in nums:
        values = leaves(call[i])
        for j, leaf in enumerate(values):
            if not _is_active(leaf):
                continue
            flat = np.atleast_1d(np.asarray(leaf, np.float64)).ravel()
            for c in range(flat.size):
                def at(delta):
                    m = flat.copy()
                    m[c] += delta
                    moved = list(values)
                    # a number keeps its kind (an np.float64's comparisons are numpy's bools)
                    moved[j] = type(leaf)(m[0]) if isinstance(leaf, float) else m.reshape(leaf.shape)
                    return (*call[:i], rebuild(call[i], iter(moved)), *call[i + 1:])

                h = 1e-6 * max(1.0, abs(flat[c]))
                stencils.append((at(h), at(-h)))
                up, down = (fun(*point) for point in stencils[-1])
                columns.append(((up - down) / (2 * h), (f0 - down) / h, (up - f0) / h))

    def branches(c: int) -> bool:
        if program is None:
            return False
        here = _lines_run(fun, call, program)
        if _lines_run(fun, given, program) != here:
            return True  # widened to float64, the program takes another path (a float32 overflow)
        return any(_lines_run(fun, point, program) != here for point in stencils[c])

    if not columns:
        return (*(np.zeros((f0.size, 0)),) * 3, branches)
    return (*(np.stack([col[k] for col in columns], axis=1) for k in range(3)), branches)


def _lines_run(fun, call: tuple, program: str) -> list[int]:
    """The lines of the file `program` that `fun(*call)` runs, in order."""
    lines = []

    def local(frame, event, arg):
        if event == "line":
            lines.append(frame.f_lineno)
        return local

    sys.settrace(lambda frame, event, arg: local if frame.f_code.co_filename == program else None)
    try:
        fun(*call)
    finally:
        sys.settrace(None)
    return lines


def compare_with_differences(what, got: np.ndarray, fd, values: np.ndarray, single: bool, source, args) -> None:
    """`got` (rows: result components, columns: argument components) against the
    differences `fd`, where the one-sided ones agree and the stencil runs the
    path the point itself runs."""
    central, left, right, branches = fd
    if got.shape != central.shape:
        raise AssertionError(f"{what}: {got.shape} entries, {central.shape} differences\nargs={args!r}\n{source}")
    for (r, c), g in np.ndenumerate(got):
        if not abs(left[r, c] - right[r, c]) <= 1e-4 * max(1.0, abs(central[r, c])):
            continue  # a kink or a branch boundary within the stencil
        scale = max(1.0, abs(values[r]))
        tol = (1e-2 if single else 1e-4) * max(scale, abs(central[r, c]), 1.0)
        if not abs(g - central[r, c]) <= tol and not branches(c):
            raise AssertionError(
                f"{what} [{r}, {c}]: irad {g!r}, central differences {central[r, c]!r}\n"
                f"args={args!r}\n{source}"
            )


def _random_like(tree, rng, numbers_are_floats: bool = False):
    """A random tree of `tree`'s structure: arrays of their dtype, floats for
    floats, None for ints (unless `numbers_are_floats`: a float result that
    numpy computed as an int, `sum` of nothing)."""
    return rebuild(tree, iter([
        rng.normal(size=v.shape).astype(v.dtype) if isinstance(v, np.ndarray) and v.dtype.kind == "f"
        else float(rng.normal()) if numbers_are_floats or _is_active(v) or isinstance(v, np.floating) else None
        for v in leaves(tree)
    ]))


def _jacobian_matrix(jac, out_tree, arguments: tuple, forward: bool) -> np.ndarray:
    """A Jacobian tree (out_tree's structure, each leaf the tuple of gradient
    trees of `arguments`) as a matrix, after checking each block's shape, and
    for jacrev its dtype: a cotangent's (the argument's), as in JAX. (jacfwd's
    is a tangent's: the result's, which may be wider than numpy's, see
    _close_tree.)"""
    rows = []
    for o, block in zip(leaves(out_tree), _jacobian_blocks(jac, out_tree)):
        same_structure(block, tuple(_block_like(a, o) for a in arguments), "a Jacobian block", dtypes=not forward)
        size = int(np.size(o))
        rows.append(np.concatenate([np.asarray(b, np.float64).reshape(size, -1) for b in leaves(block)], axis=1))
    return np.concatenate(rows, axis=0)


def _jacobian_blocks(jac, out_tree) -> list:
    if isinstance(out_tree, dict):
        return [b for key in sorted(out_tree) for b in _jacobian_blocks(jac[key], out_tree[key])]
    if isinstance(out_tree, (tuple, list)):
        return [b for j, o in zip(jac, out_tree) for b in _jacobian_blocks(j, o)]
    return [jac]


def _block_like(argument, out_leaf):
    """The expected block of an argument tree for one result leaf: shape out + in."""
    out_shape = np.shape(out_leaf)

    def block(leaf):
        if not _is_active(leaf):
            return None
        shape = out_shape + np.shape(leaf)
        dtype = leaf.dtype if isinstance(leaf, np.ndarray) else np.float64
        return np.zeros(shape, dtype) if shape else 0.0

    return rebuild(argument, iter([block(leaf) for leaf in leaves(argument)]))


# ---- the check ----
def refused_where_allowed(error: BaseException, source: str) -> bool:
    """A refusal naming (file:line:col) a line of the program the generator
    marked MAY_REFUSE, with a hint."""
    text = str(error)
    found = re.match(r"(\S+):(\d+):\d+: ", text)
    if found is None or "\n  hint: " not in text or not Path(found.group(1)).name.startswith("fuzz_"):
        return False
    lines = source.splitlines()
    line = int(found.group(2))
    return 1 <= line <= len(lines) and lines[line - 1].rstrip().endswith(MAY_REFUSE)


def check_program(source: str, args, directory: Path, compiled: tuple[str, ...] = ()) -> BaseException | None:
    """Check one program (see the module doc) on the Python backend and on the
    `compiled` ones ("native", "iree"); the refusal accepted, if any."""
    mode = Mode.of(source)
    module = load(source, directory)
    wide = load(source.replace("np.float32", "np.float64"), directory)
    f = module.f
    call = entry_arguments(module, tuple(args), mode)
    nums = _argnums(call)
    single = "np.float32" in source or any(
        isinstance(a, np.ndarray) and a.dtype == np.float32 for a in leaves(call))
    rtol = 2e-3 if single else 1e-7
    with np.errstate(all="ignore"):
        expected = f(*call)
    if isinstance(expected, (int, np.integer)) and not isinstance(expected, bool):
        return None  # Python's f returns an int here (a path known while lowering): no derivative to check
    values = _flat(leaves(_out(expected, mode)))
    if not np.all(np.isfinite(values)) or np.any(np.abs(values) > 1e6):
        return None  # outside what the generator means to test
    wide_call = entry_arguments(wide, tuple(args), mode)
    fd_target = lambda *c: _outputs(wide.f, c, mode)  # noqa: E731

    try:
        got = _derivative(f, call, nums, mode, "python", expected)
    except irad.UnsupportedError as error:
        if refused_where_allowed(error, source):
            return error
        raise
    _close_tree("value", got.value, expected, rtol, source, args)
    if got.cotangent is not None:  # J^T v against the differences of <v, f>
        v = _flat(leaves(got.cotangent))
        fd = differences(lambda *c: np.array([v @ fd_target(*c)]), wide_call, nums, wide.__file__)
        compare_with_differences(f"{mode.api} (cotangent {v.round(3).tolist()})", got.matrix, fd,
                                 np.array([np.abs(v) @ np.abs(values)]), single, source, args)
    else:
        fd = differences(fd_target, wide_call, nums, wide.__file__)
        compare_with_differences(mode.api, got.matrix, fd, values, single, source, args)

    # forward mode agrees with the derivative just checked
    rng = np.random.default_rng(0)
    tangents = tuple(_random_like(a, rng) if i in nums else None for i, a in enumerate(call))
    t = _flat([v for i in nums for v in leaves(tangents[i]) if v is not None])
    primal, tangent = irad.jvp(f, call, tangents)
    _close_tree("jvp's value", primal, expected, rtol, source, args)
    jt = _flat(leaves(_out(tangent, mode)))
    if not np.all(np.isfinite(got.matrix)) and _lines_run(fd_target, wide_call, wide.__file__) != _lines_run(
            fd_target, tuple(_widened(a) for a in wide_call), wide.__file__):
        pass  # float32 numbers overflowed (the float64 program runs another path): reverse mode's 0 * inf is NaN
    elif got.cotangent is not None:
        _close("jvp: <J t, v>", float(jt @ _flat(leaves(got.cotangent))), float(got.matrix[0] @ t),
               rtol * 10, source, args)
    else:
        np.testing.assert_allclose(jt, got.matrix @ t, rtol=rtol * 10, atol=rtol * 10,
                                   err_msg=f"jvp: J t differs from the Jacobian's\nargs={args!r}\n{source}")

    for backend in compiled:  # the compiled backends agree with the Python backend's numbers
        try:
            cgot = _derivative(f, call, nums, mode, backend, expected)
            _, ctangent = irad.jvp(f, call, tangents, backend=backend)
        except irad.BackendError as error:
            if backend == "iree" and iree_refusal(error):
                continue  # what IREE 3.13 cannot compile, refused by name (docs/backends/iree.md)
            raise
        _close_tree(f"{backend} value", cgot.value, got.value, rtol, source, args)
        np.testing.assert_allclose(
            cgot.matrix, got.matrix, rtol=rtol * 10, atol=rtol * 10,
            err_msg=f"the {backend} {mode.api} differs from the Python backend's\nargs={args!r}\n{source}",
        )
        np.testing.assert_allclose(_flat(leaves(_out(ctangent, mode))), jt, rtol=rtol * 10, atol=rtol * 10,
                                   err_msg=f"the {backend} jvp differs from the Python backend's\nargs={args!r}\n{source}")
    return None


class _Derivative:
    def __init__(self, value, matrix, cotangent=None):
        self.value, self.matrix, self.cotangent = value, matrix, cotangent


def _derivative(f, call, nums, mode: Mode, backend: str, expected) -> _Derivative:
    """f's value (with aux) and the derivative `mode.api` gives: the gradient or a
    pullback as one row (with the cotangent pulled back), or the Jacobian."""
    arguments = tuple(call[i] for i in nums)
    out = _out(expected, mode)
    if mode.api in ("value_and_grad", "grad"):
        transform = irad.value_and_grad if mode.api == "value_and_grad" else irad.grad
        result = transform(f, argnums=nums, has_aux=mode.aux, backend=backend)(*call)
        if mode.api == "value_and_grad":
            value, grads = result
        else:  # grad gives no value: jvp's (checked too) stands in for it here
            grads, aux = result if mode.aux else (result, None)
            value = (expected[0], aux) if mode.aux else expected
        same_structure(grads, arguments, "the gradient")
        return _Derivative(value, _flat([g for g in leaves(grads) if g is not None])[None, :], 1.0)
    if mode.api == "vjp":
        result = irad.vjp(f, *call, has_aux=mode.aux, backend=backend)
        value = (result[0], result[2]) if mode.aux else result[0]
        cotangent = _random_like(out, np.random.default_rng(1), numbers_are_floats=True)
        cts = result[1](cotangent)
        same_structure(tuple(cts[i] for i in nums), arguments, "the pullback's cotangents")
        row = _flat([c for i in nums for c in leaves(cts[i]) if c is not None])
        return _Derivative(value, row[None, :], cotangent)
    transform = irad.jacrev if mode.api == "jacrev" else irad.jacfwd
    result = transform(f, argnums=nums, has_aux=mode.aux, backend=backend)(*call)
    jac, aux = result if mode.aux else (result, None)
    out_value = expected[0] if mode.aux else expected
    value = (out_value, aux) if mode.aux else out_value  # a Jacobian gives no value: jvp's is checked
    return _Derivative(value, _jacobian_matrix(jac, out, arguments, mode.api == "jacfwd"))


def _close_tree(what, got, expected, rtol, source, args) -> None:
    """Structure and values. Not dtypes: irad types a program, so a float32 array
    returned on one path and a float64 one on another are both float64, and a
    float64 number (np.float64 from a reduction included) is weak against a
    float32 array (docs/arrays.md), where numpy follows the path taken and
    makes np.float64 strong."""
    same_structure(got, expected, what, dtypes=False)
    for g, e in zip(leaves(got), leaves(expected)):
        if isinstance(e, (int, np.integer)) and not isinstance(e, bool):
            if g != e:
                raise AssertionError(f"{what}: irad {g!r}, expected {e!r}\nargs={args!r}\n{source}")
            continue
        np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(e, np.float64), rtol=rtol, atol=rtol,
                                   err_msg=f"{what} differs\nargs={args!r}\n{source}")


def _close(what, got, expected, rtol, source, args) -> None:
    if not abs(float(got) - float(expected)) <= rtol * max(1.0, abs(float(expected))):
        raise AssertionError(f"{what}: irad {got!r}, expected {expected!r}\nargs={args!r}\n{source}")


def arguments_source(args) -> str:
    """Python source that rebuilds `args` (for the `# ARGS =` line of a saved case)."""
    parts = [f"np.array({a.tolist()!r}, dtype=np.{a.dtype})" if isinstance(a, np.ndarray) else repr(a) for a in args]
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def failure_kind(error: BaseException) -> str:
    """What kind of failure `error` is, without the details that shrinking changes
    (file names, positions, numbers, variable names)."""
    first = str(error).splitlines()[0] if str(error) else ""
    first = re.sub(r"^\S+:\d+:\d+: ", "", first)
    first = re.sub(r"'[^']*'", "'_'", first)
    first = re.sub(r"-?\d[\d.e+-]*", "#", first)
    return f"{type(error).__name__}: {first[:80]}"


def save_regression(source: str, args, error: BaseException) -> Path:
    """Keep a failing program as a regression test (tests/fuzz/test_regressions.py runs them)."""
    REGRESSIONS.mkdir(exist_ok=True)
    name = "case_" + hashlib.sha1(source.encode()).hexdigest()[:12] + ".py"
    path = REGRESSIONS / name
    header = (
        f"# A program the fuzzer found failing: {type(error).__name__}: "
        f"{str(error).splitlines()[0] if str(error) else ''}\n"
        f"# ARGS = {arguments_source(args)}\n"
    )
    path.write_text(header + source)
    return path


# What IREE 3.13 cannot compile, which irad refuses naming it (tests/backends/test_backend_iree.py)
IREE_REFUSALS = ("cannot compile recursion", "IREE cannot size the tape", "backend='iree' cannot compile",
                 "see its diagnostics", "has no arith.")


def iree_refusal(error: BaseException) -> bool:
    return any(text in str(error) for text in IREE_REFUSALS)
