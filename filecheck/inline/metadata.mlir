// RUN: irad-opt %s -p irad-inline | filecheck %s

// The inliner judges generated functions on the primal call graph that their
// `irad.primal` names. @f -> @g is not recursive, so @g's pullback is inlined
// into @f's, and @f's into the public @main; both private pullbacks are then
// unused and erased. @r is recursive (its pullback calls itself through an
// scf.if), so its generated function stays a call and is kept.

// CHECK-NOT:   @g.pullback.d(
// CHECK-NOT:   @f.pullback.d(
// CHECK:       func.func private @r.pullback.d(%x: f64, %dy: f64) -> f64 attributes {irad.primal = @r
// CHECK:         %d = func.call @r.pullback.d(%y, %dy) : (f64, f64) -> f64

// CHECK-LABEL: func.func @main(%x: f64, %dy: f64) -> (f64, f64) {
// CHECK-NEXT:    %two = arith.constant 2.000000e+00 : f64
// CHECK-NEXT:    %da = arith.mulf %dy, %two : f64
// CHECK-NEXT:    %c = math.cos %x : f64
// CHECK-NEXT:    %df = arith.mulf %da, %c : f64
// CHECK-NEXT:    %dr = func.call @r.pullback.d(%x, %dy) : (f64, f64) -> f64
// CHECK-NEXT:    func.return %df, %dr : f64, f64
// CHECK-NEXT:  }
// CHECK-NOT:   func.func

func.func private @g.pullback.d(%x: f64, %dy: f64) -> f64 attributes {irad.primal = @g, irad.role = "pullback", irad.order = 1 : i64} {
  %c = math.cos %x : f64
  %dx = arith.mulf %dy, %c : f64
  func.return %dx : f64
}

func.func private @f.pullback.d(%x: f64, %dy: f64) -> f64 attributes {irad.primal = @f, irad.role = "pullback", irad.order = 1 : i64} {
  %two = arith.constant 2.0 : f64
  %da = arith.mulf %dy, %two : f64
  %dx = func.call @g.pullback.d(%x, %da) : (f64, f64) -> f64
  func.return %dx : f64
}

func.func private @r.pullback.d(%x: f64, %dy: f64) -> f64 attributes {irad.primal = @r, irad.role = "pullback", irad.order = 1 : i64} {
  %zero = arith.constant 0.0 : f64
  %more = arith.cmpf ogt, %x, %zero : f64
  %dx = scf.if %more -> (f64) {
    %one = arith.constant 1.0 : f64
    %y = arith.subf %x, %one : f64
    %d = func.call @r.pullback.d(%y, %dy) : (f64, f64) -> f64
    scf.yield %d : f64
  } else {
    scf.yield %dy : f64
  }
  func.return %dx : f64
}

func.func @main(%x: f64, %dy: f64) -> (f64, f64) {
  %df = func.call @f.pullback.d(%x, %dy) : (f64, f64) -> f64
  %dr = func.call @r.pullback.d(%x, %dy) : (f64, f64) -> f64
  func.return %df, %dr : f64, f64
}
