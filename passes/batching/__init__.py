"""The engine of irad-vmap (passes/vmap.py): batched copies of functions,
built from the batching rules of the op registry (passes/ad/derivatives/batching.py)."""
