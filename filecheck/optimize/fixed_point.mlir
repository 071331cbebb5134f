// RUN: irad-opt %s -p irad-optimize | filecheck %s

// CSE merges the two exps; only then do `cmpf ule, %e, %e` (true for every %e,
// NaN included) and the select fold, in the next round. Dead cotangents go.

// CHECK-LABEL: func.func @rounds(%x: f64, %n: index) -> f64 {
// CHECK-NEXT:    %[[LB:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[STEP:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[NZ:.*]] = arith.constant -0.000000e+00 : f64
// CHECK-NEXT:    %[[E:.*]] = math.exp %x : f64
// CHECK-NEXT:    %[[S:.*]] = arith.addf %[[E]], %[[E]] : f64
// CHECK-NEXT:    %[[R:.*]] = scf.for %{{.*}} = %[[LB]] to %n step %[[STEP]] iter_args(%[[ACC:.*]] = %[[NZ]]) -> (f64) {
// CHECK-NEXT:      %[[B:.*]] = arith.addf %[[ACC]], %[[S]] : f64
// CHECK-NEXT:      scf.yield %[[B]] : f64
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R]] : f64
// CHECK-NEXT:  }

func.func @rounds(%x: f64, %n: index) -> f64 {
  %lb = arith.constant 0 : index
  %step = arith.constant 1 : index
  %one = arith.constant 1.0 : f64
  %nz = arith.constant -0.0 : f64
  %a = math.exp %x : f64
  %b = math.exp %x : f64
  %nb = arith.negf %b : f64
  %s = arith.subf %a, %nb : f64
  %c = arith.cmpf ule, %a, %b : f64
  %t = arith.select %c, %s, %x : f64
  %r = scf.for %i = %lb to %n step %step iter_args(%acc = %nz) -> (f64) {
    %unused = math.sin %acc : f64
    %m = arith.mulf %t, %one : f64
    %b2 = arith.addf %acc, %m : f64
    scf.yield %b2 : f64
  }
  func.return %r : f64
}
