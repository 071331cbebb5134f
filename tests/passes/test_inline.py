"""irad-inline and the post-AD pipeline: nested pullbacks cost nothing.

The op-count proofs compare the optimised gradient of a call graph with the
gradient of the same computation written as one flat function (both built by
tests.generated_programs). Gradients are checked against central finite differences in
float64, or against the analytic derivative where the primal is too deep for
Python to evaluate by plain recursion.
"""

from __future__ import annotations

import itertools
import math
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, StringAttr, SymbolRefAttr, f64
from xdsl.parser import Parser

import irad
from tests import generated_programs as testing
from irad.pipeline import gradient_module
from irad.backends.python.translate import compile_module
from irad.backends.native.mlir_tools import find_tool, mlir_opt_parses
from irad.ir.dialect import make_context
from irad.base.gc_pause import gc_paused
from irad.ir.callgraph import strongly_connected
from tests.reference import central_difference
from irad.passes.ad.differentiator import Differentiator
from irad.passes.inline import InlinePass
from irad.passes.optimisation.inliner import inline_calls
from tests.mlir_roundtrip import record

CTX = make_context()


def parse(text: str):
    return Parser(CTX, text).parse_module()


def functions(module) -> dict[str, func.FuncOp]:
    return {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}


def op_count(module) -> int:
    return sum(1 for _ in module.walk()) - 1


def calls(fn: func.FuncOp) -> list[str]:
    return [op.callee.root_reference.data for op in fn.walk() if isinstance(op, func.CallOp)]


