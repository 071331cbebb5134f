// RUN: irad-opt %s -p irad-differentiate | filecheck %s

// Array residuals one cheap op makes are recomputed in the reversed loop, not
// recorded (passes/ad/reverse_loops.py, _recompute_cheap). `h = 1 / (1 + exp(-(h * w)))`:
// exp's result and the carried h are recorded; 1 + e (an addf of a splat made
// inside the loop and exp's result) and the quotient (a divf of that splat and
// 1 + e) are made again from the record: two arrays a record, not four.

func.func @f(%w: tensor<4xf64>, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %h = scf.for %k = %c0 to %n step %c1 iter_args(%h_1 = %w) -> (tensor<4xf64>) {
    %one = arith.constant 1.000000e+00 : f64
    %13 = arith.mulf %h_1, %w : tensor<4xf64>
    %14 = arith.negf %13 : tensor<4xf64>
    %15 = math.exp %14 : tensor<4xf64>
    %16 = tensor.splat %one : tensor<4xf64>
    %17 = arith.addf %16, %15 : tensor<4xf64>
    %h_2 = arith.divf %16, %17 : tensor<4xf64>
    scf.yield %h_2 : tensor<4xf64>
  }
  %19 = arith.constant dense<0.000000e+00> : tensor<f64>
  %20 = linalg.reduce ins(%h:tensor<4xf64>) outs(%19:tensor<f64>) dimensions = [0]
  (%21: f64, %22: f64) {
    %23 = arith.addf %21, %22 : f64
    linalg.yield %23 : f64
  }
  %24 = tensor.extract %20[] : tensor<f64>
  func.return %24 : f64
}

func.func @main(%w: tensor<4xf64>, %n: index) -> tensor<4xf64> {
  %g = irad.grad @f(%w, %n) {wrt = [0]} : (tensor<4xf64>, index) -> tensor<4xf64>
  func.return %g : tensor<4xf64>
}

// CHECK:       func.func private @f.augmented.tape.dc(
// CHECK:         scf.for
// CHECK:           %[[E:.*]] = math.exp
// CHECK:           irad.tape_push %{{.*}}[%{{.*}}] reserved %{{.*}}, %{{.*}} : tensor<4xf64>, tensor<4xf64>
// CHECK-NOT:       irad.tape_push
// CHECK:           scf.yield

// CHECK:       func.func private @f.pullback.tape.dc(
// CHECK:         scf.for
// CHECK-NEXT:      %[[R:.*]], %[[H:.*]] = irad.tape_read %tape[%{{.*}}] : tensor<4xf64>, tensor<4xf64>
// CHECK-NEXT:      %[[ONE:.*]] = tensor.splat %{{.*}} : tensor<4xf64>
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[ONE]], %[[R]] : tensor<4xf64>
// CHECK-NEXT:      %{{.*}} = arith.divf %[[ONE]], %[[SUM]] : tensor<4xf64>
