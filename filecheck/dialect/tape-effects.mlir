// The tape ops' memory effects: DCE and CSE keep every push (even an unused one,
// even two alike), while reads are loads: an unused one goes, equal ones merge.
// RUN: irad-opt %s -p dce,cse | filecheck %s
// RUN: irad-opt %s -p irad-optimize | filecheck %s

func.func @f(%t: memref<?xf64>, %p: index, %x: f64) -> f64 {
  %t1, %e1 = irad.tape_push %t[%p] %x : f64
  %t2, %e2 = irad.tape_push %t[%p] %x : f64
  %unused = irad.tape_read %t2[%e2] : f64
  %a = irad.tape_read %t2[%e2] : f64
  %b = irad.tape_read %t2[%e2] : f64
  %s = arith.addf %a, %b : f64
  func.return %s : f64
}

// CHECK:      %t1, %e1 = irad.tape_push %t[%p] %x : f64
// CHECK-NEXT: %t2, %e2 = irad.tape_push %t[%p] %x : f64
// CHECK-NEXT: %a = irad.tape_read %t2[%e2] : f64
// CHECK-NEXT: %s = arith.addf %a, %a : f64
// CHECK-NEXT: func.return %s : f64