PROGRAMS = {
    "chain-5": lambda: testing.chain(5),
    "chain-20": lambda: testing.chain(20),
    "chain-50": lambda: testing.chain(50),
    "shared-callees": testing.shared_tree,
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_call_graph_gradient_has_the_ops_of_the_flat_one(name, tmp_path):
    program = PROGRAMS[name]()
    tag = name.replace("-", "_")
    nested = testing.load(program.source(), f"nested_{tag}", tmp_path)
    flat = testing.load(program.flat_source(), f"flat_{tag}", tmp_path)
    module, entry, _, _ = gradient_module(getattr(nested, program.entry), (f64,), (0,), False)
    flat_module, *_ = gradient_module(flat.flat, (f64,), (0,), False)
    assert list(functions(module)) == [entry]  # every generated function was inlined
    assert calls(functions(module)[entry]) == []
    assert op_count(module) <= 1.05 * op_count(flat_module)


@pytest.mark.parametrize(
    "program",
    [testing.chain(20), testing.shared_tree(), testing.tree(40)],
    ids=["chain-20", "shared-callees", "tree-40"],
)
def test_inlined_gradients_match_finite_differences(program, tmp_path):
    module = testing.load(program.source(), f"fd_{len(program.functions)}", tmp_path)
    f = getattr(module, program.entry)
    df = irad.grad(f)
    for x in (0.3, -0.7, 1.1):
        expected = central_difference(f, (x,), 0)
        assert df(x) == pytest.approx(expected, rel=1e-6, abs=1e-8)


RECURSIVE = """
func.func private @g.pullback.d(%x: f64, %dy: f64) -> f64 attributes {irad.primal = @g, irad.role = "pullback", irad.order = 1 : i64} {
  %c = math.cos %x : f64
  %dx = arith.mulf %dy, %c : f64
  func.return %dx : f64
}
func.func private @r.pullback.d(%x: f64, %dy: f64) -> f64 attributes {irad.primal = @r, irad.role = "pullback", irad.order = 1 : i64} {
  %zero = arith.constant 0.0 : f64
  %more = arith.cmpf ogt, %x, %zero : f64
  %dx = scf.if %more -> (f64) {
    %one = arith.constant 1.0 : f64
    %y = arith.subf %x, %one : f64
    %d = func.call @r.pullback.d(%y, %dy) : (f64, f64) -> f64
    %e = func.call @g.pullback.d(%x, %d) : (f64, f64) -> f64
    scf.yield %e : f64
  } else {
    scf.yield %dy : f64
  }
  func.return %dx : f64
}
func.func @main(%x: f64, %dy: f64) -> f64 {
  %d = func.call @r.pullback.d(%x, %dy) : (f64, f64) -> f64
  func.return %d : f64
}
"""


def test_a_recursive_primal_stays_a_call_and_its_callees_are_inlined():
    module = parse(RECURSIVE)
    assert inline_calls(module) == 1  # @g's pullback, into @r's
    module.verify()
    fns = functions(module)
    assert set(fns) == {"r.pullback.d", "main"}
    assert calls(fns["r.pullback.d"]) == ["r.pullback.d"]
    assert calls(fns["main"]) == ["r.pullback.d"]
    assert inline_calls(module) == 0  # a fixed point: nothing left to inline


def test_max_depth_zero_inlines_nothing():
    module = parse(RECURSIVE)
    InlinePass(max_depth=0).apply(CTX, module)
    assert set(functions(module)) == {"g.pullback.d", "r.pullback.d", "main"}


SHARED = """
func.func private @big.pullback.d(%x: f64, %dy: f64) -> f64 attributes {irad.primal = @big, irad.role = "pullback", irad.order = 1 : i64} {
  %a = math.cos %x : f64
  %b = arith.mulf %a, %x : f64
  %c = math.sin %b : f64
  %dx = arith.mulf %dy, %c : f64
  func.return %dx : f64
}
func.func private @small.pullback.d(%x: f64, %dy: f64) -> f64 attributes {irad.primal = @small, irad.role = "pullback", irad.order = 1 : i64} {
  %dx = arith.mulf %dy, %x : f64
  func.return %dx : f64
}
func.func private @once.pullback.d(%x: f64, %dy: f64) -> f64 attributes {irad.primal = @once, irad.role = "pullback", irad.order = 1 : i64} {
  %a = math.exp %x : f64
  %b = arith.mulf %a, %x : f64
  %c = math.tanh %b : f64
  %dx = arith.mulf %dy, %c : f64
  func.return %dx : f64
}
func.func @main(%x: f64, %dy: f64) -> f64 {
  %d1 = func.call @big.pullback.d(%x, %dy) : (f64, f64) -> f64
  %d2 = func.call @big.pullback.d(%x, %d1) : (f64, f64) -> f64
  %d3 = func.call @small.pullback.d(%x, %d2) : (f64, f64) -> f64
  %d4 = func.call @small.pullback.d(%x, %d3) : (f64, f64) -> f64
  %d5 = func.call @once.pullback.d(%x, %d4) : (f64, f64) -> f64
  func.return %d5 : f64
}
"""


def test_keep_shared_keeps_only_shared_callees_of_its_size():
    """keep-shared=4: @big (4 ops, 2 calls) stays; @small (1 op, 2 calls) and
    @once (4 ops, 1 call) are inlined; keep-shared=0 inlines all three."""
    module = parse(SHARED)
    before = compile_module(module).function("main")(0.4, 1.3)
    assert inline_calls(module, keep_shared=4) == 3
    module.verify()
    assert set(functions(module)) == {"big.pullback.d", "main"}
    assert calls(functions(module)["main"]) == ["big.pullback.d"] * 2
    assert compile_module(module).function("main")(0.4, 1.3) == before
    everything = parse(SHARED)
    InlinePass(keep_shared=0).apply(CTX, everything)
    assert set(functions(everything)) == {"main"}
    with pytest.raises(irad.IradError, match="keep-shared=-1 is negative"):
        inline_calls(parse(SHARED), keep_shared=-1)


def _reachable(edges, start):
    seen, todo = {start}, [start]
    while todo:
        for succ in edges[todo.pop()]:
            if succ not in seen:
                seen.add(succ)
                todo.append(succ)
    return seen


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.integers(0, 7), st.lists(st.integers(0, 7), max_size=4), min_size=1))
def test_strongly_connected_components_are_mutual_reachability(raw):
    edges = {n: [s for s in succs if s in raw] for n, succs in raw.items()}
    components = strongly_connected(edges)
    assert sorted(itertools.chain(*components)) == sorted(edges)
    reach = {n: _reachable(edges, n) for n in edges}
    position = {n: i for i, members in enumerate(components) for n in members}
    for a, b in itertools.product(edges, repeat=2):
        mutual = b in reach[a] and a in reach[b]
        assert (position[a] == position[b]) == mutual
        if b in edges[a]:
            assert position[b] <= position[a]  # callees' components come first


def test_strongly_connected_needs_no_recursion_on_depth():
    n = 20 * sys.getrecursionlimit()
    chain = {i: [i + 1] if i + 1 < n else [0] for i in range(n)}  # one long cycle
    assert [len(c) for c in strongly_connected(chain)] == [n]
    path = {i: [i + 1] if i + 1 < n else [] for i in range(n)}
    assert strongly_connected(path)[0] == [n - 1]


