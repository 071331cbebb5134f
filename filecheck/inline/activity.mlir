// RUN: irad-opt %s -p irad-differentiate,irad-optimize | filecheck %s

// A gradient with respect to one argument computes no cotangent of the
// other, across the call to @g: d/dy of log(y) is a division, d/dx of sin(x)
// a cosine, and each gradient has only its own.

// CHECK-LABEL: func.func @dx(%x: f64, %y: f64) -> f64 {
// CHECK-NOT:     arith.divf
// CHECK:         math.cos %x
// CHECK-NOT:     arith.divf
// CHECK:         func.return
// CHECK-NEXT:  }

// CHECK-LABEL: func.func @dy(%x: f64, %y: f64) -> f64 {
// CHECK-NOT:     math.cos
// CHECK:         arith.divf
// CHECK-NOT:     math.cos
// CHECK:         func.return
// CHECK-NEXT:  }
// CHECK-NOT:   func.func

func.func private @g(%x: f64, %y: f64) -> f64 {
  %s = math.sin %x : f64
  %l = math.log %y : f64
  %p = arith.mulf %s, %l : f64
  func.return %p : f64
}

func.func private @f(%x: f64, %y: f64) -> f64 {
  %two = arith.constant 2.0 : f64
  %p = func.call @g(%x, %y) : (f64, f64) -> f64
  %r = arith.mulf %p, %two : f64
  func.return %r : f64
}

func.func @dx(%x: f64, %y: f64) -> f64 {
  %d = irad.grad @f(%x, %y) {wrt = [0]} : (f64, f64) -> f64
  func.return %d : f64
}

func.func @dy(%x: f64, %y: f64) -> f64 {
  %d = irad.grad @f(%x, %y) {wrt = [1]} : (f64, f64) -> f64
  func.return %d : f64
}
