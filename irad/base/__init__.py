"""irad's base layer, below `irad.ir`: what every layer may use and that knows
nothing of IR (errors, pytrees, the switches of irad.config, the recursion
guard, the collector pause, the large stack chunk)."""
