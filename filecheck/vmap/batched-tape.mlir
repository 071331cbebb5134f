// RUN: irad-opt %s -p irad-vmap | filecheck %s
// RUN: irad-opt %s -p irad-vmap,irad-differentiate,irad-jvp,irad-lower-tape | filecheck %s --check-prefix=LOW

// Per-example gradients through a loop with a shared weight %w (in_axes none):
// irad-vmap differentiates first and batches the derivative code with a
// batched tape. The state %h varies along the batch and is recorded per
// element; %w stays an f64 in the forward loop and in the pullback, and is
// recorded once (irad.batched = [.., false]). Its gradient, which depends on
// the element, is batched.

func.func @step(%w: f64, %x: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%h = %x) -> (f64) {
    %p = arith.mulf %w, %h : f64
    %t = math.tanh %p : f64
    scf.yield %t : f64
  }
  func.return %r : f64
}

func.func @slope(%w: f64, %x: f64) -> f64 {
  %g = irad.grad @step(%w, %x) {wrt = [0]} : (f64, f64) -> f64
  func.return %g : f64
}

func.func @slopes(%w: f64, %xs: tensor<4xf64>) -> tensor<4xf64> {
  %g = irad.vmap @slope(%w, %xs) {in_axes = [none, 0], out_axes = [0], axis_size = 4} : (f64, tensor<4xf64>) -> tensor<4xf64>
  func.return %g : tensor<4xf64>
}

// CHECK-LABEL: func.func private @step.augmented.tape.{{.*}}.vmap.ubbu(%w: f64, %x: tensor<4xf64>
// CHECK:         irad.tape_reserve {{.*}} {irad.batch = 4 : i64}
// CHECK:         scf.for {{.*}} -> (tensor<4xf64>, memref<?xf64>, index, index)
// CHECK:           %[[W:.*]] = tensor.splat %w : tensor<4xf64>
// CHECK:           irad.tape_push {{.*}} {irad.batch = 4 : i64, irad.batched = [true{{.*}}]}
// CHECK:         irad.tape_push {{.*}} %w {{.*}}irad.batched = [{{.*}}false]} : {{.*}}f64
// CHECK-LABEL: func.func private @step.pullback.tape.{{.*}}.vmap.buu
// CHECK:         %{{.*}}, %w = irad.tape_read {{.*}}irad.batched = [{{.*}}false]} : {{.*}}f64
// CHECK:         scf.for {{.*}} -> (index, tensor<4xf64>, tensor<4xf64>)
// CHECK:           irad.tape_read {{.*}} {irad.batch = 4 : i64, irad.batched = [true{{.*}}]}
// CHECK-LABEL: func.func private @slope.vmap.ub(%w: f64, %x: tensor<4xf64>) -> tensor<4xf64>

// Lowered, a position p of the batched tape starts at p * 4.
// LOW-LABEL: func.func private @step.augmented.tape
// LOW:         %[[B:.*]] = arith.constant 4 : index
// LOW:         arith.muli %{{.*}}, %[[B]] : index
// LOW-NOT:     irad.tape_push
