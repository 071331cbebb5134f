// Verifier errors of irad.vmap.
// RUN: irad-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @f(%x: f64) -> f64 {
  func.return %x : f64
}
func.func @main(%xs: tensor<3xf64>) -> tensor<3xf64> {
  %r = irad.vmap @f(%xs) {in_axes = [0], out_axes = [0], axis_size = 4} : (tensor<3xf64>) -> tensor<3xf64>
  func.return %r : tensor<3xf64>
}
// CHECK: 'irad.vmap' op operand #0 of type tensor<3xf64> has 3 elements along axis 0, not 'axis_size' = 4

// -----

func.func @f(%x: f64) -> f64 {
  func.return %x : f64
}
func.func @main(%xs: tensor<3xf64>) -> tensor<3xf64> {
  %r = irad.vmap @f(%xs) {in_axes = [0, 0], out_axes = [0], axis_size = 3} : (tensor<3xf64>) -> tensor<3xf64>
  func.return %r : tensor<3xf64>
}
// CHECK: 'irad.vmap' op expects one 'in_axes' entry per operand (1), got 2

// -----

func.func @f(%x: f64) -> f64 {
  func.return %x : f64
}
func.func @main(%xs: tensor<3x2xf64>) -> tensor<3x2xf64> {
  %r = irad.vmap @f(%xs) {in_axes = [0], out_axes = [0], axis_size = 3} : (tensor<3x2xf64>) -> tensor<3x2xf64>
  func.return %r : tensor<3x2xf64>
}
// CHECK: 'irad.vmap' op operand types (tensor<3x2xf64>) are not the inputs of @f (f64) batched along 'in_axes'
