// RUN: irad-opt %s -p irad-vmap,irad-optimize | filecheck %s
// RUN: irad-opt %s -p irad-vmap | filecheck %s --check-prefix=CALL

// jacrev over an output of rows: the k-th cotangent of the identity basis,
// seen as 3 rows of 2, is zero but in row k // 2, and stays so through
// products with unbatched values and sums over the other axes. irad-vmap
// keeps a compact twin of shape (6, 2) beside the dense (6, 3, 2) value
// (passes/batching/one_hot.py); a sum over the rows ends it with the batched
// result itself, and the dense values, unread, go (here with the basis: the
// optimiser inlines the sweep).

// the sum over everything of t (as rows) * w
func.func @rows(%w: tensor<3x2xf64>, %t: tensor<6xf64>) -> tensor<f64> {
  %shape = arith.constant dense<[3, 2]> : tensor<2xi64>
  %t2 = tensor.reshape %t(%shape) : (tensor<6xf64>, tensor<2xi64>) -> tensor<3x2xf64>
  %p = arith.mulf %t2, %w : tensor<3x2xf64>
  %n = arith.negf %p : tensor<3x2xf64>
  %zero = arith.constant dense<0.0> : tensor<f64>
  %s = linalg.reduce ins(%n : tensor<3x2xf64>) outs(%zero : tensor<f64>) dimensions = [0, 1]
    (%a: f64, %b: f64) {
      %c = arith.addf %a, %b : f64
      linalg.yield %c : f64
    }
  func.return %s : tensor<f64>
}

func.func @jacobian_rows(%w: tensor<3x2xf64>) -> tensor<6xf64> {
  %ramp = arith.constant dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<6xf64>
  %e = tensor.empty() : tensor<6x6xf64>
  %across = linalg.broadcast ins(%ramp : tensor<6xf64>) outs(%e : tensor<6x6xf64>) dimensions = [0]
  %down = linalg.broadcast ins(%ramp : tensor<6xf64>) outs(%e : tensor<6x6xf64>) dimensions = [1]
  %b = tensor.empty() : tensor<6x6xi1>
  %eq = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%down, %across : tensor<6x6xf64>, tensor<6x6xf64>) outs(%b : tensor<6x6xi1>) attrs = {irad.kind = "piecewise-constant"} {
  ^bb0(%p: f64, %q: f64, %o: i1):
    %c = arith.cmpf oeq, %p, %q : f64
    linalg.yield %c : i1
  } -> tensor<6x6xi1>
  %I = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%eq : tensor<6x6xi1>) outs(%e : tensor<6x6xf64>) attrs = {irad.kind = "other"} {
  ^bb0(%p: i1, %o: f64):
    %f = arith.uitofp %p : i1 to f64
    linalg.yield %f : f64
  } -> tensor<6x6xf64>
  %r = irad.vmap @rows(%w, %I) {in_axes = [none, 0], out_axes = [0], axis_size = 6} : (tensor<3x2xf64>, tensor<6x6xf64>) -> tensor<6xf64>
  func.return %r : tensor<6xf64>
}

// Across a call: the callee takes the twin (signature letter r) and
// returns its result's twin; each side rebuilds the dense value only for
// the ops that need it (none here).
func.func @times(%w: tensor<3x2xf64>, %t2: tensor<3x2xf64>) -> tensor<3x2xf64> {
  %p = arith.mulf %t2, %w : tensor<3x2xf64>
  func.return %p : tensor<3x2xf64>
}

