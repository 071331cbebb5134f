// Errors in the custom syntax of the request ops.
// RUN: irad-opt %s --split-input-file --parsing-diagnostics | filecheck %s

func.func @main(%x: f64) -> f64 {
  %g = irad.grad @f(%x) : (f64) -> f64
  func.return %g : f64
}
// CHECK: 'irad.grad' expects an attribute dictionary with 'wrt = [<operand indices>]'

// -----

func.func @main(%x: f64) -> f64 {
  %g = irad.grad @f(%x) {wrt = 0} : (f64) -> f64
  func.return %g : f64
}
// CHECK: 'irad.grad' expects 'wrt' to be a list of integers, got 0 : i64

// -----

func.func @main(%x: f64) -> f64 {
  %g = irad.value_and_grad @f(%x) {wrt = [0.0]} : (f64) -> f64
  func.return %g : f64
}
// CHECK: 'irad.value_and_grad' expects 'wrt' to be a list of integers, got [{{.*}} : f64]

// -----

func.func @main(%x: f64) -> f64 {
  %g = irad.grad @f(%x) {wrt = [0], callee = @g} : (f64) -> f64
  func.return %g : f64
}
// CHECK: 'irad.grad' takes its callee before the operands, not in the attribute dictionary

// -----

func.func @main(%x: f64) -> f64 {
  %g = irad.grad @f(%x) {wrt = [0]} : (f64, f64) -> f64
  func.return %g : f64
}
// CHECK: expected 2 operand types but had 1

// -----

func.func @main(%x: f64) -> f64 {
  %g = irad.grad f(%x) {wrt = [0]} : (f64) -> f64
  func.return %g : f64
}
// CHECK: expect symbol name
