"""Every elementwise entry of the registry of op derivatives, differentiated.

For each differentiable unary or binary elementwise entry (passes/derivatives/),
on f64 and f32 scalars and on f64 tensors, a tiny function applying the op is
differentiated by the real passes (irad.grad and irad.jvp requests, then the
optimisation pipeline) and run on the Python backend, at seeded random points
inside the op's domain. It checks that

(a) the reverse rule agrees with central finite differences, and
(b) forward and reverse agree: <J v, u> = <v, J^T u>.

A new entry joins the sweep by itself, and fails until DOMAINS says where to
sample it.
"""

from __future__ import annotations

import numpy as np
import pytest

from irad.backends.python import compile_module
from irad.ir.dialect import make_context
from irad.passes.derivatives import DERIVATIVES, TENSOR_FORMS
from irad.pipeline import gradient_spec, jvp_spec, run
from xdsl.parser import Parser

CONTEXT = make_context()


def _uniform(lo: float, hi: float):
    return lambda rng, shape: rng.uniform(lo, hi, shape)


def _away_from_zero(lo: float, hi: float):
    """|x| in [lo, hi], either sign (ops with a kink or pole at 0)."""
    return lambda rng, shape: rng.uniform(lo, hi, shape) * rng.choice([-1.0, 1.0], shape)


WIDE = _uniform(-2.0, 2.0)
NONZERO = _away_from_zero(0.2, 2.0)
POSITIVE = _uniform(0.2, 3.0)

# op -> a sampler per operand: points where the op is smooth
DOMAINS = {
    "arith.addf": (WIDE, WIDE),
    "arith.subf": (WIDE, WIDE),
    "arith.mulf": (WIDE, WIDE),
    "arith.divf": (WIDE, NONZERO),
    "arith.negf": (WIDE,),
    # random points: ties (where the derivative jumps) have probability zero
    "arith.maximumf": (WIDE, WIDE),
    "arith.maxnumf": (WIDE, WIDE),
    "arith.minimumf": (WIDE, WIDE),
    "arith.minnumf": (WIDE, WIDE),
    "arith.extf": (WIDE,),
    "arith.truncf": (WIDE,),
    "math.sin": (WIDE,),
    "math.cos": (WIDE,),
    "math.tan": (_uniform(-1.2, 1.2),),
    "math.exp": (WIDE,),
    "math.exp2": (WIDE,),
    "math.expm1": (WIDE,),
    "math.log": (POSITIVE,),
    "math.log2": (POSITIVE,),
    "math.log10": (POSITIVE,),
    "math.log1p": (_uniform(-0.5, 2.0),),
    "math.sqrt": (POSITIVE,),
    "math.rsqrt": (POSITIVE,),
    "math.cbrt": (NONZERO,),
    "math.tanh": (WIDE,),
    "math.sinh": (WIDE,),
    "math.cosh": (WIDE,),
    "math.asin": (_uniform(-0.9, 0.9),),
    "math.asinh": (WIDE,),
    "math.acos": (_uniform(-0.9, 0.9),),
    "math.atan": (WIDE,),
    "math.atan2": (NONZERO, NONZERO),
    "math.powf": (POSITIVE, WIDE),
    "math.absf": (NONZERO,),
    "math.copysign": (NONZERO, NONZERO),
    "math.erf": (WIDE,),
}

# ops that change the float type: (operand type, result type)
CONVERSIONS = {"arith.extf": ("f32", "f64"), "arith.truncf": ("f64", "f32")}
# elementwise ops the Python backend does not run on tensors yet (the frontend
# never emits them on arrays): strict xfails, so support shows up here
NO_TENSOR_BACKEND = {"arith.maxnumf", "arith.minnumf", "math.asinh", "math.cbrt", "math.erf", "math.rsqrt"}
SHAPE = (3,)


def _arity(name: str) -> int:
    return len(CONTEXT.get_op(name).get_irdl_definition().operands)


SWEPT = sorted(
    name
    for name, entry in DERIVATIVES.items()
    if entry.differentiable and entry.elementwise and not entry.structured and _arity(name) in (1, 2)
)


def _cases():
    """(op, form): f64 and f32 scalars and f64 tensors (a conversion: its own types)."""
    for name in SWEPT:
        forms = [CONVERSIONS[name][0], "tensor"] if name in CONVERSIONS else ["f64", "f32", "tensor"]
        for form in forms:
            marks = []
            if form == "tensor" and name in NO_TENSOR_BACKEND:
                marks = [pytest.mark.xfail(reason="not on tensors in the Python backend", strict=True)]
            yield pytest.param(name, form, marks=marks, id=f"{name}-{form}")


def _types(name: str, form: str) -> tuple[str, str, str]:
    """(operand type, result type, result element type) of the swept function."""
    element, result = CONVERSIONS.get(name, ("f64" if form == "tensor" else form,) * 2)
    if form == "tensor":
        return f"tensor<{SHAPE[0]}x{element}>", f"tensor<{SHAPE[0]}x{result}>", result
    return element, result, result


