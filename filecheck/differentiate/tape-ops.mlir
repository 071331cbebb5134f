// RUN: irad-opt %s -p irad-differentiate | filecheck %s

// Without irad-lower-tape, the tape is the irad dialect's tape ops, typed by
// their records: the augmented primal creates the tape, reserves room for the
// loop's records (the trip count is known before it runs, and each record is
// two slots) and for its own last record (three slots: the loop is the last op
// that records, so that push finds room too), pushes one record per iteration
// ([%s, %a], into that room) and then its own ([trip count, end, %x]); the pullback reads them back, its own
// first, stepping back two slots a record; the request frees the tape.

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

// CHECK:       func.func @main(
// CHECK:         %{{.*}}, %[[T:.*]], %{{.*}} = func.call @f.augmented.dc(%x, %n)
// CHECK:         func.call @f.pullback.dc(%[[T]],
// CHECK-NEXT:    irad.tape_free %[[T]]

// CHECK:       func.func private @f.augmented.tape.dc(%x: f64, %n: index, %tape: memref<?xf64>, %pos: index)
// CHECK:         %[[TRIPS0:.*]] = arith.maxsi
// At most 2^50 slots (2^49 + 1 records of two): the product cannot wrap around.
// CHECK-NEXT:    %[[MOST:.*]] = arith.constant 562949953421313 : index
// CHECK-NEXT:    %[[TRIPS1:.*]] = arith.minsi %[[TRIPS0]], %[[MOST]] : index
// CHECK-NEXT:    %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[RECORDS:.*]] = arith.muli %[[TRIPS1]], %[[TWO]] : index
// CHECK-NEXT:    %[[THREE:.*]] = arith.constant 3 : index
// CHECK-NEXT:    %[[SLOTS:.*]] = arith.addi %[[RECORDS]], %[[THREE]] : index
// CHECK-NEXT:    %[[ROOM:.*]] = irad.tape_reserve %tape[%pos] %[[SLOTS]]
// CHECK:         %r, %[[T1:.*]], %[[P1:.*]], %[[N:.*]] = scf.for {{.*}} iter_args(%a = %x, %tape_1 = %[[ROOM]], %pos_1 = %pos,
// CHECK:           %[[T2:.*]], %[[P2:.*]] = irad.tape_push %tape_1[%pos_1] reserved %s, %a : f64, f64
// CHECK:           scf.yield %b, %[[T2]], %[[P2]], %{{.*}} : f64, memref<?xf64>, index, index
// CHECK:         %[[T3:.*]], %[[P3:.*]] = irad.tape_push %[[T1]][%[[P1]]] %[[N]], %[[P1]], %x : index, index, f64
// CHECK-NEXT:    func.return %r, %[[T3]], %[[P3]] : f64, memref<?xf64>, index

// CHECK:       func.func private @f.pullback.tape.dc(%tape: memref<?xf64>, %end: index, %dr: f64)
// CHECK-NEXT:    %[[TRIPS:.*]], %[[LOOP_END:.*]], %x = irad.tape_read %tape[%end] : index, index, f64
// CHECK:         scf.for %{{.*}} = %{{.*}} to %[[TRIPS]] step %{{.*}} iter_args(%end_1 = %[[LOOP_END]],
// CHECK-NEXT:      %s, %a = irad.tape_read %tape[%end_1] : f64, f64
// CHECK:           %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[START:.*]] = arith.subi %end_1, %[[C2]] : index
// CHECK-NEXT:      scf.yield %[[START]],

// CHECK:       func.func private @f.augmented.dc(%0: f64, %1: index)
// CHECK-NEXT:    %[[NEW:.*]], %[[ZERO:.*]] = irad.tape_create
// CHECK-NEXT:    func.call @f.augmented.tape.dc(%0, %1, %[[NEW]], %[[ZERO]])
