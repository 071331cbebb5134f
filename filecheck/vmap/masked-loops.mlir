// RUN: irad-opt %s -p irad-vmap | filecheck %s

// A loop whose trip count varies along the batch runs to the largest, with a
// mask (passes/batching/masks.py): scf.for over 0 .. the largest trip count,
// each element's carried value updated only while k < its own trip count;
// scf.while while any element's condition holds, passing on each element's
// condition and the carried values, so that a stopped element keeps them.
// Both are marked irad.masked (reverse mode refuses them).

func.func @f(%x: f64, %n: index) -> f64 {
  %lb = arith.constant 0 : index
  %one = arith.constant 1 : index
  %acc = scf.for %i = %lb to %n step %one iter_args(%a = %x) -> (f64) {
    %b = arith.addf %a, %a : f64
    scf.yield %b : f64
  }
  func.return %acc : f64
}

func.func @g(%a: f64) -> f64 {
  %r = scf.while (%x = %a) : (f64) -> f64 {
    %big = arith.constant 1.0 : f64
    %c = arith.cmpf ogt, %x, %big : f64
    scf.condition(%c) %x : f64
  } do {
  ^bb0(%y: f64):
    %half = arith.constant 0.5 : f64
    %z = arith.mulf %y, %half : f64
    scf.yield %z : f64
  }
  func.return %r : f64
}

func.func @main(%xs: tensor<2xf64>, %ns: tensor<2xindex>) -> (tensor<2xf64>, tensor<2xf64>) {
  %r = irad.vmap @f(%xs, %ns) {in_axes = [0, 0], out_axes = [0], axis_size = 2} : (tensor<2xf64>, tensor<2xindex>) -> tensor<2xf64>
  %s = irad.vmap @g(%xs) {in_axes = [0], out_axes = [0], axis_size = 2} : (tensor<2xf64>) -> tensor<2xf64>
  func.return %r, %s : tensor<2xf64>, tensor<2xf64>
}

// CHECK-LABEL: func.func private @f.vmap.bb(%x: tensor<2xf64>, %n: tensor<2xindex>) -> tensor<2xf64>
// CHECK:         %[[TRIPS:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<2xi64>, tensor<2xi64>, tensor<2xi64>)
// CHECK:           arith.ceildivsi
// CHECK:         linalg.reduce
// CHECK:           arith.maxsi
// CHECK:         %acc = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%a = %x) -> (tensor<2xf64>) {
// CHECK:           %[[MASK:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[TRIPS]] : tensor<2xi64>, tensor<2xi64>)
// CHECK:             arith.cmpi slt
// CHECK:           %b = arith.addf
// CHECK:           %[[NEW:.*]] = linalg.generic {{.*}} ins(%[[MASK]], %b, %a : tensor<2xi1>, tensor<2xf64>, tensor<2xf64>)
// CHECK-SAME:        irad.kind = "select"
// CHECK:           scf.yield %[[NEW]] : tensor<2xf64>
// CHECK-NEXT:    } {{(attributes )?}}{irad.masked}

// CHECK-LABEL: func.func private @g.vmap.b(%a: tensor<2xf64>) -> tensor<2xf64>
// CHECK:         %r{{.*}} = scf.while (%x = %a) : (tensor<2xf64>) -> (tensor<2xf64>, tensor<2xi1>, i64, tensor<2xf64>) {
// CHECK:           %[[ANY:.*]] = arith.cmpi slt, %{{.*}}, %{{.*}} : i64
// CHECK-NEXT:      scf.condition(%[[ANY]]) %x, %c, %{{.*}}, %x : tensor<2xf64>, tensor<2xi1>, i64, tensor<2xf64>
// CHECK-NEXT:    } do {
// CHECK-NEXT:    ^{{.*}}(%y: tensor<2xf64>, %{{.*}}: tensor<2xi1>, %{{.*}}: i64, %{{.*}}: tensor<2xf64>):
// CHECK:           scf.yield %{{.*}} : tensor<2xf64>
// CHECK-NEXT:    } {{(attributes )?}}{irad.masked}
