// RUN: irad-opt %s -p irad-inline | filecheck %s

// Recursion is judged on the primal call graph, not on symbols. Here @r's
// pullback for activity `d` calls the one for `dc`, which calls nothing
// generated for @r again: the raw call graph has no cycle, but both belong to
// the primal @r, whose graph has the edge r -> r. They are never inlined into
// each other or into callers, so a recursive primal is never unrolled.
//
// The other direction: @h's pullback calls @h itself (the primal, as a rule's
// forward may). That is one node calling itself in another role, not
// recursion, so @h.pullback.d is inlined.

// CHECK-LABEL: func.func private @r.pullback.dc(
// CHECK-LABEL: func.func private @r.pullback.d(
// CHECK:         func.call @r.pullback.dc(
// CHECK-LABEL: func.func @main(%x: f64, %dy: f64) -> (f64, f64) {
// CHECK-NEXT:    %dr = func.call @r.pullback.d(%x, %dy) : (f64, f64) -> f64
// CHECK-NEXT:    %y = math.sin %x : f64
// CHECK-NEXT:    %dh = arith.mulf %y, %dy : f64
// CHECK-NEXT:    func.return %dr, %dh : f64, f64
// CHECK-NEXT:  }

func.func private @r.pullback.dc(%x: f64, %dy: f64) -> f64 attributes {irad.primal = @r, irad.role = "pullback", irad.order = 1 : i64} {
  %d = arith.mulf %dy, %x : f64
  func.return %d : f64
}

func.func private @r.pullback.d(%x: f64, %dy: f64) -> f64 attributes {irad.primal = @r, irad.role = "pullback", irad.order = 1 : i64} {
  %d = func.call @r.pullback.dc(%x, %dy) : (f64, f64) -> f64
  func.return %d : f64
}

func.func private @h(%x: f64) -> f64 {
  %y = math.sin %x : f64
  func.return %y : f64
}

func.func private @h.pullback.d(%x: f64, %dy: f64) -> f64 attributes {irad.primal = @h, irad.role = "pullback", irad.order = 1 : i64} {
  %y = func.call @h(%x) : (f64) -> f64
  %d = arith.mulf %y, %dy : f64
  func.return %d : f64
}

func.func @main(%x: f64, %dy: f64) -> (f64, f64) {
  %dr = func.call @r.pullback.d(%x, %dy) : (f64, f64) -> f64
  %dh = func.call @h.pullback.d(%x, %dy) : (f64, f64) -> f64
  func.return %dr, %dh : f64, f64
}
