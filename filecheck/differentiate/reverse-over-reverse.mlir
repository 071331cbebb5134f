// RUN: irad-opt %s -p irad-differentiate | filecheck %s

// Reverse over reverse through a loop: @d2 asks for the gradient of @df, which
// asks for the gradient of @f. The pass rewrites @df's request first (it is
// below @d2's), then differentiates its generated code, tape ops included:
// the tape's cotangent is a shadow tape (passes/ad/derivatives/tape.py).

// f(x) = sum_{k=1..5} sin(k x)
func.func @f(%x: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %s = scf.for %i = %c0 to %c5 step %c1 iter_args(%acc = %zero) -> (f64) {
    %ii = arith.index_cast %i : index to i64
    %fi = arith.sitofp %ii : i64 to f64
    %k = arith.addf %fi, %one : f64
    %xk = arith.mulf %x, %k : f64
    %sn = math.sin %xk : f64
    %n = arith.addf %acc, %sn : f64
    scf.yield %n : f64
  }
  func.return %s : f64
}

func.func @d2(%x: f64) -> f64 {
  %h = irad.grad @df(%x) {wrt = [0]} : (f64) -> f64
  func.return %h : f64
}

func.func @df(%x: f64) -> f64 {
  %g = irad.grad @f(%x) {wrt = [0]} : (f64) -> f64
  func.return %g : f64
}

// CHECK-LABEL: func.func @d2(%x: f64) -> f64 {
// CHECK-NEXT:    func.call @df.augmented.d(%x)
// CHECK:         func.call @df.pullback.d(

// The gradient's forward sweep pushed x once, before the loop (the lean tape
// records a value defined outside a loop outside it; the loop's trip count, a
// constant, is not recorded), and only k per iteration,
// which carries no cotangent: the adjoint reads x's cotangent back from the
// shadow once, outside the loop, and adds it to the loop's.
// CHECK-LABEL: func.func private @f.augmented.tape.d.pullback.tape.dcc(%tape: memref<?xf64>, %end: index, %ds: f64, %{{.*}}: memref<?xf64>) -> f64
// CHECK:         %[[REC:.*]], %{{.*}}, %x = irad.tape_read %tape[%end] : index, index, f64
// CHECK:         %{{.*}}, %[[DX:.*]] = irad.shadow_read %[[SH:.*]][%[[REC]]] : index, f64
// CHECK-NEXT:    irad.tape_free %[[SH]]
// CHECK:         scf.for
// CHECK-NOT:       irad.shadow_read
// CHECK:         }
// CHECK-NEXT:    %[[SUM:.*]] = arith.addf %[[DX]], %{{.*}} : f64
// CHECK-NEXT:    func.return %[[SUM]] : f64

// The gradient's reverse sweep read each record: its adjoint adds the
// cotangents of the values read into a fresh shadow, carried round the loop and
// returned as the tape argument's cotangent.
// CHECK-LABEL: func.func private @f.pullback.tape.d.pullback.tape.dcc(%tape: memref<?xf64>, %end: index, %{{.*}}: f64) -> memref<?xf64>
// CHECK:         %[[FRESH:.*]] = irad.shadow_create
// CHECK-NEXT:    %{{.*}}, %{{.*}}, %[[OUT:.*]], %{{.*}} = scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %[[S:.*]] = %[[FRESH]], %{{.*}} = %{{.*}}) -> (index, f64, memref<?xf64>, f64)
// CHECK:           %[[S2:.*]] = irad.shadow_add %[[S]][%{{.*}}] %{{.*}} : f64
// CHECK:           scf.yield %{{.*}}, %{{.*}}, %[[S2]], %{{.*}} : index, f64, memref<?xf64>, f64
// the record pushed before the loop (x): its cotangent is added after it
// CHECK:         %[[LAST:.*]] = irad.shadow_add %[[OUT]][%{{.*}}] %{{.*}}, %{{.*}} : index, f64
// CHECK-NEXT:    func.return %[[LAST]] : memref<?xf64>
