// irad.vjp seeds each float result with its own cotangent; integer results get
// none. irad.grad and irad.value_and_grad seed the one float result of a callee
// that also returns integers and booleans.
// RUN: irad-opt %s -p irad-differentiate | filecheck %s
// RUN: irad-opt %s -p irad-differentiate,irad-lower-tape,irad-optimize | filecheck %s --check-prefix=OPT

func.func @h(%x: f64, %n: i64, %y: f64) -> (f64, i64, f64) {
  %a = arith.mulf %x, %y : f64
  %b = math.sin %x : f64
  func.return %a, %n, %b : f64, i64, f64
}

// CHECK-LABEL: func.func @vjp(%x: f64, %n: i64, %y: f64, %du: f64, %dv: f64) -> (f64, f64)
// CHECK-NEXT:    %{{.*}}, %{{.*}}, %{{.*}}, %[[R0:.*]], %[[R1:.*]] = func.call @h.augmented.dcd(%x, %n, %y) : (f64, i64, f64) -> (f64, i64, f64, f64, f64)
// CHECK-NEXT:    %dx, %dy = func.call @h.pullback.dcd(%[[R0]], %[[R1]], %du, %dv) : (f64, f64, f64, f64) -> (f64, f64)
// CHECK-NEXT:    func.return %dx, %dy : f64, f64
// d/dx (u x y + v sin x) = u y + v cos x, d/dy = u x
// OPT-LABEL: func.func @vjp
// OPT-DAG:     %[[COS:.*]] = math.cos %x : f64
// OPT-DAG:     %[[VC:.*]] = arith.mulf %dv, %[[COS]] : f64
// OPT-DAG:     %[[UY:.*]] = arith.mulf %du, %y : f64
// OPT-DAG:     %dy = arith.mulf %du, %x : f64
// OPT-DAG:     %dx = arith.addf %[[VC]], %[[UY]] : f64
// OPT:         func.return %dx, %dy : f64, f64
func.func @vjp(%x: f64, %n: i64, %y: f64, %du: f64, %dv: f64) -> (f64, f64) {
  %dx, %dy = irad.vjp @h(%x, %n, %y, %du, %dv) {wrt = [0, 2]} : (f64, i64, f64, f64, f64) -> (f64, f64)
  func.return %dx, %dy : f64, f64
}

func.func @g(%x: f64, %n: i64) -> (i1, f64, i64) {
  %z = arith.constant 0.0 : f64
  %p = arith.cmpf ogt, %x, %z : f64
  %y = arith.mulf %x, %x : f64
  func.return %p, %y, %n : i1, f64, i64
}

// The seed 1.0 goes to the f64 result, the only float.
// CHECK-LABEL: func.func @grads(%x: f64, %n: i64) -> (i1, f64, i64, f64, f64)
// CHECK-NEXT:    %{{.*}}, %{{.*}}, %{{.*}}, %[[R1:.*]] = func.call @g.augmented.dc(%x, %n) : (f64, i64) -> (i1, f64, i64, f64)
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1.000000e+00 : f64
// CHECK-NEXT:    %gx = func.call @g.pullback.dc(%[[R1]], %[[ONE]]) : (f64, f64) -> f64
// CHECK:         %p, %v, %m, %{{.*}} = func.call @g.augmented.dc(%x, %n) : (f64, i64) -> (i1, f64, i64, f64)
// OPT-LABEL: func.func @grads
// OPT:         %gx = arith.addf %x, %x : f64
// OPT:         func.return %p, %v, %n, %gx, %gx : i1, f64, i64, f64, f64
func.func @grads(%x: f64, %n: i64) -> (i1, f64, i64, f64, f64) {
  %gx = irad.grad @g(%x, %n) {wrt = [0]} : (f64, i64) -> f64
  %p, %v, %m, %gx2 = irad.value_and_grad @g(%x, %n) {wrt = [0]} : (f64, i64) -> (i1, f64, i64, f64)
  func.return %p, %v, %m, %gx, %gx2 : i1, f64, i64, f64, f64
}
