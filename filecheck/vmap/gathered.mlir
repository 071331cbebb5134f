// RUN: irad-opt %s -p irad-vmap | filecheck %s
// RUN: irad-opt %s -p irad-vmap,irad-optimize | filecheck %s --check-prefix=OPT
// RUN: irad-opt %s -p irad-vmap | filecheck %s --check-prefix=CALL

// jacfwd over parameters gathered per row: t[idx] of the identity basis seen
// as 3 rows of 2 holds, in observation o's row, the tangents 2 * idx[o] + j
// only. irad-vmap keeps a compact twin of shape (2, 4, 2) (a batch of 2, not
// 6) with idx beside it (passes/batching/one_hot.py); the return takes the
// dense value rebuilt from it (the twin in its block, zeros elsewhere), and
// the dense products built beside go.

func.func @rows(%P: tensor<4x2xf64>, %idx: tensor<4xi64>, %t: tensor<3x2xf64>) -> tensor<4x2xf64> {
  %e = tensor.empty() : tensor<4x2xi64>
  %spread = linalg.broadcast ins(%idx : tensor<4xi64>) outs(%e : tensor<4x2xi64>) dimensions = [1]
  %zero = arith.constant dense<0.0> : tensor<4x2xf64>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%spread, %t : tensor<4x2xi64>, tensor<3x2xf64>) outs(%zero : tensor<4x2xf64>) attrs = {irad.kind = "gather", irad.axis = 0 : i64} {
  ^bb0(%i: i64, %v: f64, %acc: f64):
    %k = linalg.index 2 : index
    %k64 = arith.index_cast %k : index to i64
    %hit = arith.cmpi eq, %i, %k64 : i64
    %s = arith.select %hit, %v, %acc : f64
    linalg.yield %s : f64
  } -> tensor<4x2xf64>
  %p = arith.mulf %g, %P : tensor<4x2xf64>
  %n = arith.negf %p : tensor<4x2xf64>
  func.return %n : tensor<4x2xf64>
}

// CHECK-LABEL: func.func private @rows.vmap.uui(
// CHECK-SAME: %t: tensor<6x3x2xf64>) -> tensor<6x4x2xf64>
// CHECK: arith.mulf %{{.*}}, %{{.*}} : tensor<2x4x2xf64>
// CHECK: arith.negf %{{.*}} : tensor<2x4x2xf64>
// CHECK: arith.cmpi eq
// CHECK-SAME: : i64
// CHECK: tensor.reshape %{{.*}}(%{{.*}}) : (tensor<3x2x4x2xf64>, tensor<3xi64>) -> tensor<6x4x2xf64>
// CHECK: func.return

// OPT-NOT: arith.mulf {{.*}} : tensor<6x4x2xf64>
// OPT-NOT: linalg.generic {{.*}}ins({{.*}} : tensor<6x4x2xi64>, tensor<6x3x2xf64>)

func.func @jacobian(%P: tensor<4x2xf64>, %idx: tensor<4xi64>) -> tensor<6x4x2xf64> {
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
  %shape = arith.constant dense<[6, 3, 2]> : tensor<3xi64>
  %basis = tensor.reshape %I(%shape) : (tensor<6x6xf64>, tensor<3xi64>) -> tensor<6x3x2xf64>
  %r = irad.vmap @rows(%P, %idx, %basis) {in_axes = [none, none, 0], out_axes = [0], axis_size = 6} : (tensor<4x2xf64>, tensor<4xi64>, tensor<6x3x2xf64>) -> tensor<6x4x2xf64>
  func.return %r : tensor<6x4x2xf64>
}

// Across a call: the callee takes the twin and the index array after its
// arguments (signature letter g), and returns its result's twin.
func.func @times(%P: tensor<4x2xf64>, %g: tensor<4x2xf64>) -> tensor<4x2xf64> {
  %p = arith.mulf %g, %P : tensor<4x2xf64>
  func.return %p : tensor<4x2xf64>
}

func.func @rows_call(%P: tensor<4x2xf64>, %idx: tensor<4xi64>, %t: tensor<3x2xf64>) -> tensor<4x2xf64> {
  %e = tensor.empty() : tensor<4x2xi64>
  %spread = linalg.broadcast ins(%idx : tensor<4xi64>) outs(%e : tensor<4x2xi64>) dimensions = [1]
  %zero = arith.constant dense<0.0> : tensor<4x2xf64>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%spread, %t : tensor<4x2xi64>, tensor<3x2xf64>) outs(%zero : tensor<4x2xf64>) attrs = {irad.kind = "gather", irad.axis = 0 : i64} {
  ^bb0(%i: i64, %v: f64, %acc: f64):
    %k = linalg.index 2 : index
    %k64 = arith.index_cast %k : index to i64
    %hit = arith.cmpi eq, %i, %k64 : i64
    %s = arith.select %hit, %v, %acc : f64
    linalg.yield %s : f64
  } -> tensor<4x2xf64>
  %p = func.call @times(%P, %g) : (tensor<4x2xf64>, tensor<4x2xf64>) -> tensor<4x2xf64>
  %n = arith.negf %p : tensor<4x2xf64>
  func.return %n : tensor<4x2xf64>
}

// CALL-LABEL: func.func private @times.vmap.ug(
// CALL-SAME: %g: tensor<2x4x2xf64>, %{{.*}}: tensor<4xi64>) -> tensor<2x4x2xf64>
// CALL: arith.mulf %g, %{{.*}} : tensor<2x4x2xf64>
// CALL: func.return %{{.*}} : tensor<2x4x2xf64>
// CALL-LABEL: func.func private @rows_call.vmap.uui(
// CALL: func.call @times.vmap.ug(%P, %{{.*}}, %idx) : (tensor<4x2xf64>, tensor<2x4x2xf64>, tensor<4xi64>) -> tensor<2x4x2xf64>
// CALL: arith.negf %{{.*}} : tensor<2x4x2xf64>

func.func @jacobian_call(%P: tensor<4x2xf64>, %idx: tensor<4xi64>) -> tensor<6x4x2xf64> {
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
  %shape = arith.constant dense<[6, 3, 2]> : tensor<3xi64>
  %basis = tensor.reshape %I(%shape) : (tensor<6x6xf64>, tensor<3xi64>) -> tensor<6x3x2xf64>
  %r = irad.vmap @rows_call(%P, %idx, %basis) {in_axes = [none, none, 0], out_axes = [0], axis_size = 6} : (tensor<4x2xf64>, tensor<4xi64>, tensor<6x3x2xf64>) -> tensor<6x4x2xf64>
  func.return %r : tensor<6x4x2xf64>
}
