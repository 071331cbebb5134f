// RUN: irad-opt %s -p irad-sink-accumulations | filecheck %s
// RUN: irad-opt %s -p irad-sink-accumulations | %mlir-opt --verify-diagnostics > /dev/null
// REQUIRES: mlir-opt

// The reversed step of `h = tanh(h @ W)`'s loop accumulates dW += h_tᵀ g_t and
// db += sum(g_t, axis=0): the loop stacks h_t and g_t (rows 2i, 2i+1 of a 6-row
// buffer: three iterations of 2 rows each) and the sums are taken after it, as
// one product of depth 6 (the stack of h_t read transposed) and one column sum.
// %g is stacked once for both; %dh, read in the loop, is not an accumulator.

// CHECK-LABEL: func.func @reversed_step
// CHECK:         %[[HS0:.*]] = tensor.empty() : tensor<6x3xf64>
// CHECK-NEXT:    %[[GS0:.*]] = tensor.empty() : tensor<6x4xf64>
// CHECK-NEXT:    %[[DH:.*]], %[[HS:.*]], %[[GS:.*]] = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}, %[[HSA:.*]] = %[[HS0]], %[[GSA:.*]] = %[[GS0]]) -> (tensor<2x4xf64>, tensor<6x3xf64>, tensor<6x4xf64>) {
// CHECK-NOT:       linalg.matmul
// CHECK-NOT:       linalg.reduce
// CHECK:           %[[ROW:.*]] = arith.muli %[[I]], %{{.*}} : index
// CHECK-NEXT:      %[[HS1:.*]] = tensor.insert_slice %{{.*}} into %[[HSA]][%[[ROW]], 0] [2, 3] [1, 1] : tensor<2x3xf64> into tensor<6x3xf64>
// CHECK-NEXT:      %[[GS1:.*]] = tensor.insert_slice %[[G:.*]] into %[[GSA]][%[[ROW]], 0] [2, 4] [1, 1] : tensor<2x4xf64> into tensor<6x4xf64>
// CHECK-NEXT:      scf.yield %[[G]], %[[HS1]], %[[GS1]] : tensor<2x4xf64>, tensor<6x3xf64>, tensor<6x4xf64>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<3x6xf64>
// CHECK-NEXT:    %[[HT:.*]] = linalg.transpose ins(%[[HS]]:tensor<6x3xf64>) outs(%[[E]]:tensor<3x6xf64>) permutation = [1, 0]
// CHECK-NEXT:    %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<3x4xf64>
// CHECK-NEXT:    %[[DW:.*]] = linalg.matmul ins(%[[HT]], %[[GS]] : tensor<3x6xf64>, tensor<6x4xf64>) outs(%[[Z]] : tensor<3x4xf64>) -> tensor<3x4xf64>
// CHECK-NEXT:    %[[DW1:.*]] = arith.addf %dw0, %[[DW]] : tensor<3x4xf64>
// CHECK-NEXT:    %{{.*}} = arith.constant dense<0.000000e+00> : tensor<4xf64>
// CHECK-NEXT:    %[[DB:.*]] = linalg.reduce ins(%[[GS]]:tensor<6x4xf64>)
// CHECK:         func.return %[[DH]], %[[DW1]], %[[DB]]
func.func @reversed_step(%hs : tensor<3x2x3xf64>, %dw0 : tensor<3x4xf64>, %seed : tensor<2x4xf64>) -> (tensor<2x4xf64>, tensor<3x4xf64>, tensor<4xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zw = arith.constant dense<0.0> : tensor<3x4xf64>
  %zb = arith.constant dense<0.0> : tensor<4xf64>
  %r:3 = scf.for %i = %c0 to %c3 step %c1 iter_args(%dh = %seed, %dw = %dw0, %db = %zb) -> (tensor<2x4xf64>, tensor<3x4xf64>, tensor<4xf64>) {
    %h3 = tensor.extract_slice %hs[%i, 0, 0] [1, 2, 3] [1, 1, 1] : tensor<3x2x3xf64> to tensor<2x3xf64>
    %g = arith.mulf %dh, %dh : tensor<2x4xf64>
    %e = tensor.empty() : tensor<3x2xf64>
    %ht = linalg.transpose ins(%h3 : tensor<2x3xf64>) outs(%e : tensor<3x2xf64>) permutation = [1, 0]
    %p = linalg.matmul ins(%ht, %g : tensor<3x2xf64>, tensor<2x4xf64>) outs(%zw : tensor<3x4xf64>) -> tensor<3x4xf64>
    %dw2 = arith.addf %dw, %p : tensor<3x4xf64>
    %s = linalg.reduce ins(%g : tensor<2x4xf64>) outs(%zb : tensor<4xf64>) dimensions = [0]
      (%a : f64, %b : f64) {
        %t = arith.addf %a, %b : f64
        linalg.yield %t : f64
      }
    %db2 = arith.addf %s, %db : tensor<4xf64>
    scf.yield %g, %dw2, %db2 : tensor<2x4xf64>, tensor<3x4xf64>, tensor<4xf64>
  }
  func.return %r#0, %r#1, %r#2 : tensor<2x4xf64>, tensor<3x4xf64>, tensor<4xf64>
}

// Left alone: an accumulator the loop reads (%acc feeds the next product), a loop
// whose trip count is not a constant, and one that may not run.

// CHECK-LABEL: func.func @read_inside
// CHECK:         scf.for
// CHECK:           linalg.matmul
// CHECK:           arith.addf
func.func @read_inside(%x : tensor<2x2xf64>) -> tensor<2x2xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %z = arith.constant dense<0.0> : tensor<2x2xf64>
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %x) -> (tensor<2x2xf64>) {
    %p = linalg.matmul ins(%acc, %x : tensor<2x2xf64>, tensor<2x2xf64>) outs(%z : tensor<2x2xf64>) -> tensor<2x2xf64>
    %a2 = arith.addf %acc, %p : tensor<2x2xf64>
    scf.yield %a2 : tensor<2x2xf64>
  }
  func.return %r : tensor<2x2xf64>
}

// CHECK-LABEL: func.func @unknown_trips
// CHECK:         scf.for
// CHECK:           linalg.matmul
// CHECK-LABEL: func.func @no_trips
// CHECK:         scf.for
// CHECK:           linalg.matmul
func.func @unknown_trips(%x : tensor<2x2xf64>, %n : index) -> tensor<2x2xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant dense<0.0> : tensor<2x2xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (tensor<2x2xf64>) {
    %p = linalg.matmul ins(%x, %x : tensor<2x2xf64>, tensor<2x2xf64>) outs(%z : tensor<2x2xf64>) -> tensor<2x2xf64>
    %a2 = arith.addf %acc, %p : tensor<2x2xf64>
    scf.yield %a2 : tensor<2x2xf64>
  }
  func.return %r : tensor<2x2xf64>
}
func.func @no_trips(%x : tensor<2x2xf64>) -> tensor<2x2xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant dense<0.0> : tensor<2x2xf64>
  %r = scf.for %i = %c0 to %c0 step %c1 iter_args(%acc = %z) -> (tensor<2x2xf64>) {
    %p = linalg.matmul ins(%x, %x : tensor<2x2xf64>, tensor<2x2xf64>) outs(%z : tensor<2x2xf64>) -> tensor<2x2xf64>
    %a2 = arith.addf %acc, %p : tensor<2x2xf64>
    scf.yield %a2 : tensor<2x2xf64>
  }
  func.return %r : tensor<2x2xf64>
}
