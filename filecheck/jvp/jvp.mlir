// RUN: irad-opt %s -p irad-jvp | filecheck %s
// RUN: irad-opt %s -p irad-jvp,irad-optimize | filecheck %s --check-prefix=OPT

// Forward mode: the request becomes a call to @f.jvp.dc, which takes f's
// arguments and the tangent of %x, and returns f's result and its tangent.
// The tangents of ops come right after the ops (sin: cos(x) * tx); the
// helper gets its own jvp function; scf.if yields tangents beside values.

func.func private @helper(%x: f64) -> f64 {
  %y = math.exp %x : f64
  func.return %y : f64
}

func.func @f(%x: f64, %y: f64) -> f64 {
  %s = math.sin %x : f64
  %h = func.call @helper(%s) : (f64) -> f64
  %c = arith.cmpf ogt, %x, %y : f64
  %r = scf.if %c -> (f64) {
    %m = arith.mulf %h, %y : f64
    scf.yield %m : f64
  } else {
    scf.yield %y : f64
  }
  func.return %r : f64
}

func.func @main(%x: f64, %y: f64, %tx: f64) -> (f64, f64) {
  %v, %t = irad.jvp @f(%x, %y, %tx) {wrt = [0]} : (f64, f64, f64) -> (f64, f64)
  func.return %v, %t : f64, f64
}

// CHECK-LABEL: func.func @main(
// CHECK:         %{{.*}}, %{{.*}} = func.call @f.jvp.dc(%x, %y, %tx) : (f64, f64, f64) -> (f64, f64)

// CHECK-LABEL: func.func private @f.jvp.dc(
// CHECK-SAME:    %x: f64, %y: f64, %tx: f64) -> (f64, f64)
// CHECK-SAME:    irad.primal = @f, irad.role = "jvp", irad.order = 1 : i64
// CHECK:         %[[S:.*]] = math.sin %x : f64
// CHECK:         %[[COS:.*]] = math.cos %x : f64
// CHECK:         %[[TS:.*]] = arith.mulf %tx, %[[COS]] : f64
// CHECK:         %[[H:.*]], %[[TH:.*]] = func.call @helper.jvp.d(%[[S]], %[[TS]]) : (f64, f64) -> (f64, f64)
// CHECK:         scf.if %{{.*}} -> (f64, f64) {
// CHECK:           %[[M:.*]] = arith.mulf %[[H]], %y : f64
// CHECK:           %[[TM:.*]] = arith.mulf %[[TH]], %y : f64
// CHECK:           scf.yield %[[M]], %[[TM]] : f64, f64
// CHECK:         } else {
// CHECK:           %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK:           scf.yield %y, %[[ZERO]] : f64, f64

// CHECK-LABEL: func.func private @helper.jvp.d(
// CHECK-SAME:    irad.primal = @helper, irad.role = "jvp", irad.order = 1 : i64
// CHECK:         %[[E:.*]] = math.exp %x : f64
// CHECK:         %[[TE:.*]] = arith.mulf %tx, %[[E]] : f64
// CHECK:         func.return %[[E]], %[[TE]] : f64, f64

// OPT-NOT: irad.jvp
