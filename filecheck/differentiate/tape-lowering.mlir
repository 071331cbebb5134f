// REQUIRES: mlir-opt
// RUN: irad-opt %s -p irad-differentiate,irad-lower-tape,irad-optimize | %mlir-opt --math-expand-ops=ops=clampf --convert-math-to-funcs --convert-scf-to-cf --convert-math-to-llvm=approximate-log1p=false --convert-math-to-libm --expand-strided-metadata --lower-affine --finalize-memref-to-llvm --convert-arith-to-llvm --convert-index-to-llvm --convert-cf-to-llvm --convert-func-to-llvm --reconcile-unrealized-casts > %t
// RUN: filecheck %s < %t
// RUN: not grep -E '(scf|memref)[.]' %t

// The tape is standard memref/arith/scf: a module with reversed scf.for,
// scf.while and recursion lowers to the LLVM dialect in upstream MLIR 22.

func.func private @rec(%x: f64, %n: i64) -> f64 {
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %base = arith.cmpi eq, %n, %zero : i64
  %r = scf.if %base -> (f64) {
    scf.yield %x : f64
  } else {
    %m = arith.subi %n, %one : i64
    %below = func.call @rec(%x, %m) : (f64, i64) -> f64
    %s = math.sin %below : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}

func.func @f(%x: f64, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> (f64) {
    %s = math.sin %a : f64
    %b = arith.mulf %s, %x : f64
    scf.yield %b : f64
  }
  %w = scf.while (%a = %r) : (f64) -> f64 {
    %one = arith.constant 1.0 : f64
    %c = arith.cmpf ogt, %a, %one : f64
    scf.condition(%c) %a : f64
  } do {
  ^bb0(%a: f64):
    %s = math.sqrt %a : f64
    scf.yield %s : f64
  }
  %k = arith.constant 3 : i64
  %t = func.call @rec(%w, %k) : (f64, i64) -> f64
  func.return %t : f64
}

func.func @main(%x: f64, %n: index) -> f64 {
  %g = irad.grad @f(%x, %n) {wrt = [0]} : (f64, index) -> f64
  func.return %g : f64
}

// CHECK:     llvm.func @main
// CHECK:     llvm.call @malloc
