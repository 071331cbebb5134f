// RUN: irad-opt %s -p 'irad-differentiate{checkpoint=true},irad-lower-tape' | filecheck %s

// Checkpointing: each iteration records only the values its body reads (%a;
// one slot, reserved before the loop), and the reversed iteration runs the body again
// (math.sin, math.cos) before the adjoint code, instead of reading %s and %c
// from the tape.

func.func @f(%x: f64, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> (f64) {
    %s = math.sin %a : f64
    %c = math.cos %a : f64
    %b = arith.mulf %s, %c : f64
    scf.yield %b : f64
  }
  func.return %r : f64
}

func.func @main(%x: f64, %n: index) -> f64 {
  %g = irad.grad @f(%x, %n) {wrt = [0]} : (f64, index) -> f64
  func.return %g : f64
}

// CHECK:       func.func private @f.augmented.tape.dc
// CHECK:         scf.for
// CHECK:           %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:      arith.addi %pos_1, %[[ONE]] : index
// CHECK-NOT:       memref.store %s
// CHECK:           memref.store %a,
// CHECK:           scf.yield

// CHECK:       func.func private @f.pullback.tape.dc
// CHECK:         scf.for
// CHECK:           %a = memref.load %tape
// CHECK-NEXT:      %s = math.sin %a : f64
// CHECK-NEXT:      %c = math.cos %a : f64
// CHECK:           arith.mulf
// CHECK:           scf.yield
