// RUN: irad-opt %s -p irad-jvp | filecheck %s

// irad.numerics.softplus has an frule in the table: it is inlined, so the
// tangent is dx * (tanh(x / 2) / 2 + 1/2), and nothing is generated for the
// callee. The call to the primal itself stays.

func.func private @irad.numerics.softplus(%x: f64) -> f64 {
  %z = arith.constant 0.0 : f64
  %y = arith.maximumf %x, %z : f64
  func.return %y : f64
}

func.func @f(%x: f64) -> f64 {
  %a = func.call @irad.numerics.softplus(%x) : (f64) -> f64
  func.return %a : f64
}

func.func @main(%x: f64, %tx: f64) -> (f64, f64) {
  %v, %t = irad.jvp @f(%x, %tx) {wrt = [0]} : (f64, f64) -> (f64, f64)
  func.return %v, %t : f64, f64
}

// CHECK-LABEL: func.func private @f.jvp.d(
// CHECK:         %[[Y:.*]] = func.call @irad.numerics.softplus(%x) : (f64) -> f64
// CHECK:         math.tanh
// CHECK:         func.return %[[Y]], %{{.*}} : f64, f64
// CHECK-NOT:   @irad.numerics.softplus.jvp
