"""Every entry of the numpy table (irad/frontend/numpy_table.py), differentiated.

Each numpy function has cases in SWEEP: a call written as Python source, with
the shape and the sampler of each float argument, over the shape, axis and
broadcasting combinations autograd's test_systematic.py exercises (written here
anew). Each case becomes a plain Python function, which irad differentiates and
numpy runs, and is checked at seeded random points:

(a) value: irad's result is numpy's (same shape, and dtype for float arrays);
(b) reverse against central finite differences of numpy's own function, in
    float64: <v, J^T u> against (<u, f(x + h v)> - <u, f(x - h v)>) / 2h;
(c) forward against reverse: <J v, u> (irad.jvp) against <v, J^T u> (irad.vjp),
    on a function's first FORWARD_CASES cases (compiling each twice costs time);
(d) projection: with float32 arrays, the cotangents are float32 and shaped like
    their arguments, and the value is numpy's to float32 precision (once per
    function, on its first case with an array argument).

Results that are not floats (np.isnan, np.argmax, ...) are checked by value.
A new table entry joins the sweep by itself and fails until SWEEP has cases.
"""

from __future__ import annotations

import importlib.util
import itertools
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

import irad
from irad.backends.native.compile import unavailable_reason
from irad.frontend.numpy_table import NUMPY
from irad.rules.keys import target_key
from tests.samplers import NONZERO, POSITIVE, UNIT, WIDE, uniform


@dataclass
class Case:
    """`call`, Python source over the parameters in `args` (name -> (shape, sampler));
    shape () is a Python float."""

    call: str
    args: dict[str, tuple[tuple[int, ...], object]] = field(default_factory=dict)
    step: float = 1e-6  # of the finite differences, and their tolerance
    rtol: float = 1e-6

    def label(self) -> str:
        shapes = ", ".join(f"{n}{s}" for n, (s, _) in self.args.items())
        return f"{self.call} [{shapes}]"


# autograd's shapes for elementwise functions: a number, a vector, matrices
SHAPES = [(), (2,), (3, 2), (1, 2)]
# pairs that broadcast: number with array, vector with matrix, both ways, and equal
PAIRS = [((), (3, 2)), ((2,), (3, 2)), ((3, 2), (1, 2)), ((1, 2), ()), ((3, 2), (3, 2))]


def unary(name: str, sampler=WIDE, extra: str = "") -> list[Case]:
    return [Case(f"np.{name}(x{extra})", {"x": (s, sampler)}) for s in SHAPES]


def binary(name: str, first=WIDE, second=WIDE) -> list[Case]:
    return [Case(f"np.{name}(x, y)", {"x": (a, first), "y": (b, second)}) for a, b in PAIRS]


def stat(name: str, sampler=WIDE, extra: str = "") -> list[Case]:
    """autograd's stat_check: a number; vectors and matrices with axis None or 0
    and keepdims; matrices with axis 1 and -1."""
    cases = [Case(f"np.{name}(x{extra})", {"x": ((), sampler)})]
    for shape, axis, keep in itertools.product([(3,), (2, 3), (1, 3)], [None, 0], [False, True]):
        cases.append(Case(f"np.{name}(x, axis={axis}, keepdims={keep}{extra})", {"x": (shape, sampler)}))
    for axis in (1, -1):
        cases.append(Case(f"np.{name}(x, axis={axis}{extra})", {"x": ((2, 3), sampler)}))
    return cases


def _ddof(name: str) -> list[Case]:
    """autograd's test_var_ddof: vectors and matrices with ddof 0 and 1, ddof 2 along axis 1."""
    cases = [Case(f"np.{name}(x, keepdims={keep}, ddof={ddof})", {"x": (shape, WIDE)})
             for shape, keep, ddof in itertools.product([(3,), (3, 4), (1, 3)], [True, False], [0, 1])]
    return cases + [Case(f"np.{name}(x, axis={axis}, keepdims={keep}, ddof=2)", {"x": ((3, 4), WIDE)})
                    for axis, keep in itertools.product([None, 1], [True, False])]


def _well_conditioned(rng, shape):
    """Full rank, singular values well apart: a scaled identity block (3 ... 1.5) plus noise."""
    return rng.uniform(-0.5, 0.5, shape) + np.eye(shape[-2], shape[-1]) * np.linspace(3.0, 1.5, shape[-1])


