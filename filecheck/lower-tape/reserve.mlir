// RUN: irad-opt %s -p irad-lower-tape | filecheck %s

// irad.tape_reserve: room for %slots more slots after %pos, made as a push
// makes room (a tape too small is replaced by one twice as large, at least
// pos + slots, the first pos slots copied over). A push marked `reserved`
// then only stores: no capacity check, no growth.

func.func @reserve(%tape: memref<?xf64>, %pos: index, %slots: index, %x: f64, %n: i64) -> (memref<?xf64>, index) {
  %room = irad.tape_reserve %tape[%pos] %slots
  %t, %end = irad.tape_push %room[%pos] reserved %x, %n : f64, i64
  func.return %t, %end : memref<?xf64>, index
}

// CHECK:       func.func @reserve(%tape: memref<?xf64>, %pos: index, %slots: index, %x: f64, %n: i64) -> (memref<?xf64>, index) {
// CHECK-NEXT:    %[[NEED:.*]] = arith.addi %pos, %slots : index
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[CAP:.*]] = memref.dim %tape, %[[C0]] : memref<?xf64>
// CHECK-NEXT:    %[[FULL:.*]] = arith.cmpi ugt, %[[NEED]], %[[CAP]] : index
// CHECK-NEXT:    %room = scf.if %[[FULL]] -> (memref<?xf64>) {
// CHECK-NEXT:      %[[TWICE:.*]] = arith.addi %[[CAP]], %[[CAP]] : index
// CHECK-NEXT:      %[[SIZE:.*]] = arith.maxsi %[[TWICE]], %[[NEED]] : index
// CHECK-NEXT:      %[[NEW:.*]] = memref.alloc(%[[SIZE]]) : memref<?xf64>
// CHECK:           scf.for
// CHECK:           memref.dealloc %tape : memref<?xf64>
// CHECK-NEXT:      scf.yield %[[NEW]] : memref<?xf64>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      scf.yield %tape : memref<?xf64>
// CHECK-NEXT:    }
// The reserved push: its end, then the stores into %room, nothing else. The
// i64 takes two slots, n // 2**32 and n - that * 2**32, so it comes back exact.
// CHECK-NEXT:    %[[C3:.*]] = arith.constant 3 : index
// CHECK-NEXT:    %end = arith.addi %pos, %[[C3]] : index
// CHECK-NOT:     scf.if
// CHECK-NOT:     memref.dim
// CHECK:         memref.store %x, %room[%{{.*}}] : memref<?xf64>
// CHECK:         %[[SCALE:.*]] = arith.constant 4294967296 : i64
// CHECK-NEXT:    %[[HIGH:.*]] = arith.floordivsi %n, %[[SCALE]] : i64
// CHECK-NEXT:    %[[TOP:.*]] = arith.muli %[[HIGH]], %[[SCALE]] : i64
// CHECK-NEXT:    %[[LOW:.*]] = arith.subi %n, %[[TOP]] : i64
// CHECK-NEXT:    %[[HF:.*]] = arith.sitofp %[[HIGH]] : i64 to f64
// CHECK-NEXT:    %[[LF:.*]] = arith.sitofp %[[LOW]] : i64 to f64
// CHECK:         memref.store %[[HF]], %room[%{{.*}}] : memref<?xf64>
// CHECK:         memref.store %[[LF]], %room[%{{.*}}] : memref<?xf64>
// CHECK-NEXT:    func.return %room, %end : memref<?xf64>, index
