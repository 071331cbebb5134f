// RUN: irad-opt %s -p irad-vmap | filecheck %s
// RUN: irad-opt %s -p irad-vmap,irad-differentiate,irad-jvp,irad-lower-tape,irad-optimize | filecheck %s --check-prefix=OPT

// How irad-vmap batches a derivative request (passes/batching/requests.py).
// With a batched primal, a reverse request is differentiated in place and its
// derivative code batched with a batched tape (irad.batch): the loop of @cube
// records each element's values (batched-tape.mlir). With only the cotangent
// batched, only the pullback is batched: the primal and its tape run once for
// the whole batch. A jvp with a batched primal is asked of the batched callee.

func.func @cube(%x: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %one = arith.constant 1.0 : f64
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %one) -> (f64) {
    %m = arith.mulf %acc, %x : f64
    scf.yield %m : f64
  }
  func.return %r : f64
}

func.func @slope(%x: f64) -> f64 {
  %g = irad.grad @cube(%x) {wrt = [0]} : (f64) -> f64
  func.return %g : f64
}

// CHECK-LABEL: func.func @slopes
// CHECK-NEXT:    %g = func.call @slope.vmap.b(%xs) : (tensor<4xf64>) -> tensor<4xf64>
func.func @slopes(%xs: tensor<4xf64>) -> tensor<4xf64> {
  %g = irad.vmap @slope(%xs) {in_axes = [0], out_axes = [0], axis_size = 4} : (tensor<4xf64>) -> tensor<4xf64>
  func.return %g : tensor<4xf64>
}

func.func @pullback(%x: f64, %ct: f64) -> f64 {
  %g = irad.vjp @cube(%x, %ct) {wrt = [0]} : (f64, f64) -> f64
  func.return %g : f64
}

// CHECK-LABEL: func.func @rows
// CHECK-NEXT:    %g = func.call @pullback.vmap.ub(%x, %cts) : (f64, tensor<4xf64>) -> tensor<4xf64>
func.func @rows(%x: f64, %cts: tensor<4xf64>) -> tensor<4xf64> {
  %g = irad.vmap @pullback(%x, %cts) {in_axes = [none, 0], out_axes = [0], axis_size = 4} : (f64, tensor<4xf64>) -> tensor<4xf64>
  func.return %g : tensor<4xf64>
}

func.func @tangent(%x: f64, %t: f64) -> (f64, f64) {
  %y, %ty = irad.jvp @cube(%x, %t) {wrt = [0]} : (f64, f64) -> (f64, f64)
  func.return %y, %ty : f64, f64
}

// CHECK-LABEL: func.func @tangents
// CHECK-NEXT:    %{{.*}}, %{{.*}} = func.call @tangent.vmap.bu(%xs, %t)
func.func @tangents(%xs: tensor<4xf64>, %t: f64) -> (tensor<4xf64>, tensor<4xf64>) {
  %y, %ty = irad.vmap @tangent(%xs, %t) {in_axes = [0, none], out_axes = [0, 0], axis_size = 4} : (tensor<4xf64>, f64) -> (tensor<4xf64>, tensor<4xf64>)
  func.return %y, %ty : tensor<4xf64>, tensor<4xf64>
}

// A batched primal: the augmented primal and the pullback batched, the tape
// recording each element's values; the seed (1.0) is shared.
// CHECK-LABEL: func.func private @cube.vmap.b(%x: tensor<4xf64>) -> tensor<4xf64>
// CHECK:         scf.for {{.*}} -> (tensor<4xf64>)
// CHECK-LABEL: func.func private @cube.augmented.tape.d.vmap.bbu
// CHECK:         irad.tape_push {{.*}} {irad.batch = 4 : i64, irad.batched = [true]} : tensor<4xf64>
// CHECK-LABEL: func.func private @cube.pullback.tape.d.vmap.buu
// CHECK:         irad.tape_read %tape[%end] {irad.batch = 4 : i64, irad.batched = [false, true]} : index, tensor<4xf64>
// CHECK-LABEL: func.func private @slope.vmap.b(%x: tensor<4xf64>) -> tensor<4xf64>
// CHECK-NEXT:    %{{.*}}, %[[TAPE:.*]], %[[END:.*]] = func.call @cube.augmented.d.vmap.b(%x)
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1.000000e+00 : f64
// CHECK-NEXT:    %g = func.call @cube.pullback.d.vmap.buu(%[[TAPE]], %[[END]], %[[ONE]])

// Only the cotangent batched: the augmented primal runs unbatched, on f64,
// and the pullback is batched.
// CHECK-LABEL: func.func private @pullback.vmap.ub(%x: f64, %ct: tensor<4xf64>) -> tensor<4xf64>
// CHECK-NEXT:    %{{.*}}, %[[TAPE:.*]], %[[END:.*]] = func.call @cube.augmented{{.*}}(%x) : (f64) -> (f64, memref<?xf64>, index)
// CHECK-NEXT:    %g = func.call @cube.pullback{{.*}}.vmap.uub(%[[TAPE]], %[[END]], %ct)

// A jvp with a batched primal and a tangent shared by the batch: the tangent
// is broadcast and the jvp asked of the batched @cube.
// CHECK-LABEL: func.func private @tangent.vmap.bu(%x: tensor<4xf64>, %t: f64)
// CHECK-NEXT:    %[[T:.*]] = tensor.splat %t : tensor<4xf64>
// CHECK-NEXT:    %y, %ty = irad.jvp @cube.vmap.b(%x, %[[T]]) {wrt = [0]}
// CHECK-NOT:   @cube.vmap.b_1

// OPT-NOT: irad.vmap
// OPT-NOT: irad.vjp
// OPT-NOT: irad.jvp
// OPT-NOT: irad.grad
// OPT-NOT: irad.tape_push
// OPT-NOT: irad.tape_read