def _positive_definite(rng, shape):
    a = rng.uniform(-1.0, 1.0, shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def _distinct_eigenvalues(rng, shape):
    """Symmetric, with eigenvalues near 1, 3, 5, ... (well apart)."""
    a = rng.uniform(-0.3, 0.3, shape)
    return a + np.swapaxes(a, -1, -2) + np.diag(1.0 + 2.0 * np.arange(shape[-1]))


WELL_CONDITIONED, POSITIVE_DEFINITE, DISTINCT_EIGENVALUES = _well_conditioned, _positive_definite, _distinct_eigenvalues


def of(call: str, step: float = 1e-6, rtol: float = 1e-6, **args) -> Case:
    """A case with float arguments given as name=shape (sampled WIDE) or name=(shape, sampler)."""
    spec = {n: (a if len(a) == 2 and callable(a[1]) else (a, WIDE)) for n, a in args.items()}
    return Case(call, spec, step, rtol)


SWEEP: dict[object, list[Case]] = {
    # ---- arithmetic and math (arrays.py, numpy_elementwise.py) ----
    np.add: binary("add"), np.subtract: binary("subtract"), np.multiply: binary("multiply"),
    np.divide: binary("divide", WIDE, NONZERO),
    np.power: binary("power", POSITIVE, WIDE), np.negative: unary("negative"),
    np.positive: unary("positive"), np.square: unary("square"),
    np.reciprocal: unary("reciprocal", NONZERO),
    np.maximum: binary("maximum"), np.minimum: binary("minimum"),
    np.fmax: binary("fmax") + [of("np.fmax(x, np.where(x > 0.0, np.nan, x))", x=(3, 2))],
    np.fmin: binary("fmin") + [of("np.fmin(np.where(x > 0.0, np.nan, x), x)", x=(3, 2))],
    np.arctan2: binary("arctan2", NONZERO, NONZERO), np.hypot: binary("hypot", NONZERO, NONZERO),
    np.copysign: binary("copysign", NONZERO, NONZERO),
    np.logaddexp: binary("logaddexp") + [of("np.logaddexp(x, x)", x=(2,))],
    np.logaddexp2: binary("logaddexp2") + [of("np.logaddexp2(x, x)", x=(2,))],
    np.remainder: binary("remainder", WIDE, uniform(0.7, 1.9)) + binary("mod", WIDE, uniform(-2.0, -0.3)),
    np.fmod: binary("fmod", WIDE, uniform(0.7, 1.9)),
    np.floor_divide: binary("floor_divide", WIDE, uniform(0.7, 1.9)) + [of("x // 0.3 + x % 0.3", x=(3, 2))],
    np.sin: unary("sin"), np.cos: unary("cos"), np.tan: unary("tan", uniform(-1.1, 1.1)),
    np.arcsin: unary("arcsin", UNIT), np.arccos: unary("arccos", UNIT), np.arctan: unary("arctan"),
    np.sinh: unary("sinh"), np.cosh: unary("cosh"), np.tanh: unary("tanh"),
    np.arcsinh: unary("arcsinh"), np.arccosh: unary("arccosh", uniform(1.1, 4.0)),
    np.arctanh: unary("arctanh", UNIT),
    np.exp: unary("exp"), np.exp2: unary("exp2"), np.expm1: unary("expm1"),
    np.log: unary("log", POSITIVE), np.log1p: unary("log1p", POSITIVE),
    np.log2: unary("log2", POSITIVE), np.log10: unary("log10", POSITIVE),
    np.sqrt: unary("sqrt", POSITIVE), np.cbrt: unary("cbrt", NONZERO),
    np.abs: unary("abs", NONZERO), np.fabs: unary("fabs", NONZERO),
    np.deg2rad: unary("deg2rad"), np.radians: unary("radians"),
    np.rad2deg: unary("rad2deg"), np.degrees: unary("degrees"),
    np.sinc: unary("sinc") + [of("np.sinc(x * 0.0 + np.array([0.0, 1e-3, 0.5]))", x=(3,))],
    np.floor: unary("floor"), np.ceil: unary("ceil"), np.trunc: unary("trunc"),
    np.fix: unary("fix"), np.rint: unary("rint"),
    np.round: unary("round") + unary("round", extra=", 1") + [of("np.round(x * 100.0, -1)", x=(3, 2))],
    np.around: unary("around", extra=", decimals=2"),
    np.sign: unary("sign", NONZERO), np.signbit: unary("signbit"),
    np.isnan: [of("np.isnan(np.where(x > 0.0, np.nan, x))", x=(3, 2)), *unary("isnan")],
    np.isinf: [of("np.isinf(np.where(x > 0.0, np.inf, x))", x=(3, 2))],
    np.isfinite: [of("np.isfinite(np.where(x > 1.0, np.inf, np.where(x < -1.0, np.nan, x)))", x=(3, 2))],
    np.nan_to_num: [
        of("np.nan_to_num(x + np.array([0.0, np.nan, np.inf, -np.inf]))", x=(4,)),
        of("np.nan_to_num(x + np.array([0.0, np.nan, np.inf, -np.inf]), nan=1.5, posinf=9.0, neginf=-9.0)", x=(4,)),
    ],
    np.real: unary("real"), np.real_if_close: unary("real_if_close"), np.imag: unary("imag"),
    np.conj: unary("conj"), np.angle: unary("angle", NONZERO) + unary("angle", NONZERO, ", deg=True"),
    np.float64: unary("float64"), np.float32: [of("np.float32(x) * 2.0", x=(3, 2), step=1e-3, rtol=1e-3), of("np.float32(x)", x=(), step=1e-3, rtol=1e-3)],
    np.int64: [of("np.int64(x * 3.0)", x=(3, 2)), of("np.int64(x * 3.0)", x=())],
    np.bool_: [of("np.bool_(np.round(x)) * x", x=(3, 2)), of("x * (np.bool_(x > 0.0) + np.bool_(x > -0.5))", x=())],
    np.where: [of("np.where(x > 0.0, x, y)", x=(3, 2), y=(3, 2)), of("np.where(x > 0.0, x, 2.0)", x=(2,)),
               of("np.where(x > y, x * y, y)", x=(1, 2), y=(3, 1))],
    np.clip: [of("np.clip(x, -0.5, 1.0)", x=(3, 2)), of("np.clip(x, y, 1.5)", x=(3, 2), y=(2,))],
    np.equal: binary("equal"), np.not_equal: binary("not_equal"), np.less: binary("less"),
    np.less_equal: binary("less_equal"), np.greater: binary("greater"),
    np.greater_equal: binary("greater_equal"),
    np.logical_and: binary("logical_and"), np.logical_or: binary("logical_or"),
    np.logical_xor: binary("logical_xor"), np.logical_not: unary("logical_not"),
    # ---- reductions and products (arrays.py) ----
    np.sum: stat("sum"), np.mean: stat("mean"), np.prod: stat("prod", NONZERO),
    np.max: stat("max"), np.amax: stat("amax"), np.min: stat("min"), np.amin: stat("amin"),
    np.dot: [of("np.dot(x, y)", x=(2, 3), y=(3, 4)), of("np.dot(x, y)", x=(3,), y=(3, 2)),
             of("np.dot(x, y)", x=(3,), y=(3,)), of("np.dot(x, y)", x=(), y=(3, 2))],
    np.matmul: [of("np.matmul(x, y)", x=(2, 3), y=(3, 4)), of("np.matmul(x, y)", x=(2, 3), y=(3,))],
    np.outer: [of("np.outer(x, y)", x=(3,), y=(2,))],
    # ---- statistics (numpy_statistics.py) ----
    np.var: stat("var") + _ddof("var"), np.std: stat("std") + _ddof("std"),
    np.cumsum: [of("np.cumsum(x)", x=(10,)), of("np.cumsum(x, axis=0)", x=(5, 3)), of("np.cumsum(x, axis=1)", x=(2, 7)),
                of("np.cumsum(x)", x=(3, 4)), of("np.cumsum(x, axis=-1)", x=(1,)),
                of("np.cumsum(x)", x=(37,)), of("np.cumsum(x, axis=0)", x=(33, 2))],  # blocks of 16, a tail
    np.cumprod: [of("np.cumprod(x)", x=(9,)), of("np.cumprod(x, axis=1)", x=(3, 5)),
                 of("np.cumprod(x, axis=1)", x=(2, 40)),
                 of("np.cumprod(x * np.array([1.0, 0.0, 1.0, 1.0]))", x=(4,)),
                 of("x * np.cumprod(np.array([[1, 2, 3], [4, -5, 6]]), axis=1)", x=(3,)),
                 of("x * np.cumsum(np.array([True, False, True, True]))", x=(4,))],
    np.diff: [*(of(f"np.diff(x, n={n}, axis={axis})", x=shape) for shape in ((5, 5), (3, 4, 5)) for n in (1, 2)
                for axis in (0, 1)),
              of("np.diff(x, axis=0)", x=(1,)), of("np.diff(x, axis=1)", x=(3, 1)),
              of("np.diff(x, prepend=0.5, append=y)", x=(3, 4), y=(3, 1)), of("np.diff(x, n=0)", x=(3,)),
              of("x * np.diff(np.array([1, 4, 9, 16]), prepend=0)", x=(4,))],
    np.argmax: [of("np.argmax(x)", x=(3, 4)), of("np.argmax(x, axis=1)", x=(3, 4)),
                of("np.argmax(x, axis=0, keepdims=True)", x=(3, 4)), of("np.argmax(np.where(x > 1.0, np.nan, x))", x=(7,))],
    np.argmin: [of("np.argmin(x)", x=(3, 4)), of("np.argmin(x, axis=-1)", x=(2, 5)),
                of("np.argmin(np.round(x))", x=(9,))],
    np.sort: [of("np.sort(x)", x=(1,)), of("np.sort(x)", x=(7,)), of("np.sort(x, axis=0)", x=(4, 3)),
              of("np.sort(x, axis=None)", x=(2, 3)), of("np.sort(np.where(x > 1.0, np.nan, x))", x=(7,)),
              of("x * np.sort(np.array([3, -1, 2, 2]))", x=(4,))],
    np.shape: [of("x * np.shape(x)[1] + len(np.shape(2.0))", x=(3, 4))],
    np.ndim: [of("x * np.ndim(x) + np.ndim(1.5)", x=(2, 3, 1))],
    np.size: [of("x * np.size(x) + np.zeros(np.size(x, -1))", x=(2, 3)), of("x * np.size(x)", x=())],
    np.bincount: [of("np.bincount(np.array([0, 2, 2, 5]), weights=x, minlength=7)", x=(4,)),
                  of("x * np.bincount([1, 1, 0])", x=(2,))],
    np.argsort: [of("np.argsort(x)", x=(7,)), of("np.argsort(x, axis=0)", x=(4, 3)),
                 of("np.argsort(np.round(x), kind='stable')", x=(9,)),
                 of("np.argsort(np.array([3, -1, 2, 2]), kind='stable')", x=())],
    np.partition: [of(f"np.partition(x, {k})", x=(n,)) for n in (7, 14) for k in (0, 3, 6)],
    np.any: [of("np.any(x > 1.0)", x=(3, 4)), of("np.any(x > 1.0, axis=0)", x=(3, 4)), of("np.any(x * 0.0)", x=(3,))],
    np.all: [of("np.all(x > -1.5)", x=(3, 4)), of("np.all(x > 0.0, axis=1, keepdims=True)", x=(3, 4)), of("np.all(x)", x=(2,))],
    np.count_nonzero: [of("np.count_nonzero(x > 0.0)", x=(3, 4)), of("np.count_nonzero(np.round(x), axis=0)", x=(3, 4))],
    np.average: [of("np.average(x)", x=(3, 4)), of("np.average(x, axis=1, weights=y)", x=(3, 4), y=((4,), POSITIVE)),
                 of("np.average(x, weights=y)", x=(3, 4), y=((3, 4), POSITIVE)),
                 of("np.average(x, axis=0, weights=y, returned=True)", x=(3, 2), y=((3, 2), POSITIVE))],
    np.ptp: [of("np.ptp(x)", x=(3, 4)), of("np.ptp(x, axis=1, keepdims=True)", x=(3, 4))],
    np.median: [of("np.median(x)", x=(7,)), of("np.median(x)", x=(3, 4)), of("np.median(x, axis=0)", x=(3, 4)),
                of("np.median(x, axis=1, keepdims=True)", x=(3, 4)), of("np.median(x, axis=(0, 2))", x=(2, 3, 3)),
                of("np.median(np.where(x > 1.5, np.nan, x), axis=0)", x=(4, 3))],
    np.nansum: [of("np.nansum(np.where(x > 1.0, np.nan, x))", x=(3, 4)), of("np.nansum(np.where(x > 1.0, np.nan, x), axis=0)", x=(3, 4))],
    np.nanmean: [of("np.nanmean(np.where(x > 1.0, np.nan, x), axis=1)", x=(3, 4))],
    np.nanmax: [of("np.nanmax(np.where(x > 1.0, np.nan, x), axis=0)", x=(3, 4)), of("np.nanmax(x)", x=(5,))],
    np.nanmin: [of("np.nanmin(np.where(x > 1.0, np.nan, x), axis=1, keepdims=True)", x=(3, 4))],
    np.trapezoid: [of("np.trapezoid(x)", x=(5,)), of("np.trapezoid(x, dx=0.5, axis=0)", x=(5, 3)),
                   of("np.trapezoid(x, np.array([0.0, 1.0, 3.0, 3.5]))", x=(2, 4))],
    np.heaviside: [of("np.heaviside(x, y)", x=(3, 2), y=(3, 2)), of("np.heaviside(np.round(x), y)", x=(9,), y=())],
    np.polyval: [of("np.polyval([1.0, -2.0, 0.5], x)", x=(3, 2)), of("np.polyval(p, x)", p=(4,), x=(5,)),
                 of("np.polyval(p, x)", p=(1,), x=(2,))],
    np.interp: [of("np.interp(x, [-1.0, 0.0, 0.5, 2.0], fp)", x=(5,), fp=(4,)),
                of("np.interp(x, [-1.0, 0.5, 2.0], [1.0, -2.0, 0.5], left=0.0, right=1.0)", x=(3, 2))],
    # ---- shape functions (numpy_shapes.py) ----
    np.moveaxis: [of(f"np.moveaxis(x, {a}, {b})", x=(2, 3, 4)) for a in (0, 1, 2) for b in (0, 2)]
                 + [of("np.moveaxis(x, (0, 1), (-1, 0))", x=(2, 3, 4))],
    np.swapaxes: [of(f"np.swapaxes(x, {a}, {b})", x=(3, 4, 5)) for a in (0, 1, 2) for b in (0, 2)],
    np.rollaxis: [of(f"np.rollaxis(x, {a}, {b})", x=(2, 3, 4)) for a in (0, 1, 2) for b in (0, 1, 3)],
    np.atleast_1d: [of("np.atleast_1d(x)", x=s) for s in ((), (1,), (7,), (2, 4))],
    np.atleast_2d: [of("np.atleast_2d(x)", x=s) for s in ((), (1,), (7,), (1, 4), (2, 4, 5))],
    np.atleast_3d: [of("np.atleast_3d(x)", x=s) for s in ((), (7,), (2, 4), (2, 4, 5), (2, 4, 3, 5))]
                   + [of("np.atleast_3d(x, y)", x=(2,), y=(2, 3))],
    np.broadcast_to: [of("np.broadcast_to(x, (3, 2))", x=(2,)), of("np.broadcast_to(x, (2, 4, 3))", x=(4, 1))],
    np.vstack: [of("np.vstack(x)", x=(2,)), of("np.vstack((x, y))", x=(2,), y=(2,)),
                of("np.vstack([x, y])", x=(2, 4), y=(1, 4)), of("np.vstack((x, y))", x=(2, 3, 4), y=(5, 3, 4))],
    np.row_stack: [of("np.vstack((x, y))", x=(2, 4), y=(1, 4)), of("np.vstack((x, y))", x=(3,), y=(3,))],
    np.hstack: [of("np.hstack(x)", x=(2,)), of("np.hstack((x, y))", x=(2,), y=(2,)),
                of("np.hstack((x, y))", x=(3, 4), y=(3, 5)), of("np.hstack([x, y])", x=(2, 1, 4), y=(2, 5, 4))],
    np.dstack: [of("np.dstack((x, y))", x=(2,), y=(2,)), of("np.dstack((x, y))", x=(2, 3), y=(2, 3)),
                of("np.dstack(x)", x=(3,))],
    np.column_stack: [of("np.column_stack((x, y))", x=(2,), y=(2,)), of("np.column_stack([x, y])", x=(2, 2), y=(2, 2)),
                      of("np.column_stack(x)", x=(3,)), of("np.column_stack(x)", x=(3, 2)),
                      of("np.column_stack((x[0], y[1]))", x=(2,), y=(2,)), of("np.column_stack((x, y))", x=(3,), y=(3, 2))],
    np.append: [of("np.append(x, y)", x=(3,), y=()), of("np.append(x, y, axis=0)", x=(2, 3), y=(1, 3)),
                of("np.append(x, y)", x=(2, 2), y=(3,))],
    np.split: [of("np.split(x, 1)", x=(1,)), of("np.split(x, 1)", x=(7,)),
               *(of(f"np.split(x, {s}, axis={a})", x=(4, 8)) for s in (4, (1, 2)) for a in (0, 1)),
               *(of(f"np.split(x, {s}, axis={a})", x=(4, 4, 4)) for s in (2, (1, 2)) for a in (0, 1, 2))],
    np.array_split: [of("np.array_split(x, 3)", x=(7,)), of("np.array_split(x, 4, axis=1)", x=(7, 7)),
                     of("np.array_split(x, (3, 5), axis=2)", x=(7, 7, 7)), of("np.array_split(x, (-2, 9))", x=(7,))],
    np.hsplit: [of("np.hsplit(x, 4)", x=(4, 8)), of("np.hsplit(x, (1, 2))", x=(4, 4, 4)), of("np.hsplit(x, 2)", x=(6,))],
    np.vsplit: [of("np.vsplit(x, 4)", x=(4, 8)), of("np.vsplit(x, (1, 2))", x=(4, 4, 4))],
    np.dsplit: [of("np.dsplit(x, 2)", x=(4, 4, 4)), of("np.dsplit(x, (1, 2))", x=(4, 4, 4))],
    np.repeat: [*(of(f"np.repeat(x, {r}, axis={a})", x=s) for s in ((2, 3, 4), (3, 1)) for r in (0, 1, 2)
                  for a in (None, 0, 1)), of("np.repeat(x, (1, 0, 3), axis=1)", x=(2, 3))],
    np.tile: [of("np.tile(x, (1, 4, 1, 2))", x=(2, 1, 3, 1)), *(of(f"np.tile(x, {r})", x=(1, 2)) for r in ((1, 2), (2, 3), (3, 2, 1))),
              of("np.tile(x, (2,))", x=(1,)), of("np.tile(x, 2)", x=(1,)), of("np.tile(x, 2)", x=(2, 3))],
    np.flip: [of("np.flip(x)", x=(3, 4)), of("np.flip(x, 1)", x=(3, 4)), of("np.flip(x, (0, 2))", x=(2, 3, 4))],
    np.flipud: [of("np.flipud(x)", x=(10, 11))], np.fliplr: [of("np.fliplr(x)", x=(10, 11))],
    np.rot90: [of(f"np.rot90(x, {k})", x=(3, 4)) for k in (0, 1, 2, 3, -1)] + [of("np.rot90(x, 1, (1, 2))", x=(2, 3, 4))],
    np.roll: [of("np.roll(x, 2, axis=1)", x=(4, 5)), of("np.roll(x, -3)", x=(4, 5)), of("np.roll(x, (1, 2), axis=(0, 1))", x=(4, 5))],
    np.tril: [of(f"np.tril(x, k={k})", x=s) for s in ((5, 5), (5, 5, 4)) for k in (-1, 0, 1)],
    np.triu: [of(f"np.triu(x, k={k})", x=s) for s in ((5, 5), (5, 5, 4)) for k in (-1, 0, 1)] + [of("np.triu(x, 2)", x=(5, 5))],
    np.diag: [of(f"np.diag(x, k={k})", x=s) for s in ((5, 5), (5,)) for k in (-1, 0, 1)] + [of("np.diag(x)", x=(3, 4))],
    np.diagonal: [of("np.diagonal(x)", x=(4, 4)), of("np.diagonal(x, axis1=-1, axis2=-2)", x=(3, 4, 4)),
                  of("np.diagonal(x, 1, 0, 2)", x=(3, 4, 5)), of("np.diagonal(x, -2)", x=(4, 3))],
    np.trace: [of(f"np.trace(x, offset={k})", x=s) for s in ((5, 5), (4, 5), (5, 4), (3, 4, 5)) for k in (-1, 0, 1)]
              + [of("np.trace(x, 3)", x=(10, 11))],
    np.pad: [*(of(f"np.pad(x, {w}, 'constant')", x=(2, 2)) for w in (0, 3, (3,), (3, 2), ((3, 2),), ((1, 2), (3, 4)), ((0, 0), (0, 0)))),
             of("np.pad(x, 2, constant_values=1.5)", x=(3,)),
             *(of(f"np.pad(x, ((2, 3), (1, 4)), mode='{m}')", x=(3, 4)) for m in ("edge", "reflect", "symmetric", "wrap"))],
    np.select: [of("np.select([x > 0.0, y > 0.0, x > y], [x, y, x * y], default=1.1)", x=(3, 4), y=(3, 4)),
                of("np.select([x > 0.5], [x])", x=(5,))],
    np.gradient: [*(of(f"np.gradient(x, axis={a})", x=s) for s in ((5, 5), (5, 5, 5)) for a in (None, 0, 1, -1)),
                  *(of(f"np.gradient(x, axis={a})", x=(5, 5, 5)) for a in ((0, 1), (0, -1))),
                  of("np.gradient(x, 0.5, edge_order=2)", x=(6,)), of("np.gradient(x, 2.0, 0.5)", x=(4, 5))],
    np.linspace: [of("np.linspace(x, y, 5)", x=(), y=()), of("np.linspace(x, 3.0, 4, endpoint=False)", x=()),
                  of("x * np.linspace(0.0, 1.0, 7)", x=(7,)), of("np.linspace(x, y, 1)", x=(), y=()),
                  of("np.linspace(x, y, 3, retstep=True)", x=(), y=())],
    np.meshgrid: [of("np.meshgrid(x, y)", x=(3,), y=(4,)), of("np.meshgrid(x, y, indexing='ij')", x=(3,), y=(4,)),
                  of("np.meshgrid(x, y, z)", x=(2,), y=(3,), z=(4,))],
    # the index tricks: objects, not functions, with a case each all the same
    np.r_: [of("np.r_[x]", x=(3, 2)), of("np.r_[x, x]", x=(3, 2)), of("np.r_[x, np.ones((3, 2)), x]", x=(3, 2)),
            of("np.r_[x, np.arange(10.0), 1:10]", x=(10,)), of("np.r_[x, 2.0, y]", x=(3,), y=())],
    np.c_: [of("np.c_[x, np.ones((3, 2)), x]", x=(3, 2)), of("np.c_[x, y]", x=(3,), y=(3,))],
    # ---- indexing (indexing.py): the functions, then x[...] itself ----
    np.take: [of("np.take(x, [[0, 1], [4, 4]], axis=1)", x=(3, 5)), of("np.take(x, [3, -1, 3])", x=(2, 3)),
              of("np.take(x, 2, axis=0)", x=(4, 3))],
    np.take_along_axis: [of("np.take_along_axis(x, np.argsort(x, axis=1), axis=1)", x=(3, 5)),
                         of("np.take_along_axis(x, np.array([[0], [2], [1]]), axis=1)", x=(3, 4)),
                         of("np.take_along_axis(x, np.array([2, 0]), axis=None)", x=(2, 2))],
    np.triu_indices: [of("np.triu_indices(4)"), of("np.triu_indices(3, 1, 5)"), of("x[np.triu_indices(3, k=-1)]", x=(3, 3)),
                      of("x[np.triu_indices(2, m=4)]", x=(2, 4))],
    np.tril_indices: [of("np.tril_indices(4, -1)"), of("x[np.tril_indices(3)]", x=(3, 3)),
                      of("x[np.tril_indices(4, 1, 3)] * 2.0", x=(4, 3))],
    np.diag_indices: [of("np.diag_indices(3)"), of("x[np.diag_indices(2, 3)]", x=(2, 2, 2))],
    np.triu_indices_from: [of("x[np.triu_indices_from(x, 1)]", x=(3, 4))],
    np.tril_indices_from: [of("x[np.tril_indices_from(x)]", x=(4, 3))],
    np.diag_indices_from: [of("x[np.diag_indices_from(x)]", x=(3, 3))],
    "indexing": [
        of("x[[0, 1, 2], :, :]", x=(5, 6, 4)), of("x[3, 2:, [1, 3]]", x=(5, 6, 4)), of("x[[0, 0]]", x=(3,)),
        of("x[[0, 1, 0]]", x=(3,)), of("x[[0, 2], [1, 1]]", x=(3, 4)), of("x[[0, 2], :, [1, 3]]", x=(3, 4, 5)),
        of("x[:, [[0, 2], [1, 1]], [1, 3]]", x=(2, 3, 4)), of("x[1:, [4, 0, -1], ::-1]", x=(5, 6, 4)),
        of("x[..., [1, 0]]", x=(2, 3, 4)), of("x[[True, False, True, True, False]]", x=(5, 2)),
        of("x[np.argsort(x)]", x=(6,)), of("x[::-1, 2:4, :]", x=(5, 6, 4)), of("x[::-1, 2:4] + x[::-1, 3:5]", x=(5, 6)),
        of("x[4:0:-2, ::-3]", x=(5, 6)), of("x[np.array([[1, 2], [0, 5]]), 1:]", x=(6, 3)),
    ],
    np.empty: [of("x + np.zeros_like(np.empty((2, 3)))", x=(3,))],
    np.empty_like: [of("x + np.zeros_like(np.empty_like(x))", x=(2, 3))],
    np.identity: [of("np.identity(3) @ x", x=(3, 2))],
    np.logspace: [of("x * np.logspace(0.0, 2.0, 5)", x=(5,)), of("np.logspace(x, y, 4, base=2.0)", x=(), y=())],
    # ---- shapes and creation (arrays.py) ----
    np.transpose: [of("np.transpose(x)", x=(2, 3)), of("np.transpose(x, (1, 2, 0))", x=(2, 3, 4))],
    np.reshape: [of("np.reshape(x, (3, 2))", x=(2, 3)), of("np.reshape(x, (5 * 4, -1))", x=(5, 6, 4))],
    np.ravel: [of("np.ravel(x)", x=(2, 3))],
    np.squeeze: [of("np.squeeze(x)", x=(2, 1, 3)), of("np.squeeze(x, axis=0)", x=(1, 3))],
    np.expand_dims: [of("np.expand_dims(x, 1)", x=(2, 3)), of("np.expand_dims(x, -1)", x=(2,))],
    np.concatenate: [of("np.concatenate((x, y))", x=(2, 3), y=(1, 3)), of("np.concatenate([x, y], axis=1)", x=(2, 3), y=(2, 2))],
    np.stack: [of("np.stack((x, y))", x=(2, 3), y=(2, 3)), of("np.stack([x, y], axis=-1)", x=(2,), y=(2,))],
    np.array: [of("np.array([x, 2.0 * x, y])", x=(), y=()), of("np.array([x, y])", x=(2,), y=(2,)),
               of("np.array(x)", x=(2, 3))],
    np.asarray: [of("np.asarray(x)", x=(2, 3))], np.copy: [of("np.copy(x)", x=(2, 3))],
    np.zeros: [of("x + np.zeros((2, 3))", x=(3,))], np.ones: [of("x * np.ones((2, 3))", x=(3,))],
    np.full: [of("np.full((2, 3), x)", x=()), of("x * np.full((2,), 2.5)", x=(2,))],
    np.zeros_like: [of("np.zeros_like(x) + x", x=(2, 3))], np.ones_like: [of("np.ones_like(x) * x", x=(2, 3))],
    np.full_like: [of("np.full_like(x, 3.0) * x", x=(2, 3))],
    np.arange: [of("x * np.arange(3.0)", x=(3,)), of("x * np.arange(0.0, 1.0, 0.25)", x=())],
    np.eye: [of("np.eye(3) @ x", x=(3, 2)), of("np.eye(2, 3) * x", x=(3,)), of("np.eye(3, 2, k=-1) @ x", x=(2,)),
             of("np.eye(3, 3, 1) @ x", x=(3,))],
    np.tri: [of("np.tri(3) @ x", x=(3, 2)), of("np.tri(2, 3, k=1) * x", x=(3,)), of("np.tri(3, 2, -1, dtype=int) @ x", x=(2,))],
    # ---- contractions (numpy_contractions.py) ----
    np.einsum: [of("np.einsum('ij,jk->ik', x, y)", x=(2, 3), y=(3, 2)), of("np.einsum('ii', x)", x=(3, 3)),
                of("np.einsum('i,ij,j', x, y, z)", x=(2,), y=(2, 3), z=(3,))],
    np.tensordot: [of("np.tensordot(x, y, axes=([1], [0]))", x=(2, 3), y=(3, 2)), of("np.tensordot(x, y, axes=2)", x=(2, 3), y=(2, 3))],
    np.linalg.tensordot: [of("np.linalg.tensordot(x, y, axes=1)", x=(2, 3), y=(3,))],
    np.inner: [of("np.inner(x, y)", x=(2, 3), y=(4, 3))],
    np.vdot: [of("np.vdot(x, y)", x=(2, 3), y=(2, 3))],
    np.vecdot: [of("np.vecdot(x, y)", x=(2, 3), y=(3,))],
    np.linalg.vecdot: [of("np.linalg.vecdot(x, y, axis=0)", x=(3, 2), y=(3, 2))],
    np.kron: [of("np.kron(x, y)", x=(2, 2), y=(2, 3))],
    np.cross: [of("np.cross(x, y)", x=(3,), y=(2, 3)), of("np.cross(x, y, axisa=0)", x=(3, 2), y=(2, 3))],
    np.linalg.cross: [of("np.linalg.cross(x, y)", x=(2, 3), y=(2, 3))],
    np.linalg.matmul: [of("np.linalg.matmul(x, y)", x=(2, 2, 3), y=(3, 2))],
    np.linalg.outer: [of("np.linalg.outer(x, y)", x=(3,), y=(2,))],
    np.linalg.trace: [of("np.linalg.trace(x)", x=(2, 3, 3))],
    np.linalg.matrix_transpose: [of("np.linalg.matrix_transpose(x)", x=(2, 3, 4))],
    np.linalg.multi_dot: [of("np.linalg.multi_dot([x, y, z])", x=(2, 3), y=(3, 3), z=(3,))],
    np.linalg.matrix_power: [of("np.linalg.matrix_power(x, 3)", x=((3, 3), WELL_CONDITIONED)),
                             of("np.linalg.matrix_power(x, -2)", x=((3, 3), WELL_CONDITIONED))],
    # ---- linear algebra (numpy_linalg.py; tests/frontend/test_numpy_linalg.py goes further) ----
    np.linalg.solve: [of("np.linalg.solve(a, b)", a=((3, 3), WELL_CONDITIONED), b=(3,)),
                      of("np.linalg.solve(a, b)", a=((2, 3, 3), WELL_CONDITIONED), b=(2, 3, 2))],
    np.linalg.inv: [of("np.linalg.inv(a)", a=((3, 3), WELL_CONDITIONED))],
    np.linalg.det: [of("np.linalg.det(a)", a=((3, 3), WELL_CONDITIONED))],
    np.linalg.slogdet: [of("np.linalg.slogdet(a)[1]", a=((3, 3), WELL_CONDITIONED))],
    np.linalg.cholesky: [of("np.linalg.cholesky(a)", a=((3, 3), POSITIVE_DEFINITE))],
    np.linalg.eigh: [of("np.linalg.eigh(a)[0]", a=((3, 3), DISTINCT_EIGENVALUES)),
                     of("np.linalg.eigh(a)[1] ** 2", a=((3, 3), DISTINCT_EIGENVALUES))],
    np.linalg.eigvalsh: [of("np.linalg.eigvalsh(a)", a=((3, 3), DISTINCT_EIGENVALUES))],
    np.linalg.svd: [of("np.linalg.svd(a, compute_uv=False)", a=(3, 2)),
                    of("np.linalg.svd(a, full_matrices=False)[0] ** 2", a=((3, 2), WELL_CONDITIONED))],
    np.linalg.svdvals: [of("np.linalg.svdvals(a)", a=(2, 3))],
    np.linalg.qr: [of("np.linalg.qr(a)[1]", a=((3, 2), WELL_CONDITIONED))],
    np.linalg.pinv: [of("np.linalg.pinv(a)", a=((3, 2), WELL_CONDITIONED))],
    np.linalg.norm: [of("np.linalg.norm(x)", x=((3,), NONZERO)), of("np.linalg.norm(x, 'fro')", x=(2, 3)),
                     of("np.linalg.norm(x, 1, axis=1)", x=((2, 3), NONZERO))],
    np.linalg.vector_norm: [of("np.linalg.vector_norm(x, ord=3)", x=((4,), NONZERO))],
    np.linalg.matrix_norm: [of("np.linalg.matrix_norm(x, ord='nuc')", x=((3, 2), WELL_CONDITIONED))],
}


# ---- each case as a plain Python function, in a module irad can read ---------------------
def _case_module(sweep: dict[object, list[Case]]):
    lines = ["import numpy as np", ""]
    for k, (fn, cases) in enumerate(sweep.items()):
        for j, case in enumerate(cases):
            lines += [f"def case_{k}_{j}({', '.join(case.args)}):", f"    return {case.call}", ""]
    path = Path(tempfile.mkdtemp(prefix="irad_numpy_sweep_")) / "numpy_sweep_cases.py"
    path.write_text("\n".join(lines))
    spec = importlib.util.spec_from_file_location("numpy_sweep_cases", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


CASES = _case_module(SWEEP)
FORWARD_CASES = 4
INDEX = {id(fn): k for k, fn in enumerate(SWEEP)}


def _name(fn) -> str:
    if isinstance(fn, str):
        return fn
    return {id(np.r_): "r_", id(np.c_): "c_"}.get(id(fn)) or getattr(fn, "__name__", str(fn))


def _sample(rng, shape, sampler, dtype=np.float64):
    value = sampler(rng, shape)
    return float(value) if shape == () else np.asarray(value, dtype)


def _flat(out) -> list:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _is_float(value) -> bool:
    return isinstance(value, float) or (isinstance(value, np.ndarray | np.floating) and np.asarray(value).dtype.kind == "f")


def _dot(a, b) -> float:
    return float(sum(np.sum(np.asarray(x, np.float64) * np.asarray(y, np.float64)) for x, y in zip(a, b)))


def _check_value(got, want, label, rtol=1e-10):
    got, want = _flat(got), _flat(want)
    assert len(got) == len(want), label
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w), (label, np.shape(g), np.shape(w))
        if isinstance(w, np.ndarray) and w.dtype.kind == "f":
            assert np.asarray(g).dtype == w.dtype, (label, np.asarray(g).dtype, w.dtype)
        np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(w, np.float64), rtol=rtol, atol=rtol,
                                   err_msg=label)


