// RUN: irad-opt %s -p irad-join-slice-sums | filecheck %s

// The cotangent of a tensor read in column blocks, as an LSTM's gradient
// makes it: each block's cotangent written into zeros, the four summed. The
// blocks tile the tensor along axis 1, so the sum is their concatenation, in
// the order of their offsets. No DCE runs: the inserts stay until one does.

// CHECK-LABEL: func.func @gates(%a: tensor<1x2xf64>, %b: tensor<1x2xf64>, %c: tensor<1x2xf64>, %d: tensor<1x2xf64>) -> tensor<1x8xf64> {
// CHECK:         %[[R:.*]] = tensor.concat dim(1) %c, %a, %d, %b : (tensor<1x2xf64>, tensor<1x2xf64>, tensor<1x2xf64>, tensor<1x2xf64>) -> tensor<1x8xf64>
// CHECK-NEXT:    func.return %[[R]] : tensor<1x8xf64>
func.func @gates(%a: tensor<1x2xf64>, %b: tensor<1x2xf64>, %c: tensor<1x2xf64>, %d: tensor<1x2xf64>) -> tensor<1x8xf64> {
  %z = arith.constant dense<0.000000e+00> : tensor<1x8xf64>
  %ia = tensor.insert_slice %a into %z[0, 2] [1, 2] [1, 1] : tensor<1x2xf64> into tensor<1x8xf64>
  %ib = tensor.insert_slice %b into %z[0, 6] [1, 2] [1, 1] : tensor<1x2xf64> into tensor<1x8xf64>
  %ic = tensor.insert_slice %c into %z[0, 0] [1, 2] [1, 1] : tensor<1x2xf64> into tensor<1x8xf64>
  %id = tensor.insert_slice %d into %z[0, 4] [1, 2] [1, 1] : tensor<1x2xf64> into tensor<1x8xf64>
  %s1 = arith.addf %ia, %ib : tensor<1x8xf64>
  %s2 = arith.addf %s1, %ic : tensor<1x8xf64>
  %s3 = arith.addf %s2, %id : tensor<1x8xf64>
  func.return %s3 : tensor<1x8xf64>
}

// A block summed twice (the cotangent of `x * x` for a slice x) is added
// first; row blocks of a vector.
// CHECK-LABEL: func.func @twice(%a: tensor<2xf64>, %b: tensor<3xf64>) -> tensor<5xf64> {
// CHECK:         %[[A:.*]] = arith.addf %a, %a : tensor<2xf64>
// CHECK-NEXT:    %[[R:.*]] = tensor.concat dim(0) %[[A]], %b : (tensor<2xf64>, tensor<3xf64>) -> tensor<5xf64>
// CHECK-NEXT:    func.return %[[R]] : tensor<5xf64>
func.func @twice(%a: tensor<2xf64>, %b: tensor<3xf64>) -> tensor<5xf64> {
  %z = arith.constant dense<0.000000e+00> : tensor<5xf64>
  %ia = tensor.insert_slice %a into %z[0] [2] [1] : tensor<2xf64> into tensor<5xf64>
  %ib = tensor.insert_slice %b into %z[2] [3] [1] : tensor<3xf64> into tensor<5xf64>
  %s1 = arith.addf %ia, %ib : tensor<5xf64>
  %s2 = arith.addf %s1, %ia : tensor<5xf64>
  func.return %s2 : tensor<5xf64>
}

// Left alone: a gap (element 2 of 5 is no block's), overlapping blocks, a
// destination that is not zeros, and blocks cut along both axes.
// CHECK-LABEL: func.func @kept(
// CHECK-NOT:     tensor.concat
// CHECK:         func.return
func.func @kept(%a: tensor<2xf64>, %b: tensor<2xf64>, %c: tensor<3xf64>, %o: tensor<5xf64>, %m: tensor<1x1xf64>) -> (tensor<5xf64>, tensor<5xf64>, tensor<5xf64>, tensor<2x2xf64>) {
  %z = arith.constant dense<0.000000e+00> : tensor<5xf64>
  %ia = tensor.insert_slice %a into %z[0] [2] [1] : tensor<2xf64> into tensor<5xf64>
  %ib = tensor.insert_slice %b into %z[3] [2] [1] : tensor<2xf64> into tensor<5xf64>
  %gap = arith.addf %ia, %ib : tensor<5xf64>
  %ic = tensor.insert_slice %c into %z[1] [3] [1] : tensor<3xf64> into tensor<5xf64>
  %overlap = arith.addf %ia, %ic : tensor<5xf64>
  %oc = tensor.insert_slice %c into %o[2] [3] [1] : tensor<3xf64> into tensor<5xf64>
  %ones = arith.addf %ia, %oc : tensor<5xf64>
  %z2 = arith.constant dense<0.000000e+00> : tensor<2x2xf64>
  %m0 = tensor.insert_slice %m into %z2[0, 0] [1, 1] [1, 1] : tensor<1x1xf64> into tensor<2x2xf64>
  %m1 = tensor.insert_slice %m into %z2[1, 1] [1, 1] [1, 1] : tensor<1x1xf64> into tensor<2x2xf64>
  %both = arith.addf %m0, %m1 : tensor<2x2xf64>
  func.return %gap, %overlap, %ones, %both : tensor<5xf64>, tensor<5xf64>, tensor<5xf64>, tensor<2x2xf64>
}
