// RUN: irad-opt %s -p irad-vmap | filecheck %s

// A Jacobian's sweeps map a jvp (vjp) over the identity basis, which the
// Jacobians build as (ramp == ramp) across the two axes of a square, cast to
// floats. irad-vmap recognises it (signature letter `i`), and a matmul with
// it, or with a diagonal scaling of it, is the other operand, its rows or
// columns scaled: no dense product (passes/batching/basis.py). Anything else
// (here: a lower-triangular matrix of ones, from `ole`) keeps the product.

// A @ t for one tangent t
func.func @column(%A: tensor<3x3xf64>, %t: tensor<3xf64>) -> tensor<3x1xf64> {
  %shape = arith.constant dense<[3, 1]> : tensor<2xi64>
  %t2 = tensor.reshape %t(%shape) : (tensor<3xf64>, tensor<2xi64>) -> tensor<3x1xf64>
  %zero = arith.constant dense<0.0> : tensor<3x1xf64>
  %r = linalg.matmul ins(%A, %t2 : tensor<3x3xf64>, tensor<3x1xf64>) outs(%zero : tensor<3x1xf64>) -> tensor<3x1xf64>
  func.return %r : tensor<3x1xf64>
}

// A @ (w * t): a diagonal scaling of the basis
func.func @scaled(%A: tensor<3x3xf64>, %w: tensor<3xf64>, %t: tensor<3xf64>) -> tensor<3x1xf64> {
  %s = arith.mulf %w, %t : tensor<3xf64>
  %shape = arith.constant dense<[3, 1]> : tensor<2xi64>
  %s2 = tensor.reshape %s(%shape) : (tensor<3xf64>, tensor<2xi64>) -> tensor<3x1xf64>
  %zero = arith.constant dense<0.0> : tensor<3x1xf64>
  %r = linalg.matmul ins(%A, %s2 : tensor<3x3xf64>, tensor<3x1xf64>) outs(%zero : tensor<3x1xf64>) -> tensor<3x1xf64>
  func.return %r : tensor<3x1xf64>
}

// the basis passed on to a call: the callee knows it too
func.func @through_call(%A: tensor<3x3xf64>, %t: tensor<3xf64>) -> tensor<3x1xf64> {
  %r = func.call @column(%A, %t) : (tensor<3x3xf64>, tensor<3xf64>) -> tensor<3x1xf64>
  func.return %r : tensor<3x1xf64>
}

func.func @identity(%A: tensor<3x3xf64>) -> tensor<3x3x1xf64> {
  %ramp = arith.constant dense<[0.0, 1.0, 2.0]> : tensor<3xf64>
  %e = tensor.empty() : tensor<3x3xf64>
  %across = linalg.broadcast ins(%ramp : tensor<3xf64>) outs(%e : tensor<3x3xf64>) dimensions = [0]
  %down = linalg.broadcast ins(%ramp : tensor<3xf64>) outs(%e : tensor<3x3xf64>) dimensions = [1]
  %b = tensor.empty() : tensor<3x3xi1>
  %eq = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%down, %across : tensor<3x3xf64>, tensor<3x3xf64>) outs(%b : tensor<3x3xi1>) attrs = {irad.kind = "piecewise-constant"} {
  ^bb0(%p: f64, %q: f64, %o: i1):
    %c = arith.cmpf oeq, %p, %q : f64
    linalg.yield %c : i1
  } -> tensor<3x3xi1>
  %I = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%eq : tensor<3x3xi1>) outs(%e : tensor<3x3xf64>) attrs = {irad.kind = "other"} {
  ^bb0(%p: i1, %o: f64):
    %f = arith.uitofp %p : i1 to f64
    linalg.yield %f : f64
  } -> tensor<3x3xf64>
  %r = irad.vmap @column(%A, %I) {in_axes = [none, 0], out_axes = [0], axis_size = 3} : (tensor<3x3xf64>, tensor<3x3xf64>) -> tensor<3x3x1xf64>
  func.return %r : tensor<3x3x1xf64>
}

func.func @scaled_identity(%A: tensor<3x3xf64>, %w: tensor<3xf64>) -> tensor<3x3x1xf64> {
  %ramp = arith.constant dense<[0.0, 1.0, 2.0]> : tensor<3xf64>
  %e = tensor.empty() : tensor<3x3xf64>
  %across = linalg.broadcast ins(%ramp : tensor<3xf64>) outs(%e : tensor<3x3xf64>) dimensions = [0]
  %down = linalg.broadcast ins(%ramp : tensor<3xf64>) outs(%e : tensor<3x3xf64>) dimensions = [1]
  %b = tensor.empty() : tensor<3x3xi1>
  %eq = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%down, %across : tensor<3x3xf64>, tensor<3x3xf64>) outs(%b : tensor<3x3xi1>) attrs = {irad.kind = "piecewise-constant"} {
  ^bb0(%p: f64, %q: f64, %o: i1):
    %c = arith.cmpf oeq, %p, %q : f64
    linalg.yield %c : i1
  } -> tensor<3x3xi1>
  %I = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%eq : tensor<3x3xi1>) outs(%e : tensor<3x3xf64>) attrs = {irad.kind = "other"} {
  ^bb0(%p: i1, %o: f64):
    %f = arith.uitofp %p : i1 to f64
    linalg.yield %f : f64
  } -> tensor<3x3xf64>
  %r = irad.vmap @scaled(%A, %w, %I) {in_axes = [none, none, 0], out_axes = [0], axis_size = 3} : (tensor<3x3xf64>, tensor<3xf64>, tensor<3x3xf64>) -> tensor<3x3x1xf64>
  func.return %r : tensor<3x3x1xf64>
}

