// The generic form is valid MLIR: LLVM's mlir-opt reads it as unregistered
// ops, and irad-opt reads mlir-opt's output back.
// REQUIRES: mlir-opt
// RUN: irad-opt %s --print-op-generic | %mlir-opt --allow-unregistered-dialect | irad-opt | filecheck %s

func.func @f(%x: f64, %y: f64) -> f64 {
  func.return %x : f64
}

// CHECK-LABEL: func.func @requests
func.func @requests(%x: f64, %y: f64) -> (f64, f64) {
  // CHECK-NEXT: %{{.*}}, %{{.*}} = irad.value_and_grad @f(%{{.*}}, %{{.*}}) {wrt = [1]} : (f64, f64) -> (f64, f64)
  %v, %gy = irad.value_and_grad @f(%x, %y) {wrt = [1]} : (f64, f64) -> (f64, f64)
  func.return %v, %gy : f64, f64
}
