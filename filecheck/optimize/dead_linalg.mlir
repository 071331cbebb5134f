// RUN: irad-opt %s -p irad-optimize | filecheck %s

// DCE removes a linalg op on tensors whose results nothing reads, as it removes
// an arith op: such an op has the effects of its body, here none (MLIR's pure
// tensor semantics). xDSL declares no effects for linalg ops, so its own DCE
// keeps them. What only the dead op read dies with it (%prod, %empty).

// CHECK-LABEL: func.func @dead_on_tensors(%x: tensor<3xf64>) -> tensor<3xf64> {
// CHECK-NEXT:    %e = math.exp %x : tensor<3xf64>
// CHECK-NEXT:    func.return %e : tensor<3xf64>
// CHECK-NEXT:  }
func.func @dead_on_tensors(%x : tensor<3xf64>) -> tensor<3xf64> {
  %e = math.exp %x : tensor<3xf64>
  %prod = arith.mulf %e, %x : tensor<3xf64>
  %zero = arith.constant dense<0.0> : tensor<f64>
  %sum = linalg.reduce ins(%prod : tensor<3xf64>) outs(%zero : tensor<f64>) dimensions = [0]
    (%a : f64, %b : f64) {
      %s = arith.addf %a, %b : f64
      linalg.yield %s : f64
    }
  %empty = tensor.empty() : tensor<3xf64>
  %scaled = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%e : tensor<3xf64>) outs(%empty : tensor<3xf64>) {
  ^bb0(%in : f64, %out : f64):
    %i = linalg.index 0 : index
    %k = arith.index_cast %i : index to i64
    %f = arith.sitofp %k : i64 to f64
    %m = arith.mulf %in, %f : f64
    linalg.yield %m : f64
  } -> tensor<3xf64>
  func.return %e : tensor<3xf64>
}

// A linalg op on memrefs writes its output: kept. So is one on tensors whose
// body calls a function (whose effects are unknown).

// CHECK-LABEL: func.func @kept(%x: tensor<3xf64>, %buf: memref<3xf64>) -> tensor<3xf64> {
// CHECK:         linalg.generic
// CHECK-SAME:      outs(%buf : memref<3xf64>)
// CHECK:         func.call @g
// CHECK:         func.return %x : tensor<3xf64>
func.func private @g(f64) -> f64
func.func @kept(%x : tensor<3xf64>, %buf : memref<3xf64>) -> tensor<3xf64> {
  %src = bufferization.to_buffer %x : tensor<3xf64> to memref<3xf64>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%src : memref<3xf64>) outs(%buf : memref<3xf64>) {
  ^bb0(%in : f64, %out : f64):
    linalg.yield %in : f64
  }
  %empty = tensor.empty() : tensor<3xf64>
  %called = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<3xf64>) outs(%empty : tensor<3xf64>) {
  ^bb0(%in : f64, %out : f64):
    %c = func.call @g(%in) : (f64) -> f64
    linalg.yield %c : f64
  } -> tensor<3xf64>
  func.return %x : tensor<3xf64>
}
