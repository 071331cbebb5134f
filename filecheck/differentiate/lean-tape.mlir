// RUN: irad-opt %s -p irad-differentiate | filecheck %s --check-prefix=PLAIN
// RUN: irad-opt %s -p "irad-differentiate{inline=true hoist=true}" | filecheck %s --check-prefix=LEAN
// RUN: irad-opt %s -p "irad-differentiate{inline=true hoist=true},irad-lower-tape" | filecheck %s --check-prefix=BYTES

// What a loop records per iteration (8 bytes a slot): `s = s + helper(x, y) * i`
// over range(3), as the frontend lowers it (issue 16, item 5).
//
// Before issue 16 the record was the iteration's start position, the index
// converted to f64, and the call's residuals sin(y), x and y: five slots, 40
// bytes per iteration, pushed with a growth check each time.
//
// With irad-differentiate alone, the call stays a call, whose residuals
// (sin(y), x, y) are recorded every iteration; the index is recomputed and the
// record has a fixed size, so no start position: 24 bytes, in room reserved
// before the loop.
//
// With inline=true hoist=true, @helper is inlined, sin(y) and x * sin(y) are
// loop-invariant and hoisted, so read from outside; the index (and sitofp of it) is recomputed
// from the reversed loop's counter; nothing is left to record: 0 bytes.

func.func private @helper(%x: f64, %y: f64) -> f64 {
  %0 = math.sin %y : f64
  %1 = arith.mulf %x, %0 : f64
  func.return %1 : f64
}

func.func @f(%x: f64, %y: f64) -> f64 {
  %s0 = arith.constant 0.000000e+00 : f64
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  %s = scf.for %k = %c0 to %c3 step %c1 iter_args(%acc = %s0) -> (f64) {
    %i = arith.index_cast %k : index to i64
    %h = func.call @helper(%x, %y) : (f64, f64) -> f64
    %fi = arith.sitofp %i : i64 to f64
    %t = arith.mulf %h, %fi : f64
    %next = arith.addf %acc, %t : f64
    scf.yield %next : f64
  }
  func.return %s : f64
}

// A loop that must record: the carried %acc and sin(x * i) (the math op stays
// recorded); x * i, one cheap op from the index and %x, is recomputed: two
// slots, 16 bytes per iteration, in room reserved before the loop.
func.func @g(%x: f64) -> f64 {
  %one = arith.constant 1.000000e+00 : f64
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  %s = scf.for %k = %c0 to %c3 step %c1 iter_args(%acc = %one) -> (f64) {
    %i = arith.index_cast %k : index to i64
    %fi = arith.sitofp %i : i64 to f64
    %u = arith.mulf %x, %fi : f64
    %v = math.sin %u : f64
    %next = arith.mulf %acc, %v : f64
    scf.yield %next : f64
  }
  func.return %s : f64
}

func.func @main(%x: f64, %y: f64) -> (f64, f64, f64) {
  %gx, %gy = irad.grad @f(%x, %y) {wrt = [0, 1]} : (f64, f64) -> (f64, f64)
  %hx = irad.grad @g(%x) {wrt = [0]} : (f64) -> f64
  func.return %gx, %gy, %hx : f64, f64, f64
}

// PLAIN:       func.func private @f.augmented.tape.dd(
// PLAIN:         scf.for
// PLAIN:           irad.tape_push %{{.*}}[%{{.*}}] reserved %{{.*}}, %{{.*}}, %{{.*}} : f64, f64, f64
// PLAIN:           scf.yield

// LEAN:        func.func @f(%x: f64, %y: f64) -> f64 {
// LEAN:          %[[SIN:.*]] = math.sin %y : f64
// LEAN-NEXT:     %[[H:.*]] = arith.mulf %x, %[[SIN]] : f64
// LEAN-NEXT:     scf.for
// LEAN-NOT:        func.call
// LEAN:            scf.yield
// LEAN:        func.func private @f.augmented.tape.dd(
// LEAN:          scf.for
// LEAN-NOT:        irad.tape_push
// LEAN:            scf.yield
// LEAN:        func.func private @f.pullback.tape.dd(
// LEAN:          scf.for %[[J:.*]] = %{{.*}} to %[[TRIPS:.*]] step
// LEAN-NOT:        irad.tape_read
// The index of iteration trips-1-j, and its sitofp, recomputed.
// LEAN:            %[[K:.*]] = arith.subi %{{.*}}, %[[J]] : index
// LEAN:            arith.index_cast
// LEAN-NEXT:       arith.sitofp
// LEAN-NOT:        irad.tape_read
// LEAN:            scf.yield
// LEAN:        func.func private @g.augmented.tape.d(
// LEAN:          irad.tape_reserve
// LEAN:          scf.for
// LEAN:            irad.tape_push %{{.*}}[%{{.*}}] reserved %v, %acc : f64, f64
// LEAN:        func.func private @g.pullback.tape.d(
// LEAN:          scf.for
// LEAN-NEXT:       %v, %acc = irad.tape_read %tape[%{{.*}}] : f64, f64
// LEAN:            arith.sitofp
// LEAN-NEXT:       %[[U:.*]] = arith.mulf %x, %{{.*}} : f64
// LEAN:            math.cos %[[U]] : f64

// Lowered: @f's loop stores nothing; @g's stores two f64 (16 bytes), with no
// growth check in the loop.
// BYTES:       func.func private @f.augmented.tape.dd(
// BYTES:         scf.for %k
// BYTES-NOT:       memref.store
// BYTES:           scf.yield
// BYTES:       func.func private @g.augmented.tape.d(
// BYTES:         scf.for %k
// BYTES-NEXT:      arith.index_cast
// BYTES-NEXT:      arith.sitofp
// BYTES-NEXT:      arith.mulf
// BYTES-NEXT:      math.sin
// BYTES-NEXT:      arith.mulf
// BYTES-NEXT:      %[[TWO:.*]] = arith.constant 2 : index
// BYTES-NEXT:      arith.addi %{{.*}}, %[[TWO]] : index
// BYTES-NOT:       scf.if
// BYTES-NOT:       memref.alloc
// BYTES:           memref.store %v
// BYTES-NOT:       scf.if
// BYTES:           memref.store %acc
// BYTES-NOT:       memref.store
// BYTES:           scf.yield
