// RUN: irad-opt %s -p irad-differentiate | filecheck %s

// @g's result only feeds a comparison, so no cotangent reaches the call: it
// stays a plain call to the primal in the augmented primal, and no functions
// are generated for @g.

func.func private @g(%x: f64) -> f64 {
  %y = math.exp %x : f64
  func.return %y : f64
}

func.func @f(%x: f64) -> f64 {
  %a = func.call @g(%x) : (f64) -> f64
  %one = arith.constant 1.0 : f64
  %c = arith.cmpf ogt, %a, %one : f64
  %r = arith.select %c, %x, %one : f64
  func.return %r : f64
}

func.func @main(%x: f64) -> f64 {
  %g = irad.grad @f(%x) {wrt = [0]} : (f64) -> f64
  func.return %g : f64
}

// CHECK-NOT:   @g.augmented
// CHECK-NOT:   @g.pullback
// CHECK:       func.func private @f.augmented.d(%x: f64)
// CHECK-NEXT:    %a = func.call @g(%x) : (f64) -> f64
// CHECK-NOT:   @g.augmented
// CHECK-NOT:   @g.pullback
