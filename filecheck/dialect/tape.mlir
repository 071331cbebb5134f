// The tape ops print and parse in their custom syntax, and in the generic one.
// RUN: irad-opt %s | filecheck %s
// RUN: irad-opt %s --print-op-generic | irad-opt | filecheck %s
// RUN: irad-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

func.func @tape(%x: f64, %n: i64, %a: tensor<3xf32>) -> f64 {
  %tape, %pos = irad.tape_create
  %t, %end = irad.tape_push %tape[%pos] %x, %n, %a : f64, i64, tensor<3xf32>
  %x2, %n2, %a2 = irad.tape_read %t[%end] : f64, i64, tensor<3xf32>
  irad.tape_free %t
  func.return %x2 : f64
}

// CHECK:      %tape, %pos = irad.tape_create
// CHECK-NEXT: %t, %end = irad.tape_push %tape[%pos] %x, %n, %a : f64, i64, tensor<3xf32>
// CHECK-NEXT: %x2, %n2, %a2 = irad.tape_read %t[%end] : f64, i64, tensor<3xf32>
// CHECK-NEXT: irad.tape_free %t

// GENERIC:      %tape, %pos = "irad.tape_create"() : () -> (memref<?xf64>, index)
// GENERIC-NEXT: %t, %end = "irad.tape_push"(%tape, %pos, %x, %n, %a) : (memref<?xf64>, index, f64, i64, tensor<3xf32>) -> (memref<?xf64>, index)
// GENERIC-NEXT: %x2, %n2, %a2 = "irad.tape_read"(%t, %end) : (memref<?xf64>, index) -> (f64, i64, tensor<3xf32>)
// GENERIC-NEXT: "irad.tape_free"(%t) : (memref<?xf64>) -> ()
