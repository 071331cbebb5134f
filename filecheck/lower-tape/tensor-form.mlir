// REQUIRES: mlir-opt
// RUN: irad-opt %s -p 'irad-lower-tape{form=tensor}' | filecheck %s
// RUN: irad-opt %s -p 'irad-lower-tape{form=tensor}' | %mlir-opt > /dev/null

// irad-lower-tape{form=tensor} (for IREE): the tape is a tensor<?xf64> value.
// A push grows it with tensor.empty + insert_slice and stores each slot with
// tensor.insert (an i64 as two exact floats, v // 2^32 and v % 2^32, as in
// a memref tape, so a Hessian can differentiate the tape), a tensor record with
// insert_slice; a read extracts; a free disappears; every tape value,
// function types included, becomes tensor<?xf64>.

func.func @roundtrip(%x: f64, %n: i64, %a: tensor<3xf64>) -> (f64, i64, tensor<3xf64>) {
  %tape, %pos = irad.tape_create
  %t, %end = irad.tape_push %tape[%pos] %x, %n, %a : f64, i64, tensor<3xf64>
  %x2, %n2, %a2 = irad.tape_read %t[%end] : f64, i64, tensor<3xf64>
  irad.tape_free %t
  func.return %x2, %n2, %a2 : f64, i64, tensor<3xf64>
}

// CHECK-LABEL: func.func @roundtrip
// CHECK:         %[[TAPE:.*]] = tensor.empty(%{{.*}}) : tensor<?xf64>
// CHECK:         %[[GROWN:.*]] = scf.if %{{.*}} -> (tensor<?xf64>) {
// CHECK:           %[[OLD:.*]] = tensor.extract_slice %[[TAPE]][0] [%{{.*}}] [1] : tensor<?xf64> to tensor<?xf64>
// CHECK:           %[[NEW:.*]] = tensor.empty(%{{.*}}) : tensor<?xf64>
// CHECK:           tensor.insert_slice %[[OLD]] into %[[NEW]][0] [%{{.*}}] [1] : tensor<?xf64> into tensor<?xf64>
// CHECK:         %[[T1:.*]] = tensor.insert %x into %[[GROWN]][%{{.*}}] : tensor<?xf64>
// CHECK:         %[[HIGH:.*]] = arith.floordivsi %n, %{{.*}} : i64
// CHECK:         %[[HF:.*]] = arith.sitofp %[[HIGH]] : i64 to f64
// CHECK:         %[[LF:.*]] = arith.sitofp %{{.*}} : i64 to f64
// CHECK:         %[[T2:.*]] = tensor.insert %[[HF]] into %[[T1]][%{{.*}}] : tensor<?xf64>
// CHECK:         %[[T3:.*]] = tensor.insert %[[LF]] into %[[T2]][%{{.*}}] : tensor<?xf64>
// CHECK:         %[[T:.*]] = tensor.insert_slice %a into %[[T3]][%{{.*}}] [3] [1] : tensor<3xf64> into tensor<?xf64>
// CHECK:         %x2 = tensor.extract %[[T]][%{{.*}}] : tensor<?xf64>
// CHECK:         %[[RH:.*]] = tensor.extract %[[T]][%{{.*}}] : tensor<?xf64>
// CHECK:         %[[RL:.*]] = tensor.extract %[[T]][%{{.*}}] : tensor<?xf64>
// CHECK:         %[[H:.*]] = arith.fptosi %[[RH]] : f64 to i64
// CHECK:         %[[L:.*]] = arith.fptosi %[[RL]] : f64 to i64
// CHECK:         %n2 = arith.addi %{{.*}}, %[[L]] : i64
// CHECK:         %a2 = tensor.extract_slice %[[T]][%{{.*}}] [3] [1] : tensor<?xf64> to tensor<3xf64>
// CHECK-NOT:     memref
// CHECK-NOT:     irad.
// CHECK:         func.return %x2, %n2, %a2

func.func @threaded(%tape: memref<?xf64>, %pos: index, %s: index) -> memref<?xf64> {
  %t = irad.tape_reserve %tape[%pos] %s
  func.return %t : memref<?xf64>
}

// CHECK-LABEL: func.func @threaded(%tape: tensor<?xf64>, %pos: index, %s: index) -> tensor<?xf64>
// CHECK:         scf.if %{{.*}} -> (tensor<?xf64>)