def _check_case(f, case: Case, rng, forward: bool = True) -> None:
    label = case.label()
    names = list(case.args)
    xs = [_sample(rng, shape, sampler) for shape, sampler in case.args.values()]
    want = f(*xs)
    out, pullback = irad.vjp(f, *xs)
    _check_value(out, want, label)
    outs = _flat(out)
    if not any(_is_float(o) for o in outs):
        return  # an int or bool result: no derivative
    # cotangents, zero where the result is not a moderate number (inf, nan, np.finfo.max)
    us = [np.where(np.abs(np.asarray(o, np.float64)) < 1e100, rng.uniform(-1.0, 1.0, np.shape(o)), 0.0)
          if _is_float(o) else None
          for o in outs]
    us = [float(u) if u is not None and np.shape(u) == () else u for u in us]
    cotangents = pullback(type(out)(us) if isinstance(out, (tuple, list)) else us[0])  # out's structure
    vs = [_sample(rng, np.shape(x), lambda r, s: r.uniform(-1.0, 1.0, s)) for x in xs]
    for name, x, c in zip(names, xs, cotangents):
        assert np.shape(c) == np.shape(x), (label, name, "cotangent shape", np.shape(c), np.shape(x))
    back = _dot(cotangents, vs)
    h = case.step

    def inner(step: float) -> float:
        moved = [x + step * v for x, v in zip(xs, vs)]
        outs_moved = [o for o in _flat(f(*moved)) if _is_float(o)]
        return _dot([u for u in us if u is not None], [np.where(np.isfinite(o), o, 0.0) for o in outs_moved])

    difference = (inner(h) - inner(-h)) / (2 * h)
    assert back == pytest.approx(difference, rel=case.rtol, abs=case.rtol / 10), (label, "reverse vs finite differences")
    if not forward:
        return
    _, tangent = irad.jvp(f, tuple(xs), tuple(vs))
    ahead = _dot([u for u in us if u is not None], [t for t, o in zip(_flat(tangent), outs) if _is_float(o)])
    single = any(np.asarray(w).dtype == np.float32 for w in _flat(want))
    close = dict(rel=1e-5, abs=1e-6) if single else dict(rel=1e-10, abs=1e-12)
    assert ahead == pytest.approx(back, **close), (label, "forward vs reverse")


