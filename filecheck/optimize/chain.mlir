// RUN: irad-opt %s -p irad-optimize | filecheck %s

// A chain of IEEE-exact identities, as reverse mode emits them, collapses to
// its argument: x * 1.0, * -1.0, + -0.0, negf, / 1.0 and - 0.0.

// CHECK-LABEL: func.func @identities(%x: f64) -> f64 {
// CHECK-NEXT:    func.return %x : f64
// CHECK-NEXT:  }
func.func @identities(%x : f64) -> f64 {
  %one = arith.constant 1.0 : f64
  %m1 = arith.constant -1.0 : f64
  %nz = arith.constant -0.0 : f64
  %z = arith.constant 0.0 : f64
  %a = arith.mulf %x, %one : f64
  %b = arith.mulf %m1, %a : f64
  %c = arith.addf %nz, %b : f64
  %d = arith.negf %c : f64
  %e = arith.divf %d, %one : f64
  %r = arith.subf %e, %z : f64
  func.return %r : f64
}

// Negations fold into the ops that use them: x + -(y * -1.0) -> x + y.

// CHECK-LABEL: func.func @negations(%x: f64, %y: f64) -> f64 {
// CHECK-NEXT:    %r = arith.addf %x, %y : f64
// CHECK-NEXT:    func.return %r : f64
// CHECK-NEXT:  }
func.func @negations(%x : f64, %y : f64) -> f64 {
  %m1 = arith.constant -1.0 : f64
  %a = arith.mulf %y, %m1 : f64
  %n = arith.negf %a : f64
  %r = arith.subf %x, %a : f64
  func.return %r : f64
}

// A cotangent computed from constants folds to one constant; the unused
// cotangent and the duplicate exp disappear (DCE, CSE).

// CHECK-LABEL: func.func @constants(%x: f64) -> (f64, f64) {
// CHECK-NEXT:    %[[E:.*]] = math.exp %x : f64
// CHECK-NEXT:    %[[M:.*]] = arith.mulf %[[E]], %[[E]] : f64
// CHECK-NEXT:    %[[G:.*]] = arith.constant 0.99012907173427367 : f64
// CHECK-NEXT:    func.return %[[G]], %[[M]] : f64, f64
// CHECK-NEXT:  }
func.func @constants(%x : f64) -> (f64, f64) {
  %two = arith.constant 2.0 : f64
  %half = arith.constant 0.5 : f64
  %l = math.log %two : f64
  %s = math.sqrt %two : f64
  %p = arith.mulf %l, %s : f64
  %g = arith.mulf %p, %half : f64
  %unused = math.sin %g : f64
  %e1 = math.exp %x : f64
  %e2 = math.exp %x : f64
  %m = arith.mulf %e1, %e2 : f64
  %g2 = arith.addf %g, %half : f64
  func.return %g2, %m : f64, f64
}
