// RUN: not irad-opt %s -p irad-vmap 2>&1 | filecheck %s

// out_axes none for a result that varies along the batch is refused.

func.func @f(%x: f64) -> f64 {
  func.return %x : f64
}

func.func @main(%xs: tensor<2xf64>) -> f64 {
  %r = irad.vmap @f(%xs) {in_axes = [0], out_axes = [none], axis_size = 2} : (tensor<2xf64>) -> f64
  func.return %r : f64
}

// CHECK: irad-opt: error: @main: irad.vmap: result #0 of @f varies along the batch, but its out_axes entry is none
