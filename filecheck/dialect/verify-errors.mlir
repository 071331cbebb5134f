// Verifier errors of the request ops.
// RUN: irad-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @main(%x: f64, %y: f64) -> (f64, f64) {
  %g:2 = "irad.grad"(%x, %y) <{callee = @f, wrt = []}> : (f64, f64) -> (f64, f64)
  func.return %g#0, %g#1 : f64, f64
}
// CHECK: 'irad.grad' op expects a non-empty 'wrt' list

// -----

func.func @main(%x: f64, %y: f64) -> f64 {
  %g = irad.grad @f(%x, %y) {wrt = [2]} : (f64, f64) -> f64
  func.return %g : f64
}
// CHECK: 'irad.grad' op 'wrt' index 2 is out of range for 2 operand(s)

// -----

func.func @main(%x: f64, %y: f64) -> f64 {
  %g = irad.grad @f(%x, %y) {wrt = [-1]} : (f64, f64) -> f64
  func.return %g : f64
}
// CHECK: 'irad.grad' op 'wrt' index -1 is out of range for 2 operand(s)

// -----

func.func @main(%x: f64, %y: f64) -> (f64, f64) {
  %g:2 = irad.grad @f(%x, %y) {wrt = [1, 0]} : (f64, f64) -> (f64, f64)
  func.return %g#0, %g#1 : f64, f64
}
// CHECK: 'irad.grad' op expects strictly increasing 'wrt' indices, got [1, 0]

// -----

func.func @main(%x: f64, %y: f64) -> (f64, f64) {
  %g:2 = irad.grad @f(%x, %y) {wrt = [0, 0]} : (f64, f64) -> (f64, f64)
  func.return %g#0, %g#1 : f64, f64
}
// CHECK: 'irad.grad' op expects strictly increasing 'wrt' indices, got [0, 0]

// -----

func.func @main(%x: f64, %n: i32) -> i32 {
  %g = irad.grad @f(%x, %n) {wrt = [1]} : (f64, i32) -> i32
  func.return %g : i32
}
// CHECK: 'irad.grad' op cannot differentiate with respect to operand #1 of type i32 (expected a float, or a tensor or vector of floats)

// -----

func.func @main(%x: f64, %y: f64) -> f64 {
  %g:2 = irad.grad @f(%x, %y) {wrt = [0]} : (f64, f64) -> (f64, f64)
  func.return %g#0 : f64
}
// CHECK: 'irad.grad' op expects one result per 'wrt' entry (1), but has 2

// -----

func.func @main(%x: f64, %y: f32) -> f64 {
  %g = irad.grad @f(%x, %y) {wrt = [1]} : (f64, f32) -> f64
  func.return %g : f64
}
// CHECK: 'irad.grad' op gradient result #0 has type f64, but it is the gradient of operand #1 of type f32

// -----

func.func @main(%x: f64, %y: f64) -> f64 {
  %gy = irad.value_and_grad @f(%x, %y) {wrt = [1]} : (f64, f64) -> f64
  func.return %gy : f64
}
// CHECK: 'irad.value_and_grad' op expects the callee's result followed by 1 gradient(s), but has 1 result(s)

// -----

func.func @main(%x: f64) -> (i32, f64) {
  %v, %g = irad.value_and_grad @f(%x) {wrt = [0]} : (f64) -> (i32, f64)
  func.return %v, %g : i32, f64
}
// CHECK: 'irad.value_and_grad' op differentiates the callee's result, which must be a scalar float, but result #0 has type i32

// -----

func.func @main(%x: tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>) {
  %v, %g = irad.value_and_grad @f(%x) {wrt = [0]} : (tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>)
  func.return %v, %g : tensor<2xf64>, tensor<2xf64>
}
// CHECK: 'irad.value_and_grad' op differentiates the callee's result, which must be a scalar float, but result #0 has type tensor<2xf64>

// -----

// Checks against a callee found in the symbol table.

func.func @f(%x: f64, %y: f64) -> f64 {
  func.return %x : f64
}
func.func @main(%x: f64, %y: f32) -> f64 {
  %g = irad.grad @f(%x, %y) {wrt = [0]} : (f64, f32) -> f64
  func.return %g : f64
}
// CHECK: 'irad.grad' op operand types (f64, f32) do not match the inputs of @f (f64, f64)

// -----

func.func @f(%x: f64) -> f64 {
  func.return %x : f64
}
func.func @main(%x: f64, %y: f64) -> f64 {
  %g = irad.grad @f(%x, %y) {wrt = [0]} : (f64, f64) -> f64
  func.return %g : f64
}
// CHECK: 'irad.grad' op operand types (f64, f64) do not match the inputs of @f (f64)

// -----

func.func @f(%x: f64) -> i64 {
  %c = arith.constant 0 : i64
  func.return %c : i64
}
func.func @main(%x: f64) -> f64 {
  %g = irad.grad @f(%x) {wrt = [0]} : (f64) -> f64
  func.return %g : f64
}
// CHECK: 'irad.grad' op differentiates the result of @f, which must be one scalar float, but @f returns (i64)

// -----

func.func @f(%x: f64) {
  func.return
}
func.func @main(%x: f64) -> f64 {
  %g = irad.grad @f(%x) {wrt = [0]} : (f64) -> f64
  func.return %g : f64
}
// CHECK: 'irad.grad' op differentiates the result of @f, which must be one scalar float, but @f returns (nothing)

// -----

func.func @f(%x: f64) -> (f64, f32) {
  %c = arith.constant 0.0 : f32
  func.return %x, %c : f64, f32
}
func.func @main(%x: f64) -> (f64, f64) {
  %v, %g = irad.value_and_grad @f(%x) {wrt = [0]} : (f64) -> (f64, f64)
  func.return %v, %g : f64, f64
}
// CHECK: 'irad.value_and_grad' op differentiates the result of @f, which must be one scalar float, but @f returns (f64, f32)

// -----

// Property constraints, reachable through the generic form.

func.func @main(%x: f64) -> f64 {
  %g = "irad.grad"(%x) <{callee = @f, wrt = [0 : i32]}> : (f64) -> f64
  func.return %g : f64
}
// CHECK: Expected attribute i64 but got i32
// CHECK: "irad.grad"(%x) <{callee = @f, wrt = [0 : i32]}>

// -----

func.func @main(%x: f64) -> f64 {
  %g = "irad.grad"(%x) <{callee = @m::@f, wrt = [0]}> : (f64) -> f64
  func.return %g : f64
}
// CHECK: Expected SymbolRefAttr with no nested symbols.

// -----

func.func @main(%x: f64) -> f64 {
  %g = "irad.grad"(%x) <{callee = @f}> : (f64) -> f64
  func.return %g : f64
}
// CHECK: property 'wrt' expected in operation 'irad.grad'
