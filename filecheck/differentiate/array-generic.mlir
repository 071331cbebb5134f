// RUN: irad-opt %s -p irad-differentiate | filecheck %s
// RUN: irad-opt %s -p irad-differentiate | %mlir-opt | filecheck %s --check-prefix=MLIR
// REQUIRES: mlir-opt

// A linalg.generic says what it computes in its `irad.kind` attribute, which
// irad's builders set (np.where builds this one): the adjoint of a select sends
// the cotangent to the selected side, through two selects of the same kind.

#id = affine_map<(d0) -> (d0)>
func.func @f(%c: tensor<3xi1>, %x: tensor<3xf64>, %y: tensor<3xf64>) -> f64 {
  %e = tensor.empty() : tensor<3xf64>
  %w = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel"]} ins(%c, %x, %y : tensor<3xi1>, tensor<3xf64>, tensor<3xf64>) outs(%e : tensor<3xf64>) attrs = {irad.kind = "select"} {
  ^bb0(%ci: i1, %xi: f64, %yi: f64, %o: f64):
    %s = arith.select %ci, %xi, %yi : f64
    linalg.yield %s : f64
  } -> tensor<3xf64>
  %init = arith.constant dense<0.0> : tensor<f64>
  %sum = linalg.reduce ins(%w : tensor<3xf64>) outs(%init : tensor<f64>) dimensions = [0]
    (%a: f64, %acc: f64) {
      %t = arith.addf %a, %acc : f64
      linalg.yield %t : f64
    }
  %r = tensor.extract %sum[] : tensor<f64>
  func.return %r : f64
}

func.func @main(%c: tensor<3xi1>, %x: tensor<3xf64>, %y: tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>) {
  %gx, %gy = irad.grad @f(%c, %x, %y) {wrt = [1, 2]} : (tensor<3xi1>, tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>)
  func.return %gx, %gy : tensor<3xf64>, tensor<3xf64>
}

// CHECK:      func.func private @f.pullback.cdd(%c: tensor<3xi1>, %dr: f64) -> (tensor<3xf64>, tensor<3xf64>)
// CHECK:        %[[ZERO:[0-9]+]] = arith.constant dense<0.000000e+00> : tensor<3xf64>
// CHECK:        %[[DW:[0-9]+]] = linalg.broadcast
// CHECK:        %[[DX:[0-9]+]] = linalg.generic {{.*}} ins(%c, %[[DW]], %[[ZERO]] : {{.*}} attrs = {{ *}}{irad.kind = "select"}
// CHECK:          arith.select
// CHECK:        %[[DY:[0-9]+]] = linalg.generic {{.*}} ins(%c, %[[ZERO]], %[[DW]] : {{.*}} attrs = {{ *}}{irad.kind = "select"}
// CHECK:          arith.select
// CHECK:        func.return %[[DX]], %[[DY]]

// upstream MLIR keeps the attribute
// MLIR-COUNT-3: linalg.generic {{.*}} attrs = {{ *}}{irad.kind = "select"}
