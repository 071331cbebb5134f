// MLIR 22 math ops with a derivative: math.sincos has two results, each with its
// cotangent; the pullback reads both primal results as residuals.
// RUN: irad-opt %s -p irad-differentiate | filecheck %s
// RUN: irad-opt %s -p irad-jvp | filecheck %s --check-prefix=JVP

func.func @f(%x: f64) -> f64 {
  %s, %c = math.sincos %x : f64
  %y = arith.mulf %s, %c : f64
  func.return %y : f64
}

func.func @main(%x: f64, %t: f64) -> (f64, f64, f64) {
  %g = irad.grad @f(%x) {wrt = [0]} : (f64) -> f64
  %v, %tv = irad.jvp @f(%x, %t) {wrt = [0]} : (f64, f64) -> (f64, f64)
  func.return %g, %v, %tv : f64, f64, f64
}

// CHECK-LABEL: func.func private @f.augmented.d(%x: f64) -> (f64, f64, f64)
// CHECK-NEXT:    %s, %c = math.sincos %x : f64
// CHECK-NEXT:    %y = arith.mulf %s, %c : f64
// CHECK-NEXT:    func.return %y, %c, %s : f64, f64, f64

// d(s c) = c ds + s dc; ds = c dx, dc = -s dx
// CHECK-LABEL: func.func private @f.pullback.d(%c: f64, %s: f64, %dy: f64) -> f64
// CHECK-NEXT:    %[[DS:.*]] = arith.mulf %dy, %c : f64
// CHECK-NEXT:    %[[DC:.*]] = arith.mulf %dy, %s : f64
// CHECK-NEXT:    %[[FROM_SIN:.*]] = arith.mulf %[[DS]], %c : f64
// CHECK-NEXT:    %[[P:.*]] = arith.mulf %[[DC]], %s : f64
// CHECK-NEXT:    %[[FROM_COS:.*]] = arith.negf %[[P]] : f64
// CHECK-NEXT:    %[[DX:.*]] = arith.addf %[[FROM_SIN]], %[[FROM_COS]] : f64
// CHECK-NEXT:    func.return %[[DX]] : f64

// JVP-LABEL: func.func private @f.jvp.d(%x: f64, %tx: f64) -> (f64, f64)
// JVP-NEXT:    %s, %c = math.sincos %x : f64
// JVP-NEXT:    %[[TS:.*]] = arith.mulf %tx, %c : f64
// JVP-NEXT:    %[[P:.*]] = arith.mulf %tx, %s : f64
// JVP-NEXT:    %[[TC:.*]] = arith.negf %[[P]] : f64
// JVP:         func.return %y, %{{.*}} : f64, f64