def test_a_2000_deep_chain_needs_no_recursion_in_the_passes(tmp_path):
    depth = 2000
    program = testing.chain(depth, affine=True)
    module = testing.load(program.source(), "deep_chain", tmp_path)
    f = getattr(module, program.entry)
    # The frontend raises the limit for its own recursion over the source; the
    # differentiator and the optimiser must do without it.
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(len(_frames()) + 150)
    try:
        with gc_paused():
            grad_module, entry, _, _ = gradient_module(f, (f64,), (0,), False)
    finally:
        sys.setrecursionlimit(old)
    run = compile_module(grad_module).function(entry)
    x = 0.4
    d = math.sin(x) + x * math.cos(x) + 0.5  # f0'(x); each level: 0.999 * d + 0.5
    for _ in range(depth - 1):
        d = 0.999 * d + 0.5
    assert run(x)[0] == pytest.approx(d, rel=1e-9)


def _frames() -> list:
    frames, frame = [], sys._getframe()
    while frame is not None:
        frames.append(frame)
        frame = frame.f_back
    return frames


TWO_LEVELS = """
func.func private @g(%x: f64) -> f64 {
  %y = math.sin %x : f64
  func.return %y : f64
}
func.func private @f(%x: f64) -> f64 {
  %a = func.call @g(%x) : (f64) -> f64
  %b = arith.mulf %a, %x : f64
  func.return %b : f64
}
"""


def _metadata(fn: func.FuncOp) -> tuple:
    primal = fn.attributes["irad.primal"]
    role = fn.attributes["irad.role"]
    order = fn.attributes["irad.order"]
    assert isinstance(primal, SymbolRefAttr) and isinstance(role, StringAttr)
    assert isinstance(order, IntegerAttr)
    return primal.root_reference.data, role.data, order.value.data


def test_metadata_survives_print_and_parse():
    module = parse(TWO_LEVELS)
    Differentiator(module).reverse("f", (True,))
    record(module)
    before = _all_metadata(module)
    assert before["g.pullback.d"] == ("g", "pullback", 1)
    assert _all_metadata(parse(str(module))) == before


def _all_metadata(module) -> dict[str, tuple]:
    return {n: _metadata(fn) for n, fn in functions(module).items() if "irad.primal" in fn.attributes}


@pytest.mark.mlir
@pytest.mark.skipif(find_tool("mlir-opt") is None, reason="mlir-opt 22 not installed")
def test_what_the_inliner_keeps_parses_in_mlir_opt():
    module = parse(RECURSIVE)
    inline_calls(module)
    ok, diagnostics = mlir_opt_parses(str(module))
    assert ok, diagnostics
    assert "irad.primal = @r" in str(module)


def test_differentiating_generated_code_raises_the_order_and_keeps_the_primal():
    module = parse(TWO_LEVELS)
    first = Differentiator(module).reverse("f", (True,))
    # Differentiate the pullback itself (residuals and cotangent active).
    pullback = functions(module)[first.pullback]
    active = tuple(True for _ in pullback.function_type.inputs.data)
    second = Differentiator(module).reverse(first.pullback, active)
    record(module)
    fns = functions(module)
    for name, role in ((second.augmented, "augmented_primal"), (second.pullback, "pullback")):
        assert _metadata(fns[name]) == ("f", role, 2)
    # @f's second-order pullback calls @g's, also order 2 and still naming @g.
    inner = [fns[c] for c in calls(fns[second.pullback]) if c in fns]
    assert [_metadata(fn) for fn in inner] == [("g", "pullback", 2)]
    module.verify()


def _big_function(name: str, attributes: str) -> str:
    ops = "\n".join(f"  %v{i} = arith.mulf %v{i - 1}, %x : f64" for i in range(1, 41))
    return f"""
func.func private @{name}(%x: f64) -> f64 {attributes} {{
  %v0 = math.sin %x : f64
{ops}
  func.return %v40 : f64
}}"""


def test_metadata_lifts_the_size_threshold():
    # 41 ops, above the default threshold of 32: without metadata the callee
    # stays a call, as a generated function it is inlined.
    generated = 'attributes {irad.primal = @big, irad.role = "pullback", irad.order = 1 : i64}'
    text = (
        _big_function("big.pullback.d", generated)
        + _big_function("other", "")
        + """
func.func @main(%x: f64) -> (f64, f64) {
  %a = func.call @big.pullback.d(%x) : (f64) -> f64
  %b = func.call @other(%x) : (f64) -> f64
  func.return %a, %b : f64, f64
}"""
    )
    module = parse(text)
    assert inline_calls(module) == 1
    assert calls(functions(module)["main"]) == ["other"]
    module = parse(text)
    assert inline_calls(module, threshold=41) == 2


