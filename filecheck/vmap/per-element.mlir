// RUN: irad-opt %s -p irad-vmap | filecheck %s

// A reverse-mode request whose batched callee has a masked loop (a trip count
// per element) is asked once per element, in an scf.for over the batch: each
// element's operands sliced out, the request asked of the unbatched callee
// (irad-differentiate, which runs next, records each element's own tape), its
// results put in their rows.

func.func @f(%x: f64, %n: index) -> f64 {
  %lb = arith.constant 0 : index
  %one = arith.constant 1 : index
  %acc = scf.for %i = %lb to %n step %one iter_args(%a = %x) -> (f64) {
    %b = arith.mulf %a, %x : f64
    scf.yield %b : f64
  }
  func.return %acc : f64
}

func.func @g(%x: f64, %n: index) -> f64 {
  %d = irad.grad @f(%x, %n) {wrt = [0]} : (f64, index) -> f64
  func.return %d : f64
}

func.func @main(%xs: tensor<2xf64>, %ns: tensor<2xindex>) -> tensor<2xf64> {
  %r = irad.vmap @g(%xs, %ns) {in_axes = [0, 0], out_axes = [0], axis_size = 2} : (tensor<2xf64>, tensor<2xindex>) -> tensor<2xf64>
  func.return %r : tensor<2xf64>
}

// CHECK-LABEL: func.func private @g.vmap.bb(%x: tensor<2xf64>, %n: tensor<2xindex>) -> tensor<2xf64>
// CHECK:         %{{.*}} = scf.for %[[E:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ROWS:.*]] = %{{.*}}) -> (tensor<2xf64>) {
// CHECK-NEXT:      %[[X:.*]] = tensor.extract %x[%[[E]]] : tensor<2xf64>
// CHECK-NEXT:      %[[N:.*]] = tensor.extract %n[%[[E]]] : tensor<2xindex>
// CHECK-NEXT:      %[[D:.*]] = irad.grad @f(%[[X]], %[[N]]) {wrt = [0]} : (f64, index) -> f64
// CHECK-NEXT:      %[[NEW:.*]] = tensor.insert %[[D]] into %[[ROWS]][%[[E]]] : tensor<2xf64>
// CHECK-NEXT:      scf.yield %[[NEW]] : tensor<2xf64>
