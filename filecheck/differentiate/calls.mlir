// RUN: irad-opt %s -p irad-differentiate | filecheck %s

// A callee without a rule is differentiated into its own generated pair,
// once per activity pattern even when it is called twice; the caller's
// augmented primal keeps the callee's residuals, and its pullback calls the
// callee's pullback (in reverse order).

func.func private @sq(%x: f64) -> f64 {
  %y = arith.mulf %x, %x : f64
  func.return %y : f64
}

func.func @f(%x: f64) -> f64 {
  %a = func.call @sq(%x) : (f64) -> f64
  %b = func.call @sq(%a) : (f64) -> f64
  func.return %b : f64
}

func.func @main(%x: f64) -> f64 {
  %g = irad.grad @f(%x) {wrt = [0]} : (f64) -> f64
  func.return %g : f64
}

// CHECK:       func.func private @sq.augmented.d(%x: f64) -> (f64, f64) attributes {irad.primal = @sq, irad.role = "augmented_primal", irad.order = 1 : i64}
// CHECK:       func.func private @sq.pullback.d(%x: f64, %{{.*}}: f64) -> f64 attributes {irad.primal = @sq, irad.role = "pullback", irad.order = 1 : i64}
// CHECK-NOT:   func.func private @sq.augmented

// CHECK:       func.func private @f.augmented.d(%x: f64) -> (f64, f64, f64)
// CHECK-NEXT:    %a, %[[RA:.*]] = func.call @sq.augmented.d(%x) : (f64) -> (f64, f64)
// CHECK-NEXT:    %b, %[[RB:.*]] = func.call @sq.augmented.d(%a) : (f64) -> (f64, f64)
// CHECK-NEXT:    func.return %b, %[[RB]], %[[RA]] : f64, f64, f64

// CHECK:       func.func private @f.pullback.d(%[[PB:.*]]: f64, %[[PA:.*]]: f64, %[[DB:.*]]: f64) -> f64
// CHECK-NEXT:    %[[DA:.*]] = func.call @sq.pullback.d(%[[PB]], %[[DB]]) : (f64, f64) -> f64
// CHECK-NEXT:    %[[DX:.*]] = func.call @sq.pullback.d(%[[PA]], %[[DA]]) : (f64, f64) -> f64
// CHECK-NEXT:    func.return %[[DX]] : f64
