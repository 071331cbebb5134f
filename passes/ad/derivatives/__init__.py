"""The registry of op derivatives: one entry per op name, listing its reverse
rule, its forward rule and what activity analysis needs (registry.py), like
JAX's primitive_jvps and primitive_transposes beside its primitives.

The families: scalar.py (arith/math), tensor.py (tensor/linalg ops, and the
tensor forms of elementwise ops whose scalar rule does not carry over),
regions.py (scf.if/for/while and func.call, delegating to the builders),
tape.py (the tape ops, whose cotangents are shadow tapes: reverse over reverse). An op
with no entry has no derivative: the passes refuse it, naming the op.
"""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation

from irad.ir.isa import isa
from irad.passes.ad.derivatives import regions
from irad.passes.ad.derivatives import scalar
from irad.passes.ad.derivatives import tape
from irad.passes.ad.derivatives import tensor
from irad.passes.ad.derivatives.registry import OpDerivative, refusal


def _merged(*families: dict[str, OpDerivative]) -> dict[str, OpDerivative]:
    merged: dict[str, OpDerivative] = {}
    for family in families:
        twice = merged.keys() & family.keys()
        if twice:
            raise ValueError(f"ops in two derivative families: {sorted(twice)}")
        merged.update(family)
    return merged


DERIVATIVES: dict[str, OpDerivative] = _merged(scalar.ENTRIES, tensor.ENTRIES, regions.ENTRIES, tape.ENTRIES)
TENSOR_FORMS: dict[str, OpDerivative] = tensor.TENSOR_FORMS


def derivative_of(op: Operation) -> OpDerivative | None:
    """The entry for `op` (None: it has no derivative rules); an elementwise op
    on tensors gets its tensor form where it has one."""
    if op.name in TENSOR_FORMS and op.results and isa(op.results[0].type, TensorType):
        return TENSOR_FORMS[op.name]
    return DERIVATIVES.get(op.name)


def is_non_differentiable(op: Operation) -> bool:
    """Does the registry say `op`'s results carry no derivative?"""
    entry = derivative_of(op)
    return entry is not None and not entry.differentiable


def refused_reason(op: Operation) -> str:
    """Why irad refuses to differentiate `op` ("": it does not)."""
    entry = derivative_of(op)
    return entry.refused if entry is not None else ""


__all__ = [
    "DERIVATIVES",
    "TENSOR_FORMS",
    "OpDerivative",
    "derivative_of",
    "is_non_differentiable",
    "refusal",
    "refused_reason",
]