func.func @rows_call(%w: tensor<3x2xf64>, %t: tensor<6xf64>) -> tensor<f64> {
  %shape = arith.constant dense<[3, 2]> : tensor<2xi64>
  %t2 = tensor.reshape %t(%shape) : (tensor<6xf64>, tensor<2xi64>) -> tensor<3x2xf64>
  %n = arith.negf %t2 : tensor<3x2xf64>
  %p = func.call @times(%w, %n) : (tensor<3x2xf64>, tensor<3x2xf64>) -> tensor<3x2xf64>
  %zero = arith.constant dense<0.0> : tensor<f64>
  %s = linalg.reduce ins(%p : tensor<3x2xf64>) outs(%zero : tensor<f64>) dimensions = [0, 1]
    (%a: f64, %b: f64) {
      %c = arith.addf %a, %b : f64
      linalg.yield %c : f64
    }
  func.return %s : tensor<f64>
}
func.func @jacobian_rows_call(%w: tensor<3x2xf64>) -> tensor<6xf64> {
  %ramp = arith.constant dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<6xf64>
  %e = tensor.empty() : tensor<6x6xf64>
  %across = linalg.broadcast ins(%ramp : tensor<6xf64>) outs(%e : tensor<6x6xf64>) dimensions = [0]
  %down = linalg.broadcast ins(%ramp : tensor<6xf64>) outs(%e : tensor<6x6xf64>) dimensions = [1]
  %b = tensor.empty() : tensor<6x6xi1>
  %eq = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%down, %across : tensor<6x6xf64>, tensor<6x6xf64>) outs(%b : tensor<6x6xi1>) attrs = {irad.kind = "piecewise-constant"} {
  ^bb0(%p: f64, %q: f64, %o: i1):
    %c = arith.cmpf oeq, %p, %q : f64
    linalg.yield %c : i1
  } -> tensor<6x6xi1>
  %I = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%eq : tensor<6x6xi1>) outs(%e : tensor<6x6xf64>) attrs = {irad.kind = "other"} {
  ^bb0(%p: i1, %o: f64):
    %f = arith.uitofp %p : i1 to f64
    linalg.yield %f : f64
  } -> tensor<6x6xf64>
  %r = irad.vmap @rows_call(%w, %I) {in_axes = [none, 0], out_axes = [0], axis_size = 6} : (tensor<3x2xf64>, tensor<6x6xf64>) -> tensor<6xf64>
  func.return %r : tensor<6xf64>
}

// CHECK-LABEL: func.func @jacobian_rows
// CHECK-NOT:     tensor<6x3x2xf64>
// CHECK-NOT:     tensor<6x6xf64>
// the twin of the basis: eye(2) repeated for each row
// CHECK:         %[[EYE:.*]] = arith.constant dense<{{\[\[}}1.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00]]> : tensor<2x2xf64>
// CHECK:         %[[TILED:.*]] = linalg.broadcast ins(%[[EYE]]:tensor<2x2xf64>) outs(%{{.*}}:tensor<3x2x2xf64>) dimensions = [0]
// CHECK:         %[[T:.*]] = tensor.reshape %[[TILED]](%{{.*}}) : (tensor<3x2x2xf64>, tensor<2xi64>) -> tensor<6x2xf64>
// w's row k // 2 at k
// CHECK:         %[[WR:.*]] = linalg.broadcast ins(%w:tensor<3x2xf64>) outs(%{{.*}}:tensor<3x2x2xf64>) dimensions = [1]
// CHECK:         %[[W:.*]] = tensor.reshape %[[WR]](%{{.*}}) : (tensor<3x2x2xf64>, tensor<2xi64>) -> tensor<6x2xf64>
// CHECK:         %[[P:.*]] = arith.mulf %[[T]], %[[W]] : tensor<6x2xf64>
// CHECK:         %[[N:.*]] = arith.negf %[[P]] : tensor<6x2xf64>
// CHECK:         %[[S:.*]] = linalg.reduce ins(%[[N]]:tensor<6x2xf64>) outs(%{{.*}}:tensor<6xf64>) dimensions = [1]
// CHECK-NOT:     tensor<6x3x2xf64>
// CHECK:         func.return %[[S]] : tensor<6xf64>

// CHECK-LABEL: func.func @jacobian_rows_call
// CHECK-NOT:     tensor<6x3x2xf64>
// CHECK:         func.return

// CALL-LABEL:  func.func private @times.vmap.ur(%w: tensor<3x2xf64>, %t2: tensor<6x2xf64>) -> tensor<6x2xf64>
// CALL:          %[[P:.*]] = arith.mulf %t2, %{{.*}} : tensor<6x2xf64>
// CALL-NEXT:     func.return %[[P]] : tensor<6x2xf64>
// CALL-LABEL:  func.func private @rows_call.vmap.ui
// CALL:          func.call @times.vmap.ur(%w, %{{.*}}) : (tensor<3x2xf64>, tensor<6x2xf64>) -> tensor<6x2xf64>
