"""Derivatives of contractions (einsum as one linalg.generic, irad/ir/contraction.py).

A contraction is linear in each input, so both rules are contractions again:

- reverse: the cotangent of input k contracts the output's cotangent with the
  other inputs, with input k's subscripts as the output (letters only input k
  has become a broadcast);
- forward: the sum over the inputs with a tangent of the contraction with that
  input replaced by its tangent.

The zero init the frontend gives the op is a constant; should it carry a
derivative, its cotangent is the output's and its tangent adds (for a
contraction with reductions; one without never reads its init).
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from irad.ir import contraction as C
from irad.ir import tensor as T


def reverse(b, op: Operation, dy: SSAValue) -> list[SSAValue | None]:
    ins, out = C.subscripts(op)
    inputs = list(op.inputs)
    cotangents: list[SSAValue | None] = []
    for k, value in enumerate(inputs):
        if not b.is_active(value):
            cotangents.append(None)
            continue
        others = [b.primal(v) for i, v in enumerate(inputs) if i != k]
        letters = [s for i, s in enumerate(ins) if i != k]
        sizes = dict(zip(ins[k], T.shape(value)))
        cotangents.append(C.contract(b, [dy, *others], [out, *letters], ins[k], sizes))
    init = op.outputs[0]
    cotangents.append(dy if b.is_active(init) and C.sums(op) else None)
    return cotangents


def forward(b, op: Operation) -> SSAValue | None:
    ins, out = C.subscripts(op)
    inputs = list(op.inputs)
    sizes = dict(zip(out, T.shape(op.results[0])))
    total = None
    for k, value in enumerate(inputs):
        if value not in b.tangents:
            continue
        operands = [b.tangents[v] if i == k else b.primal(v) for i, v in enumerate(inputs)]
        part = C.contract(b, operands, ins, out, sizes)
        total = part if total is None else b.add(total, part)
    init = op.outputs[0]
    if init in b.tangents and C.sums(op):
        total = b.tangents[init] if total is None else b.add(total, b.tangents[init])
    return total
