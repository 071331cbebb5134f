// RUN: irad-opt %s -p irad-float-folds | filecheck %s

// irad-float-folds applies the folds alone: no canonicalization, CSE or DCE,
// so the now unused constants stay.

// CHECK-LABEL: func.func @folds(%x: f64, %y: f64) -> (f64, f64, f64, i1, f64) {
// CHECK-NEXT:    %one = arith.constant 1.000000e+00 : f64
// CHECK-NEXT:    %m1 = arith.constant -1.000000e+00 : f64
// CHECK-NEXT:    %a = arith.negf %y : f64
// CHECK-NEXT:    %b = arith.subf %x, %y : f64
// CHECK-NEXT:    %e = arith.constant 2.7182818284590451 : f64
// CHECK-NEXT:    %c = arith.constant false
// CHECK-NEXT:    %zero = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:    %l = arith.constant 0xfff0000000000000 : f64
// CHECK-NEXT:    func.return %x, %b, %e, %c, %l : f64, f64, f64, i1, f64
func.func @folds(%x: f64, %y: f64) -> (f64, f64, f64, i1, f64) {
  %one = arith.constant 1.0 : f64
  %m1 = arith.constant -1.0 : f64
  %r = arith.mulf %one, %x : f64
  %a = arith.mulf %y, %m1 : f64
  %b = arith.addf %x, %a : f64
  %e = math.exp %one : f64
  %c = arith.cmpf uno, %e, %one : f64
  %zero = arith.constant 0.0 : f64
  %l = math.log %zero : f64
  func.return %r, %b, %e, %c, %l : f64, f64, f64, i1, f64
}

// A sign flipped twice around a product (as the adjoint of 1 / (1 + exp(-x))
// leaves it) is no flip; a product with another use is left alone.
// CHECK-LABEL: func.func @twice_negated(%x: tensor<4xf64>, %y: tensor<4xf64>) -> (tensor<4xf64>, tensor<4xf64>) {
// CHECK-NEXT:    %a = arith.negf %x : tensor<4xf64>
// CHECK-NEXT:    %p = arith.mulf %a, %y : tensor<4xf64>
// CHECK-NEXT:    %q = arith.divf %a, %y : tensor<4xf64>
// CHECK-NEXT:    %r = arith.divf %x, %y : tensor<4xf64>
// CHECK-NEXT:    %m = arith.negf %p : tensor<4xf64>
// CHECK-NEXT:    %s = arith.mulf %p, %m : tensor<4xf64>
// CHECK-NEXT:    func.return %r, %s : tensor<4xf64>, tensor<4xf64>
func.func @twice_negated(%x: tensor<4xf64>, %y: tensor<4xf64>) -> (tensor<4xf64>, tensor<4xf64>) {
  %a = arith.negf %x : tensor<4xf64>
  %p = arith.mulf %a, %y : tensor<4xf64>
  %q = arith.divf %a, %y : tensor<4xf64>
  %r = arith.negf %q : tensor<4xf64>
  %m = arith.negf %p : tensor<4xf64>
  %s = arith.mulf %p, %m : tensor<4xf64>
  func.return %r, %s : tensor<4xf64>, tensor<4xf64>
}