def _check_float32(f, case: Case, rng) -> None:
    label = case.label() + " in float32"
    xs = [_sample(rng, shape, sampler, np.float32) for shape, sampler in case.args.values()]
    out, pullback = irad.vjp(f, *xs)
    _check_value(out, f(*xs), label, rtol=2e-5)
    outs = _flat(out)
    if not any(_is_float(o) for o in outs):
        return
    us = [(np.ones_like(o) if np.shape(o) else 1.0) if _is_float(o) else None for o in outs]
    cotangents = pullback(type(out)(us) if isinstance(out, (tuple, list)) else us[0])  # out's structure
    for x, c in zip(xs, cotangents):
        if isinstance(x, np.ndarray):
            assert c.dtype == np.float32 and c.shape == x.shape, (label, c.dtype, c.shape)


@pytest.mark.parametrize("fn", list(SWEEP), ids=_name)
def test_numpy_function(fn):
    rng = np.random.default_rng(sum(map(ord, _name(fn))))
    first_array = None
    for j, case in enumerate(SWEEP[fn]):
        f = getattr(CASES, f"case_{INDEX[id(fn)]}_{j}")
        _check_case(f, case, rng, forward=j < FORWARD_CASES)
        if first_array is None and any(shape for shape, _ in case.args.values()):
            first_array = (f, case)
    if first_array is not None:
        _check_float32(*first_array, rng)


