// REQUIRES: mlir-opt
// RUN: irad-opt %s -p 'irad-differentiate,irad-optimize{max-depth=0}' | %mlir-opt | filecheck %s

// Everything the pass emits, metadata included, parses in upstream MLIR 22
// (inlining off, so the generated functions and their metadata stay).

func.func private @sq(%x: f64) -> f64 {
  %y = arith.mulf %x, %x : f64
  func.return %y : f64
}

func.func @f(%x: f64, %n: i64) -> f64 {
  %a = func.call @sq(%x) : (f64) -> f64
  %zero = arith.constant 0.0 : f64
  %c = arith.cmpf ogt, %a, %zero : f64
  %r = scf.if %c -> (f64) {
    %l = math.log %a : f64
    scf.yield %l : f64
  } else {
    scf.yield %a : f64
  }
  func.return %r : f64
}

func.func @main(%x: f64, %n: i64) -> f64 {
  %g = irad.grad @f(%x, %n) {wrt = [0]} : (f64, i64) -> f64
  func.return %g : f64
}

// CHECK: func.func private @sq.augmented.d{{.*}} attributes {irad.order = 1 : i64, irad.primal = @sq, irad.role = "augmented_primal"}
// CHECK: func.func private @f.pullback.dc{{.*}} attributes {irad.order = 1 : i64, irad.primal = @f, irad.role = "pullback"}
