"""The differentiation engine the AD passes (irad-differentiate, irad-jvp,
irad-lower-tape) use: activity, the reverse of functions and loops, the
forward sweep, the per-op derivative registry (derivatives/) and the rule
table's decisions at calls."""
