// Without --verify-diagnostics, stock xdsl-opt re-raises a diagnostic; irad's
// passes install a hook when loaded, so the user sees irad's message (where,
// what, hint), no Python traceback, and exit status 1.
// RUN: not xdsl-opt %s -p irad-differentiate 2>&1 | filecheck %s

func.func private @external(f64) -> f64
func.func @f(%x: f64) -> f64 {
  %y = func.call @external(%x) : (f64) -> f64
  func.return %y : f64
}
func.func @main(%x: f64) -> f64 {
  %g = irad.grad @f(%x) {wrt = [0]} : (f64) -> f64
  func.return %g : f64
}
// CHECK-NOT: Traceback
// CHECK: @f: func.call: @external has no body and no rule (target 'external'), so it cannot be differentiated
// CHECK-NEXT:   hint: register a rule for it (irad.rrule), or mark it irad.non_differentiable
// CHECK-NOT: Traceback
