// irad-for-mlir-opt: math.expm1 calls libm's expm1, since MLIR 22's
// conversion of math to LLVM would lower it to exp(x) - 1 (all digits lost for
// small x): on scalars, and inside a linalg.generic on tensors; one
// declaration per element type, even for two uses.
// RUN: irad-opt %s -p irad-for-mlir-opt | filecheck %s

// CHECK-LABEL: func.func @small
// CHECK-NEXT:    %e = func.call @expm1(%x) : (f64) -> f64
// CHECK-NEXT:    %d = func.call @expm1(%e) : (f64) -> f64
// CHECK:         linalg.generic
// CHECK:           %{{.*}} = func.call @expm1f(%{{.*}}) : (f32) -> f32
// CHECK:         func.return %d, %{{.*}} : f64, tensor<4xf32>
func.func @small(%x: f64, %t: tensor<4xf32>) -> (f64, tensor<4xf32>) {
  %e = math.expm1 %x : f64
  %d = math.expm1 %e : f64
  %u = math.expm1 %t : tensor<4xf32>
  func.return %d, %u : f64, tensor<4xf32>
}
// CHECK-DAG: func.func private @expm1(f64) -> f64
// CHECK-DAG: func.func private @expm1f(f32) -> f32
// CHECK-NOT: math.expm1
