// RUN: irad-opt %s -p irad-jvp | filecheck %s
// RUN: irad-opt %s -p irad-jvp,irad-optimize | %mlir-opt | filecheck %s --check-prefix=MLIR
// REQUIRES: mlir-opt

// Loops carry a tangent beside each carried value that varies; a carried
// value that never depends on %x (the counter %k) gets none. scf.while
// extends the carried values, the forwarded values and the results alike.

func.func @loops(%x: f64, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %m = arith.mulf %acc, %x : f64
    %a = arith.addf %m, %x : f64
    scf.yield %a : f64
  }
  %ten = arith.constant 10.0 : f64
  %r, %k = scf.while (%v = %s, %c = %c0) : (f64, index) -> (f64, index) {
    %small = arith.cmpf olt, %v, %ten : f64
    scf.condition(%small) %v, %c : f64, index
  } do {
  ^bb0(%v2: f64, %c2: index):
    %two = arith.constant 2.0 : f64
    %d = arith.mulf %v2, %two : f64
    %c3 = arith.addi %c2, %c1 : index
    scf.yield %d, %c3 : f64, index
  }
  func.return %r : f64
}

func.func @main(%x: f64, %n: index, %tx: f64) -> (f64, f64) {
  %v, %t = irad.jvp @loops(%x, %n, %tx) {wrt = [0]} : (f64, index, f64) -> (f64, f64)
  func.return %v, %t : f64, f64
}

// CHECK-LABEL: func.func private @loops.jvp.dc(
// CHECK:         %{{.*}}, %{{.*}} = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %tacc = %{{.*}}) -> (f64, f64) {
// CHECK:           %[[TM:.*]] = arith.mulf %tacc, %x : f64
// CHECK:           %[[TX:.*]] = arith.mulf %tx, %acc : f64
// CHECK:           scf.yield %a, %{{.*}} : f64, f64
// CHECK:         scf.while (%v = %{{.*}}, %c = %c0, %tv = %{{.*}}) : (f64, index, f64) -> (f64, index, f64) {
// CHECK:           scf.condition(%small) %v, %c, %tv : f64, index, f64
// CHECK:         ^bb0(%v2: f64, %c2: index, %tv2: f64):
// CHECK:           %{{.*}} = arith.mulf %tv2, %two : f64
// CHECK:           scf.yield %d, %c3, %{{.*}} : f64, index, f64

// MLIR: scf.while
