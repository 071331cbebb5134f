// The tape ops print and parse in their custom syntax, and in the generic one.
// RUN: irad-opt %s | filecheck %s
// RUN: irad-opt %s --print-op-generic | irad-opt | filecheck %s
// RUN: irad-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

func.func @tape(%x: f64, %n: i64, %a: tensor<3xf32>) -> f64 {
  %tape, %pos = irad.tape_create
  %t, %end = irad.tape_push %tape[%pos] %x, %n, %a : f64, i64, tensor<3xf32>
  %x2, %n2, %a2 = irad.tape_read %t[%end] : f64, i64, tensor<3xf32>
  %r = irad.tape_reserve %t[%end] %end
  %t3, %end3 = irad.tape_push %r[%end] reserved %x : f64
  irad.tape_free %t3
  func.return %x2 : f64
}

// CHECK:      %tape, %pos = irad.tape_create
// CHECK-NEXT: %t, %end = irad.tape_push %tape[%pos] %x, %n, %a : f64, i64, tensor<3xf32>
// CHECK-NEXT: %x2, %n2, %a2 = irad.tape_read %t[%end] : f64, i64, tensor<3xf32>
// CHECK-NEXT: %r = irad.tape_reserve %t[%end] %end
// CHECK-NEXT: %t3, %end3 = irad.tape_push %r[%end] reserved %x : f64
// CHECK-NEXT: irad.tape_free %t3

// GENERIC:      %tape, %pos = "irad.tape_create"() : () -> (memref<?xf64>, index)
// GENERIC-NEXT: %t, %end = "irad.tape_push"(%tape, %pos, %x, %n, %a) : (memref<?xf64>, index, f64, i64, tensor<3xf32>) -> (memref<?xf64>, index)
// GENERIC-NEXT: %x2, %n2, %a2 = "irad.tape_read"(%t, %end) : (memref<?xf64>, index) -> (f64, i64, tensor<3xf32>)
// GENERIC-NEXT: %r = "irad.tape_reserve"(%t, %end, %end) : (memref<?xf64>, index, index) -> memref<?xf64>
// GENERIC-NEXT: %t3, %end3 = "irad.tape_push"(%r, %end, %x) <{reserved}> : (memref<?xf64>, index, f64) -> (memref<?xf64>, index)
// GENERIC-NEXT: "irad.tape_free"(%t3) : (memref<?xf64>) -> ()
