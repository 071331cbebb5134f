// RUN: irad-opt %s -p irad-differentiate,irad-lower-tape | filecheck %s

// scf.for: the augmented primal carries the tape, the position and a trip
// counter, and pushes one record per iteration (the body's residuals); the
// pullback runs an scf.for over the trip count that reads the records back,
// newest first, carrying the cotangent of the iter_arg and accumulating the
// cotangent of %x, which the body uses from outside. The records have a fixed
// size and the trip count is known before the loop runs, so the tape is grown
// once before the loop, and the pushes inside check nothing.

func.func @f(%x: f64, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> (f64) {
    %s = math.sin %a : f64
    %b = arith.mulf %s, %x : f64
    scf.yield %b : f64
  }
  func.return %r : f64
}

func.func @main(%x: f64, %n: index) -> f64 {
  %g = irad.grad @f(%x, %n) {wrt = [0]} : (f64, index) -> f64
  func.return %g : f64
}

// The pair callers use allocates the tape and calls the tape-threading pair.
// CHECK:       func.func @main(%x: f64, %n: index) -> f64 {
// CHECK-NEXT:    %{{.*}}, %[[T:.*]], %[[E:.*]] = func.call @f.augmented.dc(%x, %n) : (f64, index) -> (f64, memref<?xf64>, index)
// CHECK:         func.call @f.pullback.dc(%[[T]], %[[E]], %{{.*}}) : (memref<?xf64>, index, f64) -> f64
// The request's pullback runs once, so the request frees the tape.
// CHECK-NEXT:    memref.dealloc %[[T]] : memref<?xf64>

// CHECK:       func.func private @f.augmented.tape.dc(%x: f64, %n: index, %tape: memref<?xf64>, %pos: index) -> (f64, memref<?xf64>, index)
// Room for ceil((%n - 0) / 1) records of two slots and the function's own
// record of three, made once.
// CHECK:         %[[SPAN:.*]] = arith.subi %n, %c0 : index
// CHECK-NEXT:    %[[TRIPS:.*]] = arith.ceildivsi %[[SPAN]], %c1 : index
// CHECK:         %[[RECORDS:.*]] = arith.muli %{{.*}}, %[[C2:.*]] : index
// CHECK-NEXT:    %[[C3:.*]] = arith.constant 3 : index
// CHECK-NEXT:    %[[SLOTS:.*]] = arith.addi %[[RECORDS]], %[[C3]] : index
// CHECK-NEXT:    %[[NEED:.*]] = arith.addi %pos, %[[SLOTS]] : index
// CHECK:         %[[ROOM:.*]] = scf.if %{{.*}} -> (memref<?xf64>) {
// CHECK:           memref.dealloc %tape
// CHECK:         %r, %[[T2:.*]], %[[P2:.*]], %[[N:.*]] = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x, %tape_1 = %[[ROOM]], %pos_1 = %pos, %trip = %{{.*}}) -> (f64, memref<?xf64>, index, index) {
// CHECK-NEXT:      %s = math.sin %a : f64
// CHECK-NEXT:      %b = arith.mulf %s, %x : f64
// The record is [%s, %a]: two slots, no start position, no growth check.
// CHECK-NEXT:      %[[C2I:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[END:.*]] = arith.addi %pos_1, %[[C2I]] : index
// CHECK-NOT:       scf.if
// CHECK:           memref.store %s, %tape_1[%{{.*}}] : memref<?xf64>
// CHECK-NOT:       scf.if
// CHECK:           memref.store %a, %tape_1[%{{.*}}] : memref<?xf64>
// CHECK:           scf.yield %b, %tape_1, %[[END]], %{{.*}} : f64, memref<?xf64>, index, index
// The function's own record: the loop's trip count, its end position and %x.
// CHECK:         memref.store %x,
// CHECK:         func.return %r, %{{.*}}, %{{.*}} : f64, memref<?xf64>, index

// CHECK:       func.func private @f.pullback.tape.dc(%tape: memref<?xf64>, %end: index, %dr: f64) -> f64
// CHECK:         %x = memref.load %tape
// CHECK:         %{{.*}}, %[[DA:.*]], %[[DXSUM:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%end_1 = %{{.*}}, %[[CT:.*]] = %dr, %[[ACC:.*]] = %{{.*}}) -> (index, f64, f64) {
// CHECK:           %s = memref.load %tape
// CHECK:           %a = memref.load %tape
// CHECK:           %[[T1:.*]] = arith.mulf %[[CT]], %x : f64
// CHECK-NEXT:      %[[T2:.*]] = arith.mulf %[[CT]], %s : f64
// CHECK-NEXT:      %[[COS:.*]] = math.cos %a : f64
// CHECK-NEXT:      %[[NEXT:.*]] = arith.mulf %[[T1]], %[[COS]] : f64
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[ACC]], %[[T2]] : f64
// The record before this one ends where this one starts, two slots back.
// CHECK-NEXT:      %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[PREV:.*]] = arith.subi %end_1, %[[TWO]] : index
// CHECK-NEXT:      scf.yield %[[PREV]], %[[NEXT]], %[[SUM]] : index, f64, f64
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[G:.*]] = arith.addf %[[DA]], %[[DXSUM]] : f64
// CHECK-NEXT:    func.return %[[G]] : f64
