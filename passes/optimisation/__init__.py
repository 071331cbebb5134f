"""The optimisation engine the optimising passes (irad-optimize, irad-inline,
irad-symbol-dce) use."""
