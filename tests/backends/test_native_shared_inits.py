"""Destinations shared between writes, on the native backend.

mlir-opt 22's `--eliminate-empty-tensors` gave two ops one destination when
their init was one fresh value (a fill or broadcast into a `tensor.empty`,
shared in the input or merged by `--cse`), so both results came out as the
first: a silently wrong value; so did a value stored while another op wrote
into it. native/fresh_destinations.py makes each fresh array's chain of
writes linear before mlir-opt, and the pipeline runs the elimination before
CSE.

The hand-written cases are the ones that went wrong; the generated ones (a
fuzzer: `make fuzz` runs more of them) mix
fills, broadcasts, reductions, elementwise writes, inserts, loops and
branches over a few shared inits, checked against numpy. Every function of
a test is in one module, compiled once.
"""

import os
import random

import numpy as np
import pytest
from xdsl.dialects import tensor
from xdsl.parser import Parser

from irad.backends.native import compile as native
from irad.backends.native import fresh_destinations as fd
from irad.ir.dialect import make_context
from tests.reference import NATIVE_MISSING

pytestmark = [pytest.mark.native, pytest.mark.skipif(NATIVE_MISSING is not None, reason=str(NATIVE_MISSING))]

X = np.arange(6.0).reshape(2, 3)
Y = np.full((2, 3), 10.0) + np.arange(3.0)
SOURCES = {"x": X, "y": Y}
T, M = "tensor<2xf64>", "tensor<2x3xf64>"
CONSTANTS = ("0.0", "1.5", "-2.0")  # %cst0, %cst1, %cst2 in every function


def constant(i):
    return f"%cst{i}"


def value_of(constant_name):
    return float(CONSTANTS[int(constant_name[len("%cst"):])])


class Body:
    """One function's body, written op by op, with each value's numpy value."""

    def __init__(self):
        self.lines, self.values, self.count = [], {}, 0

    def name(self):
        self.count += 1
        return f"%v{self.count}"

    def add(self, text, value):
        """Append `name = text(r)`, r the name without its %, so an op's
        region gets names of its own."""
        name = self.name()
        self.lines.append(f"  {name} = {text(name[1:]) if callable(text) else text}")
        self.values[name] = value
        return name

    def empty(self):
        return self.add(f"tensor.empty() : {T}", None)

    def fill(self, constant, into):
        return self.add(f"linalg.fill ins({constant} : f64) outs({into} : {T}) -> {T}", np.full(2, value_of(constant)))

    def broadcast(self, constant, into):
        splat = self.add(f"tensor.splat {constant} : tensor<f64>", None)
        return self.add(f"linalg.broadcast ins({splat} : tensor<f64>) outs({into} : {T}) dimensions = [0]",
                        np.full(2, value_of(constant)))

    def reduce(self, source, into):
        return self.add(
            lambda r: f"linalg.reduce ins(%{source} : {M}) outs({into} : {T}) dimensions = [1]\n"
                      f"    (%p{r}: f64, %q{r}: f64) {{\n      %t{r} = arith.addf %p{r}, %q{r} : f64\n"
                      f"      linalg.yield %t{r} : f64\n    }}",
            self.values[into] + SOURCES[source].sum(1))

    def add_column(self, source, column, into):
        col = self.add(f"tensor.extract_slice %{source}[0, {column}] [2, 1] [1, 1] : {M} to {T}", None)
        return self.add(
            lambda r: "linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], "
                      f"iterator_types = [\"parallel\"]}} ins({col} : {T}) outs({into} : {T}) {{\n"
                      f"    ^bb0(%in{r}: f64, %out{r}: f64):\n      %w{r} = arith.addf %in{r}, %out{r} : f64\n"
                      f"      linalg.yield %w{r} : f64\n    }} -> {T}",
            self.values[into] + SOURCES[source][:, column])

    def sum(self, a, b):
        """An elementwise sum of two arrays: it only reads them."""
        return self.add(f"arith.addf {a}, {b} : {T}", self.values[a] + self.values[b])

    def insert(self, source, into):
        return self.add(f"tensor.insert_slice {source} into {into}[0] [2] [1] : {T} into {T}", self.values[source])

    def loop(self, source, into):
        """Add the columns of `source` to `into`, carried through an scf.for."""
        name = self.name()[1:]
        self.lines.append(
            f"  %{name} = scf.for %k{name} = %c0 to %c3 step %c1 iter_args(%acc{name} = {into}) -> ({T}) {{\n"
            f"    %col{name} = tensor.extract_slice %{source}[0, %k{name}] [2, 1] [1, 1] : {M} to {T}\n"
            f"    %n{name} = arith.addf %acc{name}, %col{name} : {T}\n    scf.yield %n{name} : {T}\n  }}")
        self.values[f"%{name}"] = self.values[into] + SOURCES[source].sum(1)
        return f"%{name}"

    def branch(self, source, into):
        """An scf.if (never taken) that yields `into`, else reduces into it."""
        name = self.name()[1:]
        self.lines.append(
            f"  %{name} = scf.if %never -> ({T}) {{\n    scf.yield {into} : {T}\n  }} else {{\n"
            f"    %in{name} = linalg.reduce ins(%{source} : {M}) outs({into} : {T}) dimensions = [1]\n"
            f"      (%p{name}: f64, %q{name}: f64) {{\n        %t{name} = arith.addf %p{name}, %q{name} : f64\n"
            f"        linalg.yield %t{name} : f64\n      }}\n    scf.yield %in{name} : {T}\n  }}")
        self.values[f"%{name}"] = self.values[into] + SOURCES[source].sum(1)
        return f"%{name}"

    def function(self, name, results):
        head = (f"func.func @{name}(%x: {M}, %y: {M}) -> ({', '.join([T] * len(results))}) {{\n"
                "  %c0 = arith.constant 0 : index\n  %c1 = arith.constant 1 : index\n"
                "  %c3 = arith.constant 3 : index\n  %never = arith.constant false\n"
                + "".join(f"  %cst{i} = arith.constant {c} : f64\n" for i, c in enumerate(CONSTANTS)))
        tail = f"  func.return {', '.join(results)} : {', '.join([T] * len(results))}\n}}\n"
        return head + "\n".join(self.lines) + "\n" + tail, [self.values[r] for r in results]


