// RUN: irad-opt %s -p irad-inline | filecheck %s

// Order 2: every function below names the same original primal, @f, in the
// same role and order, so grouping by irad.primal alone would see f -> f.
// irad.derived_from names the order-1 function each was generated from: the
// calls are the edges f.grad -> f.augmented and f.grad -> f.pullback of the
// order-1 code, which has no cycle, so everything is inlined into the entry.
// @g's second-order pullbacks come from the recursive order-1 @g.pullback.d
// (it calls itself): that cycle survives into order 2 and stays a call.

// CHECK-LABEL: func.func private @g.pullback.d.pullback.d(
// CHECK:         func.call @g.pullback.d.pullback.d(
// CHECK-LABEL: func.func @main(%x: f64, %dy: f64) -> (f64, f64) {
// CHECK-NEXT:    %a = arith.mulf %x, %dy : f64
// CHECK-NEXT:    %df = arith.mulf %a, %x : f64
// CHECK-NEXT:    %dg = func.call @g.pullback.d.pullback.d(%x, %dy) : (f64, f64) -> f64
// CHECK-NEXT:    func.return %df, %dg : f64, f64
// CHECK-NEXT:  }
// CHECK-NOT:   @f.

func.func private @f.augmented.d.pullback.d(%x: f64, %dy: f64) -> f64 attributes {irad.primal = @f, irad.role = "pullback", irad.order = 2 : i64, irad.derived_from = @f.augmented.d} {
  %d = arith.mulf %x, %dy : f64
  func.return %d : f64
}

func.func private @f.grad.pullback.d(%x: f64, %dy: f64) -> f64 attributes {irad.primal = @f, irad.role = "pullback", irad.order = 2 : i64, irad.derived_from = @f.grad} {
  %a = func.call @f.augmented.d.pullback.d(%x, %dy) : (f64, f64) -> f64
  %b = arith.mulf %a, %x : f64
  func.return %b : f64
}

func.func private @g.pullback.d.pullback.d(%x: f64, %dy: f64) -> f64 attributes {irad.primal = @g, irad.role = "pullback", irad.order = 2 : i64, irad.derived_from = @g.pullback.d} {
  %r = func.call @g.pullback.d.pullback.d(%dy, %x) : (f64, f64) -> f64
  func.return %r : f64
}

func.func @main(%x: f64, %dy: f64) -> (f64, f64) {
  %df = func.call @f.grad.pullback.d(%x, %dy) : (f64, f64) -> f64
  %dg = func.call @g.pullback.d.pullback.d(%x, %dy) : (f64, f64) -> f64
  func.return %df, %dg : f64, f64
}
