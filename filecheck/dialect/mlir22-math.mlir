// The ops of MLIR 22's math and arith dialects that xDSL 0.75 lacks
// (irad/ir/mlir_ops.py) parse and print in MLIR's syntax, in irad-opt and in
// stock xdsl-opt (irad's universe adds them to xDSL's math and arith dialects).
// RUN: irad-opt %s | filecheck %s
// RUN: xdsl-opt %s | filecheck %s
// RUN: xdsl-opt %s --print-op-generic | xdsl-opt | filecheck %s

// CHECK-LABEL: func.func @ops
func.func @ops(%x: f64, %lo: f64, %hi: f64, %t: tensor<3xf64>) {
  // CHECK-NEXT: %e = math.erfc %x : f64
  %e = math.erfc %x : f64
  // CHECK-NEXT: %s, %c = math.sincos %x : f64
  %s, %c = math.sincos %x : f64
  // CHECK-NEXT: %st, %ct = math.sincos %t fastmath<fast> : tensor<3xf64>
  %st, %ct = math.sincos %t fastmath<fast> : tensor<3xf64>
  // CHECK-NEXT: %y = math.clampf %x to [%lo, %hi] : f64
  %y = math.clampf %x to [%lo, %hi] : f64
  // CHECK-NEXT: %f = math.isfinite %x : f64
  %f = math.isfinite %x : f64
  // CHECK-NEXT: %i = math.isinf %x {fastmath = #arith.fastmath<nnan>} : f64
  %i = math.isinf %x {fastmath = #arith.fastmath<nnan>} : f64
  // CHECK-NEXT: %n = math.isnan %t : tensor<3xf64>
  %n = math.isnan %t : tensor<3xf64>
  // CHECK-NEXT: %m = math.isnormal %x : f64
  %m = math.isnormal %x : f64
  // CHECK-NEXT: %r = arith.remf %x, %lo : f64
  %r = arith.remf %x, %lo : f64
  func.return
}
