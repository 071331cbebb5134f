"""Backends that run a differentiated xDSL module."""

from irad.backends.python import CompiledModule, compile_module

__all__ = ["CompiledModule", "compile_module"]
