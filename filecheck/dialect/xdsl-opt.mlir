// Stock xdsl-opt finds the irad dialect and passes through the
// `xdsl.universe` entry point of the installed irad package.
// RUN: xdsl-opt %s | filecheck %s
// RUN: xdsl-opt %s --print-op-generic | xdsl-opt | filecheck %s
// RUN: xdsl-opt %s -p irad-optimize | filecheck %s --check-prefix=PASS

func.func @f(%x: f64, %y: f64) -> f64 {
  func.return %x : f64
}

// PASS: func.func @requests
// CHECK-LABEL: func.func @requests
func.func @requests(%x: f64, %y: f64) -> (f64, f64, f64) {
  // CHECK-NEXT: irad.grad @f(%x, %y) {wrt = [0, 1]} : (f64, f64) -> (f64, f64)
  %g:2 = irad.grad @f(%x, %y) {wrt = [0, 1]} : (f64, f64) -> (f64, f64)
  // CHECK-NEXT: %v, %gx = irad.value_and_grad @f(%x, %y) {wrt = [0]} : (f64, f64) -> (f64, f64)
  %v, %gx = irad.value_and_grad @f(%x, %y) {wrt = [0]} : (f64, f64) -> (f64, f64)
  func.return %g#0, %v, %gx : f64, f64, f64
}
