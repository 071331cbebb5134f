// RUN: irad-opt %s -p irad-optimize | filecheck %s

// A reduction of a tensor made of one number is its closed form
// (passes/splat_reductions.py): a sum c * k, a maximum or minimum c itself,
// combined with the start; numbers known while compiling are computed here.

// A sum of 200x300 copies of x: one product, and the start's 0.0 added
// (which turns a -0.0 product into +0.0, as the reduction would).
// CHECK-LABEL: func.func @sum_of_splat(%x: f64) -> f64 {
// CHECK-NEXT:    %[[K:.*]] = arith.constant 6.000000e+04 : f64
// CHECK-NEXT:    %[[P:.*]] = arith.mulf %x, %[[K]] : f64
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:    %[[S:.*]] = arith.addf %[[Z]], %[[P]] : f64
// CHECK-NEXT:    func.return %[[S]] : f64
func.func @sum_of_splat(%x: f64) -> f64 {
  %zero = arith.constant dense<0.0> : tensor<f64>
  %s = tensor.splat %x : tensor<200x300xf64>
  %r = linalg.reduce ins(%s : tensor<200x300xf64>) outs(%zero : tensor<f64>) dimensions = [0, 1]
    (%a: f64, %b: f64) {
      %t = arith.addf %a, %b : f64
      linalg.yield %t : f64
    }
  %e = tensor.extract %r[] : tensor<f64>
  func.return %e : f64
}

// Over one axis of a constant, in either operand order: 0.1 * 200 rounded once.
// CHECK-LABEL: func.func @rows_of_constant() -> tensor<300xf64> {
// CHECK-NEXT:    %[[C:.*]] = arith.constant 2.000000e+01 : f64
// CHECK-NEXT:    %[[R:.*]] = tensor.splat %[[C]] : tensor<300xf64>
// CHECK-NEXT:    func.return %[[R]] : tensor<300xf64>
func.func @rows_of_constant() -> tensor<300xf64> {
  %zero = arith.constant dense<0.0> : tensor<300xf64>
  %s = arith.constant dense<0.1> : tensor<200x300xf64>
  %r = linalg.reduce ins(%s : tensor<200x300xf64>) outs(%zero : tensor<300xf64>) dimensions = [0]
    (%a: f64, %b: f64) {
      %t = arith.addf %b, %a : f64
      linalg.yield %t : f64
    }
  func.return %r : tensor<300xf64>
}

// float32: the product in float64, rounded once to float32.
// CHECK-LABEL: func.func @sum_f32(%x: f32) -> f32 {
// CHECK-NEXT:    %[[W:.*]] = arith.extf %x : f32 to f64
// CHECK-NEXT:    %[[K:.*]] = arith.constant 1.000000e+06 : f64
// CHECK-NEXT:    %[[P:.*]] = arith.mulf %[[W]], %[[K]] : f64
// CHECK-NEXT:    %[[N:.*]] = arith.truncf %[[P]] : f64 to f32
func.func @sum_f32(%x: f32) -> f32 {
  %zero = arith.constant dense<0.0> : tensor<f32>
  %s = tensor.splat %x : tensor<1000000xf32>
  %r = linalg.reduce ins(%s : tensor<1000000xf32>) outs(%zero : tensor<f32>) dimensions = [0]
    (%a: f32, %b: f32) {
      %t = arith.addf %a, %b : f32
      linalg.yield %t : f32
    }
  %e = tensor.extract %r[] : tensor<f32>
  func.return %e : f32
}

// A maximum of a broadcast scalar into a start that is not one number.
// CHECK-LABEL: func.func @max_into(%x: f64, %init: tensor<4xf64>) -> tensor<4xf64> {
// CHECK-NEXT:    %[[S:.*]] = tensor.splat %x : tensor<4xf64>
// CHECK-NEXT:    %[[M:.*]] = arith.maximumf %init, %[[S]] : tensor<4xf64>
// CHECK-NEXT:    func.return %[[M]] : tensor<4xf64>
func.func @max_into(%x: f64, %init: tensor<4xf64>) -> tensor<4xf64> {
  %e = tensor.empty() : tensor<4x9xf64>
  %z = arith.constant dense<0.0> : tensor<f64>
  %one = tensor.insert %x into %z[] : tensor<f64>
  %b = linalg.broadcast ins(%one : tensor<f64>) outs(%e : tensor<4x9xf64>) dimensions = [0, 1]
  %r = linalg.reduce ins(%b : tensor<4x9xf64>) outs(%init : tensor<4xf64>) dimensions = [1]
    (%a: f64, %c: f64) {
      %t = arith.maximumf %a, %c : f64
      linalg.yield %t : f64
    }
  func.return %r : tensor<4xf64>
}

