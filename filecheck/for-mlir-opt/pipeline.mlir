// irad-for-mlir-opt: every request differentiated (reverse, then forward), the
// tape lowered, the module optimised, and the math ops MLIR 22 cannot lower
// (math.isinf, math.isnormal) expanded: no irad op is left (math.expm1:
// expm1.mlir).
// RUN: irad-opt %s -p irad-for-mlir-opt | filecheck %s
// RUN: xdsl-opt %s -p irad-for-mlir-opt | filecheck %s
// RUN: irad-opt %s -p 'irad-for-mlir-opt{checkpoint=true}' | filecheck %s

// CHECK-NOT: {{irad\.(grad|value_and_grad|vjp|jvp|tape_[a-z]+) }}
func.func @f(%x: f64, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %p = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> (f64) {
    %s = math.sin %a : f64
    scf.yield %s : f64
  }
  func.return %p : f64
}

// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %{{.*}}, %[[TAPE:.*]], %{{.*}} = func.call @f.augmented.dc(%x, %n) : (f64, index) -> (f64, memref<?xf64>, index)
// CHECK:         %g = func.call @f.pullback.dc
// CHECK-NEXT:    memref.dealloc %[[TAPE]] : memref<?xf64>
// CHECK-NEXT:    %v, %t = func.call @f.jvp.dc(%x, %n, %g) : (f64, index, f64) -> (f64, f64)
// CHECK-NEXT:    func.return %g, %t : f64, f64
func.func @main(%x: f64, %n: index) -> (f64, f64) {
  %g = irad.grad @f(%x, %n) {wrt = [0]} : (f64, index) -> f64
  %v, %t = irad.jvp @f(%x, %n, %g) {wrt = [0]} : (f64, index, f64) -> (f64, f64)
  func.return %g, %t : f64, f64
}

// CHECK-LABEL: func.func @classes
// CHECK-NEXT:    %[[ABS:.*]] = math.absf %x : f64
// CHECK-NEXT:    %[[INF:.*]] = arith.constant 0x7ff0000000000000 : f64
// CHECK-NEXT:    %i = arith.cmpf oeq, %[[ABS]], %[[INF]] : f64
// CHECK-NEXT:    %c = math.clampf %x to [%lo, %hi] : f64
// CHECK-NEXT:    func.return %i, %c : i1, f64
func.func @classes(%x: f64, %lo: f64, %hi: f64) -> (i1, f64) {
  %i = math.isinf %x : f64
  %c = math.clampf %x to [%lo, %hi] : f64
  func.return %i, %c : i1, f64
}

// CHECK-NOT: {{irad\.(grad|value_and_grad|vjp|jvp|tape_[a-z]+) }}
