// RUN: not irad-opt %s -p irad-vmap 2>&1 | filecheck %s

// A batched value reaching an op without a batching rule is refused, naming
// the op and where it is.

func.func private @opaque(f64) -> f64

func.func @f(%x: f64) -> f64 {
  %y = func.call @opaque(%x) : (f64) -> f64
  func.return %y : f64
}

func.func @main(%xs: tensor<2xf64>) -> tensor<2xf64> {
  %r = irad.vmap @f(%xs) {in_axes = [0], out_axes = [0], axis_size = 2} : (tensor<2xf64>) -> tensor<2xf64>
  func.return %r : tensor<2xf64>
}

// CHECK: irad-opt: error: @f: func.call: @opaque has no body (a rule target or an external function), so irad cannot batch it
// CHECK-NEXT: hint: call it outside the vmapped function, or give it an irad body

