"""What the vmap fuzzer checks of one generated program (tests/fuzz/generator.py)
and one drawn batching (`Batching`): irad.vmap, alone and composed with the
derivatives, against a Python loop over the batch.

A batching says, per argument of `f(x, w, u, A, B, k)` (or of its tree form,
`f(p, m, k)`), which axis carries the batch (`in_axes`: 0, -1, 1 for 2-D
arrays, None for an argument the batch shares; x batched is an array of
floats, k batched an array of ints, so trip counts, branches and indices vary
along the batch), where the batch goes in each result (`out_axes`), the batch
size (1 to 3) and the composition checked:

* `vmap`: irad.vmap(f) against the program run as plain Python/numpy on each
  element (`np.stack` of its results moved to `out_axes`);
* `vmap_grad`, `vmap_jacrev`: vmap of irad's grad or jacrev of f against a
  loop of that transformation (the fuzzer proper checks it against
  differences), and `vmap_jvp`: vmap of a program calling irad.jvp, with
  tangents batched or shared, against a loop of irad.jvp;
* `grad_vmap`: the gradient of the sum of vmap(f), against each element's
  gradient stacked (a batched argument) or summed (a shared one);
* `jacfwd_vmap`: jacfwd of vmap(f), against each element's Jacobian placed on
  the block diagonal (a batched argument) or stacked (a shared one);
* `vmap_vmap`: vmap of vmap(f), the two over different axes and sizes,
  against two nested loops.

Integers must equal the loop's exactly, floats to `RTOL` (1e-12) where the
program is float64. numpy rounds a float32 program apart from irad (irad
types it, docs/arrays.md), so there vmap's value is checked against numpy's
to 2e-3 and against irad's own per element (jvp's primal) to 1e-5, as are
the compositions, whose loop is irad's transformation per element. A refusal is accepted, in
place of a value, where it is an irad error with a hint (`refusal_kind` says
which kind, the campaign counts them); an error without one, an exception
from inside irad or a different value is a failure.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from hypothesis import strategies as st

import irad
from irad.base.errors import IradError
from tests.fuzz.checks import _flat, entry_arguments, leaves, load, rebuild, same_structure
from tests.fuzz.generator import PARAMETERS, Mode, is_shape

RTOL = 1e-12
RTOL_SINGLE = 2e-3  # against numpy, as tests/fuzz/checks.py: irad types float32 programs apart from numpy
RTOL_IRAD_SINGLE = 1e-5  # a float32 program against irad's own value (or derivative) per element
NAMES = tuple(PARAMETERS)  # x, w, u, A, B, k
FLOATS = tuple(n for n in NAMES if n != "k")
COMPOSITIONS = ("vmap", "vmap_grad", "vmap_jacrev", "vmap_jvp", "grad_vmap", "jacfwd_vmap", "vmap_vmap")


@dataclass(frozen=True)
class Batching:
    """One way to batch f: `in_axes` per flat parameter (None or an int),
    `out_axes` (0, or a tree of ints matching f's results), the batch `size`,
    `ks` (k per element where k is batched: k at (i, j) of two levels is
    ks[i] + j, modulo 4), the `composition` checked,
    `seed` for the elements' values, and for vmap_vmap the inner vmap's
    (`inner_axes`, `inner_out`, `inner_size`). `tangent_axes`: vmap_jvp's
    tangents' axes (None: shared by the batch)."""

    in_axes: tuple
    out_axes: object
    size: int
    ks: tuple
    composition: str
    seed: int
    inner_axes: tuple = ()
    inner_out: object = 0
    inner_size: int = 1
    tangent_axes: tuple = ()

    def describe(self) -> str:
        parts = [f"{self.composition}: in_axes={self.in_axes} out_axes={self.out_axes} size={self.size}"]
        if self.in_axes[-1] is not None or self.inner_axes[-1:] not in ((), (None,)):
            parts.append(f"ks={self.ks}")
        if self.composition == "vmap_vmap":
            parts.append(f"inner in_axes={self.inner_axes} out_axes={self.inner_out} size={self.inner_size}")
        if self.tangent_axes:
            parts.append(f"tangent_axes={self.tangent_axes}")
        return " ".join(parts) + f" seed={self.seed}"


def _axes_for(draw, shape, allow_none=True) -> int | None:
    options = [0, 0, -1] + ([1] if is_shape(shape) and len(shape) == 2 else [])
    if not is_shape(shape):
        options = [0]
    return draw(st.sampled_from(options + ([None, None] if allow_none else [])))


def _out_axes_tree(draw, mode: Mode):
    """0 for all, or a tree of f's result structure with 0 or a drawn axis (1,
    -1) for each array leaf."""
    if draw(st.booleans()):
        return 0
    axis = lambda: draw(st.sampled_from([0, -1, 1]))  # noqa: E731  (an array result has rank >= 1)
    if mode.results == "float":
        out = 0
    elif is_shape(mode.results):
        out = axis()
    elif mode.results[0] == "tuple":
        out = (0, axis())
    else:
        out = {"s": 0, "v": axis()}
    return (out, {"n": 0, "t": 0}) if mode.aux else out


@st.composite
def batchings(draw, source: str) -> Batching:
    mode = Mode.of(source)
    flat = mode.entry == "flat"
    plain = mode.results == "float" or is_shape(mode.results)
    compositions = ["vmap", "vmap", "vmap_grad" if mode.results == "float" else "vmap_jacrev", "vmap_jacrev"]
    if flat and not mode.aux:
        compositions += ["vmap_jvp", "vmap_vmap"]
        if plain:
            compositions += ["grad_vmap", "jacfwd_vmap"]
    composition = draw(st.sampled_from(compositions))
    while True:
        in_axes = tuple(_axes_for(draw, PARAMETERS[n]) for n in NAMES)
        if any(a is not None for a in in_axes):
            break
    size = draw(st.sampled_from([1, 2, 3]))
    ks = tuple(draw(st.lists(st.integers(0, 3), min_size=3, max_size=3)))
    inner_axes, inner_size, inner_out = (), 1, 0
    if composition == "vmap_vmap":
        inner_axes = tuple(_axes_for(draw, PARAMETERS[n]) for n in NAMES)
        if all(a is None for a in inner_axes):
            inner_axes = (0, *inner_axes[1:])
        inner_size = draw(st.sampled_from([1, 2, 3]))
        inner_out = _out_axes_tree(draw, mode)
    tangent_axes = ()
    if composition == "vmap_jvp":
        tangent_axes = tuple(draw(st.sampled_from([in_axes[i], None, 0])) for i in range(len(FLOATS)))
    out_axes = _out_axes_tree(draw, mode) if composition in ("vmap", "vmap_vmap") else 0
    return Batching(in_axes, out_axes, size, ks, composition, draw(st.integers(0, 2**16)),
                    inner_axes, inner_out, inner_size, tangent_axes)


# ---- the elements' values and the batched arguments ----
def _element(base, name: str, index: tuple, rng_seed: int, batching: Batching):
    """Argument `name`'s value at element `index` (a tuple of batch positions,
    one per vmap level that maps it): the drawn value moved by a perturbation
    seeded by the index; for k, the drawn ks."""
    if not index:
        return base
    if name == "k":
        return np.int64((batching.ks[index[0]] + sum(index[1:])) % 4)
    rng = np.random.default_rng([rng_seed, NAMES.index(name), *index])
    if name == "x":
        return np.float64(float(base) + rng.uniform(-1.0, 1.0))
    # not rounded: ties (two equal items) make np.argsort's order numpy's choice, which irad's need not match
    moved = np.asarray(base, np.float64) + rng.uniform(-0.75, 0.75, size=np.shape(base))
    return moved.astype(base.dtype)


def _stack(values: list, axis: int):
    return np.stack([np.asarray(v) for v in values], axis=axis)


def _levels(batching: Batching) -> list[tuple[tuple, int]]:
    """(in_axes, size) of each vmap level, the outermost first."""
    levels = [(batching.in_axes, batching.size)]
    if batching.composition == "vmap_vmap":
        levels.append((batching.inner_axes, batching.inner_size))
    return levels


def batched_arguments(args: tuple, batching: Batching) -> tuple:
    """The flat arguments of the outermost vmap."""
    levels = _levels(batching)

    def build(name: str, i: int, level: int, index: tuple):
        if level == len(levels):
            return _element(args[i], name, index, batching.seed, batching)
        axes, size = levels[level]
        if axes[i] is None:
            return build(name, i, level + 1, index)
        return _stack([build(name, i, level + 1, index + (b,)) for b in range(size)], axes[i])

    return tuple(build(name, i, 0, ()) for i, name in enumerate(NAMES))


def element_arguments(args: tuple, batching: Batching, positions: tuple) -> tuple:
    """The flat arguments of one element (positions: one per level)."""
    levels = _levels(batching)
    out = []
    for i, name in enumerate(NAMES):
        index = tuple(p for (axes, _), p in zip(levels, positions) if axes[i] is not None)
        out.append(_element(args[i], name, index, batching.seed, batching))
    return tuple(out)


def _axes_tree(module, axes: tuple, mode: Mode):
    """in_axes for f's own arguments (a tree for a tree entry)."""
    if mode.entry == "flat":
        return axes
    x, w, u, A, B, k = axes
    return ({"x": x, "vs": (w, u)}, module.Mats(A, B), k)


# ---- the loop ----
def _leaf_axes(out_axes, tree) -> list:
    """out_axes spread over the leaves of `tree` (an int for all, or a tree prefix)."""
    if out_axes is None or isinstance(out_axes, int):
        return [out_axes] * len(leaves(tree))
    if isinstance(tree, dict):
        return [a for key in sorted(tree) for a in _leaf_axes(out_axes[key], tree[key])]
    return [a for sub, child in zip(out_axes, tree) for a in _leaf_axes(sub, child)]


def stacked(results: list, out_axes):
    """The results of the elements as a batch: each leaf stacked along its out axis."""
    first = results[0]
    axes = _leaf_axes(out_axes, first)
    columns = [leaves(r) for r in results]
    return rebuild(first, iter([_stack([c[j] for c in columns], axes[j]) for j in range(len(axes))]))


def _looped(fn, args, batching: Batching, level_outs: list, positions: tuple = ()):
    """fn of each element, stacked level by level (the innermost first)."""
    levels = _levels(batching)
    if len(positions) == len(levels):
        return fn(*element_arguments(args, batching, positions))
    size = levels[len(positions)][1]
    return stacked([_looped(fn, args, batching, level_outs, positions + (b,)) for b in range(size)],
                   level_outs[len(positions)])


# ---- comparing ----
def _compare(what: str, got, expected, single: bool, context: str, single_tol: float) -> None:
    """Structure; integers exactly; floats to RTOL (`single_tol` in a float32
    program), of the largest magnitude of the leaf, so a value that cancels to
    near 0 compares on its scale."""
    same_structure(got, expected, what, dtypes=False)
    tol = single_tol if single else RTOL
    for j, (g, e) in enumerate(zip(leaves(got), leaves(expected))):
        g_, e_ = np.asarray(g), np.asarray(e)
        if e_.dtype.kind in "iub" and e_.dtype.kind != "b":
            if not np.array_equal(g_, e_):
                raise AssertionError(f"{what} (leaf {j}): irad {g_!r}, the loop {e_!r} (integers)\n{context}")
            continue
        g64, e64 = g_.astype(np.float64), e_.astype(np.float64)
        if not np.array_equal(np.isfinite(g64), np.isfinite(e64)) or not np.allclose(
                g64, e64, rtol=tol, atol=tol * max(1.0, float(np.max(np.abs(e64), initial=0.0,
                                                                        where=np.isfinite(e64)))), equal_nan=True):
            raise AssertionError(f"{what} (leaf {j}): irad\n{g64!r}\nthe loop\n{e64!r}\n{context}")


def refusal_kind(error: BaseException) -> str | None:
    """The kind of an acceptable refusal: an irad error with a hint (its first
    line without positions and names), or None."""
    from tests.fuzz.checks import failure_kind

    if isinstance(error, IradError) and "hint:" in str(error):
        return failure_kind(error)
    return None


# ---- the check ----
@dataclass
class Outcome:
    checked: str  # the composition checked, or "skipped" (the program raises or overflows in Python)
    refused: str | None = None  # the kind of refusal accepted


def _nums(call: tuple) -> tuple:
    return tuple(i for i, a in enumerate(call)
                 if any(isinstance(v, (float, np.floating)) or (isinstance(v, np.ndarray) and v.dtype.kind == "f")
                        for v in leaves(a)))


def _wrappers(source: str, batching: Batching) -> str:
    """Module-level functions the compositions need (a program may call irad.jvp
    and irad.vmap of module-level functions only)."""
    params = ", ".join(NAMES)
    tangents = ", ".join("t" + n for n in FLOATS)
    return source + (
        "\n\nimport irad\n\n\n"
        f"def _fsum({params}):\n    return np.sum(f({params}))\n\n\n"
        f"def _vsum({params}):\n"
        f"    return np.sum(irad.vmap(f, in_axes={batching.in_axes!r})({params}))\n\n\n"
        f"def _jvp({params}, {tangents}):\n"
        f"    return irad.jvp(lambda {', '.join(FLOATS)}: f({params}), ({', '.join(FLOATS)},), ({tangents},))\n"
    )


def check_vmap(source: str, args: tuple, batching: Batching, directory: Path, backend: str = "python") -> Outcome:
    """Check one program under one batching (see the module doc): returns what
    was checked and the refusal accepted; raises AssertionError (or irad's
    exception) on a failure."""
    mode = Mode.of(source)
    program = _wrappers(source, batching)
    module = load(program, directory)
    single = "np.float32" in source or any(getattr(a, "dtype", None) == np.float32 for a in args)
    context = f"{batching.describe()} backend={backend}\nargs={args!r}\n{source}"
    composition = batching.composition
    batched = batched_arguments(args, batching)

    def call_of(flat):
        return entry_arguments(module, flat, mode)

    in_axes = _axes_tree(module, batching.in_axes, mode)
    f = module.f

    with np.errstate(all="ignore"):
        try:
            plain = _looped(lambda *a: f(*call_of(a)), args, batching,
                            [batching.out_axes, batching.inner_out])
        except Exception:
            return Outcome("skipped")  # the program raises in Python at these elements
    values = _flat(leaves(plain))
    if not np.all(np.isfinite(values)) or np.any(np.abs(values) > 1e6):
        return Outcome("skipped")  # outside what the generator means to test

    try:
        if composition in ("vmap", "vmap_vmap"):
            if composition == "vmap":
                mapped = irad.vmap(f, in_axes, batching.out_axes, backend=backend)
            else:
                inner = irad.vmap(f, batching.inner_axes, batching.inner_out, backend=backend)
                mapped = irad.vmap(inner, batching.in_axes, batching.out_axes, backend=backend)
            got = mapped(*call_of(batched))
            expected = plain
        elif composition in ("vmap_grad", "vmap_jacrev"):
            nums = _nums(call_of(args))
            transform = irad.grad if composition == "vmap_grad" else irad.jacrev
            per = transform(f, argnums=nums, has_aux=mode.aux, backend=backend)
            got = irad.vmap(per, in_axes, 0, backend=backend)(*call_of(batched))
            expected = _looped(lambda *a: per(*call_of(a)), args, batching, [0])
        elif composition == "vmap_jvp":
            tangents = tuple(_stack([_element(args[i], n, (b,), batching.seed + 1, batching)
                                     for b in range(batching.size)], batching.tangent_axes[i])
                             if batching.tangent_axes[i] is not None else args[i] * 0.5 + 0.25
                             for i, n in enumerate(FLOATS))
            tangents = tuple(np.asarray(t, a.dtype) if isinstance(a, np.ndarray) else t
                             for t, a in zip(tangents, args))
            axes = (*batching.in_axes, *batching.tangent_axes)
            got = irad.vmap(module._jvp, axes, 0, backend=backend)(*batched, *tangents)

            def element(b):
                primal = element_arguments(args, batching, (b,))
                tangent = tuple(np.take(t, b, axis=ax) if ax is not None else t
                                for t, ax in zip(tangents, batching.tangent_axes))
                return module._jvp(*primal, *tangent)  # irad.jvp called from Python

            expected = stacked([element(b) for b in range(batching.size)], 0)
        elif composition == "grad_vmap":
            nums = _nums(batched)
            got = irad.grad(module._vsum, argnums=nums, backend=backend)(*batched)
            per = irad.grad(module._fsum, argnums=nums, backend=backend)
            grads = [per(*element_arguments(args, batching, (b,))) for b in range(batching.size)]
            expected = tuple(_stack([g[j] for g in grads], batching.in_axes[i]) if batching.in_axes[i] is not None
                             else sum(g[j] for g in grads) for j, i in enumerate(nums))
        else:  # jacfwd_vmap
            nums = _nums(batched)
            mapped = irad.vmap(f, batching.in_axes, 0, backend=backend)
            got = irad.jacfwd(mapped, argnums=nums, backend=backend)(*batched)
            per = irad.jacfwd(f, argnums=nums, backend=backend)
            jacobians = [per(*element_arguments(args, batching, (b,))) for b in range(batching.size)]
            expected = tuple(_block_diagonal([np.asarray(jac[j]) for jac in jacobians], batching.in_axes[i],
                                             np.ndim(args[i]))
                             for j, i in enumerate(nums))
    except BaseException as error:
        kind = refusal_kind(error)
        if kind is None:
            raise
        return Outcome(composition, kind)
    if composition in ("vmap", "vmap_vmap"):
        _compare(composition, got, expected, single, context, RTOL_SINGLE)
        if single:  # numpy rounds float32 programs apart from irad: irad's own value per element, to float32's rounding
            with np.errstate(all="ignore"):
                own = _looped(lambda *a: _irad_value(f, call_of(a), backend), args, batching,
                              [batching.out_axes, batching.inner_out])
            _compare(f"{composition} against irad's value per element", got, own, single, context, RTOL_IRAD_SINGLE)
    else:  # against irad's transformation per element
        _compare(composition, got, expected, single, context, RTOL_IRAD_SINGLE)
    return Outcome(composition)


def _irad_value(f, call: tuple, backend: str):
    """irad's value of f at one element (unbatched): jvp's primal."""
    tangents = tuple(rebuild(a, iter([np.zeros_like(v) if isinstance(v, np.ndarray) and v.dtype.kind == "f"
                                      else 0.0 if isinstance(v, (float, np.floating)) else None for v in leaves(a)]))
                     for a in call)
    return irad.jvp(f, call, tangents, backend=backend)[0]


def _block_diagonal(blocks: list, axis: int | None, arg_rank: int) -> np.ndarray:
    """The Jacobian of the batched result (batch first) with respect to a
    batched argument (batch at `axis`) from each element's: zero off the
    diagonal of the batch; for a shared argument, the elements' stacked."""
    size = len(blocks)
    if axis is None:
        return np.stack(blocks)
    out_rank = blocks[0].ndim - arg_rank
    full = np.zeros((size, *blocks[0].shape[:out_rank], size, *blocks[0].shape[out_rank:]), blocks[0].dtype)
    for b, block in enumerate(blocks):
        full[(b, *[slice(None)] * out_rank, b)] = block
    return np.moveaxis(full, 1 + out_rank, 1 + out_rank + axis % (arg_rank + 1))


def case_name(source: str, batching: Batching) -> str:
    return "vmap_" + hashlib.sha1((source + batching.describe()).encode()).hexdigest()[:12]


def save_vmap_regression(source: str, args, batching: Batching, error: BaseException) -> Path:
    """Keep a failing program and its batching as a regression test
    (tests/fuzz/test_regressions.py runs them)."""
    from tests.fuzz.checks import REGRESSIONS, arguments_source

    path = REGRESSIONS / f"{case_name(source, batching)}.py"
    first = str(error).splitlines()[0] if str(error) else ""
    path.write_text(f"# A program the vmap fuzzer found failing: {type(error).__name__}: {first}\n"
                    f"# ARGS = {arguments_source(args)}\n# BATCHING = {batching!r}\n{source}")
    return path
