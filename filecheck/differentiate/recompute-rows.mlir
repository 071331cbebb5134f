// RUN: irad-opt %s -p irad-differentiate | filecheck %s

// A loop over the rows of an argument, by a constant count, reads row
// %xs[k] at its index: the row is not recorded per iteration. The reversed
// iteration takes it again from %xs, which the function's own record keeps
// once: 4 iterations of a 3-number row are 12 numbers, no fewer than %xs
// holds (passes/ad/reverse_loops.py, _recompute_cheap). The reshape of the row is made
// again too.

func.func @f(%w: tensor<3xf64>, %xs: tensor<4x1x3xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %shape = arith.constant dense<3> : tensor<1xi64>
  %h = scf.for %k = %c0 to %c4 step %c1 iter_args(%h_1 = %w) -> (tensor<3xf64>) {
    %row = tensor.extract_slice %xs[%k, 0, 0] [1, 1, 3] [1, 1, 1] : tensor<4x1x3xf64> to tensor<1x1x3xf64>
    %x = tensor.reshape %row(%shape) : (tensor<1x1x3xf64>, tensor<1xi64>) -> tensor<3xf64>
    %p = arith.mulf %h_1, %x : tensor<3xf64>
    %h_2 = math.sin %p : tensor<3xf64>
    scf.yield %h_2 : tensor<3xf64>
  }
  %zero = arith.constant dense<0.000000e+00> : tensor<f64>
  %s = linalg.reduce ins(%h:tensor<3xf64>) outs(%zero:tensor<f64>) dimensions = [0]
  (%a: f64, %b: f64) {
    %sum = arith.addf %a, %b : f64
    linalg.yield %sum : f64
  }
  %r = tensor.extract %s[] : tensor<f64>
  func.return %r : f64
}

func.func @main(%w: tensor<3xf64>, %xs: tensor<4x1x3xf64>) -> tensor<3xf64> {
  %g = irad.grad @f(%w, %xs) {wrt = [0]} : (tensor<3xf64>, tensor<4x1x3xf64>) -> tensor<3xf64>
  func.return %g : tensor<3xf64>
}

// Per iteration, the product sin's derivative reads (the row is not
// recorded); %xs in the function's own record, after the loop.
// CHECK:       func.func private @f.augmented.tape.dc(
// CHECK:         scf.for
// CHECK:           irad.tape_push %{{.*}}[%{{.*}}] reserved %p : tensor<3xf64>
// CHECK-NOT:       irad.tape_push
// CHECK:           scf.yield
// CHECK:         irad.tape_push %{{.*}}[%{{.*}}] %{{.*}}, %xs : index, tensor<4x1x3xf64>

// CHECK:       func.func private @f.pullback.tape.dc(
// CHECK-NEXT:    %{{.*}}, %[[XS:.*]] = irad.tape_read %tape[%end] : index, tensor<4x1x3xf64>
// CHECK:         scf.for
// CHECK-NEXT:      %p = irad.tape_read %tape[%{{.*}}] : tensor<3xf64>
// CHECK:           %[[ROW:.*]] = tensor.extract_slice %[[XS]][%{{.*}}, 0, 0] [1, 1, 3] [1, 1, 1]
// CHECK-NEXT:      %{{.*}} = tensor.reshape %[[ROW]](%{{.*}})
