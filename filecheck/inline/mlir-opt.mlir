// REQUIRES: mlir-opt
// RUN: irad-opt %s -p irad-inline | %mlir-opt | filecheck %s

// What the inliner keeps, the metadata of a recursive primal's generated
// functions included, parses in upstream MLIR 22 (which sorts attributes).

// CHECK:       func.func private @r.pullback.d(%{{.*}}: f64, %{{.*}}: f64) -> f64 attributes {irad.order = 1 : i64, irad.primal = @r, irad.role = "pullback"}
// CHECK:         call @r.pullback.d(
// CHECK-LABEL: func.func @main(
// CHECK:         call @r.pullback.d(
// CHECK-NOT:     call @f.pullback.d(

func.func private @f.pullback.d(%x: f64, %dy: f64) -> f64 attributes {irad.primal = @f, irad.role = "pullback", irad.order = 1 : i64} {
  %c = math.cos %x : f64
  %dx = arith.mulf %dy, %c : f64
  func.return %dx : f64
}

func.func private @r.pullback.d(%x: f64, %dy: f64) -> f64 attributes {irad.primal = @r, irad.role = "pullback", irad.order = 1 : i64} {
  %zero = arith.constant 0.0 : f64
  %more = arith.cmpf ogt, %x, %zero : f64
  %dx = scf.if %more -> (f64) {
    %one = arith.constant 1.0 : f64
    %y = arith.subf %x, %one : f64
    %d = func.call @r.pullback.d(%y, %dy) : (f64, f64) -> f64
    scf.yield %d : f64
  } else {
    scf.yield %dy : f64
  }
  func.return %dx : f64
}

func.func @main(%x: f64, %dy: f64) -> (f64, f64) {
  %df = func.call @f.pullback.d(%x, %dy) : (f64, f64) -> f64
  %dr = func.call @r.pullback.d(%x, %dy) : (f64, f64) -> f64
  func.return %df, %dr : f64, f64
}
