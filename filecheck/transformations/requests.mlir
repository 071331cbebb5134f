// Each Python transformation lowers to request ops in the IR (`irad lower
// --transform`), the one door into differentiation; irad's pipeline
// (passes/pipelines.py) then rewrites them (`--pipeline`: no request is left).
// RUN: irad lower %S/Inputs/programs.py:f 0.5 2.0 --transform grad --argnums 0,1 | filecheck %s --check-prefix=GRAD
// RUN: irad lower %S/Inputs/programs.py:f 0.5 2.0 --transform value_and_grad | filecheck %s --check-prefix=VALUE
// RUN: irad lower %S/Inputs/programs.py:with_aux 0.5 --transform grad --has-aux | filecheck %s --check-prefix=AUX
// RUN: irad lower %S/Inputs/programs.py:pair 0.5 2.0 --transform vjp | filecheck %s --check-prefix=VJP
// RUN: irad lower %S/Inputs/programs.py:pair 0.5 2.0 --transform jvp --argnums 1 | filecheck %s --check-prefix=JVP
// RUN: irad lower %S/Inputs/programs.py:pair 0.5 2.0 --transform jacfwd | filecheck %s --check-prefix=JACFWD
// RUN: irad lower %S/Inputs/programs.py:pair 0.5 2.0 --transform jacrev | filecheck %s --check-prefix=JACREV
// RUN: irad lower %S/Inputs/programs.py:f 0.5 2.0 --transform hessian | filecheck %s --check-prefix=HESSIAN
// RUN: irad lower %S/Inputs/programs.py:f "[0.5, 1.0]" 2.0 --transform vmap --in-axes "(0, None)" | filecheck %s --check-prefix=VMAP
// RUN: irad lower %S/Inputs/programs.py:f "[0.5, 1.0]" 2.0 --transform vmap --in-axes "(0, None)" --pipeline | filecheck %s --check-prefix=REWRITTEN
// RUN: irad lower %S/Inputs/programs.py:pair 0.5 2.0 --transform jacrev --pipeline | filecheck %s --check-prefix=REWRITTEN
// RUN: irad lower %S/Inputs/programs.py:f 0.5 2.0 --transform hessian --pipeline | filecheck %s --check-prefix=REWRITTEN

// GRAD-LABEL: func.func @f.grad(%x: f64, %y: f64) -> (f64, f64)
// GRAD-NEXT:    %0, %1 = irad.grad @f(%x, %y) {wrt = [0, 1]} : (f64, f64) -> (f64, f64)
// GRAD-NEXT:    func.return %0, %1 : f64, f64

// VALUE-LABEL: func.func @f.value_and_grad(%x: f64, %y: f64) -> (f64, f64)
// VALUE-NEXT:    %0, %1 = irad.value_and_grad @f(%x, %y) {wrt = [0]} : (f64, f64) -> (f64, f64)

// has_aux: the callee's results from #1 on are returned, never differentiated
// AUX-LABEL: func.func @with_aux.grad(%x: f64) -> (f64, f64)
// AUX-NEXT:    %0, %1, %2 = irad.value_and_grad @with_aux(%x) {wrt = [0], aux = 1} : (f64) -> (f64, f64, f64)
// AUX-NEXT:    func.return %2, %1 : f64, f64

// vjp: the augmented primal and the pullback as two public functions
// VJP: "irad.vjp_split"() <{callee = @pair, wrt = [0 : i64, 1 : i64], augmented = "pair.augmented.dd", pullback = "pair.pullback.dd"}> : () -> ()

// JVP-LABEL: func.func @pair.jvp(%x: f64, %y: f64, %0: f64) -> (f64, f64, f64, f64)
// JVP-NEXT:    %1, %2, %3, %4 = irad.jvp @pair(%x, %y, %0) {wrt = [1]} : (f64, f64, f64) -> (f64, f64, f64, f64)

// jacfwd: one jvp per element of the argument; jacrev: one vjp per element of each output
// JACFWD-LABEL: func.func @pair.jacfwd
// JACFWD:         irad.jvp @pair(%x, %y, %{{.*}}) {wrt = [0]}
// JACFWD-NOT:     irad.jvp
// JACREV-LABEL: func.func @pair.jacrev
// JACREV-COUNT-2: irad.vjp @pair(%x, %y, %{{.*}}, %{{.*}}) {wrt = [0]} : (f64, f64, f64, f64) -> f64

// hessian = jacfwd(grad): the gradient's entry, and a jvp of it
// HESSIAN-LABEL: func.func private @f.grad(%x: f64, %y: f64) -> f64
// HESSIAN-NEXT:    irad.grad @f(%x, %y) {wrt = [0]}
// HESSIAN-LABEL: func.func @f.grad.jacfwd(%x: f64, %y: f64) -> f64
// HESSIAN:         irad.jvp @f.grad(%x, %y, %{{.*}}) {wrt = [0]}

// vmap: list arguments are arrays; --in-axes as vmap's in_axes
// VMAP-LABEL: func.func @f.vmap(%x: tensor<2xf64>, %y: f64) -> tensor<2xf64>
// VMAP-NEXT:    %0 = irad.vmap @f(%x, %y) {in_axes = [0, none], out_axes = [0], axis_size = 2} : (tensor<2xf64>, f64) -> tensor<2xf64>

// REWRITTEN-NOT: irad.{{(grad|value_and_grad|vjp|vjp_split|jvp|vmap)}} @
