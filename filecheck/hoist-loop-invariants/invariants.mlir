// RUN: irad-opt %s -p irad-hoist-loop-invariants | filecheck %s
// RUN: irad-opt %s -p irad-hoist-loop-invariants | %mlir-opt --verify-diagnostics > /dev/null
// REQUIRES: mlir-opt

// Array and float code of a loop body that reads only values from outside the
// loop moves before it (passes/hoist_loop_invariants.py): the broadcast of %b and
// its tensor.empty, the transpose of %w and a splat of %one, in the order they
// were in, and ops that read them stay. An op that takes an index (the slice
// at %i, a slice at the invariant %j, which a bounds check in the body may
// guard) stays, and so does the body's use of the carried value; and so does
// the tensor.empty that a broadcast of the carried value writes into (a
// destination moves only with its users).

func.func @f(%w: tensor<2x3xf64>, %b: tensor<3xf64>, %xs: tensor<4x2xf64>, %h0: tensor<1x3xf64>, %j: index) -> tensor<1x3xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f64
  %zeros = arith.constant dense<0.0> : tensor<1x2xf64>
  %zeros3 = arith.constant dense<0.0> : tensor<1x3xf64>
  %h = scf.for %i = %c0 to %c4 step %c1 iter_args(%h_1 = %h0) -> (tensor<1x3xf64>) {
    %e = tensor.empty() : tensor<1x3xf64>
    %bb = linalg.broadcast ins(%b : tensor<3xf64>) outs(%e : tensor<1x3xf64>) dimensions = [0]
    %et = tensor.empty() : tensor<3x2xf64>
    %wt = linalg.transpose ins(%w : tensor<2x3xf64>) outs(%et : tensor<3x2xf64>) permutation = [1, 0]
    %ones = tensor.splat %one : tensor<1x3xf64>
    %row = tensor.extract_slice %xs[%i, 0] [1, 2] [1, 1] : tensor<4x2xf64> to tensor<1x2xf64>
    %other = tensor.extract_slice %xs[%j, 0] [1, 2] [1, 1] : tensor<4x2xf64> to tensor<1x2xf64>
    %g = arith.addf %h_1, %bb : tensor<1x3xf64>
    %p = linalg.matmul ins(%g, %wt : tensor<1x3xf64>, tensor<3x2xf64>) outs(%zeros : tensor<1x2xf64>) -> tensor<1x2xf64>
    %q = arith.mulf %p, %row : tensor<1x2xf64>
    %r = arith.addf %q, %other : tensor<1x2xf64>
    %s = linalg.matmul ins(%r, %w : tensor<1x2xf64>, tensor<2x3xf64>) outs(%zeros3 : tensor<1x3xf64>) -> tensor<1x3xf64>
    %t = arith.addf %s, %ones : tensor<1x3xf64>
    %e2 = tensor.empty() : tensor<2x1x3xf64>
    %u = linalg.broadcast ins(%t : tensor<1x3xf64>) outs(%e2 : tensor<2x1x3xf64>) dimensions = [0]
    %v = tensor.extract_slice %u[1, 0, 0] [1, 1, 3] [1, 1, 1] : tensor<2x1x3xf64> to tensor<1x3xf64>
    scf.yield %v : tensor<1x3xf64>
  }
  func.return %h : tensor<1x3xf64>
}

// CHECK-LABEL: func.func @f(
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<1x3xf64>
// CHECK-NEXT:    %[[BB:.*]] = linalg.broadcast ins(%b:tensor<3xf64>) outs(%[[E]]:tensor<1x3xf64>)
// CHECK-NEXT:    %[[ET:.*]] = tensor.empty() : tensor<3x2xf64>
// CHECK-NEXT:    %[[WT:.*]] = linalg.transpose ins(%w:tensor<2x3xf64>) outs(%[[ET]]:tensor<3x2xf64>)
// CHECK-NEXT:    %[[ONES:.*]] = tensor.splat %one : tensor<1x3xf64>
// CHECK-NEXT:    %h = scf.for %i = %c0 to %c4 step %c1 iter_args(%h_1 = %h0) -> (tensor<1x3xf64>) {
// CHECK-NEXT:      %row = tensor.extract_slice %xs[%i, 0]
// CHECK-NEXT:      %other = tensor.extract_slice %xs[%j, 0]
// CHECK-NEXT:      %g = arith.addf %h_1, %[[BB]]
// CHECK-NEXT:      %p = linalg.matmul ins(%g, %[[WT]]
// CHECK-NEXT:      %q = arith.mulf %p, %row
// CHECK-NEXT:      %r = arith.addf %q, %other
// CHECK-NEXT:      %s = linalg.matmul ins(%r, %w
// CHECK-NEXT:      %t = arith.addf %s, %[[ONES]]
// CHECK-NEXT:      %e2 = tensor.empty()
// CHECK-NEXT:      %u = linalg.broadcast ins(%t
// CHECK-NEXT:      %v = tensor.extract_slice %u
// CHECK-NEXT:      scf.yield %v
