// RUN: irad-opt %s -p irad-optimize | %mlir-opt | filecheck %s
// REQUIRES: mlir-opt

// What irad-optimize emits (folded special values, negf, swapped addf/subf,
// i1 constants, f32) parses and verifies in upstream MLIR.

// CHECK-LABEL: func.func @emitted(%{{.*}}: f64, %{{.*}}: f64, %{{.*}}: f32)
// CHECK-DAG:     arith.constant 0x7FF0000000000000 : f64
// CHECK-DAG:     arith.constant 0xFFF0000000000000 : f64
// CHECK-DAG:     arith.constant 0x{{[7F]}}FF8000000000000 : f64
// CHECK-DAG:     arith.constant true
// CHECK-DAG:     arith.negf
// CHECK-DAG:     arith.subf
// CHECK-DAG:     arith.constant 1.41421354 : f32
// CHECK:         return
func.func @emitted(%x: f64, %y: f64, %z: f32) -> (f64, f64, f64, i1, f64, f64, f32) {
  %big = arith.constant 1000.0 : f64
  %zero = arith.constant 0.0 : f64
  %two = arith.constant 2.0 : f64
  %m1 = arith.constant -1.0 : f64
  %inf = math.exp %big : f64
  %ninf = math.log %zero : f64
  %nan = math.sqrt %m1 : f64
  %t = arith.cmpf olt, %ninf, %inf : f64
  %n = arith.mulf %x, %m1 : f64
  %ny = arith.negf %y : f64
  %d = arith.addf %x, %ny : f64
  %two32 = arith.constant 2.0 : f32
  %s = math.sqrt %two32 : f32
  func.return %inf, %ninf, %nan, %t, %n, %d, %s : f64, f64, f64, i1, f64, f64, f32
}
