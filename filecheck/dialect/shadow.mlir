// The shadow tape ops (the tape ops' adjoints) print and parse in their custom
// syntax, and in the generic one; a record's types are checked as the tape's.
// RUN: irad-opt %s | filecheck %s
// RUN: irad-opt %s --print-op-generic | irad-opt | filecheck %s
// RUN: irad-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

func.func @shadow(%end: index, %dx: f64, %dn: i64, %da: tensor<3xf64>, %other: memref<?xf64>) -> f64 {
  %s = irad.shadow_create
  %s2 = irad.shadow_add %s[%end] %dx, %dn, %da : f64, i64, tensor<3xf64>
  %x, %n, %a = irad.shadow_read %s2[%end] : f64, i64, tensor<3xf64>
  %m = irad.shadow_merge %s2, %other
  irad.tape_free %m
  func.return %x : f64
}

// CHECK:      %s = irad.shadow_create
// CHECK-NEXT: %s2 = irad.shadow_add %s[%end] %dx, %dn, %da : f64, i64, tensor<3xf64>
// CHECK-NEXT: %x, %n, %a = irad.shadow_read %s2[%end] : f64, i64, tensor<3xf64>
// CHECK-NEXT: %m = irad.shadow_merge %s2, %other
// CHECK-NEXT: irad.tape_free %m

// GENERIC:      %s = "irad.shadow_create"() : () -> memref<?xf64>
// GENERIC-NEXT: %s2 = "irad.shadow_add"(%s, %end, %dx, %dn, %da) : (memref<?xf64>, index, f64, i64, tensor<3xf64>) -> memref<?xf64>
// GENERIC-NEXT: %x, %n, %a = "irad.shadow_read"(%s2, %end) : (memref<?xf64>, index) -> (f64, i64, tensor<3xf64>)
// GENERIC-NEXT: %m = "irad.shadow_merge"(%s2, %other) : (memref<?xf64>, memref<?xf64>) -> memref<?xf64>