def _linked_list(block) -> list:
    """The block's ops read forwards; checks the backward links and parents agree."""
    forward, op = [], block.first_op
    while op is not None:
        assert op.parent is block
        forward.append(op)
        op = op.next_op
    backward, op = [], block.last_op
    while op is not None:
        backward.append(op)
        op = op.prev_op
    assert backward[::-1] == forward
    return forward


@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_a_moved_body_is_spliced_in_order(where):
    """The last use of a private callee moves its body before the call (one
    splice of the block's list): in order, each op in its new block, the block's
    links consistent both ways, the callee gone, the module valid."""
    before = "  %p = arith.mulf %x, %x : f64\n" if where != "first" else ""
    after = "  %q = arith.addf %r, %x : f64\n" if where != "last" else ""
    result = "%q" if where != "last" else "%r"
    text = f"""
func.func private @callee(%a: f64) -> f64 {{
  %0 = arith.mulf %a, %a : f64
  %1 = math.sin %0 : f64
  %2 = arith.addf %1, %a : f64
  func.return %2 : f64
}}
func.func @main(%x: f64) -> f64 {{
{before}  %r = func.call @callee(%x) : (f64) -> f64
{after}  func.return {result} : f64
}}"""
    module = parse(text)
    assert inline_calls(module) == 1
    assert list(functions(module)) == ["main"]
    ops = _linked_list(functions(module)["main"].body.block)
    names = [op.name for op in ops]
    body = ["arith.mulf", "math.sin", "arith.addf"]
    expected = (["arith.mulf"] if where != "first" else []) + body + (
        ["arith.addf"] if where != "last" else []) + ["func.return"]
    assert names == expected
    module.verify()


@st.composite
def call_dags(draw):
    """MLIR text of a random call DAG: @fN may call any @fK with K < N, some of
    them twice, some with metadata; @main calls the last one."""
    count = draw(st.integers(1, 6))
    lines = []
    for n in range(count):
        generated = draw(st.booleans())
        attrs = (
            f' attributes {{irad.primal = @p{n}, irad.role = "pullback", irad.order = 1 : i64}}'
            if generated else ""
        )
        body = ["%v0 = arith.mulf %x, %y : f64"]
        values = ["%x", "%y", "%v0"]
        for i, callee in enumerate(draw(st.lists(st.integers(0, max(n - 1, 0)), max_size=3))):
            if n == 0:
                break
            a, b = draw(st.sampled_from(values)), draw(st.sampled_from(values))
            body.append(f"%c{i} = func.call @f{callee}({a}, {b}) : (f64, f64) -> f64")
            body.append(f"%s{i} = math.sin %c{i} : f64")
            values += [f"%c{i}", f"%s{i}"]
        result = draw(st.sampled_from(values))
        body.append(f"%r = arith.addf {result}, %x : f64")
        visibility = "private " if draw(st.booleans()) else ""
        lines.append(
            f"func.func {visibility}@f{n}(%x: f64, %y: f64) -> f64{attrs} {{\n  "
            + "\n  ".join(body) + "\n  func.return %r : f64\n}"
        )
    lines.append(
        f"func.func @main(%x: f64, %y: f64) -> f64 {{\n"
        f"  %r = func.call @f{count - 1}(%x, %y) : (f64, f64) -> f64\n  func.return %r : f64\n}}"
    )
    return "\n".join(lines)


@settings(max_examples=60, deadline=None)
@given(call_dags(), st.integers(0, 8), st.integers(0, 7), st.sampled_from([0, 0, 1, 3]))
def test_inlining_preserves_what_main_computes(text, threshold, max_depth, keep_shared):
    module = parse(text)
    before = compile_module(module).function("main")
    inline_calls(module, threshold=threshold, max_depth=max_depth, keep_shared=keep_shared)
    module.verify()
    after = compile_module(module).function("main")
    for x, y in ((0.3, -1.2), (2.0, 0.5)):
        assert after(x, y) == before(x, y)
    if max_depth >= 6 and threshold >= 8 and not keep_shared:
        assert calls(functions(module)["main"]) == []
