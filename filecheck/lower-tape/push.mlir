// RUN: irad-opt %s -p irad-lower-tape | filecheck %s

// irad.tape_push: the record's end position; a tape too small for it is
// replaced by one twice as large (at least `end` slots), the first `pos` slots
// copied over; then each value is stored as f64 at the next slots.

func.func @push(%tape: memref<?xf64>, %pos: index, %x: f64, %y: f32, %n: i32, %k: index, %b: i1) -> (memref<?xf64>, index) {
  %t, %end = irad.tape_push %tape[%pos] %x, %y, %n, %k, %b : f64, f32, i32, index, i1
  func.return %t, %end : memref<?xf64>, index
}

// CHECK:       func.func @push(%tape: memref<?xf64>, %pos: index, %x: f64, %y: f32, %n: i32, %k: index, %b: i1) -> (memref<?xf64>, index) {
// CHECK-NEXT:    %[[C5:.*]] = arith.constant 5 : index
// CHECK-NEXT:    %[[END:.*]] = arith.addi %pos, %[[C5]] : index
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[CAP:.*]] = memref.dim %tape, %[[C0]] : memref<?xf64>
// CHECK-NEXT:    %[[FULL:.*]] = arith.cmpi ugt, %[[END]], %[[CAP]] : index
// CHECK-NEXT:    %[[T:.*]] = scf.if %[[FULL]] -> (memref<?xf64>) {
// CHECK-NEXT:      %[[TWICE:.*]] = arith.addi %[[CAP]], %[[CAP]] : index
// CHECK-NEXT:      %[[SIZE:.*]] = arith.maxsi %[[TWICE]], %[[END]] : index
// CHECK-NEXT:      %[[NEW:.*]] = memref.alloc(%[[SIZE]]) : memref<?xf64>
// CHECK-NEXT:      %[[LO:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:      scf.for %[[K:.*]] = %[[LO]] to %pos step %[[ONE]] {
// CHECK-NEXT:        %[[V:.*]] = memref.load %tape[%[[K]]] : memref<?xf64>
// CHECK-NEXT:        memref.store %[[V]], %[[NEW]][%[[K]]] : memref<?xf64>
// CHECK-NEXT:      }
// CHECK-NEXT:      memref.dealloc %tape : memref<?xf64>
// CHECK-NEXT:      scf.yield %[[NEW]] : memref<?xf64>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      scf.yield %tape : memref<?xf64>
// CHECK-NEXT:    }
// f64 as it is
// CHECK-NEXT:    %[[J0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[AT0:.*]] = arith.addi %pos, %[[J0]] : index
// CHECK-NEXT:    memref.store %x, %[[T]][%[[AT0]]] : memref<?xf64>
// f32 widened
// CHECK:         %[[AT1:.*]] = arith.addi %pos,
// CHECK-NEXT:    %[[WIDE:.*]] = arith.extf %y : f32 to f64
// CHECK-NEXT:    memref.store %[[WIDE]], %[[T]][%[[AT1]]] : memref<?xf64>
// integers and indices as signed integers
// CHECK:         %[[AT2:.*]] = arith.addi %pos,
// CHECK-NEXT:    %[[NF:.*]] = arith.sitofp %n : i32 to f64
// CHECK-NEXT:    memref.store %[[NF]], %[[T]][%[[AT2]]] : memref<?xf64>
// CHECK:         %[[AT3:.*]] = arith.addi %pos,
// CHECK-NEXT:    %[[KI:.*]] = arith.index_cast %k : index to i64
// CHECK-NEXT:    %[[KF:.*]] = arith.sitofp %[[KI]] : i64 to f64
// CHECK-NEXT:    memref.store %[[KF]], %[[T]][%[[AT3]]] : memref<?xf64>
// i1 as 0 or 1
// CHECK:         %[[AT4:.*]] = arith.addi %pos,
// CHECK-NEXT:    %[[BF:.*]] = arith.uitofp %b : i1 to f64
// CHECK-NEXT:    memref.store %[[BF]], %[[T]][%[[AT4]]] : memref<?xf64>
// CHECK-NEXT:    func.return %[[T]], %[[END]] : memref<?xf64>, index

// A tensor takes one slot per element: materialised into a subview of the tape.
func.func @push_tensor(%tape: memref<?xf64>, %pos: index, %a: tensor<2x3xf64>) -> (memref<?xf64>, index) {
  %t, %end = irad.tape_push %tape[%pos] %a : tensor<2x3xf64>
  func.return %t, %end : memref<?xf64>, index
}

// CHECK:       func.func @push_tensor(
// CHECK-NEXT:    %[[C6:.*]] = arith.constant 6 : index
// CHECK-NEXT:    %[[END:.*]] = arith.addi %pos, %[[C6]] : index
// CHECK:         %[[T:.*]] = scf.if
// CHECK:         %[[AT:.*]] = arith.addi %pos,
// CHECK:         %[[FLAT:.*]] = tensor.reshape %a(%{{.*}}) : (tensor<2x3xf64>, tensor<1xi64>) -> tensor<6xf64>
// CHECK-NEXT:    %[[BUF:.*]] = memref.alloc() : memref<6xf64>
// CHECK-NEXT:    bufferization.materialize_in_destination %[[FLAT]] in restrict writable %[[BUF]] : (tensor<6xf64>, memref<6xf64>) -> ()
// CHECK-NEXT:    %[[VIEW:.*]] = memref.subview %[[T]][%[[AT]]] [6] [1] : memref<?xf64> to memref<6xf64, strided<[1], offset: ?>>
// CHECK-NEXT:    "memref.copy"(%[[BUF]], %[[VIEW]]) : (memref<6xf64>, memref<6xf64, strided<[1], offset: ?>>) -> ()
// CHECK-NEXT:    func.return %[[T]], %[[END]] : memref<?xf64>, index
