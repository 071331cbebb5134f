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
// CHECK: 'irad.value_and_grad' op expects the callee's results followed by 1 gradient(s), but has 1 result(s)

// -----

func.func @main(%x: f64) -> (i32, f64) {
  %v, %g = irad.value_and_grad @f(%x) {wrt = [0]} : (f64) -> (i32, f64)
  func.return %v, %g : i32, f64
}
// CHECK: 'irad.value_and_grad' op differentiates the float result of the callee, which must be one scalar float or 0-d float tensor (beside any integers and booleans), but it returns (i32)

// -----

func.func @main(%x: tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>) {
  %v, %g = irad.value_and_grad @f(%x) {wrt = [0]} : (tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>)
  func.return %v, %g : tensor<2xf64>, tensor<2xf64>
}
// CHECK: 'irad.value_and_grad' op differentiates the float result of the callee, which must be one scalar float or 0-d float tensor (beside any integers and booleans), but it returns (tensor<2xf64>); use 'irad.vjp' to seed a tensor result

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
// CHECK: 'irad.grad' op differentiates the float result of @f, which must be one scalar float or 0-d float tensor (beside any integers and booleans), but it returns (i64)

// -----

func.func @f(%x: f64) {
  func.return
}
func.func @main(%x: f64) -> f64 {
  %g = irad.grad @f(%x) {wrt = [0]} : (f64) -> f64
  func.return %g : f64
}
// CHECK: 'irad.grad' op differentiates the float result of @f, which must be one scalar float or 0-d float tensor (beside any integers and booleans), but it returns (nothing)

// -----

func.func @f(%x: f64) -> (f64, f32) {
  %c = arith.constant 0.0 : f32
  func.return %x, %c : f64, f32
}
func.func @main(%x: f64) -> (f64, f64) {
  %v, %g = irad.value_and_grad @f(%x) {wrt = [0]} : (f64) -> (f64, f64)
  func.return %v, %g : f64, f64
}
// CHECK: 'irad.value_and_grad' op differentiates the one float result of @f, but it returns 2 floats (f64, f32); use 'irad.vjp' to give each a cotangent

// -----

// Integer and boolean results beside the float get no cotangent: this verifies.
func.func @f(%x: f64) -> (i1, f64, i64) {
  %b = arith.constant true
  %n = arith.constant 3 : i64
  func.return %b, %x, %n : i1, f64, i64
}
func.func @main(%x: f64) -> f64 {
  %g = irad.grad @f(%x) {wrt = [0]} : (f64) -> f64
  %b, %v, %n, %g2 = irad.value_and_grad @f(%x) {wrt = [0]} : (f64) -> (i1, f64, i64, f64)
  %k = irad.vjp @f(%x, %g) {wrt = [0]} : (f64, f64) -> f64
  func.return %k : f64
}
// CHECK-NOT: error
// CHECK-LABEL: func.func @main

// -----

// irad.vjp: the arguments, then one cotangent per float result.

func.func @h(%x: f64, %n: i64) -> (f64, i64, f32) {
  %c = arith.constant 0.0 : f32
  func.return %x, %n, %c : f64, i64, f32
}
func.func @main(%x: f64, %n: i64, %d: f64) -> f64 {
  %dx = irad.vjp @h(%x, %n, %d) {wrt = [0]} : (f64, i64, f64) -> f64
  func.return %dx : f64
}
// CHECK: 'irad.vjp' op expects after the arguments of @h one cotangent per float result (f64, f32: @h returns (f64, i64, f32)), but has (f64)

// -----

func.func @h(%x: f64, %n: i64) -> i64 {
  func.return %n : i64
}
func.func @main(%x: f64, %n: i64) -> f64 {
  %dx = irad.vjp @h(%x, %n) {wrt = [0]} : (f64, i64) -> f64
  func.return %dx : f64
}
// CHECK: 'irad.vjp' op @h returns no float result, so it has nothing to differentiate

// -----

func.func @main(%x: f64, %d: f32) -> (f64, f64) {
  %dx:2 = irad.vjp @h(%x, %d) {wrt = [0]} : (f64, f32) -> (f64, f64)
  func.return %dx#0, %dx#1 : f64, f64
}
// CHECK: 'irad.vjp' op expects one cotangent result per 'wrt' entry (1), but has 2

// -----

func.func @main(%x: f64, %d: f32) -> f64 {
  %dx = irad.vjp @h(%x, %d) {wrt = [1]} : (f64, f32) -> f64
  func.return %dx : f64
}
// CHECK: 'irad.vjp' op result #0 has type f64, but it is the cotangent of argument #1 of type f32

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
