// RUN: irad-opt %s -p irad-differentiate | filecheck %s

// The IR the frontend emits for an if/elif/else statement assigning two
// variables: nested scf.if ops with two results each. The augmented primal
// yields the residuals of each arm out of its scf.if (placeholders on the other
// paths); the pullback branches on the saved conditions, innermost last.
//
//   if x > 0.0:    y = x * x;  z = sin(x)
//   elif x > -1.0: y = -x;     z = x
//   else:          y = 3.0;    z = x
//   return y * z

func.func @f(%x: f64) -> f64 {
  %zero = arith.constant 0.0 : f64
  %c = arith.cmpf ogt, %x, %zero : f64
  %y, %z = scf.if %c -> (f64, f64) {
    %y1 = arith.mulf %x, %x : f64
    %z1 = math.sin %x : f64
    scf.yield %y1, %z1 : f64, f64
  } else {
    %m1 = arith.constant -1.0 : f64
    %c2 = arith.cmpf ogt, %x, %m1 : f64
    %y2, %z2 = scf.if %c2 -> (f64, f64) {
      %y3 = arith.negf %x : f64
      scf.yield %y3, %x : f64, f64
    } else {
      %three = arith.constant 3.0 : f64
      scf.yield %three, %x : f64, f64
    }
    scf.yield %y2, %z2 : f64, f64
  }
  %r = arith.mulf %y, %z : f64
  func.return %r : f64
}

func.func @main(%x: f64) -> f64 {
  %g = irad.grad @f(%x) {wrt = [0]} : (f64) -> f64
  func.return %g : f64
}

// CHECK:       func.func private @f.augmented.d(%x: f64) -> (f64, f64, f64, i1, f64, i1)
// CHECK:         %y, %z, %[[C2:.*]] = scf.if %c -> (f64, f64, i1) {
// CHECK:           scf.yield %y1, %z1, %{{.*}} : f64, f64, i1
// CHECK:         } else {
// CHECK:           %c2 = arith.cmpf ogt, %x, %m1 : f64
// CHECK:           scf.yield %y2, %z2, %c2 : f64, f64, i1
// CHECK:         func.return %r, %z, %y, %c, %x, %[[C2]] : f64, f64, f64, i1, f64, i1

// CHECK:       func.func private @f.pullback.d(%z: f64, %y: f64, %c: i1, %x: f64, %c2: i1, %dr: f64) -> f64
// CHECK:         %[[DY:.*]] = arith.mulf %dr, %z : f64
// CHECK-NEXT:    %[[DZ:.*]] = arith.mulf %dr, %y : f64
// CHECK-NEXT:    %[[DX:.*]] = scf.if %c -> (f64) {
// CHECK:           math.cos %x : f64
// CHECK:         } else {
// CHECK-NEXT:      %[[IN:.*]] = scf.if %c2 -> (f64) {
// CHECK-NEXT:        %[[NEG:.*]] = arith.negf %[[DY]] : f64
// CHECK-NEXT:        %[[SUM:.*]] = arith.addf %[[DZ]], %[[NEG]] : f64
// CHECK-NEXT:        scf.yield %[[SUM]] : f64
// CHECK-NEXT:      } else {
// CHECK-NEXT:        scf.yield %[[DZ]] : f64
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.yield %[[IN]] : f64
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[DX]] : f64
