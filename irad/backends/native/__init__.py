"""The native backend: upstream MLIR 22 lowers a module to LLVM IR
(compile.py), llvmlite compiles it (llvm_jit.py, tiers.py, object_cache.py),
and ctypes calls it (call.py). The rest is the runtime it calls: buffers,
BLAS and LAPACK, split loops and products, vector math."""
