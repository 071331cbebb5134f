// RUN: not irad-opt %s -p irad-vmap 2>&1 | filecheck %s

// A loop whose trip count varies along the batch is refused (this round).

func.func @f(%x: f64, %n: index) -> f64 {
  %lb = arith.constant 0 : index
  %one = arith.constant 1 : index
  %acc = scf.for %i = %lb to %n step %one iter_args(%a = %x) -> (f64) {
    %b = arith.addf %a, %a : f64
    scf.yield %b : f64
  }
  func.return %acc : f64
}

func.func @main(%xs: tensor<2xf64>, %ns: tensor<2xindex>) -> tensor<2xf64> {
  %r = irad.vmap @f(%xs, %ns) {in_axes = [0, 0], out_axes = [0], axis_size = 2} : (tensor<2xf64>, tensor<2xindex>) -> tensor<2xf64>
  func.return %r : tensor<2xf64>
}

// CHECK: irad-opt: error: @f: scf.for: irad-vmap cannot batch `scf.for`: the upper bound of the loop (so its trip count) varies along the batch
// CHECK-NEXT: hint: keep it the same for every element

