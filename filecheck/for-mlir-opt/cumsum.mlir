// irad-for-mlir-opt: irad.cumsum, and the reversed cumsum that is its adjoint,
// become one scf.for nest each (irad/ir/scan.py): y = x, then each element plus
// its neighbour before it on the axis (after it, reversed); the axis's loop sits
// at its place in memory order. mlir-opt 22 takes the result to the LLVM dialect
// with the native backend's pipeline (irad.backends.native.compile:
// BUFFERIZATION, then LOWERING).
// RUN: irad-opt %s -p irad-for-mlir-opt | filecheck %s
// RUN: xdsl-opt %s -p irad-for-mlir-opt | filecheck %s
// REQUIRES: mlir-opt
// RUN: irad-opt %s -p irad-for-mlir-opt \
// RUN: | %mlir-opt --convert-elementwise-to-linalg --linalg-generalize-named-ops --linalg-fuse-elementwise-ops --eliminate-empty-tensors --canonicalize --cse "--one-shot-bufferize=bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map allow-return-allocs-from-loops" --buffer-deallocation-pipeline=private-function-dynamic-ownership=true --convert-bufferization-to-memref --convert-linalg-to-loops --math-expand-ops=ops=clampf --convert-math-to-funcs --convert-scf-to-cf --convert-math-to-llvm=approximate-log1p=false --convert-math-to-libm --expand-strided-metadata --lower-affine --finalize-memref-to-llvm --convert-arith-to-llvm --convert-index-to-llvm --convert-cf-to-llvm --convert-func-to-llvm --reconcile-unrealized-casts \
// RUN: | filecheck %s --check-prefix=LLVM

// CHECK-NOT: irad.
// LLVM-NOT: {{scf|tensor|memref}}.
// LLVM: llvm.func @gradient

// y = cumsum(x, axis 1): rows outer, the axis from 1
func.func @rows(%x: tensor<3x4xf64>) -> tensor<3x4xf64> {
  %y = irad.cumsum %x {axis = 1 : i64} : tensor<3x4xf64>
  func.return %y : tensor<3x4xf64>
}
// CHECK-LABEL: func.func @rows
// CHECK:         %[[ONE:.*]] = arith.constant 1 : index
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %[[ONE]] iter_args(%[[A:.*]] = %x)
// CHECK:           scf.for %[[K:.*]] = %[[ONE]] to %{{.*}} step %[[ONE]] iter_args(%[[B:.*]] = %[[A]])
// CHECK:             %[[P:.*]] = arith.subi %[[K]], %[[ONE]] : index
// CHECK:             %[[L:.*]] = tensor.extract %[[B]][%[[I]], %[[P]]] : tensor<3x4xf64>
// CHECK:             %[[R:.*]] = tensor.extract %[[B]][%[[I]], %[[K]]] : tensor<3x4xf64>
// CHECK:             %[[S:.*]] = arith.addf %[[L]], %[[R]] : f64
// CHECK:             tensor.insert %[[S]] into %[[B]][%[[I]], %[[K]]] : tensor<3x4xf64>

// the gradient of sum(w * cumsum(x)): the reversed cumsum of w, k = n-2 .. 0
func.func @loss(%x: tensor<5xf64>, %w: tensor<5xf64>) -> f64 {
  %y = irad.cumsum %x {axis = 0 : i64} : tensor<5xf64>
  %p = arith.mulf %w, %y : tensor<5xf64>
  %init = arith.constant dense<0.0> : tensor<f64>
  %s = linalg.reduce ins(%p : tensor<5xf64>) outs(%init : tensor<f64>) dimensions = [0]
    (%a: f64, %b: f64) {
      %t = arith.addf %a, %b : f64
      linalg.yield %t : f64
    }
  %r = tensor.extract %s[] : tensor<f64>
  func.return %r : f64
}
func.func @gradient(%x: tensor<5xf64>, %w: tensor<5xf64>) -> tensor<5xf64> {
  %g = irad.grad @loss(%x, %w) {wrt = [0]} : (tensor<5xf64>, tensor<5xf64>) -> tensor<5xf64>
  func.return %g : tensor<5xf64>
}
// CHECK-LABEL: func.func @gradient
// CHECK:         %[[LAST:.*]] = arith.constant 3 : index
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[B:.*]] = %w)
// CHECK:           %[[K:.*]] = arith.subi %[[LAST]], %[[I]] : index
// CHECK:           %[[N:.*]] = arith.addi %[[K]], %{{.*}} : index
// CHECK:           tensor.extract %[[B]][%[[N]]] : tensor<5xf64>
