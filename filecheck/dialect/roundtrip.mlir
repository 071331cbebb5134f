// Custom syntax of the request ops: print, reparse, and the generic form
// converted back to the custom one.
// RUN: irad-opt %s | filecheck %s
// RUN: irad-opt %s | irad-opt | filecheck %s
// RUN: irad-opt %s --print-op-generic | irad-opt | filecheck %s

func.func @f(%x: f64, %y: f64) -> f64 {
  %0 = arith.mulf %x, %y : f64
  func.return %0 : f64
}

func.func @loss(%w: tensor<3xf32>, %x: tensor<3xf32>) -> f32 {
  %c = arith.constant 0.0 : f32
  func.return %c : f32
}

// CHECK-LABEL: func.func @requests
func.func @requests(%x: f64, %y: f64, %w: tensor<3xf32>) -> (f64, f64, f64, f32, tensor<3xf32>) {
  // CHECK-NEXT: %{{.*}}, %{{.*}} = irad.grad @f(%x, %y) {wrt = [0, 1]} : (f64, f64) -> (f64, f64)
  %g:2 = irad.grad @f(%x, %y) {wrt = [0, 1]} : (f64, f64) -> (f64, f64)
  // CHECK-NEXT: %v, %gx = irad.value_and_grad @f(%x, %y) {wrt = [0]} : (f64, f64) -> (f64, f64)
  %v, %gx = irad.value_and_grad @f(%x, %y) {wrt = [0]} : (f64, f64) -> (f64, f64)
  // CHECK-NEXT: %gy = irad.grad @f(%x, %y) {wrt = [1]} : (f64, f64) -> f64
  %gy = irad.grad @f(%x, %y) {wrt = [1]} : (f64, f64) -> f64
  // Tensors, and discardable attributes after `wrt`.
  // CHECK-NEXT: %l, %gw = irad.value_and_grad @loss(%w, %w) {wrt = [1], tag = "w", fast} : (tensor<3xf32>, tensor<3xf32>) -> (f32, tensor<3xf32>)
  %l, %gw = irad.value_and_grad @loss(%w, %w) {wrt = [1], tag = "w", fast} : (tensor<3xf32>, tensor<3xf32>) -> (f32, tensor<3xf32>)
  func.return %g#0, %v, %gy, %l, %gw : f64, f64, f64, f32, tensor<3xf32>
}

func.func @h(%x: f64, %n: i64) -> (f64, i64, f64) {
  func.return %x, %n, %x : f64, i64, f64
}

// irad.vjp: the arguments, then one cotangent per float result.
// CHECK-LABEL: func.func @vjp
func.func @vjp(%x: f64, %n: i64, %du: f64, %dv: f64) -> f64 {
  // CHECK-NEXT: %dx = irad.vjp @h(%x, %n, %du, %dv) {wrt = [0]} : (f64, i64, f64, f64) -> f64
  %dx = irad.vjp @h(%x, %n, %du, %dv) {wrt = [0]} : (f64, i64, f64, f64) -> f64
  func.return %dx : f64
}

// A callee that is not in the symbol table (e.g. defined elsewhere) is fine.
// CHECK-LABEL: func.func @external_callee
func.func @external_callee(%x: f32) -> f32 {
  // CHECK-NEXT: %g = irad.grad @elsewhere(%x) {wrt = [0]} : (f32) -> f32
  %g = irad.grad @elsewhere(%x) {wrt = [0]} : (f32) -> f32
  func.return %g : f32
}

// Integer operands are allowed as long as they are not in `wrt`.
// CHECK-LABEL: func.func @mixed
func.func @mixed(%x: f64, %n: i32) -> f64 {
  // CHECK-NEXT: %g = irad.grad @pow(%x, %n) {wrt = [0]} : (f64, i32) -> f64
  %g = irad.grad @pow(%x, %n) {wrt = [0]} : (f64, i32) -> f64
  func.return %g : f64
}
