// RUN: irad-opt %s -p irad-vmap | filecheck %s

// A call under a mask (here an arm of a branch on a batched condition) to a
// callee that reaches a check takes the mask as its last argument
// (@check.vmap.b.masked): the callee's cf.assert holds where its condition
// holds or the element does not take the call. A callee without a check
// keeps its plain batched copy (@plain.vmap.b). The arm has no results: it
// calls @check only for its check.

func.func private @check(%y: f64) -> f64 {
  %zero = arith.constant 0.0 : f64
  %ok = arith.cmpf ogt, %y, %zero : f64
  cf.assert %ok, "y must be positive"
  %l = math.log %y : f64
  func.return %l : f64
}

func.func private @plain(%y: f64) -> f64 {
  %e = math.exp %y : f64
  func.return %e : f64
}

func.func @f(%x: f64) -> f64 {
  %zero = arith.constant 0.0 : f64
  %c = arith.cmpf ogt, %x, %zero : f64
  scf.if %c {
    %s = func.call @check(%x) : (f64) -> f64
    %t = func.call @plain(%x) : (f64) -> f64
    scf.yield
  }
  func.return %x : f64
}

func.func @main(%xs: tensor<3xf64>) -> tensor<3xf64> {
  %r = irad.vmap @f(%xs) {in_axes = [0], out_axes = [0], axis_size = 3} : (tensor<3xf64>) -> tensor<3xf64>
  func.return %r : tensor<3xf64>
}

// CHECK-LABEL: func.func private @check.vmap.b.masked(%y: tensor<3xf64>, %mask: tensor<3xi1>) -> tensor<3xf64>
// CHECK:         %ok = linalg.generic
// CHECK:         %{{.*}} = linalg.generic {{.*}} ins(%ok, %mask : tensor<3xi1>, tensor<3xi1>)
// CHECK:           arith.xori
// CHECK:           arith.ori
// CHECK:         cf.assert %{{.*}}, "y must be positive"
// CHECK-LABEL: func.func private @plain.vmap.b(%y: tensor<3xf64>) -> tensor<3xf64>
// CHECK-LABEL: func.func private @f.vmap.b(%x: tensor<3xf64>) -> tensor<3xf64>
// CHECK:         %c = linalg.generic
// CHECK:         scf.if %{{.*}} {
// CHECK:           %[[X:.*]] = linalg.generic {{.*}} ins(%c, %x, %{{.*}} : {{.*}} attrs = {irad.kind = "select"}
// CHECK:           %{{.*}} = func.call @check.vmap.b.masked(%[[X]], %c) : (tensor<3xf64>, tensor<3xi1>) -> tensor<3xf64>
// CHECK:           %{{.*}} = func.call @plain.vmap.b(%[[X]]) : (tensor<3xf64>) -> tensor<3xf64>
