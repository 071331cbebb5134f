// RUN: irad-opt %s -p irad-differentiate | filecheck %s

// The request op is replaced by a call to the augmented primal, a seed of 1.0
// and a call to the pullback; the generated pair carries its provenance.

func.func @f(%x: f64, %y: f64) -> f64 {
  %p = arith.mulf %x, %y : f64
  %s = math.sin %p : f64
  func.return %s : f64
}

func.func @main(%x: f64, %y: f64) -> (f64, f64, f64) {
  %v, %gx, %gy = irad.value_and_grad @f(%x, %y) {wrt = [0, 1]} : (f64, f64) -> (f64, f64, f64)
  func.return %v, %gx, %gy : f64, f64, f64
}

// CHECK-LABEL: func.func @main(%x: f64, %y: f64) -> (f64, f64, f64) {
// CHECK-NEXT:    %[[V:.*]], %[[R0:.*]], %[[R1:.*]], %[[R2:.*]] = func.call @f.augmented.dd(%x, %y) : (f64, f64) -> (f64, f64, f64, f64)
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1.000000e+00 : f64
// CHECK-NEXT:    %gx, %gy = func.call @f.pullback.dd(%[[R0]], %[[R1]], %[[R2]], %[[ONE]]) : (f64, f64, f64, f64) -> (f64, f64)
// CHECK-NEXT:    func.return %[[V]], %gx, %gy : f64, f64, f64
// CHECK-NOT:     irad.value_and_grad

// CHECK:       func.func private @f.augmented.dd(%x: f64, %y: f64) -> (f64, f64, f64, f64) attributes {irad.primal = @f, irad.role = "augmented_primal", irad.order = 1 : i64} {
// CHECK-NEXT:    %p = arith.mulf %x, %y : f64
// CHECK-NEXT:    %s = math.sin %p : f64
// CHECK-NEXT:    func.return %s, %p, %y, %x : f64, f64, f64, f64

// CHECK:       func.func private @f.pullback.dd(%p: f64, %y: f64, %x: f64, %[[DS:.*]]: f64) -> (f64, f64) attributes {irad.primal = @f, irad.role = "pullback", irad.order = 1 : i64} {
// CHECK-NEXT:    %[[C:.*]] = math.cos %p : f64
// CHECK-NEXT:    %[[DP:.*]] = arith.mulf %[[DS]], %[[C]] : f64
// CHECK-NEXT:    %[[DX:.*]] = arith.mulf %[[DP]], %y : f64
// CHECK-NEXT:    %[[DY:.*]] = arith.mulf %[[DP]], %x : f64
// CHECK-NEXT:    func.return %[[DX]], %[[DY]] : f64, f64
