// RUN: irad-opt %s -p irad-differentiate | filecheck %s

// np.linalg.solve lowers to a call to a declaration of irad.linalg's primitive,
// which the backends implement (numpy, or LAPACK natively). Its derivative is
// the rule table's entry for @irad.linalg.solve (irad/frontend/linalg_rules.py):
// the forward calls the primitive, the pullback solves again with a^T and
// builds da = -db x^T with a contraction; no generated function for it exists.

func.func private @irad.linalg.solve(tensor<1x2x2xf64>, tensor<1x2x1xf64>) -> (tensor<1x2x1xf64>, i1) attributes {irad.python = "irad.linalg:solve"}

func.func @f(%a: tensor<1x2x2xf64>, %b: tensor<1x2x1xf64>) -> f64 {
  %x, %ok = func.call @irad.linalg.solve(%a, %b) : (tensor<1x2x2xf64>, tensor<1x2x1xf64>) -> (tensor<1x2x1xf64>, i1)
  %c0 = arith.constant 0 : index
  %y = tensor.extract %x[%c0, %c0, %c0] : tensor<1x2x1xf64>
  func.return %y : f64
}

func.func @main(%a: tensor<1x2x2xf64>, %b: tensor<1x2x1xf64>) -> (tensor<1x2x2xf64>, tensor<1x2x1xf64>) {
  %ga, %gb = irad.grad @f(%a, %b) {wrt = [0, 1]} : (tensor<1x2x2xf64>, tensor<1x2x1xf64>) -> (tensor<1x2x2xf64>, tensor<1x2x1xf64>)
  func.return %ga, %gb : tensor<1x2x2xf64>, tensor<1x2x1xf64>
}

// CHECK-NOT: func.func {{.*}}@irad.linalg.solve.augmented
// CHECK-LABEL: func.func private @irad.frontend.linalg_rules._mT(
// CHECK:         linalg.transpose ins(%{{.*}}) outs(%{{.*}}) permutation = [0, 2, 1]
// CHECK-LABEL: func.func private @f.augmented.dd(
// CHECK:         func.call @irad.linalg.solve(%a, %b)
// CHECK-LABEL: func.func private @f.pullback.dd(
// CHECK:         %[[AT:.*]] = func.call @irad.frontend.linalg_rules._mT(%0)
// CHECK:         %[[DB:.*]], %{{.*}} = func.call @irad.linalg.solve(%[[AT]], %{{.*}})
// CHECK:         %[[DA:.*]] = linalg.generic {{.*}} ins(%[[DB]], %{{.*}}) {{.*}} attrs = {irad.kind = "contraction"}
// CHECK:         %[[NEG:.*]] = arith.negf %[[DA]]
// CHECK:         func.return %[[NEG]], %[[DB]]
