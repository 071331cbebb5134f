// RUN: irad-opt %s -p irad-lower-tape | filecheck %s

// irad.tape_create: a buffer of 64 slots, and position 0; irad.tape_free: its dealloc.

func.func @create_free() {
  %tape, %pos = irad.tape_create
  irad.tape_free %tape
  func.return
}

// CHECK:       func.func @create_free() {
// CHECK-NEXT:    %[[C64:.*]] = arith.constant 64 : index
// CHECK-NEXT:    %[[TAPE:.*]] = memref.alloc(%[[C64]]) : memref<?xf64>
// CHECK-NEXT:    %{{.*}} = arith.constant 0 : index
// CHECK-NEXT:    memref.dealloc %[[TAPE]] : memref<?xf64>
// CHECK-NEXT:    func.return
