// RUN: not irad-opt %s -p irad-differentiate 2>&1 | filecheck %s
// RUN: not irad-opt %s -p irad-jvp 2>&1 | filecheck %s

// A linalg.generic irad did not build has no `irad.kind` attribute saying what
// it computes. irad does not guess from its body: differentiating it is an error.

#id = affine_map<(d0) -> (d0)>
func.func @f(%c: tensor<3xi1>, %x: tensor<3xf64>, %y: tensor<3xf64>) -> f64 {
  %e = tensor.empty() : tensor<3xf64>
  %w = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel"]} ins(%c, %x, %y : tensor<3xi1>, tensor<3xf64>, tensor<3xf64>) outs(%e : tensor<3xf64>) {
  ^bb0(%ci: i1, %xi: f64, %yi: f64, %o: f64):
    %s = arith.select %ci, %xi, %yi : f64
    linalg.yield %s : f64
  } -> tensor<3xf64>
  %i = arith.constant 0 : index
  %r = tensor.extract %w[%i] : tensor<3xf64>
  func.return %r : f64
}

func.func @main(%c: tensor<3xi1>, %x: tensor<3xf64>, %y: tensor<3xf64>) -> (tensor<3xf64>, f64, f64) {
  %g = irad.grad @f(%c, %x, %y) {wrt = [1]} : (tensor<3xi1>, tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %v, %dv = irad.jvp @f(%c, %x, %y, %x) {wrt = [1]} : (tensor<3xi1>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) -> (f64, f64)
  func.return %g, %v, %dv : tensor<3xf64>, f64, f64
}

// CHECK-NOT: Traceback
// CHECK: @f: linalg.generic: no `irad.kind` attribute says what it computes; irad differentiates only the linalg.generic ops it builds
// CHECK-NOT: Traceback
