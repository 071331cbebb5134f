"""The IREE backend: IREE's compiler builds a module for a target, and its
runtime runs it (compile.py); forms.py rewrites what IREE does not take."""
