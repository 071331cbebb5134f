// RUN: irad-opt %s -p irad-vmap,irad-differentiate | filecheck %s
// RUN: irad-opt %s -p irad-vmap,irad-differentiate,irad-optimize | filecheck %s --check-prefix=OPT

// Requests are rewritten the innermost first. @per_example maps a gradient
// request (vmap of grad): irad-vmap has the gradient generated first and
// batches the generated code. @total differentiates a function holding a
// vmap request (grad of vmap): irad-vmap runs first, and irad-differentiate
// differentiates the batched function.

func.func @loss(%w: f64, %x: f64) -> f64 {
  %p = arith.mulf %w, %x : f64
  %s = math.sin %p : f64
  func.return %s : f64
}

func.func @grad_w(%w: f64, %x: f64) -> f64 {
  %g = irad.grad @loss(%w, %x) {wrt = [0]} : (f64, f64) -> f64
  func.return %g : f64
}

// CHECK-LABEL: func.func @per_example
// CHECK-NEXT:    %g = func.call @grad_w.vmap.ub(%w, %xs) : (f64, tensor<3xf64>) -> tensor<3xf64>
func.func @per_example(%w: f64, %xs: tensor<3xf64>) -> tensor<3xf64> {
  %g = irad.vmap @grad_w(%w, %xs) {in_axes = [none, 0], out_axes = [0], axis_size = 3} : (f64, tensor<3xf64>) -> tensor<3xf64>
  func.return %g : tensor<3xf64>
}

func.func @batch_sum(%w: f64, %xs: tensor<3xf64>) -> f64 {
  %ys = irad.vmap @loss(%w, %xs) {in_axes = [none, 0], out_axes = [0], axis_size = 3} : (f64, tensor<3xf64>) -> tensor<3xf64>
  %c = arith.constant dense<0.0> : tensor<f64>
  %r = linalg.reduce ins(%ys:tensor<3xf64>) outs(%c:tensor<f64>) dimensions = [0]
    (%a: f64, %b: f64) {
      %t = arith.addf %a, %b : f64
      linalg.yield %t : f64
    }
  %e = tensor.extract %r[] : tensor<f64>
  func.return %e : f64
}

// CHECK-LABEL: func.func @total
// CHECK-NOT:     irad.grad
func.func @total(%w: f64, %xs: tensor<3xf64>) -> f64 {
  %g = irad.grad @batch_sum(%w, %xs) {wrt = [0]} : (f64, tensor<3xf64>) -> f64
  func.return %g : f64
}

// The batched gradient: the pullback's ops on the batch.
// CHECK-LABEL: func.func private @grad_w.vmap.ub(%w: f64, %x: tensor<3xf64>) -> tensor<3xf64>
// CHECK:         math.cos %{{.*}} : tensor<3xf64>

// OPT-NOT: irad.vmap
// OPT-NOT: irad.grad
