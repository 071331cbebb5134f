// From the request to the printed second derivative with upstream tools
// (the pipeline of filecheck/for-mlir-opt/run.mlir): reverse over reverse
// through a loop, checked against its closed form.
// REQUIRES: mlir-opt, mlir-runner
// RUN: irad-opt %s -p irad-for-mlir-opt \
// RUN: | %mlir-opt --math-expand-ops=ops=clampf --convert-math-to-funcs --convert-scf-to-cf --convert-math-to-llvm=approximate-log1p=false --convert-math-to-libm --expand-strided-metadata --lower-affine --finalize-memref-to-llvm --convert-arith-to-llvm --convert-index-to-llvm --convert-cf-to-llvm --convert-func-to-llvm --reconcile-unrealized-casts \
// RUN: | %mlir-runner -e run --entry-point-result=void | filecheck %s

// f(x) = sum_{k=1..5} sin(k x)
func.func @f(%x: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %s = scf.for %i = %c0 to %c5 step %c1 iter_args(%acc = %zero) -> (f64) {
    %ii = arith.index_cast %i : index to i64
    %fi = arith.sitofp %ii : i64 to f64
    %k = arith.addf %fi, %one : f64
    %xk = arith.mulf %x, %k : f64
    %sn = math.sin %xk : f64
    %n = arith.addf %acc, %sn : f64
    scf.yield %n : f64
  }
  func.return %s : f64
}

func.func @d2(%x: f64) -> f64 {
  %h = irad.grad @df(%x) {wrt = [0]} : (f64) -> f64
  func.return %h : f64
}

func.func @df(%x: f64) -> f64 {
  %g = irad.grad @f(%x) {wrt = [0]} : (f64) -> f64
  func.return %g : f64
}

llvm.mlir.global internal constant @format("%.17g\0A\00") {addr_space = 0 : i32}
llvm.func @printf(!llvm.ptr, ...) -> i32

// The closed form f''(0.7) = -sum_k k^2 sin(0.7 k) = -8.945130617285383 (summed
// in float64), checked to 15 significant digits.
// CHECK: -8.94513061728538{{[0-9]*}}
func.func @run() {
  %x = arith.constant 0.7 : f64
  %h = func.call @d2(%x) : (f64) -> f64
  %format = llvm.mlir.addressof @format : !llvm.ptr
  %n = llvm.call @printf(%format, %h) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, f64) -> i32
  func.return
}
