// RUN: irad-opt %s -p irad-symbol-dce | filecheck %s

// Private functions that no public function reaches are erased, transitively;
// public functions and everything they call stay.

func.func private @used_by_used(%x: f64) -> f64 {
  func.return %x : f64
}

func.func private @used(%x: f64) -> f64 {
  %y = func.call @used_by_used(%x) : (f64) -> f64
  func.return %y : f64
}

func.func private @dead(%x: f64) -> f64 {
  %y = func.call @dead_callee(%x) : (f64) -> f64
  func.return %y : f64
}

func.func private @dead_callee(%x: f64) -> f64 {
  func.return %x : f64
}

func.func @entry(%x: f64) -> f64 {
  %y = func.call @used(%x) : (f64) -> f64
  func.return %y : f64
}

// CHECK:     func.func private @used_by_used
// CHECK:     func.func private @used
// CHECK-NOT: @dead
// CHECK:     func.func @entry
// CHECK-NOT: @dead
