// Stock xdsl-opt reports irad's pass errors as xDSL diagnostics: with
// --verify-diagnostics it prints each message (where, what, and a hint) and no
// traceback, as it does for its own verifier errors (irad-opt prints the same
// messages, as `irad-opt: error: ...`, exit status 1).
// RUN: xdsl-opt %s --split-input-file -p irad-differentiate,irad-jvp --verify-diagnostics | filecheck %s --strict-whitespace --match-full-lines

// A callee with neither a body nor a rule.
func.func private @external(f64) -> f64
func.func @f(%x: f64) -> f64 {
  %y = func.call @external(%x) : (f64) -> f64
  func.return %y : f64
}
func.func @main(%x: f64) -> f64 {
  %g = irad.grad @f(%x) {wrt = [0]} : (f64) -> f64
  func.return %g : f64
}
// CHECK:@f: func.call: @external has no body and no rule (target 'external'), so it cannot be differentiated
// CHECK-NEXT:  hint: register a rule for it (irad.rrule), or mark it irad.non_differentiable
// CHECK-NEXT:{{//}} -----

// -----

// The same in forward mode.
func.func private @external(f64) -> f64
func.func @f(%x: f64) -> f64 {
  %y = func.call @external(%x) : (f64) -> f64
  func.return %y : f64
}
func.func @main(%x: f64, %t: f64) -> (f64, f64) {
  %v, %tv = irad.jvp @f(%x, %t) {wrt = [0]} : (f64, f64) -> (f64, f64)
  func.return %v, %tv : f64, f64
}
// CHECK-NEXT:@f: func.call: @external has no body and no frule (target 'external'), so its tangent cannot be computed
// CHECK-NEXT:  hint: register one with irad.frule, or mark it irad.non_differentiable
// CHECK-NEXT:{{//}} -----

// -----

// An op without an adjoint.
func.func @f(%x: f64) -> f64 {
  %e = tensor.empty() : tensor<2xf64>
  %t = linalg.fill ins(%x : f64) outs(%e : tensor<2xf64>) -> tensor<2xf64>
  %c0 = arith.constant 0 : index
  %y = tensor.extract %t[%c0] : tensor<2xf64>
  func.return %y : f64
}
func.func @main(%x: f64) -> f64 {
  %g = irad.grad @f(%x) {wrt = [0]} : (f64) -> f64
  func.return %g : f64
}
// CHECK-NEXT:@f: linalg.fill: no adjoint for the op `linalg.fill`
// CHECK-NEXT:  hint: the region ops irad reverses are scf.if, scf.for and scf.while
// CHECK-NEXT:{{//}} -----

// -----

// A refused op on a value to differentiate.
func.func @f(%x: f64) -> f64 {
  %i = arith.bitcast %x : f64 to i64
  %y = arith.bitcast %i : i64 to f64
  func.return %y : f64
}
func.func @main(%x: f64) -> f64 {
  %g = irad.grad @f(%x) {wrt = [0]} : (f64) -> f64
  func.return %g : f64
}
// CHECK-NEXT:@f: arith.bitcast: no derivative for the op `arith.bitcast`: it reinterprets the bits of its operand, which has no derivative
// CHECK-NEXT:  hint: compute the value without it, or put it behind a function marked irad.non_differentiable if its derivative is meant to be zero
// CHECK-NEXT:{{//}} -----

// -----

// A request for a function the module does not define (the verifier leaves
// callees it cannot find to the pass).
func.func @main(%x: f64) -> f64 {
  %g = irad.grad @nowhere(%x) {wrt = [0]} : (f64) -> f64
  func.return %g : f64
}
// CHECK-NEXT:@main: irad.grad: no function @nowhere in the module
// CHECK-NEXT:  hint: define @nowhere (a declaration, if a rule covers it), or correct the name
// CHECK-NEXT:{{//}} -----

// -----

// A request the verifier refuses: xDSL's own diagnostic, the op marked in the IR.
func.func @f(%x: f64) -> (f64, f64) {
  func.return %x, %x : f64, f64
}
func.func @main(%x: f64) -> f64 {
  %g = irad.grad @f(%x) {wrt = [0]} : (f64) -> f64
  func.return %g : f64
}
// CHECK-NEXT:'irad.grad' op differentiates the one float result of @f, but it returns 2 floats (f64, f64); use 'irad.vjp' to give each a cotangent
// CHECK:    %g = "irad.grad"(%x) <{callee = @f, wrt = [0 : i64]}> : (f64) -> f64
// CHECK-NEXT:    ^^^^^^^^^^^^^^^^{{-+}}
// CHECK-NOT:Traceback
