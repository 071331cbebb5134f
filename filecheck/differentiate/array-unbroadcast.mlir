// RUN: irad-opt %s -p irad-differentiate | filecheck %s
// RUN: irad-opt %s -p irad-differentiate | %mlir-opt > /dev/null
// REQUIRES: mlir-opt

// numpy broadcasting is explicit in the IR: x (3x1) is reshaped to 3 and
// broadcast along dimension 1; y (4) along dimension 0. The adjoint of each
// broadcast is a reduction over the broadcast dimensions (the unbroadcast), and
// the adjoint of the reshape restores x's shape, so dx is 3x1 and dy is 4.

func.func @f(%x: tensor<3x1xf64>, %y: tensor<4xf64>) -> f64 {
  %shape = arith.constant dense<[3]> : tensor<1xi64>
  %x3 = tensor.reshape %x(%shape) : (tensor<3x1xf64>, tensor<1xi64>) -> tensor<3xf64>
  %e1 = tensor.empty() : tensor<3x4xf64>
  %xb = linalg.broadcast ins(%x3 : tensor<3xf64>) outs(%e1 : tensor<3x4xf64>) dimensions = [1]
  %e2 = tensor.empty() : tensor<3x4xf64>
  %yb = linalg.broadcast ins(%y : tensor<4xf64>) outs(%e2 : tensor<3x4xf64>) dimensions = [0]
  %p = arith.mulf %xb, %yb : tensor<3x4xf64>
  %init = arith.constant dense<0.0> : tensor<f64>
  %s = linalg.reduce ins(%p : tensor<3x4xf64>) outs(%init : tensor<f64>) dimensions = [0, 1]
    (%a: f64, %acc: f64) {
      %sum = arith.addf %a, %acc : f64
      linalg.yield %sum : f64
    }
  %r = tensor.extract %s[] : tensor<f64>
  func.return %r : f64
}

func.func @main(%x: tensor<3x1xf64>, %y: tensor<4xf64>) -> (tensor<3x1xf64>, tensor<4xf64>) {
  %gx, %gy = irad.grad @f(%x, %y) {wrt = [0, 1]} : (tensor<3x1xf64>, tensor<4xf64>) -> (tensor<3x1xf64>, tensor<4xf64>)
  func.return %gx, %gy : tensor<3x1xf64>, tensor<4xf64>
}

// CHECK:      func.func private @f.pullback.dd(%yb: tensor<3x4xf64>, %xb: tensor<3x4xf64>, %dr: f64) -> (tensor<3x1xf64>, tensor<4xf64>)
// CHECK:        %[[DP:.*]] = linalg.broadcast ins(%{{.*}}:tensor<f64>) outs(%{{.*}}:tensor<3x4xf64>) dimensions = [0, 1]
// CHECK:        %[[DXB:.*]] = arith.mulf %[[DP]], %yb : tensor<3x4xf64>
// CHECK:        %[[DYB:.*]] = arith.mulf %[[DP]], %xb : tensor<3x4xf64>
// CHECK:        %[[DY:.*]] = linalg.reduce ins(%[[DYB]]:tensor<3x4xf64>) outs(%{{.*}}:tensor<4xf64>) dimensions = [0]
// CHECK:        %[[DX3:.*]] = linalg.reduce ins(%[[DXB]]:tensor<3x4xf64>) outs(%{{.*}}:tensor<3xf64>) dimensions = [1]
// CHECK:        %[[DX:.*]] = tensor.reshape %[[DX3]](%{{.*}}) : (tensor<3xf64>, tensor<2xi64>) -> tensor<3x1xf64>
// CHECK:        func.return %[[DX]], %[[DY]] : tensor<3x1xf64>, tensor<4xf64>
