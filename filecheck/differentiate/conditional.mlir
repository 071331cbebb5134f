// RUN: irad-opt %s -p irad-differentiate | filecheck %s

// A conditional (scf.if with results): the augmented primal yields the
// residuals computed inside a branch out of the scf.if (a placeholder on the
// other path), and the pullback branches on the saved condition.

func.func @f(%x: f64) -> f64 {
  %zero = arith.constant 0.0 : f64
  %c = arith.cmpf ogt, %x, %zero : f64
  %r = scf.if %c -> (f64) {
    %s = math.sin %x : f64
    %t = arith.mulf %s, %s : f64
    scf.yield %t : f64
  } else {
    %n = arith.negf %x : f64
    scf.yield %n : f64
  }
  func.return %r : f64
}

func.func @main(%x: f64) -> f64 {
  %g = irad.grad @f(%x) {wrt = [0]} : (f64) -> f64
  func.return %g : f64
}

// CHECK:       func.func private @f.augmented.d(%x: f64) -> (f64, i1, f64, f64)
// CHECK:         %c = arith.cmpf ogt, %x, %zero : f64
// CHECK-NEXT:    %[[R:.*]], %[[S:.*]] = scf.if %c -> (f64, f64) {
// CHECK-NEXT:      %s = math.sin %x : f64
// CHECK-NEXT:      %t = arith.mulf %s, %s : f64
// CHECK-NEXT:      scf.yield %t, %s : f64, f64
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %n = arith.negf %x : f64
// CHECK-NEXT:      %[[PH:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:      scf.yield %n, %[[PH]] : f64, f64
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R]], %c, %[[S]], %x : f64, i1, f64, f64

// CHECK:       func.func private @f.pullback.d(%c: i1, %s: f64, %x: f64, %[[DR:.*]]: f64) -> f64
// CHECK:         %[[DX:.*]] = scf.if %c -> (f64) {
// CHECK:           math.cos %x
// CHECK:           scf.yield
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[NEG:.*]] = arith.negf %[[DR]] : f64
// CHECK-NEXT:      scf.yield %[[NEG]] : f64
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[DX]] : f64
