"""Unit tests of the activity analysis (passes/ad/activity.py), on hand-written IR."""

from xdsl.dialects import func, scf
from xdsl.dialects.memref import MemRef
from xdsl.parser import Parser

from irad.ir.dialect import make_context
from irad.passes.ad.activity import active_values, free_values, loop_links, varied_memory, varied_values


def parse_function(text: str) -> func.FuncOp:
    context = make_context()
    context.load_dialect(MemRef)
    module = Parser(context, text).parse_module()
    return next(op for op in module.ops if isinstance(op, func.FuncOp))


def named(fn: func.FuncOp, values) -> set[str]:
    return {v.name_hint for v in values if v.name_hint}


MIXED = """
func.func @f(%x: f64, %y: f64, %n: i64) -> f64 {
  %c = arith.constant 2.0 : f64
  %a = arith.mulf %x, %c : f64
  %b = arith.mulf %y, %y : f64
  %unused = math.sin %x : f64
  %k = arith.sitofp %n : i64 to f64
  %cmp = arith.cmpf olt, %a, %b : f64
  %s = arith.select %cmp, %a, %k : f64
  %r = arith.addf %s, %b : f64
  func.return %r : f64
}
"""


def test_active_values_vary_with_the_argument_and_reach_the_result():
    fn = parse_function(MIXED)
    # wrt x only: y's square varies with nothing active; sin(x) reaches no result
    assert named(fn, active_values(fn, (True, False, False))) == {"x", "a", "s", "r"}
    # wrt y only
    assert named(fn, active_values(fn, (False, True, False))) == {"y", "b", "r"}
    # integers and comparisons are never active, even when asked for
    active = active_values(fn, (True, True, True))
    assert not named(fn, active) & {"n", "k", "cmp", "unused", "c"}


def test_non_differentiable_ops_stop_activity():
    fn = parse_function("""
    func.func @f(%x: f64) -> f64 {
      %r = math.floor %x : f64
      %y = arith.mulf %r, %r : f64
      func.return %y : f64
    }
    """)
    assert named(fn, active_values(fn, (True,))) == set()


LOOP = """
func.func @f(%x: f64, %y: f64) -> f64 {
  %lb = arith.constant 0 : index
  %ub = arith.constant 4 : index
  %st = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %acc, %other = scf.for %i = %lb to %ub step %st iter_args(%a = %z, %o = %y) -> (f64, f64) {
    %next = arith.addf %a, %x : f64
    scf.yield %next, %o : f64, f64
  }
  func.return %acc : f64
}
"""


def test_a_loop_carries_activity_to_a_fixed_point():
    fn = parse_function(LOOP)
    # x enters the carried %a through the body; %o carries y, which reaches no result
    active = named(fn, active_values(fn, (True, True)))
    assert {"x", "a", "next", "acc"} <= active
    assert not active & {"y", "o", "other"}
    loop = next(op for op in fn.walk() if isinstance(op, scf.ForOp))
    stages = loop_links(loop)  # (what flows into a carried value, what holds it)
    assert [tuple(tuple(v.name_hint for v in part) for part in link) for link in stages] == [
        (("z", "next"), ("a", "acc")),
        (("y", "o"), ("o", "other")),
    ]


def test_a_loop_does_not_make_its_starting_value_vary():
    # %start comes from a call with constant arguments; the loop makes %v vary
    # but its starting value stays inactive (issue 13, item 11: a KeyError)
    fn = parse_function("""
    func.func @f(%x: f64) -> f64 {
      %lb = arith.constant 0 : index
      %ub = arith.constant 2 : index
      %st = arith.constant 1 : index
      %c = arith.constant 0.3 : f64
      %start = func.call @h(%c) : (f64) -> f64
      %r = scf.for %i = %lb to %ub step %st iter_args(%v = %start) -> (f64) {
        %next = arith.mulf %v, %x : f64
        scf.yield %next : f64
      }
      func.return %r : f64
    }
    func.func private @h(%q: f64) -> f64 {
      func.return %q : f64
    }
    """)
    active = named(fn, active_values(fn, (True,)))
    assert {"x", "v", "next", "r"} <= active
    assert "start" not in active


def test_a_constant_an_iteration_yields_does_not_vary():
    # found by the fuzzer: %v varies (it starts as %x), so every stage of it was
    # taken for active, %next too; the call making %next was never planned, and
    # reversing it raised a KeyError
    fn = parse_function("""
    func.func @f(%x: f64) -> f64 {
      %lb = arith.constant 0 : index
      %ub = arith.constant 2 : index
      %st = arith.constant 1 : index
      %r = scf.for %i = %lb to %ub step %st iter_args(%v = %x) -> (f64) {
        %c = arith.constant 0.3 : f64
        %next = func.call @h(%c) : (f64) -> f64
        scf.yield %next : f64
      }
      func.return %r : f64
    }
    func.func private @h(%q: f64) -> f64 {
      func.return %q : f64
    }
    """)
    active = named(fn, active_values(fn, (True,)))
    assert {"x", "r"} <= active  # with no iteration, r is x
    assert not active & {"next", "c", "v"}  # v reaches no result through the body


def test_free_values_are_the_uses_from_outside_in_order():
    fn = parse_function(LOOP)
    loop = next(op for op in fn.walk() if isinstance(op, scf.ForOp))
    assert [v.name_hint for v in free_values(loop, None)] == ["x"]
    assert free_values(loop, set()) == []


def test_a_varied_value_stored_to_memory_is_found():
    fn = parse_function("""
    func.func @f(%x: f64) -> f64 {
      %c = arith.constant 1 : index
      %m = memref.alloc(%c) : memref<?xf64>
      %i = arith.constant 0 : index
      %y = arith.mulf %x, %x : f64
      memref.store %y, %m[%i] : memref<?xf64>
      %r = memref.load %m[%i] : memref<?xf64>
      func.return %r : f64
    }
    """)
    store = varied_memory(fn, varied_values(fn, (True,)))
    assert store is not None and store.name == "memref.store"
    assert varied_memory(fn, varied_values(fn, (False,))) is None
