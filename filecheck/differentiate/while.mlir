// RUN: irad-opt %s -p irad-differentiate,irad-lower-tape | filecheck %s

// scf.while: the forward loop counts its trips (an extra carried index) and
// pushes a record per trip of its `do` region; the condition region forwards
// the carried values unchanged. The reverse sweep is an scf.for over the count.

func.func @f(%x: f64) -> f64 {
  %r = scf.while (%a = %x) : (f64) -> f64 {
    %one = arith.constant 1.0 : f64
    %c = arith.cmpf ogt, %a, %one : f64
    scf.condition(%c) %a : f64
  } do {
  ^bb0(%a: f64):
    %h = arith.constant 0.5 : f64
    %s = math.sqrt %a : f64
    %b = arith.mulf %s, %h : f64
    scf.yield %b : f64
  }
  func.return %r : f64
}

func.func @main(%x: f64) -> f64 {
  %g = irad.grad @f(%x) {wrt = [0]} : (f64) -> f64
  func.return %g : f64
}

// CHECK:       func.func private @f.augmented.tape.d(%x: f64, %tape: memref<?xf64>, %pos: index) -> (f64, memref<?xf64>, index)
// CHECK:         %r, %{{.*}}, %{{.*}}, %[[TRIPS:.*]] = scf.while (%a = %x, %{{.*}} = %tape, %{{.*}} = %pos, %{{.*}} = %{{.*}}) : (f64, memref<?xf64>, index, index) -> (f64, memref<?xf64>, index, index) {
// CHECK:           scf.condition(%c) %a, %{{.*}}, %{{.*}}, %{{.*}} : f64, memref<?xf64>, index, index
// CHECK-NEXT:    } do {
// CHECK-NEXT:    ^bb0(%a_1: f64, %tape_1: memref<?xf64>, %pos_1: index, %trip: index):
// CHECK:           %s = math.sqrt %a_1 : f64
// CHECK:           memref.store %s,
// CHECK:           %[[NEXT:.*]] = arith.addi %trip, %{{.*}} : index
// CHECK:           scf.yield %b, %{{.*}}, %{{.*}}, %[[NEXT]] : f64, memref<?xf64>, index, index

// The reverse sweep is an scf.for over the trip count, read from the tape.
// CHECK:       func.func private @f.pullback.tape.d(%tape: memref<?xf64>, %end: index, %dr: f64) -> f64
// CHECK:         %[[N:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK:         %{{.*}}, %[[DX:.*]] = scf.for %{{.*}} = %{{.*}} to %[[N]] step %{{.*}} iter_args(%end_1 = %{{.*}}, %[[CT:.*]] = %dr) -> (index, f64) {
// CHECK:           %s = memref.load %tape
// CHECK:           arith.divf %{{.*}}, %s : f64
// CHECK:           scf.yield
// CHECK:         func.return %[[DX]] : f64
