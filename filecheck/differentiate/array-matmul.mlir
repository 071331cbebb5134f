// RUN: irad-opt %s -p irad-differentiate | filecheck %s
// RUN: irad-opt %s -p irad-differentiate | %mlir-opt | filecheck %s --check-prefix=MLIR
// REQUIRES: mlir-opt

// The pullback of C = A B is two matmuls: dA = dC B^T and dB = A^T dC. The
// residuals are the primal operands; the reduction's adjoint broadcasts dr.

func.func @f(%a: tensor<3x4xf64>, %b: tensor<4x2xf64>) -> f64 {
  %zero = arith.constant dense<0.0> : tensor<3x2xf64>
  %c = linalg.matmul ins(%a, %b : tensor<3x4xf64>, tensor<4x2xf64>) outs(%zero : tensor<3x2xf64>) -> tensor<3x2xf64>
  %init = arith.constant dense<0.0> : tensor<f64>
  %s = linalg.reduce ins(%c : tensor<3x2xf64>) outs(%init : tensor<f64>) dimensions = [0, 1]
    (%x: f64, %acc: f64) {
      %sum = arith.addf %x, %acc : f64
      linalg.yield %sum : f64
    }
  %r = tensor.extract %s[] : tensor<f64>
  func.return %r : f64
}

func.func @main(%a: tensor<3x4xf64>, %b: tensor<4x2xf64>) -> (tensor<3x4xf64>, tensor<4x2xf64>) {
  %ga, %gb = irad.grad @f(%a, %b) {wrt = [0, 1]} : (tensor<3x4xf64>, tensor<4x2xf64>) -> (tensor<3x4xf64>, tensor<4x2xf64>)
  func.return %ga, %gb : tensor<3x4xf64>, tensor<4x2xf64>
}

// CHECK:      func.func private @f.augmented.dd(%a: tensor<3x4xf64>, %b: tensor<4x2xf64>) -> (f64, tensor<4x2xf64>, tensor<3x4xf64>)
// CHECK:        func.return %r, %b, %a : f64, tensor<4x2xf64>, tensor<3x4xf64>
// CHECK:      func.func private @f.pullback.dd(%b: tensor<4x2xf64>, %a: tensor<3x4xf64>, %dr: f64) -> (tensor<3x4xf64>, tensor<4x2xf64>)
// CHECK:        %[[DR:.*]] = tensor.insert %dr into %{{.*}}[] : tensor<f64>
// CHECK:        %[[DC:.*]] = linalg.broadcast ins(%[[DR]]:tensor<f64>) outs(%{{.*}}:tensor<3x2xf64>) dimensions = [0, 1]
// CHECK:        %[[BT:.*]] = linalg.transpose ins(%b:tensor<4x2xf64>) outs(%{{.*}}:tensor<2x4xf64>) permutation = [1, 0]
// CHECK:        %[[DA:.*]] = linalg.matmul ins(%[[DC]], %[[BT]] : tensor<3x2xf64>, tensor<2x4xf64>) outs(%{{.*}} : tensor<3x4xf64>) -> tensor<3x4xf64>
// CHECK:        %[[AT:.*]] = linalg.transpose ins(%a:tensor<3x4xf64>) outs(%{{.*}}:tensor<4x3xf64>) permutation = [1, 0]
// CHECK:        %[[DB:.*]] = linalg.matmul ins(%[[AT]], %[[DC]] : tensor<4x3xf64>, tensor<3x2xf64>) outs(%{{.*}} : tensor<4x2xf64>) -> tensor<4x2xf64>
// CHECK:        func.return %[[DA]], %[[DB]] : tensor<3x4xf64>, tensor<4x2xf64>

// MLIR-LABEL: func.func private @f.pullback.dd
// MLIR-COUNT-2: linalg.matmul
