// Generic form: `callee` and `wrt` are properties; `wrt` holds i64 integers.
// RUN: irad-opt %s --print-op-generic | filecheck %s
// RUN: irad-opt %s --print-op-generic | irad-opt --print-op-generic | filecheck %s

func.func @f(%x: f64, %y: f64) -> f64 {
  func.return %x : f64
}

func.func @requests(%x: f64, %y: f64) -> (f64, f64, f64) {
  // CHECK: %{{.*}}, %{{.*}} = "irad.grad"(%x, %y) <{callee = @f, wrt = [0 : i64, 1 : i64]}> : (f64, f64) -> (f64, f64)
  %g:2 = irad.grad @f(%x, %y) {wrt = [0, 1]} : (f64, f64) -> (f64, f64)
  // CHECK: %v, %gy = "irad.value_and_grad"(%x, %y) <{callee = @f, wrt = [1 : i64]}> {tag = "v"} : (f64, f64) -> (f64, f64)
  %v, %gy = irad.value_and_grad @f(%x, %y) {wrt = [1], tag = "v"} : (f64, f64) -> (f64, f64)
  func.return %g#0, %v, %gy : f64, f64, f64
}
