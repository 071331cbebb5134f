// RUN: irad-opt %s -p irad-vmap | filecheck %s

// scf.if on a batched condition: both arms are computed and each element's
// result selected (a linalg.generic of kind "select"). Each arm runs where
// some element takes it (an scf.if on any), and for the elements that do not,
// on the values of the first one that does (the selects before sin and @g). An scf.for with a
// shared trip count carries a batched value: its iter_arg becomes a tensor.
// A call is specialised for its batching signature (@g.vmap.b).

func.func private @g(%y: f64) -> f64 {
  %e = math.exp %y : f64
  func.return %e : f64
}

func.func @f(%x: f64, %n: index) -> f64 {
  %zero = arith.constant 0.0 : f64
  %c = arith.cmpf ogt, %x, %zero : f64
  %y = scf.if %c -> (f64) {
    %s = math.sin %x : f64
    scf.yield %s : f64
  } else {
    %s = func.call @g(%x) : (f64) -> f64
    scf.yield %s : f64
  }
  %lb = arith.constant 0 : index
  %one = arith.constant 1 : index
  %acc = scf.for %i = %lb to %n step %one iter_args(%a = %zero) -> (f64) {
    %b = arith.addf %a, %y : f64
    scf.yield %b : f64
  }
  func.return %acc : f64
}

func.func @main(%xs: tensor<5xf64>, %n: index) -> tensor<5xf64> {
  %r = irad.vmap @f(%xs, %n) {in_axes = [0, none], out_axes = [0], axis_size = 5} : (tensor<5xf64>, index) -> tensor<5xf64>
  func.return %r : tensor<5xf64>
}

// CHECK-LABEL: func.func private @g.vmap.b(%y: tensor<5xf64>) -> tensor<5xf64>
// CHECK-NEXT:    %e = math.exp %y : tensor<5xf64>
// CHECK-LABEL: func.func private @f.vmap.bu(%x: tensor<5xf64>, %n: index) -> tensor<5xf64>
// CHECK:         %c = linalg.generic
// CHECK-SAME:      irad.kind = "piecewise-constant"
// CHECK:         %[[THEN:.*]] = scf.if %{{.*}} -> (tensor<5xf64>) {
// CHECK:           %[[X1:.*]] = linalg.generic {{.*}} ins(%c, %x, %{{.*}} : {{.*}} attrs = {irad.kind = "select"}
// CHECK:           %{{.*}} = math.sin %[[X1]] : tensor<5xf64>
// CHECK:         } else {
// CHECK:         %[[ELSE:.*]] = scf.if %{{.*}} -> (tensor<5xf64>) {
// CHECK:           %[[X2:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %x, %{{.*}} : {{.*}} attrs = {irad.kind = "select"}
// CHECK:           %{{.*}} = func.call @g.vmap.b(%[[X2]]) : (tensor<5xf64>) -> tensor<5xf64>
// CHECK:         } else {
// CHECK:         %y = linalg.generic {{.*}} ins(%c, %[[THEN]], %[[ELSE]] :
// CHECK-SAME:      irad.kind = "select"
// CHECK:         %acc = scf.for %i = %lb to %n step %one iter_args(%a = %{{.*}}) -> (tensor<5xf64>) {
// CHECK-NEXT:      %b = arith.addf %a, %y : tensor<5xf64>
// CHECK-NEXT:      scf.yield %b : tensor<5xf64>
