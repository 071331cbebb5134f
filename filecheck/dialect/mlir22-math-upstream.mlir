// MLIR 22's own printing of the math ops xDSL 0.75 lacks reads back in xDSL,
// and xDSL's printing of them reads in mlir-opt.
// REQUIRES: mlir-opt
// RUN: %mlir-opt %s | xdsl-opt | filecheck %s
// RUN: xdsl-opt %s | %mlir-opt | filecheck %s --check-prefix=MLIR

// CHECK-LABEL: func.func @ops
// MLIR-LABEL: func.func @ops
func.func @ops(%x: f64, %lo: f64, %hi: f64, %t: tensor<3xf64>) -> (i1, tensor<3xi1>) {
  // CHECK: math.erfc %{{.*}} : f64
  // MLIR: math.erfc %{{.*}} : f64
  %e = math.erfc %x : f64
  // CHECK: %{{.*}}, %{{.*}} = math.sincos %{{.*}} : tensor<3xf64>
  // MLIR: %{{.*}}, %{{.*}} = math.sincos %{{.*}} : tensor<3xf64>
  %st, %ct = math.sincos %t : tensor<3xf64>
  // CHECK: math.clampf %{{.*}} to [%{{.*}}, %{{.*}}] fastmath<fast> : f64
  // MLIR: math.clampf %{{.*}} to [%{{.*}}, %{{.*}}] fastmath<fast> : f64
  %y = math.clampf %x to [%lo, %hi] fastmath<fast> : f64
  // CHECK: math.isinf %{{.*}} {fastmath = #arith.fastmath<nnan>} : f64
  // MLIR: math.isinf %{{.*}} {fastmath = #arith.fastmath<nnan>} : f64
  %i = math.isinf %x {fastmath = #arith.fastmath<nnan>} : f64
  // CHECK: math.isnormal %{{.*}} : tensor<3xf64>
  // MLIR: math.isnormal %{{.*}} : tensor<3xf64>
  %m = math.isnormal %t : tensor<3xf64>
  // CHECK: arith.remf %{{.*}}, %{{.*}} : f64
  // MLIR: arith.remf %{{.*}}, %{{.*}} : f64
  %r = arith.remf %x, %lo : f64
  func.return %i, %m : i1, tensor<3xi1>
}
