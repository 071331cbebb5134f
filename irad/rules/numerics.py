"""Rules for irad's numerically stable helpers (irad/numerics.py).

Each forward calls the helper itself (its body is already stable) and keeps
what the pullback needs; each pullback is the closed-form derivative, which is
exact at the kinks where AD through max/abs would pick a one-sided slope.
"""

from xdsl.dialects.builtin import f64 as F64
from irad.rules.from_mlir import mlir_rule

SIGMOID = mlir_rule("irad.numerics.sigmoid", (F64,), """
func.func private @irad.numerics.sigmoid(f64) -> f64
func.func @forward(%x: f64) -> (f64, f64) {
  %y = func.call @irad.numerics.sigmoid(%x) : (f64) -> f64
  func.return %y, %y : f64, f64
}
func.func @pullback(%y: f64, %dy: f64) -> f64 {
  // dy * y * (1 - y)
  %one = arith.constant 1.0 : f64
  %c = arith.subf %one, %y : f64
  %s = arith.mulf %y, %c : f64
  %dx = arith.mulf %dy, %s : f64
  func.return %dx : f64
}
""")

SOFTPLUS = mlir_rule("irad.numerics.softplus", (F64,), """
func.func private @irad.numerics.softplus(f64) -> f64
func.func @forward(%x: f64) -> (f64, f64) {
  %y = func.call @irad.numerics.softplus(%x) : (f64) -> f64
  func.return %y, %x : f64, f64
}
func.func @pullback(%x: f64, %dy: f64) -> f64 {
  // dy * sigmoid(x), with sigmoid(x) = 0.5 * tanh(x / 2) + 0.5
  %half = arith.constant 0.5 : f64
  %hx = arith.mulf %half, %x : f64
  %t = math.tanh %hx : f64
  %ht = arith.mulf %half, %t : f64
  %s = arith.addf %ht, %half : f64
  %dx = arith.mulf %dy, %s : f64
  func.return %dx : f64
}
""")

LOGADDEXP = mlir_rule("irad.numerics.logaddexp", (F64, F64), """
func.func private @irad.numerics.logaddexp(f64, f64) -> f64
func.func @forward(%a: f64, %b: f64) -> (f64, f64, f64) {
  %y = func.call @irad.numerics.logaddexp(%a, %b) : (f64, f64) -> f64
  func.return %y, %a, %b : f64, f64, f64
}
func.func @pullback(%a: f64, %b: f64, %dy: f64) -> (f64, f64) {
  // the softmax weights sigmoid(a - b), sigmoid(b - a) = 1/2 +- tanh((a - b)/2)/2,
  // exactly 1/2 each on a tie
  %half = arith.constant 0.5 : f64
  %d = arith.subf %a, %b : f64
  %hd = arith.mulf %half, %d : f64
  %t = math.tanh %hd : f64
  %ht = arith.mulf %half, %t : f64
  %wa = arith.addf %half, %ht : f64
  %wb = arith.subf %half, %ht : f64
  %da = arith.mulf %dy, %wa : f64
  %db = arith.mulf %dy, %wb : f64
  func.return %da, %db : f64, f64
}
""")

HYPOT = mlir_rule("irad.numerics.hypot", (F64, F64), """
func.func private @irad.numerics.hypot(f64, f64) -> f64
func.func @forward(%x: f64, %y: f64) -> (f64, f64, f64, f64) {
  %h = func.call @irad.numerics.hypot(%x, %y) : (f64, f64) -> f64
  func.return %h, %x, %y, %h : f64, f64, f64, f64
}
func.func @pullback(%x: f64, %y: f64, %h: f64, %dh: f64) -> (f64, f64) {
  // (x, y) / h, scaled by the cotangent
  %s = arith.divf %dh, %h : f64
  %dx = arith.mulf %s, %x : f64
  %dy = arith.mulf %s, %y : f64
  func.return %dx, %dy : f64, f64
}
""")

RULES = [SIGMOID, SOFTPLUS, LOGADDEXP, HYPOT]
