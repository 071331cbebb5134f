// From a hand-written request to printed derivatives with upstream tools only:
// irad-for-mlir-opt emits the module, mlir-opt 22 lowers it with irad's lowering
// pipeline (irad.backends.native.compile.LOWERING; the command of docs/ir-conventions.md),
// mlir-runner runs @main, which prints with printf("%.17g").
// REQUIRES: mlir-opt, mlir-runner
// RUN: irad-opt %s -p irad-for-mlir-opt \
// RUN: | %mlir-opt --math-expand-ops=ops=clampf --convert-math-to-funcs --convert-scf-to-cf --convert-math-to-llvm=approximate-log1p=false --convert-math-to-libm --expand-strided-metadata --lower-affine --finalize-memref-to-llvm --convert-arith-to-llvm --convert-index-to-llvm --convert-cf-to-llvm --convert-func-to-llvm --reconcile-unrealized-casts \
// RUN: | %mlir-runner -e main --entry-point-result=void | filecheck %s
// The same through stock xdsl-opt:
// RUN: xdsl-opt %s -p irad-for-mlir-opt \
// RUN: | %mlir-opt --math-expand-ops=ops=clampf --convert-math-to-funcs --convert-scf-to-cf --convert-math-to-llvm=approximate-log1p=false --convert-math-to-libm --expand-strided-metadata --lower-affine --finalize-memref-to-llvm --convert-arith-to-llvm --convert-index-to-llvm --convert-cf-to-llvm --convert-func-to-llvm --reconcile-unrealized-casts \
// RUN: | %mlir-runner -e main --entry-point-result=void | filecheck %s

llvm.mlir.global internal constant @format("%.17g\0A\00") {addr_space = 0 : i32}
llvm.func @printf(!llvm.ptr, ...) -> i32

// acc = x^4 + y (x^3 + x^2 + x + 1), by a loop (so reverse mode keeps a tape);
// f = exp(acc / 10) + sin(x y)
func.func @f(%x: f64, %y: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f64
  %acc = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %one) -> (f64) {
    %ax = arith.mulf %a, %x : f64
    %next = arith.addf %ax, %y : f64
    scf.yield %next : f64
  }
  %tenth = arith.constant 0.1 : f64
  %scaled = arith.mulf %acc, %tenth : f64
  %e = math.exp %scaled : f64
  %xy = arith.mulf %x, %y : f64
  %s = math.sin %xy : f64
  %r = arith.addf %e, %s : f64
  func.return %r : f64
}

func.func @print(%v: f64) {
  %format = llvm.mlir.addressof @format : !llvm.ptr
  %n = llvm.call @printf(%format, %v) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, f64) -> i32
  func.return
}

// The expected digits are the closed forms at x = 0.5, y = 1.25, with E = exp(0.240625):
//   f     = E + sin(0.625)                                = 1.85714120232340274...
//   df/dx = 0.1 E (4x^3 + y(3x^2 + 2x + 1)) + y cos(xy)   = 1.51457119657605523...
//   df/dy = 0.1 E (x^3 + x^2 + x + 1) + x cos(xy)         = 0.64398979651191031...
// (50-digit decimal arithmetic); each is checked to 15 significant digits.
func.func @main() {
  %x = arith.constant 0.5 : f64
  %y = arith.constant 1.25 : f64
  %v, %gx, %gy = irad.value_and_grad @f(%x, %y) {wrt = [0, 1]} : (f64, f64) -> (f64, f64, f64)
  // CHECK:      1.85714120232340{{[0-9]*}}
  // CHECK-NEXT: 1.51457119657605{{[0-9]*}}
  // CHECK-NEXT: 0.643989796511910{{[0-9]*}}
  func.call @print(%v) : (f64) -> ()
  func.call @print(%gx) : (f64) -> ()
  func.call @print(%gy) : (f64) -> ()
  // irad.vjp with the cotangent 2: twice the gradient
  %two = arith.constant 2.0 : f64
  %dx, %dy = irad.vjp @f(%x, %y, %two) {wrt = [0, 1]} : (f64, f64, f64) -> (f64, f64)
  // CHECK-NEXT: 3.02914239315211{{[0-9]*}}
  // CHECK-NEXT: 1.28797959302382{{[0-9]*}}
  func.call @print(%dx) : (f64) -> ()
  func.call @print(%dy) : (f64) -> ()
  // irad.jvp along x: df/dx again, by forward mode
  %tx = arith.constant 1.0 : f64
  %w, %t = irad.jvp @f(%x, %y, %tx) {wrt = [0]} : (f64, f64, f64) -> (f64, f64)
  // CHECK-NEXT: 1.51457119657605{{[0-9]*}}
  func.call @print(%t) : (f64) -> ()
  func.return
}
