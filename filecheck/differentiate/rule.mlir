// RUN: irad-opt %s -p irad-differentiate | filecheck %s

// @irad.numerics.softplus has a rule in the table: its forward (a call to the
// primal itself) and its pullback (dy * sigmoid(x)) are inlined at the call
// site, and no generated functions exist for it. @helper has no rule, so it
// is differentiated recursively.

func.func private @irad.numerics.softplus(%x: f64) -> f64 {
  %z = arith.constant 0.0 : f64
  %m = arith.maximumf %x, %z : f64
  %a = math.absf %x : f64
  %n = arith.negf %a : f64
  %e = math.exp %n : f64
  %l = math.log1p %e : f64
  %y = arith.addf %m, %l : f64
  func.return %y : f64
}

func.func private @helper(%x: f64) -> f64 {
  %y = math.exp %x : f64
  func.return %y : f64
}

func.func @f(%x: f64) -> f64 {
  %a = func.call @irad.numerics.softplus(%x) : (f64) -> f64
  %b = func.call @helper(%a) : (f64) -> f64
  func.return %b : f64
}

func.func @main(%x: f64) -> f64 {
  %g = irad.grad @f(%x) {wrt = [0]} : (f64) -> f64
  func.return %g : f64
}

// CHECK-NOT:   @irad.numerics.softplus.augmented
// CHECK-NOT:   @irad.numerics.softplus.pullback
// CHECK:       func.func private @helper.augmented.d
// CHECK:       func.func private @helper.pullback.d

// CHECK:       func.func private @f.augmented.d(%x: f64)
// CHECK-NEXT:    %a = func.call @irad.numerics.softplus(%x) : (f64) -> f64
// CHECK-NEXT:    %b, %{{.*}} = func.call @helper.augmented.d(%a) : (f64) -> (f64, f64)

// CHECK:       func.func private @f.pullback.d(
// CHECK:         func.call @helper.pullback.d
// CHECK:         math.tanh
// CHECK-NOT:     func.call
// CHECK:         func.return
