// REQUIRES: mlir-opt
// RUN: irad-opt %s -p "irad-jvp,irad-optimize{max-depth=0}" | %mlir-opt | filecheck %s

// What irad-jvp emits is upstream MLIR: mlir-opt 22 parses it, metadata included.

func.func @f(%x: f64, %y: f64) -> f64 {
  %s = math.sin %x : f64
  %c = arith.cmpf ogt, %x, %y : f64
  %r = scf.if %c -> (f64) {
    %m = arith.mulf %s, %y : f64
    scf.yield %m : f64
  } else {
    scf.yield %y : f64
  }
  func.return %r : f64
}

func.func @main(%x: f64, %y: f64, %tx: f64, %ty: f64) -> (f64, f64) {
  %v, %t = irad.jvp @f(%x, %y, %tx, %ty) {wrt = [0, 1]} : (f64, f64, f64, f64) -> (f64, f64)
  func.return %v, %t : f64, f64
}

// CHECK: func.func private @f.jvp.dd({{.*}}) -> (f64, f64) attributes {irad.order = 1 : i64, irad.primal = @f, irad.role = "jvp"}
// CHECK: scf.if
