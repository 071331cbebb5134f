// RUN: irad-opt %s -p irad-inline | filecheck %s
// RUN: irad-opt %s -p 'irad-inline{threshold=1}' | filecheck %s --check-prefix=SMALL
// RUN: irad-opt %s -p 'irad-inline{max-depth=1}' | filecheck %s --check-prefix=DEPTH

// Functions without irad metadata come from elsewhere: one is inlined only
// if it has at most `threshold` ops (default 32) and is on no cycle of the
// call graph. @sq and @quad are small, so @main gets them both; @even/@odd call
// each other, so they stay calls. `max-depth` caps how many levels of calls
// are nested into one function.

// CHECK-LABEL: func.func @main(%x: f64, %n: i64) -> (f64, i1) {
// CHECK-NEXT:    %y = arith.mulf %x, %x : f64
// CHECK-NEXT:    %q = arith.mulf %y, %y : f64
// CHECK-NEXT:    %e = func.call @even(%n) : (i64) -> i1
// CHECK-NEXT:    func.return %q, %e : f64, i1
// CHECK-NEXT:  }
// CHECK-NOT:   @sq
// CHECK-NOT:   @quad

// With threshold=1, @quad (two ops) stays a call; @sq (one op) is inlined into it.
// SMALL-LABEL: func.func private @quad(%x: f64) -> f64 {
// SMALL-NEXT:    %y = arith.mulf %x, %x : f64
// SMALL-NEXT:    %z = arith.mulf %y, %y : f64
// SMALL-NEXT:    func.return %z : f64
// SMALL:       func.func @main
// SMALL-NEXT:    %q = func.call @quad(%x) : (f64) -> f64

// With max-depth=1, @quad's body lands in @main, but the call it brings along
// (to @sq) is one level deeper and stays.
// DEPTH-LABEL: func.func @main
// DEPTH-NEXT:    %y = func.call @sq(%x) : (f64) -> f64
// DEPTH-NEXT:    %q = func.call @sq(%y) : (f64) -> f64

func.func private @sq(%x: f64) -> f64 {
  %y = arith.mulf %x, %x : f64
  func.return %y : f64
}

func.func private @quad(%x: f64) -> f64 {
  %y = func.call @sq(%x) : (f64) -> f64
  %z = func.call @sq(%y) : (f64) -> f64
  func.return %z : f64
}

func.func private @even(%n: i64) -> i1 {
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %done = arith.cmpi eq, %n, %zero : i64
  %r = scf.if %done -> (i1) {
    %t = arith.constant true
    scf.yield %t : i1
  } else {
    %m = arith.subi %n, %one : i64
    %o = func.call @odd(%m) : (i64) -> i1
    scf.yield %o : i1
  }
  func.return %r : i1
}

func.func private @odd(%n: i64) -> i1 {
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %done = arith.cmpi eq, %n, %zero : i64
  %r = scf.if %done -> (i1) {
    %f = arith.constant false
    scf.yield %f : i1
  } else {
    %m = arith.subi %n, %one : i64
    %e = func.call @even(%m) : (i64) -> i1
    scf.yield %e : i1
  }
  func.return %r : i1
}

func.func @main(%x: f64, %n: i64) -> (f64, i1) {
  %q = func.call @quad(%x) : (f64) -> f64
  %e = func.call @even(%n) : (i64) -> i1
  func.return %q, %e : f64, i1
}

// RUN: not irad-opt %s -p 'irad-inline{max-depth=-1}' 2>&1 | filecheck %s --check-prefix=NEGATIVE
// NEGATIVE: irad-opt: error: irad-inline: max-depth=-1 is negative
// NEGATIVE-NEXT: hint: give a count of ops (threshold, keep-shared) or call levels (max-depth); max-depth=0 turns inlining off
