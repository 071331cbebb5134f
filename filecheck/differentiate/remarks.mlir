// RUN: irad-opt %s -p 'irad-differentiate{remarks=true}' | filecheck %s
// RUN: irad-opt %s -p irad-differentiate | filecheck %s --check-prefix=QUIET

// With remarks, each generated augmented primal records what the pass did at
// each call of its primal: which rule fired and where it is defined, or why
// the callee was differentiated instead.

func.func private @irad.numerics.softplus(%x: f64) -> f64 {
  %z = arith.constant 0.0 : f64
  %y = arith.maximumf %x, %z : f64
  func.return %y : f64
}

func.func private @irad.markers.stop_gradient(%x: f64) -> f64 {
  func.return %x : f64
}

func.func private @helper(%x: f64) -> f64 {
  %y = math.exp %x : f64
  func.return %y : f64
}

func.func @f(%x: f64) -> f64 {
  %a = func.call @irad.numerics.softplus(%x) : (f64) -> f64
  %s = func.call @irad.markers.stop_gradient(%x) : (f64) -> f64
  %b = func.call @helper(%a) : (f64) -> f64
  %c = arith.mulf %b, %s : f64
  func.return %c : f64
}

func.func @main(%x: f64) -> f64 {
  %g = irad.grad @f(%x) {wrt = [0]} : (f64) -> f64
  func.return %g : f64
}

// CHECK:      func.func private @helper.augmented.d(
// CHECK-SAME: irad.remarks = []
// CHECK:      func.func private @f.augmented.d(
// CHECK-SAME: irad.remarks = [
// CHECK-SAME: "@f: call to @irad.numerics.softplus: rule inlined [rrule for irad.numerics.softplus (float) defined at {{.*}}irad/frontend/builtin_rules.py:{{[0-9]+}}]",
// CHECK-SAME: "@f: call to @irad.markers.stop_gradient: non-differentiable; zero cotangent, no code",
// CHECK-SAME: "@f: call to @helper: no rule; callee differentiated"]

// QUIET-NOT: irad.remarks
