// RUN: irad-opt %s -p irad-vmap | filecheck %s

// vmap of a forward-mode request: irad-vmap has irad.jvp's function generated
// first (forward mode's engine), then batches it: tangents of a batch of
// points along a batch of directions, in one call.

func.func @f(%x: f64) -> f64 {
  %s = math.sin %x : f64
  func.return %s : f64
}

func.func @tangent(%x: f64, %t: f64) -> (f64, f64) {
  %y, %ty = irad.jvp @f(%x, %t) {wrt = [0]} : (f64, f64) -> (f64, f64)
  func.return %y, %ty : f64, f64
}

// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %{{.*}}, %{{.*}} = func.call @tangent.vmap.bb(%xs, %ts) : (tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>)
func.func @main(%xs: tensor<3xf64>, %ts: tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>) {
  %y, %ty = irad.vmap @tangent(%xs, %ts) {in_axes = [0, 0], out_axes = [0, 0], axis_size = 3} : (tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>)
  func.return %y, %ty : tensor<3xf64>, tensor<3xf64>
}

// CHECK-NOT: irad.jvp
// CHECK:     math.cos %{{.*}} : tensor<3xf64>
