// RUN: irad-opt %s -p irad-optimize | filecheck %s

// Folds that are wrong for some input are not done (see docs/optimisation.md):
// x + 0.0 (x = -0.0), x - -0.0 (x = -0.0), 0.0 - x (x = 0.0), x - x (x = inf),
// x * 0.0 (x = -1.0 or inf), x / x (x = 0.0).

// CHECK-LABEL: func.func @kept(%x: f64) -> (f64, f64, f64, f64, f64, f64) {
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:    %[[NZ:.*]] = arith.constant -0.000000e+00 : f64
// CHECK-NEXT:    %[[A:.*]] = arith.addf %x, %[[Z]] : f64
// CHECK-NEXT:    %[[B:.*]] = arith.subf %x, %[[NZ]] : f64
// CHECK-NEXT:    %[[C:.*]] = arith.subf %[[Z]], %x : f64
// CHECK-NEXT:    %[[D:.*]] = arith.subf %x, %x : f64
// CHECK-NEXT:    %[[E:.*]] = arith.mulf %x, %[[Z]] : f64
// CHECK-NEXT:    %[[F:.*]] = arith.divf %x, %x : f64
// CHECK-NEXT:    func.return %[[A]], %[[B]], %[[C]], %[[D]], %[[E]], %[[F]]
func.func @kept(%x: f64) -> (f64, f64, f64, f64, f64, f64) {
  %z = arith.constant 0.0 : f64
  %nz = arith.constant -0.0 : f64
  %a = arith.addf %x, %z : f64
  %b = arith.subf %x, %nz : f64
  %c = arith.subf %z, %x : f64
  %d = arith.subf %x, %x : f64
  %e = arith.mulf %x, %z : f64
  %f = arith.divf %x, %x : f64
  func.return %a, %b, %c, %d, %e, %f : f64, f64, f64, f64, f64, f64
}

// The fastmath flags that make them exact let them fire.

// CHECK-LABEL: func.func @flagged(%x: f64) -> (f64, f64, f64, f64) {
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:    %[[N:.*]] = arith.negf %x : f64
// CHECK-NEXT:    func.return %x, %[[N]], %[[Z]], %[[Z]] : f64, f64, f64, f64
func.func @flagged(%x: f64) -> (f64, f64, f64, f64) {
  %z = arith.constant 0.0 : f64
  %a = arith.addf %x, %z fastmath<nsz> : f64
  %c = arith.subf %z, %x fastmath<nsz> : f64
  %d = arith.subf %x, %x fastmath<nnan> : f64
  %e = arith.mulf %x, %z fastmath<nnan,nsz> : f64
  func.return %a, %c, %d, %e : f64, f64, f64, f64
}

// Transcendentals of f32 constants are not folded: no Python function
// reproduces the f32 libm (expf, ...). Correctly rounded ops are.

// CHECK-LABEL: func.func @f32() -> (f32, f32) {
// CHECK-NEXT:    %[[C:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:    %[[E:.*]] = math.exp %[[C]] : f32
// CHECK-NEXT:    %[[S:.*]] = arith.constant 1.41421354 : f32
// CHECK-NEXT:    func.return %[[E]], %[[S]] : f32, f32
func.func @f32() -> (f32, f32) {
  %c = arith.constant 2.0 : f32
  %e = math.exp %c : f32
  %s = math.sqrt %c : f32
  func.return %e, %s : f32, f32
}
