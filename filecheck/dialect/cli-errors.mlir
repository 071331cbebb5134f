// Without --verify-diagnostics, irad-opt reports an invalid request as an
// error message with exit status 1, without a Python traceback.
// RUN: not irad-opt %s 2>&1 | filecheck %s
// RUN: not irad opt %s 2>&1 | filecheck %s

func.func @main(%x: f64, %y: f64) -> f64 {
  %g = irad.grad @f(%x, %y) {wrt = [2]} : (f64, f64) -> f64
  func.return %g : f64
}

// CHECK-NOT: Traceback
// CHECK: irad-opt: error: 'irad.grad' op 'wrt' index 2 is out of range for 2 operand(s)
// CHECK-NOT: Traceback