// int64: 5 * 2^62 wraps to 2^62, as five additions do.
// CHECK-LABEL: func.func @int_sum_wraps() -> tensor<i64> {
// CHECK-NEXT:    %[[C:.*]] = arith.constant 4611686018427387904 : i64
// CHECK-NEXT:    %[[R:.*]] = tensor.splat %[[C]] : tensor<i64>
// CHECK-NEXT:    func.return %[[R]] : tensor<i64>
func.func @int_sum_wraps() -> tensor<i64> {
  %zero = arith.constant dense<0> : tensor<i64>
  %s = arith.constant dense<4611686018427387904> : tensor<5xi64>
  %r = linalg.reduce ins(%s : tensor<5xi64>) outs(%zero : tensor<i64>) dimensions = [0]
    (%a: i64, %b: i64) {
      %t = arith.addi %a, %b : i64
      linalg.yield %t : i64
    }
  func.return %r : tensor<i64>
}

// Nothing reduced: the start, whatever x is (inf * 0 would be NaN).
// CHECK-LABEL: func.func @empty(%x: f64, %init: tensor<3xf64>) -> tensor<3xf64> {
// CHECK-NEXT:    func.return %init : tensor<3xf64>
func.func @empty(%x: f64, %init: tensor<3xf64>) -> tensor<3xf64> {
  %s = tensor.splat %x : tensor<3x0xf64>
  %r = linalg.reduce ins(%s : tensor<3x0xf64>) outs(%init : tensor<3xf64>) dimensions = [1]
    (%a: f64, %b: f64) {
      %t = arith.addf %a, %b : f64
      linalg.yield %t : f64
    }
  func.return %r : tensor<3xf64>
}

// Kept: a tensor that is not one number, a product (c^k is left), and an
// int sum of a number known only at run time (the Python backend's scalar
// ints would not wrap as the sum does).
// CHECK-LABEL: func.func @kept(
// CHECK:         linalg.reduce ins(%x
// CHECK:         arith.addf
// CHECK:         linalg.reduce ins(%s
// CHECK:         arith.mulf
// CHECK:         linalg.reduce ins(%ci
// CHECK:         arith.addi
// CHECK:         linalg.reduce ins(%x{{.*}}outs(%acc
// CHECK:         linalg.reduce ins(%x{{.*}}outs(%acc
func.func @kept(%x: tensor<8xf64>, %c: i64, %acc: tensor<f64>) -> (tensor<f64>, tensor<f64>, tensor<i64>, tensor<f64>, tensor<f64>) {
  %zero = arith.constant dense<0.0> : tensor<f64>
  %one = arith.constant dense<1.0> : tensor<f64>
  %izero = arith.constant dense<0> : tensor<i64>
  %r = linalg.reduce ins(%x : tensor<8xf64>) outs(%zero : tensor<f64>) dimensions = [0]
    (%a: f64, %b: f64) {
      %t = arith.addf %a, %b : f64
      linalg.yield %t : f64
    }
  %s = arith.constant dense<3.0> : tensor<8xf64>
  %p = linalg.reduce ins(%s : tensor<8xf64>) outs(%one : tensor<f64>) dimensions = [0]
    (%a: f64, %b: f64) {
      %t = arith.mulf %a, %b : f64
      linalg.yield %t : f64
    }
  %ci = tensor.splat %c : tensor<8xi64>
  %i = linalg.reduce ins(%ci : tensor<8xi64>) outs(%izero : tensor<i64>) dimensions = [0]
    (%a: i64, %b: i64) {
      %t = arith.addi %a, %b : i64
      linalg.yield %t : i64
    }
  %m = linalg.reduce ins(%x : tensor<8xf64>) outs(%acc : tensor<f64>) dimensions = [0]
    (%a: f64, %b: f64) {
      %t = arith.maximumf %a, %b : f64
      linalg.yield %t : f64
    }
  %n = linalg.reduce ins(%x : tensor<8xf64>) outs(%acc : tensor<f64>) dimensions = [0]
    (%a: f64, %b: f64) {
      %t = arith.addf %a, %b : f64
      linalg.yield %t : f64
    }
  func.return %r, %p, %i, %m, %n : tensor<f64>, tensor<f64>, tensor<i64>, tensor<f64>, tensor<f64>
}

