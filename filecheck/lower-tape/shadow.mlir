// RUN: irad-opt %s -p irad-lower-tape | filecheck %s

// Shadow tapes as memref code: a shadow starts as 64 zeroed slots and grows
// like the tape, zero-filling the new slots; shadow_add loads, adds and stores
// each float field (the i64 field carries no cotangent); shadow_read loads the
// record where the shadow grew that far, zeros otherwise; shadow_merge adds the
// second shadow slot by slot and frees it.

func.func @shadow(%end: index, %dx: f64, %dn: i64, %other: memref<?xf64>) -> (f64, i64) {
  %s = irad.shadow_create
  %s2 = irad.shadow_add %s[%end] %dx, %dn : f64, i64
  %x, %n = irad.shadow_read %s2[%end] : f64, i64
  %m = irad.shadow_merge %s2, %other
  irad.tape_free %m
  func.return %x, %n : f64, i64
}

// CHECK-LABEL: func.func @shadow
// create: 64 slots, each set to zero
// CHECK:         %[[C64:.*]] = arith.constant 64 : index
// CHECK-NEXT:    %s = memref.alloc(%[[C64]]) : memref<?xf64>
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %[[C64]] step %{{.*}} {
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:      memref.store %[[ZERO]], %s[%[[I]]] : memref<?xf64>
// add: the record [end - 2, end); grown when end is past the capacity
// CHECK:         %[[BASE:.*]] = arith.subi %end, %{{.*}} : index
// CHECK:         %[[FULL:.*]] = arith.cmpi ugt, %end, %{{.*}} : index
// CHECK-NEXT:    %s2 = scf.if %[[FULL]] -> (memref<?xf64>) {
// CHECK:           } {irad.tape_copy}
// CHECK-NEXT:      memref.dealloc %s : memref<?xf64>
// CHECK-NEXT:      %{{.*}} = arith.constant 1 : index
// CHECK-NEXT:      scf.for
// CHECK-NEXT:        %{{.*}} = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:        memref.store
// CHECK-NEXT:      }
// CHECK:         %[[AT:.*]] = arith.addi %[[BASE]], %{{.*}} : index
// CHECK-NEXT:    %[[OLD:.*]] = memref.load %s2[%[[AT]]] : memref<?xf64>
// CHECK-NEXT:    %[[NEW:.*]] = arith.addf %[[OLD]], %dx : f64
// CHECK-NEXT:    memref.store %[[NEW]], %s2[%[[AT]]] : memref<?xf64>
// CHECK-NOT:     %dn
// read: zeros unless the shadow grew past the record's end
// CHECK:         %[[IN:.*]] = arith.cmpi ule, %end, %{{.*}} : index
// CHECK-NEXT:    %x, %n = scf.if %[[IN]] -> (f64, i64) {
// CHECK:           %[[X:.*]] = memref.load %s2[%{{.*}}] : memref<?xf64>
// CHECK-NEXT:      %[[N0:.*]] = arith.constant 0 : i64
// CHECK-NEXT:      scf.yield %[[X]], %[[N0]] : f64, i64
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[X0:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:      %[[N1:.*]] = arith.constant 0 : i64
// CHECK-NEXT:      scf.yield %[[X0]], %[[N1]] : f64, i64
// merge: grown to the other's size, added slot by slot, the other freed
// CHECK:         %m = scf.if
// CHECK:           scf.yield %s2 : memref<?xf64>
// CHECK-NEXT:    }
// CHECK:         scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[A:.*]] = memref.load %m[%[[K]]] : memref<?xf64>
// CHECK-NEXT:      %[[B:.*]] = memref.load %other[%[[K]]] : memref<?xf64>
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[A]], %[[B]] : f64
// CHECK-NEXT:      memref.store %[[SUM]], %m[%[[K]]] : memref<?xf64>
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.dealloc %other : memref<?xf64>
// CHECK-NEXT:    memref.dealloc %m : memref<?xf64>
