// RUN: irad-opt %s -p "irad-differentiate{inline=true}" | filecheck %s

// With inline=true, a callee AD differentiates is inlined into its caller
// first (its body moved in when nothing else calls it, else a copy): the
// request gets one pair of generated functions, whose residuals are values of
// the caller, so no augmented primal hands up the residuals of the functions
// below it. A callee with a rule stays a call and meets the rule table; so
// does a recursive one.

func.func private @leaf(%x: f64) -> f64 {
  %y = math.sin %x : f64
  func.return %y : f64
}

func.func private @mid(%x: f64) -> f64 {
  %a = func.call @leaf(%x) : (f64) -> f64
  %b = arith.mulf %a, %x : f64
  func.return %b : f64
}

func.func private @down(%x: f64, %n: i64) -> f64 {
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %done = arith.cmpi sle, %n, %zero : i64
  %r = scf.if %done -> (f64) {
    scf.yield %x : f64
  } else {
    %m = arith.subi %n, %one : i64
    %s = math.sin %x : f64
    %d = func.call @down(%s, %m) : (f64, i64) -> f64
    scf.yield %d : f64
  }
  func.return %r : f64
}

func.func @f(%x: f64, %n: i64) -> f64 {
  %m = func.call @mid(%x) : (f64) -> f64
  %e = math.exp %m : f64
  %d = func.call @down(%e, %n) : (f64, i64) -> f64
  func.return %d : f64
}

func.func @main(%x: f64, %n: i64) -> f64 {
  %g = irad.grad @f(%x, %n) {wrt = [0]} : (f64, i64) -> f64
  func.return %g : f64
}

// Private callees nothing calls any more are gone (their bodies moved in).
// CHECK-NOT:   func.func private @leaf
// CHECK-NOT:   func.func private @mid
// @f itself has @mid and @leaf inlined; the recursive @down stays a call.
// CHECK:       func.func @f(%x: f64, %n: i64) -> f64 {
// CHECK-NEXT:    %a = math.sin %x : f64
// CHECK-NEXT:    %m = arith.mulf %a, %x : f64
// CHECK-NEXT:    %e = math.exp %m : f64
// CHECK-NEXT:    %d = func.call @down(%e, %n) : (f64, i64) -> f64

// No generated pair for @mid or @leaf; @f's pair (in tape mode, as it calls
// the recursive @down) reverses their inlined bodies.
// CHECK-NOT:   @mid.augmented
// CHECK-NOT:   @leaf.augmented
// CHECK:       func.func private @down.augmented.tape.dc
// CHECK-NOT:   @mid.augmented
// CHECK-NOT:   @leaf.augmented
// CHECK:       func.func private @f.augmented.tape.dc(
// CHECK-NEXT:    %a = math.sin %x : f64
// CHECK-NEXT:    %m = arith.mulf %a, %x : f64
// CHECK-NEXT:    %e = math.exp %m : f64
// CHECK-NEXT:    %d, %{{.*}}, %{{.*}} = func.call @down.augmented.tape.dc(%e, %n,
// CHECK:       func.func private @f.pullback.tape.dc(
// CHECK:         func.call @down.pullback.tape.dc(
// CHECK:         math.cos %x : f64
// CHECK-NOT:   @mid.
// CHECK-NOT:   @leaf.
