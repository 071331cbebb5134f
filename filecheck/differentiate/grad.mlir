// RUN: irad-opt %s -p irad-differentiate | filecheck %s

// irad.grad keeps only the gradients; integer arguments are inactive: they
// get the letter `c` in the names and no cotangent.

func.func @f(%x: f64, %n: i64) -> f64 {
  %m = arith.sitofp %n : i64 to f64
  %y = arith.mulf %x, %m : f64
  func.return %y : f64
}

func.func @main(%x: f64, %n: i64) -> f64 {
  %g = irad.grad @f(%x, %n) {wrt = [0]} : (f64, i64) -> f64
  func.return %g : f64
}

// CHECK-LABEL: func.func @main
// CHECK:         %{{.*}}, %[[M:.*]] = func.call @f.augmented.dc(%x, %n) : (f64, i64) -> (f64, f64)
// CHECK:         %g = func.call @f.pullback.dc(%[[M]], 
// CHECK-NEXT:    func.return %g : f64

// CHECK:       func.func private @f.pullback.dc(%m: f64, %[[DY:.*]]: f64) -> f64
// CHECK-NEXT:    %[[DX:.*]] = arith.mulf %[[DY]], %m : f64
// CHECK-NEXT:    func.return %[[DX]] : f64
