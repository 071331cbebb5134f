// RUN: irad-opt %s -p irad-differentiate | filecheck %s

// An scf.for whose bounds are constants (through an index_cast here, as the
// frontend makes them) runs a number of times known at compile time: the
// pullback's reversed loop counts to that constant, and the augmented primal
// leaves only the loop's end position on the tape, not its trip count
// (passes/ad/reverse_loops.py, static_trip_count). The reversed loop's static bounds are
// what irad-sink-accumulations needs to stack its records.

func.func @f(%x: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 4 : i64
  %c4 = arith.index_cast %n : i64 to index
  %one = arith.constant 1.0 : f64
  %s = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %one) -> (f64) {
    %sn = math.sin %acc : f64
    %p = arith.mulf %sn, %x : f64
    scf.yield %p : f64
  }
  func.return %s : f64
}

func.func @df(%x: f64) -> f64 {
  %g = irad.grad @f(%x) {wrt = [0]} : (f64) -> f64
  func.return %g : f64
}

// CHECK-LABEL: func.func private @f.augmented.tape.d(
// CHECK:         scf.for
// CHECK:         }
// CHECK-NEXT:    %{{.*}}, %{{.*}} = irad.tape_push %{{.*}}[%[[END:.*]]] %[[END]], %x : index, f64
// CHECK-LABEL: func.func private @f.pullback.tape.d(
// CHECK-NEXT:    %[[LAST:.*]], %x = irad.tape_read %tape[%end] : index, f64
// CHECK:         %[[FOUR:.*]] = arith.constant 4 : index
// CHECK:         scf.for %{{.*}} = %{{.*}} to %[[FOUR]] step %{{.*}} iter_args(%{{.*}} = %[[LAST]],