func.func @called_identity(%A: tensor<3x3xf64>) -> tensor<3x3x1xf64> {
  %ramp = arith.constant dense<[0.0, 1.0, 2.0]> : tensor<3xf64>
  %e = tensor.empty() : tensor<3x3xf64>
  %across = linalg.broadcast ins(%ramp : tensor<3xf64>) outs(%e : tensor<3x3xf64>) dimensions = [0]
  %down = linalg.broadcast ins(%ramp : tensor<3xf64>) outs(%e : tensor<3x3xf64>) dimensions = [1]
  %b = tensor.empty() : tensor<3x3xi1>
  %eq = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%down, %across : tensor<3x3xf64>, tensor<3x3xf64>) outs(%b : tensor<3x3xi1>) attrs = {irad.kind = "piecewise-constant"} {
  ^bb0(%p: f64, %q: f64, %o: i1):
    %c = arith.cmpf oeq, %p, %q : f64
    linalg.yield %c : i1
  } -> tensor<3x3xi1>
  %I = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%eq : tensor<3x3xi1>) outs(%e : tensor<3x3xf64>) attrs = {irad.kind = "other"} {
  ^bb0(%p: i1, %o: f64):
    %f = arith.uitofp %p : i1 to f64
    linalg.yield %f : f64
  } -> tensor<3x3xf64>
  %r = irad.vmap @through_call(%A, %I) {in_axes = [none, 0], out_axes = [0], axis_size = 3} : (tensor<3x3xf64>, tensor<3x3xf64>) -> tensor<3x3x1xf64>
  func.return %r : tensor<3x3x1xf64>
}

func.func @triangle(%A: tensor<3x3xf64>) -> tensor<3x3x1xf64> {
  %ramp = arith.constant dense<[0.0, 1.0, 2.0]> : tensor<3xf64>
  %e = tensor.empty() : tensor<3x3xf64>
  %across = linalg.broadcast ins(%ramp : tensor<3xf64>) outs(%e : tensor<3x3xf64>) dimensions = [0]
  %down = linalg.broadcast ins(%ramp : tensor<3xf64>) outs(%e : tensor<3x3xf64>) dimensions = [1]
  %b = tensor.empty() : tensor<3x3xi1>
  %le = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%down, %across : tensor<3x3xf64>, tensor<3x3xf64>) outs(%b : tensor<3x3xi1>) attrs = {irad.kind = "piecewise-constant"} {
  ^bb0(%p: f64, %q: f64, %o: i1):
    %c = arith.cmpf ole, %p, %q : f64
    linalg.yield %c : i1
  } -> tensor<3x3xi1>
  %L = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%le : tensor<3x3xi1>) outs(%e : tensor<3x3xf64>) attrs = {irad.kind = "other"} {
  ^bb0(%p: i1, %o: f64):
    %f = arith.uitofp %p : i1 to f64
    linalg.yield %f : f64
  } -> tensor<3x3xf64>
  %r = irad.vmap @column(%A, %L) {in_axes = [none, 0], out_axes = [0], axis_size = 3} : (tensor<3x3xf64>, tensor<3x3xf64>) -> tensor<3x3x1xf64>
  func.return %r : tensor<3x3x1xf64>
}

// CHECK-LABEL: func.func @identity
// CHECK:         func.call @column.vmap.ui(%A, %I)
// CHECK-LABEL: func.func @scaled_identity
// CHECK:         func.call @scaled.vmap.uui(%A, %w, %I)
// CHECK-LABEL: func.func @called_identity
// CHECK:         func.call @through_call.vmap.ui(%A, %I)
// CHECK-LABEL: func.func @triangle
// CHECK:         func.call @column.vmap.ub(%A, %L)

// The transposed A, reshaped: each sweep's column of A.
// CHECK-LABEL: func.func private @column.vmap.ui
// CHECK-NOT:     linalg.matmul
// CHECK:         %[[AT:.*]] = linalg.transpose ins(%A:tensor<3x3xf64>) outs(%{{.*}}:tensor<3x3xf64>) permutation = [1, 0]
// CHECK:         %r = tensor.reshape %[[AT]](%{{.*}}) : (tensor<3x3xf64>, tensor<3xi64>) -> tensor<3x3x1xf64>
// CHECK-NEXT:    func.return %r

// The transposed A with its rows scaled by w.
// CHECK-LABEL: func.func private @scaled.vmap.uui
// CHECK-NOT:     linalg.matmul
// CHECK:         %[[AT:.*]] = linalg.transpose ins(%A:tensor<3x3xf64>) outs(%{{.*}}:tensor<3x3xf64>) permutation = [1, 0]
// CHECK:         %[[W:.*]] = linalg.broadcast ins(%w:tensor<3xf64>) outs(%{{.*}}:tensor<3x3xf64>) dimensions = [1]
// CHECK:         arith.mulf %[[W]], %[[AT]] : tensor<3x3xf64>
// CHECK-NOT:     linalg.matmul
// CHECK:         func.return

// CHECK-LABEL: func.func private @through_call.vmap.ui
// CHECK:         func.call @column.vmap.ui(%A, %t)

// Not the identity: the dense product.
// CHECK-LABEL: func.func private @column.vmap.ub
// CHECK:         linalg.matmul
