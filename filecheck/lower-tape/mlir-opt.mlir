// REQUIRES: mlir-opt
// RUN: irad-opt %s -p irad-lower-tape | %mlir-opt | filecheck %s

// What irad-lower-tape leaves is standard MLIR: upstream mlir-opt parses it.

func.func @roundtrip(%x: f64, %n: i64, %a: tensor<3xi32>) -> (f64, i64, tensor<3xi32>) {
  %tape, %pos = irad.tape_create
  %t, %end = irad.tape_push %tape[%pos] %x, %n, %a : f64, i64, tensor<3xi32>
  %x2, %n2, %a2 = irad.tape_read %t[%end] : f64, i64, tensor<3xi32>
  irad.tape_free %t
  func.return %x2, %n2, %a2 : f64, i64, tensor<3xi32>
}

// CHECK-LABEL: func.func @roundtrip
// CHECK:         memref.alloc
// CHECK:         memref.store
// CHECK:         memref.copy
// CHECK:         memref.load
// CHECK:         memref.dealloc
// CHECK-NOT:     irad.
