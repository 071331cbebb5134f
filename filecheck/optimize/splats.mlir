// RUN: irad-opt %s -p irad-optimize | filecheck %s

// An elementwise op whose operands are each made of one number is computed on
// the numbers (ElementwiseOfSplats, passes/sink_broadcasts.py): a splat constant,
// a tensor.splat and a broadcast of one are all one number, so ones * 0.0 + x
// over a 20000x20000 array is one scalar op and one tensor.splat, never an array
// the size of the constants.

// CHECK-LABEL: func.func @on_numbers(%x: f64) -> tensor<20000x20000xf64> {
// CHECK-NEXT:    %{{.*}} = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:    %{{.*}} = arith.addf %{{.*}}, %x : f64
// CHECK-NEXT:    %{{.*}} = tensor.splat %{{.*}} : tensor<20000x20000xf64>
// CHECK-NEXT:    func.return %{{.*}} : tensor<20000x20000xf64>
// CHECK-NEXT:  }
func.func @on_numbers(%x : f64) -> tensor<20000x20000xf64> {
  %ones = arith.constant dense<1.0> : tensor<20000x20000xf64>
  %zero = arith.constant dense<0.0> : tensor<20000xf64>
  %empty = tensor.empty() : tensor<20000x20000xf64>
  %zeros = linalg.broadcast ins(%zero : tensor<20000xf64>) outs(%empty : tensor<20000x20000xf64>) dimensions = [0]
  %prod = arith.mulf %ones, %zeros : tensor<20000x20000xf64>
  %xs = tensor.splat %x : tensor<20000x20000xf64>
  %sum = arith.addf %prod, %xs : tensor<20000x20000xf64>
  func.return %sum : tensor<20000x20000xf64>
}

// An operand of many numbers: nothing to compute on numbers.
// CHECK-LABEL: func.func @not_one_number(%y: tensor<2xf64>) -> tensor<2xf64> {
// CHECK-NEXT:    %{{.*}} = arith.constant dense<2.000000e+00> : tensor<2xf64>
// CHECK-NEXT:    %{{.*}} = arith.mulf %y, %{{.*}} : tensor<2xf64>
func.func @not_one_number(%y : tensor<2xf64>) -> tensor<2xf64> {
  %two = arith.constant dense<2.0> : tensor<2xf64>
  %p = arith.mulf %y, %two : tensor<2xf64>
  func.return %p : tensor<2xf64>
}
