// RUN: irad-opt %s -p irad-vmap | filecheck %s

// A request marked irad.unrollable (a Jacobian's sweeps) that irad-vmap cannot
// batch (here math.round, which the backends run on numbers only) becomes one call per
// element: the operands sliced, the results stacked along out_axes.

func.func @f(%x: f64, %n: index) -> f64 {
  %r = math.round %x : f64
  func.return %r : f64
}

func.func @main(%xs: tensor<2xf64>, %ns: tensor<2xindex>) -> tensor<2xf64> {
  %r = irad.vmap @f(%xs, %ns) {in_axes = [0, 0], out_axes = [0], axis_size = 2} {irad.unrollable} : (tensor<2xf64>, tensor<2xindex>) -> tensor<2xf64>
  func.return %r : tensor<2xf64>
}

// CHECK-LABEL: func.func @main
// CHECK-NOT:     irad.vmap
// CHECK:         %[[X0:.*]] = tensor.extract %xs[%{{.*}}] : tensor<2xf64>
// CHECK:         %[[N0:.*]] = tensor.extract %ns[%{{.*}}] : tensor<2xindex>
// CHECK:         %[[R0:.*]] = func.call @f(%[[X0]], %[[N0]]) : (f64, index) -> f64
// CHECK:         %[[R1:.*]] = func.call @f(%{{.*}}, %{{.*}}) : (f64, index) -> f64
// CHECK:         tensor.concat dim(0)
// CHECK-NOT:     irad.vmap
