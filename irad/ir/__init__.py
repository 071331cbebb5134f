"""The shared IR vocabulary every layer above builds on.

dialect (the irad ops), types (the one differentiability predicate), tensor (the
tensor-op vocabulary), ieee (what arith/math ops compute on IEEE floats),
constants, metadata (provenance of generated functions), locations, symbols and
the builder. Nothing here imports another irad layer.
"""

from irad.ir import dense_bools  # noqa: E402,F401  (xDSL prints large bool constants MLIR cannot read)
from irad.ir import dense_splats  # noqa: E402,F401  (xDSL's parser stores a splat element by element)
