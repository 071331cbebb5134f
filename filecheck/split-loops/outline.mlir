// RUN: irad-opt %s -p 'irad-split-loops{min_work=4096}' | filecheck %s
// RUN: irad-opt %s -p 'irad-split-loops{min_work=4096}' | %mlir-opt --math-expand-ops=ops=clampf --convert-math-to-funcs --convert-scf-to-cf --convert-math-to-llvm=approximate-log1p=false --convert-math-to-libm --expand-strided-metadata --lower-affine --finalize-memref-to-llvm --convert-arith-to-llvm --convert-index-to-llvm --convert-cf-to-llvm --convert-func-to-llvm --reconcile-unrealized-casts | filecheck %s --check-prefix=LLVM
// REQUIRES: mlir-opt

// A loop nest linalg made parallel (what --convert-linalg-to-parallel-loops
// makes of np.tanh(z + b) over 256x128) moves into a function of a row range
// (irad/backends/native/split_loops.py): its captured memrefs and the f64 go
// into a task, filled where the nest was, which irad_split_rows hands to the
// function once per chunk of rows; constants are cloned into the function.
// The sum over rows (an scf.for outside) and the small nest (16 rows, fewer
// than two aligned chunks) stay.

func.func @f(%z: memref<256x128xf64>, %b: memref<128xf64>, %out: memref<256x128xf64>, %s: f64, %sums: memref<128xf64>, %small: memref<16x128xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  "scf.parallel"(%c0, %c0, %c256, %c128, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %zij = memref.load %z[%i, %j] : memref<256x128xf64>
    %bj = memref.load %b[%j] : memref<128xf64>
    %sum = arith.addf %zij, %bj : f64
    %scaled = arith.mulf %sum, %s : f64
    %t = math.tanh %scaled : f64
    memref.store %t, %out[%i, %j] : memref<256x128xf64>
    "scf.reduce"() : () -> ()
  }) : (index, index, index, index, index, index) -> ()
  scf.for %i = %c0 to %c256 step %c1 {
    "scf.parallel"(%c0, %c128, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%j: index):
      %o = memref.load %out[%i, %j] : memref<256x128xf64>
      %a = memref.load %sums[%j] : memref<128xf64>
      %n = arith.addf %o, %a : f64
      memref.store %n, %sums[%j] : memref<128xf64>
      "scf.reduce"() : () -> ()
    }) : (index, index, index) -> ()
  }
  "scf.parallel"(%c0, %c0, %c16, %c128, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %v = memref.load %small[%i, %j] : memref<16x128xf64>
    %t = math.tanh %v : f64
    memref.store %t, %small[%i, %j] : memref<16x128xf64>
    "scf.reduce"() : () -> ()
  }) : (index, index, index, index, index, index) -> ()
  func.return
}

// CHECK-LABEL: func.func @f(
// CHECK:         %[[TASK:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(!llvm.struct<(!llvm.ptr, !llvm.ptr, i64, !llvm.array<2 x i64>, !llvm.array<2 x i64>)>, !llvm.struct<(!llvm.ptr, !llvm.ptr, i64, !llvm.array<1 x i64>, !llvm.array<1 x i64>)>, f64, !llvm.struct<(!llvm.ptr, !llvm.ptr, i64, !llvm.array<2 x i64>, !llvm.array<2 x i64>)>)>
// CHECK:         builtin.unrealized_conversion_cast %z : memref<256x128xf64> to !llvm.struct
// CHECK:         builtin.unrealized_conversion_cast %b : memref<128xf64> to !llvm.struct
// CHECK:         llvm.store %s, %{{.*}} : f64, !llvm.ptr
// CHECK:         builtin.unrealized_conversion_cast %out : memref<256x128xf64> to !llvm.struct
// CHECK:         %[[FN:.*]] = "func.constant"() <{value = @irad.rows.0}> : () -> ((!llvm.ptr, i64, i64) -> ())
// CHECK:         %[[PTR:.*]] = builtin.unrealized_conversion_cast %[[FN]] : (!llvm.ptr, i64, i64) -> () to !llvm.ptr
// CHECK:         %[[ROWS:.*]] = arith.constant 256 : i64
// CHECK:         llvm.call @irad_split_rows(%[[PTR]], %[[TASK]], %[[ROWS]])
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      "scf.parallel"(%c0, %c128, %c1)
// CHECK:         "scf.parallel"(%c0, %c0, %c16, %c128, %c1, %c1)
// CHECK:       func.func private @irad.rows.0(%[[T:.*]]: !llvm.ptr, %[[LO:.*]]: i64, %[[HI:.*]]: i64) {
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C128:.*]] = arith.constant 128 : index
// CHECK:         %[[Z:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<{{.*}}> to memref<256x128xf64>
// CHECK:         %[[S:.*]] = llvm.load %{{.*}} : !llvm.ptr -> f64
// CHECK:         %[[OUT:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<{{.*}}> to memref<256x128xf64>
// CHECK:         %[[FROM:.*]] = arith.index_cast %[[LO]] : i64 to index
// CHECK:         %[[TO:.*]] = arith.index_cast %[[HI]] : i64 to index
// CHECK:         "scf.parallel"(%[[FROM]], %[[C0]], %[[TO]], %[[C128]], %{{.*}}, %{{.*}})
// CHECK:           memref.load %[[Z]]
// CHECK:           arith.mulf %{{.*}}, %[[S]] : f64
// CHECK:           math.tanh
// CHECK:           memref.store %{{.*}}, %[[OUT]]
// CHECK:       llvm.func @irad_split_rows(!llvm.ptr, !llvm.ptr, i64)

// The module lowers to the LLVM dialect with the native backend's LOWERING:
// LLVM: llvm.mlir.addressof @irad.rows.0 : !llvm.ptr
// LLVM: llvm.call @irad_split_rows(%{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, i64) -> ()
// LLVM: llvm.func @irad.rows.0(%{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64)