def _module(name: str, n: int, form: str):
    """Two modules with @op(args) applying the op and @loss(args, u) =
    sum(u * op(args)) (the cotangent u makes irad.grad give J^T u): one requests
    @grad of @loss, the other @jvp of @op, each through its pipeline."""
    t, r, scalar = _types(name, form)
    params = ", ".join(f"%a{i}: {t}" for i in range(n))
    args = ", ".join(f"%a{i}" for i in range(n))
    arg_types = ", ".join([t] * n)
    wrt = ", ".join(str(i) for i in range(n))
    tangents = ", ".join(f"%t{i}" for i in range(n))
    tangent_params = ", ".join(f"%t{i}: {t}" for i in range(n))
    lines, elements = [], ["%p"]
    if form == "tensor":  # the elements, extracted one by one
        elements = [f"%e{k}" for k in range(SHAPE[0])]
        for k in range(SHAPE[0]):
            lines.append(f"  %i{k} = arith.constant {k} : index\n  %e{k} = tensor.extract %p[%i{k}] : {r}\n")
    total = "%zero"
    for k, e in enumerate(elements):
        lines.append(f"  %s{k} = arith.addf {total}, {e} : {scalar}\n")
        total = f"%s{k}"
    summed = "".join(lines)
    functions = f"""
func.func @op({params}) -> {r} {{
  %r = "{name}"({args}) : ({arg_types}) -> {r}
  func.return %r : {r}
}}
func.func @loss({params}, %u: {r}) -> {scalar} {{
  %r = "{name}"({args}) : ({arg_types}) -> {r}
  %p = arith.mulf %r, %u : {r}
  %zero = arith.constant 0.0 : {scalar}
{summed}  func.return {total} : {scalar}
}}
"""
    grad = f"""
func.func @grad({params}, %u: {r}) -> ({arg_types}) {{
  %g:{n} = irad.grad @loss({args}, %u) {{wrt = [{wrt}]}} : ({arg_types}, {r}) -> ({arg_types})
  func.return %g#{", %g#".join(str(i) for i in range(n))} : {arg_types}
}}
"""
    jvp = f"""
func.func @jvp({params}, {tangent_params}) -> ({r}, {r}) {{
  %v, %t = irad.jvp @op({args}, {tangents}) {{wrt = [{wrt}]}} : ({arg_types}, {arg_types}) -> ({r}, {r})
  func.return %v, %t : {r}, {r}
}}
"""
    reverse, forward = Parser(CONTEXT, functions + grad).parse_module(), Parser(CONTEXT, functions + jvp).parse_module()
    run(reverse, gradient_spec())
    run(forward, jvp_spec())
    return compile_module(reverse), compile_module(forward)


def _dtype(t: str):
    return np.float32 if "f32" in t else np.float64


@pytest.mark.parametrize(("name", "form"), list(_cases()))
def test_reverse_matches_differences_and_forward(name, form):
    assert name in DOMAINS, f"{name}: add where to sample it to DOMAINS in {__file__}"
    samplers = DOMAINS[name]
    n = _arity(name)
    assert len(samplers) == n, f"{name}: DOMAINS gives {len(samplers)} samplers for {n} operands"
    t, r, _ = _types(name, form)
    reverse, forward = _module(name, n, form)
    grad, loss, jvp = reverse.function("grad"), reverse.function("loss"), forward.function("jvp")
    shape = SHAPE if form == "tensor" else ()
    as_t, as_r = _dtype(t), _dtype(r)
    # f32 resolves ~1e-7: a wider step and looser tolerances for differences
    f32 = as_t is np.float32 or as_r is np.float32
    h, rtol, atol = (1e-2, 2e-2, 2e-3) if f32 else (1e-6, 1e-6, 1e-8)
    rng = np.random.default_rng(sum(map(ord, name + form)))
    for _ in range(5):
        xs = [np.asarray(s(rng, shape), as_t) for s in samplers]
        u = np.asarray(rng.uniform(-1.0, 1.0, shape), as_r)
        vs = [np.asarray(rng.uniform(-1.0, 1.0, shape), as_t) for _ in range(n)]
        cotangents = [np.asarray(g, np.float64) for g in grad(*xs, u)]  # J^T u per operand
        # (a) <v, J^T u> against central differences of <u, f> along v
        up = loss(*(x + h * v for x, v in zip(xs, vs)), u)[0]
        down = loss(*(x - h * v for x, v in zip(xs, vs)), u)[0]
        difference = (float(up) - float(down)) / (2 * h)
        reverse = sum(float(np.sum(c * v)) for c, v in zip(cotangents, vs))
        assert reverse == pytest.approx(difference, rel=rtol, abs=atol), (name, form, xs)
        # (b) <J v, u> from the jvp against <v, J^T u> from the gradient
        _, tangent = jvp(*xs, *vs)
        forward = float(np.sum(np.asarray(tangent, np.float64) * u))
        assert forward == pytest.approx(reverse, rel=1e-5 if f32 else 1e-12, abs=1e-6 if f32 else 1e-14), (
            name, form, xs)


def test_every_tensor_form_is_swept():
    assert set(TENSOR_FORMS) <= set(SWEPT)
