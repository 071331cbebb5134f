// RUN: not irad-opt %s -p irad-jvp --split-input-file 2>&1 | filecheck %s

func.func private @opaque(f64) -> f64

func.func @f(%x: f64) -> f64 {
  %y = func.call @opaque(%x) : (f64) -> f64
  func.return %y : f64
}

func.func @main(%x: f64, %tx: f64) -> (f64, f64) {
  %v, %t = irad.jvp @f(%x, %tx) {wrt = [0]} : (f64, f64) -> (f64, f64)
  func.return %v, %t : f64, f64
}

// The error names the call site, as reverse mode's does.
// CHECK: irad-opt: error: @f: func.call: @opaque has no body and no frule (target 'opaque'), so its tangent cannot be computed
// CHECK-NEXT: hint: register one with irad.frule, or mark it irad.non_differentiable
