// RUN: irad-opt %s -p irad-differentiate,irad-optimize | filecheck %s

// The full pipeline on a 3-deep chain @f -> @g -> @h: every generated
// function is inlined into @main, the primals and the generated functions are
// erased, and what is left is the gradient
//   f'(x) = exp(g(x)) * (cos(x) * x + sin(x)),   g(x) = sin(x) * x,
// with each primal value computed once and no seed arithmetic.

// CHECK-LABEL: func.func @main(%x: f64) -> f64 {
// CHECK-NEXT:    %[[S:.*]] = math.sin %x : f64
// CHECK-NEXT:    %[[G:.*]] = arith.mulf %[[S]], %x : f64
// CHECK-NEXT:    %[[E:.*]] = math.exp %[[G]] : f64
// CHECK-NEXT:    %[[EX:.*]] = arith.mulf %[[E]], %x : f64
// CHECK-NEXT:    %[[ES:.*]] = arith.mulf %[[E]], %[[S]] : f64
// CHECK-NEXT:    %[[C:.*]] = math.cos %x : f64
// CHECK-NEXT:    %[[A:.*]] = arith.mulf %[[EX]], %[[C]] : f64
// CHECK-NEXT:    %[[D:.*]] = arith.addf %[[ES]], %[[A]] : f64
// CHECK-NEXT:    func.return %[[D]] : f64
// CHECK-NEXT:  }
// CHECK-NOT:   func.func

func.func private @h(%x: f64) -> f64 {
  %y = math.sin %x : f64
  func.return %y : f64
}

func.func private @g(%x: f64) -> f64 {
  %s = func.call @h(%x) : (f64) -> f64
  %y = arith.mulf %s, %x : f64
  func.return %y : f64
}

func.func private @f(%x: f64) -> f64 {
  %t = func.call @g(%x) : (f64) -> f64
  %y = math.exp %t : f64
  func.return %y : f64
}

func.func @main(%x: f64) -> f64 {
  %d = irad.grad @f(%x) {wrt = [0]} : (f64) -> f64
  func.return %d : f64
}
