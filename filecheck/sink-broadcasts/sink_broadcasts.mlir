// RUN: irad-opt %s -p irad-sink-broadcasts | filecheck %s

// An elementwise op whose operands are all broadcasts adding the same
// dimensions to operands of one type is computed before broadcasting (as the
// adjoint of a max leaves `cotangent / count of ties`): one division on 8
// elements, one broadcast. No DCE runs: the old broadcasts stay until one does.

// CHECK-LABEL: func.func @quotient(%a: tensor<8xf64>, %b: tensor<8xf64>) -> tensor<8x3xf64> {
// CHECK:         %[[Q:.*]] = arith.divf %a, %b : tensor<8xf64>
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<8x3xf64>
// CHECK-NEXT:    %[[R:.*]] = linalg.broadcast ins(%[[Q]]:tensor<8xf64>) outs(%[[E]]:tensor<8x3xf64>) dimensions = [1]
// CHECK-NEXT:    func.return %[[R]] : tensor<8x3xf64>
func.func @quotient(%a: tensor<8xf64>, %b: tensor<8xf64>) -> tensor<8x3xf64> {
  %e = tensor.empty() : tensor<8x3xf64>
  %ba = linalg.broadcast ins(%a : tensor<8xf64>) outs(%e : tensor<8x3xf64>) dimensions = [1]
  %bb = linalg.broadcast ins(%b : tensor<8xf64>) outs(%e : tensor<8x3xf64>) dimensions = [1]
  %q = arith.divf %ba, %bb : tensor<8x3xf64>
  func.return %q : tensor<8x3xf64>
}

// One operand: exp once per element of the smaller tensor; fastmath flags kept.
// Then its negation sinks too (the walk reaches it after the exp).
// CHECK-LABEL: func.func @unary(%a: tensor<3xf32>) -> tensor<2x3xf32> {
// CHECK:         %[[X:.*]] = math.exp %a fastmath<fast> : tensor<3xf32>
// CHECK:         %[[B:.*]] = linalg.broadcast ins(%[[X]]:tensor<3xf32>) outs(%{{.*}}:tensor<2x3xf32>) dimensions = [0]
// CHECK:         %[[N:.*]] = arith.negf %[[X]] : tensor<3xf32>
// CHECK:         %[[R:.*]] = linalg.broadcast ins(%[[N]]:tensor<3xf32>) outs(%{{.*}}:tensor<2x3xf32>) dimensions = [0]
// CHECK-NEXT:    func.return %[[R]] : tensor<2x3xf32>
func.func @unary(%a: tensor<3xf32>) -> tensor<2x3xf32> {
  %e = tensor.empty() : tensor<2x3xf32>
  %ba = linalg.broadcast ins(%a : tensor<3xf32>) outs(%e : tensor<2x3xf32>) dimensions = [0]
  %x = math.exp %ba fastmath<fast> : tensor<2x3xf32>
  %n = arith.negf %x : tensor<2x3xf32>
  func.return %n : tensor<2x3xf32>
}

// Left alone: broadcasts along different dimensions, and an operand that is
// not a broadcast.
// CHECK-LABEL: func.func @kept(
// CHECK:         arith.addf %ba, %bb : tensor<3x3xf64>
// CHECK:         arith.mulf %ba, %x : tensor<3x3xf64>
func.func @kept(%a: tensor<3xf64>, %x: tensor<3x3xf64>) -> (tensor<3x3xf64>, tensor<3x3xf64>) {
  %e = tensor.empty() : tensor<3x3xf64>
  %ba = linalg.broadcast ins(%a : tensor<3xf64>) outs(%e : tensor<3x3xf64>) dimensions = [0]
  %bb = linalg.broadcast ins(%a : tensor<3xf64>) outs(%e : tensor<3x3xf64>) dimensions = [1]
  %s = arith.addf %ba, %bb : tensor<3x3xf64>
  %p = arith.mulf %ba, %x : tensor<3x3xf64>
  func.return %s, %p : tensor<3x3xf64>, tensor<3x3xf64>
}
