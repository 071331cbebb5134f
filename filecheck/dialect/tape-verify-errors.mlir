// Verifier errors of the tape ops.
// RUN: irad-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @f(%t: memref<?xf64>, %p: index, %m: memref<3xf64>) {
  %t2, %e = irad.tape_push %t[%p] %m : memref<3xf64>
  func.return
}
// CHECK: 'irad.tape_push' op cannot record value #0 of type memref<3xf64> (expected f64, f32, an integer, index, or a tensor of them of static shape)

// -----

func.func @f(%t: memref<?xf64>, %p: index, %a: tensor<?xf64>) {
  %t2, %e = irad.tape_push %t[%p] %a : tensor<?xf64>
  func.return
}
// CHECK: 'irad.tape_push' op cannot record value #0 of type tensor<?xf64>

// -----

func.func @f(%t: memref<?xf64>, %p: index) {
  %t2, %e = "irad.tape_push"(%t, %p) : (memref<?xf64>, index) -> (memref<?xf64>, index)
  func.return
}
// CHECK: 'irad.tape_push' op expects a non-empty record

// -----

func.func @f(%t: memref<?xf64>, %e: index) {
  %v = irad.tape_read %t[%e] : tensor<2xcomplex<f64>>
  func.return
}
// CHECK: 'irad.tape_read' op cannot record value #0 of type tensor<2xcomplex<f64>>

// -----

func.func @f(%t: memref<4xf64>, %p: index, %x: f64) {
  %t2, %e = "irad.tape_push"(%t, %p, %x) : (memref<4xf64>, index, f64) -> (memref<?xf64>, index)
  func.return
}
// CHECK: Expected attribute memref<?xf64> but got memref<4xf64>
