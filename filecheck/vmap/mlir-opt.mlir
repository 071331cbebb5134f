// REQUIRES: mlir-opt
// The request in generic form is valid MLIR (an unregistered op to mlir-opt,
// which irad-opt reads back); what irad-vmap leaves is upstream MLIR.
// RUN: irad-opt %s --print-op-generic | %mlir-opt --allow-unregistered-dialect | irad-opt | filecheck %s
// RUN: irad-opt %s -p irad-vmap | %mlir-opt | filecheck %s --check-prefix=PASS

func.func @f(%x: f64, %w: tensor<3xf64>) -> f64 {
  %s = math.sin %x : f64
  func.return %s : f64
}

// CHECK: irad.vmap @f(%{{.*}}, %{{.*}}) {in_axes = [0, none], out_axes = [0], axis_size = 4} : (tensor<4xf64>, tensor<3xf64>) -> tensor<4xf64>
// PASS: call @f.vmap.bu
// PASS: math.sin %{{.*}} : tensor<4xf64>
func.func @main(%xs: tensor<4xf64>, %w: tensor<3xf64>) -> tensor<4xf64> {
  %r = irad.vmap @f(%xs, %w) {in_axes = [0, none], out_axes = [0], axis_size = 4} : (tensor<4xf64>, tensor<3xf64>) -> tensor<4xf64>
  func.return %r : tensor<4xf64>
}
