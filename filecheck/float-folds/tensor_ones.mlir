// RUN: irad-opt %s -p irad-float-folds | filecheck %s

// x * 1.0 and x / 1.0 where the 1.0 is a tensor of ones: a splat constant,
// the whole of a rank-0 tensor written by tensor.insert (a gradient's seed),
// and broadcasts and reshapes of those. -1.0 gives negf. Only the folded ops
// change: irad-float-folds runs no DCE, so the seed's ops stay.

// CHECK-LABEL: func.func @seed(%x: tensor<4x3xf64>) -> (tensor<4x3xf64>, tensor<4x3xf64>) {
// CHECK:         %n = arith.negf %x : tensor<4x3xf64>
// CHECK-NEXT:    func.return %x, %n : tensor<4x3xf64>, tensor<4x3xf64>
func.func @seed(%x: tensor<4x3xf64>) -> (tensor<4x3xf64>, tensor<4x3xf64>) {
  %zero = arith.constant dense<0.0> : tensor<f64>
  %one = arith.constant 1.0 : f64
  %mone = arith.constant -1.0 : f64
  %s = tensor.insert %one into %zero[] : tensor<f64>
  %ms = tensor.insert %mone into %zero[] : tensor<f64>
  %e = tensor.empty() : tensor<4x3xf64>
  %b = linalg.broadcast ins(%s : tensor<f64>) outs(%e : tensor<4x3xf64>) dimensions = [0, 1]
  %mb = linalg.broadcast ins(%ms : tensor<f64>) outs(%e : tensor<4x3xf64>) dimensions = [0, 1]
  %r = arith.mulf %b, %x : tensor<4x3xf64>
  %n = arith.mulf %x, %mb : tensor<4x3xf64>
  func.return %r, %n : tensor<4x3xf64>, tensor<4x3xf64>
}

// CHECK-LABEL: func.func @splat_and_reshape(%x: tensor<6xf64>) -> (tensor<6xf64>, tensor<6xf64>) {
// CHECK-NOT:     arith.divf
// CHECK-NOT:     arith.mulf
// CHECK:         func.return %x, %x : tensor<6xf64>, tensor<6xf64>
func.func @splat_and_reshape(%x: tensor<6xf64>) -> (tensor<6xf64>, tensor<6xf64>) {
  %ones = arith.constant dense<1.0> : tensor<2x3xf64>
  %shape = arith.constant dense<6> : tensor<1xi64>
  %flat = tensor.reshape %ones(%shape) : (tensor<2x3xf64>, tensor<1xi64>) -> tensor<6xf64>
  %d = arith.divf %x, %flat : tensor<6xf64>
  %one = arith.constant 1.0 : f64
  %splat = tensor.splat %one : tensor<6xf64>
  %m = arith.mulf %splat, %d : tensor<6xf64>
  func.return %d, %m : tensor<6xf64>, tensor<6xf64>
}

// Not folded: a tensor of ones that is not all ones (a dense constant with
// another element), a broadcast of a value that is not a constant, and 1.0 / x.
// CHECK-LABEL: func.func @kept(%x: tensor<2xf64>, %y: tensor<f64>) -> (tensor<2xf64>, tensor<2xf64>, tensor<2xf64>) {
// CHECK:         %a = arith.mulf %x, %c : tensor<2xf64>
// CHECK:         %p = arith.mulf %x, %b : tensor<2xf64>
// CHECK:         %q = arith.divf %o, %x : tensor<2xf64>
// CHECK:         func.return %a, %p, %q
func.func @kept(%x: tensor<2xf64>, %y: tensor<f64>) -> (tensor<2xf64>, tensor<2xf64>, tensor<2xf64>) {
  %c = arith.constant dense<[1.0, 2.0]> : tensor<2xf64>
  %a = arith.mulf %x, %c : tensor<2xf64>
  %e = tensor.empty() : tensor<2xf64>
  %b = linalg.broadcast ins(%y : tensor<f64>) outs(%e : tensor<2xf64>) dimensions = [0]
  %p = arith.mulf %x, %b : tensor<2xf64>
  %o = arith.constant dense<1.0> : tensor<2xf64>
  %q = arith.divf %o, %x : tensor<2xf64>
  func.return %a, %p, %q : tensor<2xf64>, tensor<2xf64>, tensor<2xf64>
}
