// RUN: irad-opt %s -p irad-differentiate,irad-lower-tape | filecheck %s

// Recursion: the generated functions call each other as the primal does. Each
// level pushes its own residuals (and where its recursive call left the tape)
// as one record; the pullback of a level reads that record and calls the
// pullback of the level below with that position. Nothing is recomputed, so the
// gradient of recursion depth n costs O(n).

func.func private @p(%x: f64, %n: i64) -> f64 {
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %base = arith.cmpi eq, %n, %zero : i64
  %r = scf.if %base -> (f64) {
    scf.yield %x : f64
  } else {
    %m = arith.subi %n, %one : i64
    %below = func.call @p(%x, %m) : (f64, i64) -> f64
    %s = math.sin %below : f64
    %y = arith.mulf %s, %x : f64
    scf.yield %y : f64
  }
  func.return %r : f64
}

func.func @main(%x: f64, %n: i64) -> f64 {
  %g = irad.grad @p(%x, %n) {wrt = [0]} : (f64, i64) -> f64
  func.return %g : f64
}

// CHECK:       func.func private @p.augmented.tape.dc(%x: f64, %n: i64, %tape: memref<?xf64>, %pos: index) -> (f64, memref<?xf64>, index)
// The tape and position leave the scf.if, with this level's residuals.
// CHECK:         %r, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = scf.if %base -> (f64, memref<?xf64>, index, f64, f64, index) {
// CHECK:           %below, %[[T1:.*]], %[[P1:.*]] = func.call @p.augmented.tape.dc(%x, %m, %tape, %pos) : (f64, i64, memref<?xf64>, index) -> (f64, memref<?xf64>, index)
// CHECK:           scf.yield %y, %[[T1]], %[[P1]], %s, %below, %[[P1]] : f64, memref<?xf64>, index, f64, f64, index
// CHECK:         func.return %r, %{{.*}}, %{{.*}} : f64, memref<?xf64>, index

// CHECK:       func.func private @p.pullback.tape.dc(%tape: memref<?xf64>, %end: index, %dr: f64) -> f64
// CHECK:         scf.if %base -> (f64) {
// CHECK:         } else {
// CHECK:           func.call @p.pullback.tape.dc(%tape, %{{.*}}, %{{.*}}) : (memref<?xf64>, index, f64) -> f64

// CHECK:       func.func private @p.augmented.dc(%{{.*}}: f64, %{{.*}}: i64) -> (f64, memref<?xf64>, index)
// CHECK:         memref.alloc
// CHECK:         func.call @p.augmented.tape.dc
