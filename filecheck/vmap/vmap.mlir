// RUN: irad-opt %s -p irad-vmap | filecheck %s
// RUN: xdsl-opt %s -p irad-vmap | filecheck %s

// A request maps @f over a batch of 4: its operand %xs carries the batch on
// axis 0, %w is shared (none). The request becomes a call to @f.vmap.bu
// (b: batched argument, u: unbatched), whose ops act on the batch at once:
// math.sin on tensor<4xf64>, the shared sum computed once and splat.

func.func @f(%x: f64, %w: tensor<3xf64>) -> f64 {
  %s = math.sin %x : f64
  %c = arith.constant dense<0.0> : tensor<f64>
  %r = linalg.reduce ins(%w:tensor<3xf64>) outs(%c:tensor<f64>) dimensions = [0]
    (%a: f64, %b: f64) {
      %t = arith.addf %a, %b : f64
      linalg.yield %t : f64
    }
  %e = tensor.extract %r[] : tensor<f64>
  %m = arith.mulf %s, %e : f64
  func.return %m : f64
}

// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %r = func.call @f.vmap.bu(%xs, %w) : (tensor<4xf64>, tensor<3xf64>) -> tensor<4xf64>
func.func @main(%xs: tensor<4xf64>, %w: tensor<3xf64>) -> tensor<4xf64> {
  %r = irad.vmap @f(%xs, %w) {in_axes = [0, none], out_axes = [0], axis_size = 4} : (tensor<4xf64>, tensor<3xf64>) -> tensor<4xf64>
  func.return %r : tensor<4xf64>
}

// in_axes = 1: the batch axis is moved to the front before the call.
// CHECK-LABEL: func.func @columns
// CHECK-NEXT:    %{{.*}} = tensor.empty() : tensor<4x3xf64>
// CHECK-NEXT:    %[[T:.*]] = linalg.transpose ins(%w:tensor<3x4xf64>) outs(%{{.*}}:tensor<4x3xf64>) permutation = [1, 0]
// CHECK-NEXT:    %r = func.call @f.vmap.bb(%xs, %[[T]]) : (tensor<4xf64>, tensor<4x3xf64>) -> tensor<4xf64>
func.func @columns(%xs: tensor<4xf64>, %w: tensor<3x4xf64>) -> tensor<4xf64> {
  %r = irad.vmap @f(%xs, %w) {in_axes = [0, 1], out_axes = [0], axis_size = 4} : (tensor<4xf64>, tensor<3x4xf64>) -> tensor<4xf64>
  func.return %r : tensor<4xf64>
}

// CHECK-LABEL: func.func private @f.vmap.bu(%x: tensor<4xf64>, %w: tensor<3xf64>) -> tensor<4xf64>
// CHECK-SAME:    irad.primal = @f, irad.role = "vmap"
// CHECK-NEXT:    %s = math.sin %x : tensor<4xf64>
// CHECK:         %e = tensor.extract %r[] : tensor<f64>
// CHECK-NEXT:    %{{.*}} = tensor.splat %e : tensor<4xf64>
// CHECK-NEXT:    %m = arith.mulf %s, %{{.*}} : tensor<4xf64>

// Both batched: the sum is taken per element of the batch (dimensions = [1]).
// CHECK-LABEL: func.func private @f.vmap.bb(%x: tensor<4xf64>, %w: tensor<4x3xf64>) -> tensor<4xf64>
// CHECK:         linalg.reduce ins(%w:tensor<4x3xf64>) outs(%{{.*}}:tensor<4xf64>) dimensions = [1]