def test_every_numpy_function_is_swept():
    numpy_entries = [fn for fn in NUMPY if not isinstance(fn, str) and target_key(fn).startswith("numpy.")]
    missing = sorted(_name(fn) for fn in numpy_entries if fn not in SWEEP)  # scipy's: tests/frontend/test_scipy.py
    assert not missing, f"numpy functions without cases in SWEEP ({__file__}): {missing}"


NATIVE_MISSING = unavailable_reason()


@pytest.mark.native
@pytest.mark.skipif(NATIVE_MISSING is not None, reason=NATIVE_MISSING or "")
@pytest.mark.parametrize("fn", list(SWEEP), ids=_name)
def test_numpy_function_on_the_native_backend(fn):
    """The case with the largest arguments, through MLIR 22: the values and
    cotangents of the Python backend (checked above against numpy)."""
    rng = np.random.default_rng(1)
    index, case = max(enumerate(SWEEP[fn]), key=lambda c: sum(np.prod(s) for s, _ in c[1].args.values()))
    f = getattr(CASES, f"case_{INDEX[id(fn)]}_{index}")
    xs = [_sample(rng, shape, sampler) for shape, sampler in case.args.values()]
    out, pullback = irad.vjp(f, *xs, backend="native")
    want, want_pullback = irad.vjp(f, *xs)
    _check_value(out, want, case.label() + " native", rtol=1e-12)
    if any(_is_float(o) for o in _flat(want)):
        us = [(np.ones_like(o) if np.shape(o) else 1.0) if _is_float(o) else None for o in _flat(want)]
        cts = us[0] if len(us) == 1 else tuple(us)
        for got, ref in zip(pullback(cts), want_pullback(cts)):
            np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12, err_msg=case.label())
