// RUN: irad-opt %s -p irad-lower-tape | filecheck %s

// irad.tape_read: the record that ends at %end starts at %end minus its slot
// count; each field is loaded and converted back from f64.

func.func @read(%tape: memref<?xf64>, %end: index) -> (f64, f32, i32, index, i1) {
  %x, %y, %n, %k, %b = irad.tape_read %tape[%end] : f64, f32, i32, index, i1
  func.return %x, %y, %n, %k, %b : f64, f32, i32, index, i1
}

// CHECK:       func.func @read(%tape: memref<?xf64>, %end: index) -> (f64, f32, i32, index, i1) {
// CHECK-NEXT:    %[[C5:.*]] = arith.constant 5 : index
// CHECK-NEXT:    %[[BASE:.*]] = arith.subi %end, %[[C5]] : index
// CHECK-NEXT:    %[[J0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[AT0:.*]] = arith.addi %[[BASE]], %[[J0]] : index
// CHECK-NEXT:    %[[X:.*]] = memref.load %tape[%[[AT0]]] : memref<?xf64>
// CHECK-NEXT:    %[[J1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[AT1:.*]] = arith.addi %[[BASE]], %[[J1]] : index
// CHECK-NEXT:    %[[YF:.*]] = memref.load %tape[%[[AT1]]] : memref<?xf64>
// CHECK-NEXT:    %[[Y:.*]] = arith.truncf %[[YF]] : f64 to f32
// CHECK:         %[[NF:.*]] = memref.load %tape
// CHECK-NEXT:    %[[N64:.*]] = arith.fptosi %[[NF]] : f64 to i64
// CHECK-NEXT:    %[[N:.*]] = arith.trunci %[[N64]] : i64 to i32
// CHECK:         %[[KF:.*]] = memref.load %tape
// CHECK-NEXT:    %[[K64:.*]] = arith.fptosi %[[KF]] : f64 to i64
// CHECK-NEXT:    %[[K:.*]] = arith.index_cast %[[K64]] : i64 to index
// CHECK:         %[[BF:.*]] = memref.load %tape
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:    %[[B:.*]] = arith.cmpf une, %[[BF]], %[[ZERO]] : f64
// CHECK-NEXT:    func.return %[[X]], %[[Y]], %[[N]], %[[K]], %[[B]] : f64, f32, i32, index, i1

// A tensor is copied out of a subview of the tape into a buffer of its own.
func.func @read_tensor(%tape: memref<?xf64>, %end: index) -> tensor<2x3xf32> {
  %a = irad.tape_read %tape[%end] : tensor<2x3xf32>
  func.return %a : tensor<2x3xf32>
}

// CHECK:       func.func @read_tensor(
// CHECK-NEXT:    %[[C6:.*]] = arith.constant 6 : index
// CHECK-NEXT:    %[[BASE:.*]] = arith.subi %end, %[[C6]] : index
// CHECK-NEXT:    %[[J:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[AT:.*]] = arith.addi %[[BASE]], %[[J]] : index
// CHECK-NEXT:    %[[BUF:.*]] = memref.alloc() : memref<6xf64>
// CHECK-NEXT:    %[[VIEW:.*]] = memref.subview %tape[%[[AT]]] [6] [1] : memref<?xf64> to memref<6xf64, strided<[1], offset: ?>>
// CHECK-NEXT:    "memref.copy"(%[[VIEW]], %[[BUF]]) : (memref<6xf64, strided<[1], offset: ?>>, memref<6xf64>) -> ()
// CHECK-NEXT:    %[[FLAT:.*]] = bufferization.to_tensor %[[BUF]] restrict : memref<6xf64> to tensor<6xf64>
// CHECK:         %[[RAW:.*]] = tensor.reshape %[[FLAT]](%{{.*}}) : (tensor<6xf64>, tensor<2xi64>) -> tensor<2x3xf64>
// CHECK-NEXT:    %[[A:.*]] = arith.truncf %[[RAW]] : tensor<2x3xf64> to tensor<2x3xf32>
// CHECK-NEXT:    func.return %[[A]] : tensor<2x3xf32>