def known_cases():
    """The shapes that went wrong before the fix, one function each."""
    cases = {}

    def case(name, build):
        body = Body()
        cases[name] = body.function(name, build(body))

    case("shared_broadcast", lambda b: (lambda i: [b.reduce("x", i), b.reduce("y", i)])(b.broadcast(constant(0), b.empty())))
    case("shared_empty", lambda b: (lambda e: [b.reduce("x", b.broadcast(constant(0), e)),
                                             b.reduce("y", b.broadcast(constant(0), e))])(b.empty()))
    case("merged_by_cse", lambda b: [b.reduce("x", b.broadcast(constant(1), b.empty())),
                                     b.reduce("y", b.broadcast(constant(1), b.empty()))])
    case("shared_fill", lambda b: (lambda i: [b.reduce("x", i), b.reduce("y", i)])(b.fill(constant(2), b.empty())))
    case("reduce_and_elementwise", lambda b: (lambda i: [b.reduce("x", i), b.add_column("y", 0, i)])(
        b.fill(constant(0), b.empty())))
    case("two_inserts", lambda b: (lambda i: [b.insert(b.reduce("x", i), i), b.insert(b.reduce("y", i), i)])(
        b.fill(constant(1), b.empty())))
    case("branch_and_reduce", lambda b: (lambda i: [b.reduce("x", i), b.branch("y", i)])(
        b.fill(constant(0), b.empty())))
    return cases


def generated_cases(count, seed):
    """Random programs over a few fresh inits, some shared by several writes."""
    rng = random.Random(seed)
    cases = {}
    for n in range(count):
        body = Body()
        empties = [body.empty() for _ in range(rng.randint(1, 2))]
        pool = []
        for _ in range(rng.randint(1, 3)):
            make = rng.choice((body.fill, body.broadcast))
            pool.append(make(constant(rng.randrange(len(CONSTANTS))), rng.choice(empties)))
        for _ in range(rng.randint(2, 5)):
            kind = rng.choice(("reduce", "reduce", "column", "insert", "loop", "branch", "sum"))
            into, source = rng.choice(pool), rng.choice("xy")
            if kind == "reduce":
                pool.append(body.reduce(source, into))
            elif kind == "column":
                pool.append(body.add_column(source, rng.randrange(3), into))
            elif kind == "insert":
                pool.append(body.insert(rng.choice(pool), into))
            elif kind == "sum":
                pool.append(body.sum(rng.choice(pool), rng.choice(pool)))
            elif kind == "loop":
                pool.append(body.loop(source, into))
            else:
                pool.append(body.branch(source, into))
        results = rng.sample(pool, min(3, len(pool)))
        cases[f"g{n}"] = body.function(f"g{n}", results)
    return cases


def run_cases(cases):
    module = Parser(make_context(), "\n".join(text for text, _ in cases.values())).parse_module()
    compiled = native.compile_module(module)
    wrong = {}
    for name, (text, expected) in cases.items():
        got = compiled.function(name)(X, Y)
        got = got if isinstance(got, tuple) else (got,)
        if not all(np.array_equal(g, e) for g, e in zip(got, expected)):
            wrong[name] = (text, got, expected)
    return wrong


def test_writes_into_one_shared_init_keep_their_values():
    assert run_cases(known_cases()) == {}


# `make fuzz` runs FUZZ_EXAMPLES / 5 programs (40 to a module) from FUZZ_SEED; the suite 24.
LONG = os.environ.get("FUZZ_EXAMPLES")
SEEDS = [int(os.environ.get("FUZZ_SEED", "0")) * 1000 + k for k in range(max(2, int(LONG) // 200 if LONG else 2))]


@pytest.mark.parametrize("seed", SEEDS)
def test_generated_sharing_patterns_agree_with_numpy(seed):
    assert run_cases(generated_cases(40 if LONG else 12, seed)) == {}


def test_every_array_is_written_or_stored_through_one_use_after_the_step():
    cases = {**known_cases(), **generated_cases(12, 0)}
    module = Parser(make_context(), "\n".join(text for text, _ in cases.values())).parse_module()
    fd.linear_fresh_chains(module)
    module.verify()
    order = {op: i for i, op in enumerate(module.walk())}
    for op in module.walk():
        if isinstance(op, tensor.EmptyOp):
            assert len(list(op.tensor.uses)) <= 1, op
        for value in op.results:
            assert not fd.may_become_fresh(value) or fd.shared_uses(value, order) == [], value