// The gradient of a maximum compares the tensor with its maximum: of a splat,
// that mask is one boolean (GenericOfSplats), its count a folded sum, and the
// whole gradient is scalar arithmetic.
// CHECK-LABEL: func.func @mask_of_splats(%x: f64) -> f64 {
// CHECK-NEXT:    %[[EQ:.*]] = arith.cmpf oeq, %x, %x : f64
// CHECK-NEXT:    %[[F:.*]] = arith.uitofp %[[EQ]] : i1 to f64
// CHECK-NEXT:    %[[K:.*]] = arith.constant 1.200000e+01 : f64
// CHECK-NEXT:    %[[N:.*]] = arith.mulf %[[F]], %[[K]] : f64
// CHECK-NOT:     linalg
// CHECK:         func.return
func.func @mask_of_splats(%x: f64) -> f64 {
  %s = tensor.splat %x : tensor<3x4xf64>
  %z = arith.constant dense<0.0> : tensor<f64>
  %one = tensor.insert %x into %z[] : tensor<f64>
  %e = tensor.empty() : tensor<3x4xf64>
  %b = linalg.broadcast ins(%one : tensor<f64>) outs(%e : tensor<3x4xf64>) dimensions = [0, 1]
  %ei = tensor.empty() : tensor<3x4xi1>
  %mask = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s, %b : tensor<3x4xf64>, tensor<3x4xf64>) outs(%ei : tensor<3x4xi1>) {
  ^bb0(%p: f64, %q: f64, %o: i1):
    %c = arith.cmpf oeq, %p, %q : f64
    linalg.yield %c : i1
  } -> tensor<3x4xi1>
  %f = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%mask : tensor<3x4xi1>) outs(%e : tensor<3x4xf64>) {
  ^bb0(%m: i1, %o: f64):
    %v = arith.uitofp %m : i1 to f64
    linalg.yield %v : f64
  } -> tensor<3x4xf64>
  %r = linalg.reduce ins(%f : tensor<3x4xf64>) outs(%z : tensor<f64>) dimensions = [0, 1]
    (%a: f64, %c: f64) {
      %t = arith.addf %a, %c : f64
      linalg.yield %t : f64
    }
  %n = tensor.extract %r[] : tensor<f64>
  func.return %n : f64
}

// Kept: a generic of a tensor that is not one number, one that reads its
// output, and one that is not elementwise (a transpose).
// CHECK-LABEL: func.func @generics_kept(
// CHECK-COUNT-3: linalg.generic
func.func @generics_kept(%x: tensor<3x3xf64>, %y: f64) -> (tensor<3x3xf64>, tensor<3x3xf64>, tensor<3x3xf64>) {
  %e = tensor.empty() : tensor<3x3xf64>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<3x3xf64>) outs(%e : tensor<3x3xf64>) {
  ^bb0(%p: f64, %o: f64):
    %v = math.exp %p : f64
    linalg.yield %v : f64
  } -> tensor<3x3xf64>
  %s = tensor.splat %y : tensor<3x3xf64>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<3x3xf64>) outs(%x : tensor<3x3xf64>) {
  ^bb0(%p: f64, %o: f64):
    %v = arith.addf %p, %o : f64
    linalg.yield %v : f64
  } -> tensor<3x3xf64>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<3x3xf64>) outs(%e : tensor<3x3xf64>) {
  ^bb0(%p: f64, %o: f64):
    %v = math.sin %p : f64
    linalg.yield %v : f64
  } -> tensor<3x3xf64>
  func.return %a, %b, %c : tensor<3x3xf64>, tensor<3x3xf64>, tensor<3x3xf64>
}
