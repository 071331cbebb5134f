"""The Python backend: a module becomes Python/numpy source (translate.py),
vectorised numpy for tensors (arrays.py), with its temporaries reused in
place (temporaries.py)."""
