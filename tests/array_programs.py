"""numpy programs for tests/test_arrays.py (irad lowers from source, so they live in a file)."""

import numpy as np


# ---- elementwise arithmetic and broadcasting --------------------------------------
def add_mul(x, y):
    return np.sum(x * y + x - y / 3.0)


def div(x, y):
    return np.sum(x / y)


def scalar_times_array(s, x):
    return np.sum(s * x + x * 2.0 - 1.0)


def negate_pow(x):
    return np.sum(-(x**3) + x**-2 + 2.0**x)


def power(x, y):
    return np.sum(np.power(x, y))


# ---- ufuncs -------------------------------------------------------------------------
def u_sin(x):
    return np.sum(np.sin(x))


def u_cos(x):
    return np.sum(np.cos(x))


def u_tan(x):
    return np.sum(np.tan(x))


def u_exp(x):
    return np.sum(np.exp(x))


def u_log(x):
    return np.sum(np.log(x))


def u_log1p(x):
    return np.sum(np.log1p(x))


def u_expm1(x):
    return np.sum(np.expm1(x))


def u_sqrt(x):
    return np.sum(np.sqrt(x))


def u_tanh(x):
    return np.sum(np.tanh(x))


def u_abs(x):
    return np.sum(np.abs(x) + abs(x))


def u_sign(x):
    return np.sum(np.sign(x) * x)


def u_maximum(x, y):
    return np.sum(np.maximum(x, y))


def u_minimum(x, y):
    return np.sum(np.minimum(x, y))


def u_where(x, y):
    return np.sum(np.where(x > y, x * y, x - y))


def u_clip(x):
    return np.sum(np.clip(x, -0.5, 0.5) * x)


def u_scalar_ufunc(s):
    return np.sin(s) * np.exp(s)


# ---- reductions ---------------------------------------------------------------------
def r_sum_axis0(x):
    return np.sum(np.sin(np.sum(x, axis=0)))


def r_sum_axis_neg(x):
    return np.sum(np.sin(x.sum(axis=-1)))


def r_sum_keepdims(x):
    return np.sum(np.sin(x - np.sum(x, axis=1, keepdims=True)))


def r_sum_tuple_axes(x):
    return np.sum(np.cos(np.sum(x, axis=(0, 2))))


def r_mean(x):
    return np.mean(x**2) + np.sum(np.sin(np.mean(x, axis=0)))


def r_mean_keepdims(x):
    return np.sum((x - x.mean(axis=-1, keepdims=True)) ** 2)


def r_max(x):
    return np.max(x) + np.sum(np.max(x, axis=1) ** 2)


def r_min(x):
    return np.sum(np.min(x, axis=0, keepdims=True) * 3.0) + x.min()


def r_prod(x):
    return np.prod(x) + np.sum(np.prod(x, axis=0))


# ---- linear algebra -------------------------------------------------------------------
def la_matmul(a, b):
    return np.sum(np.sin(a @ b))


def la_matvec(a, v):
    return np.sum(np.tanh(a @ v))


def la_vecmat(v, a):
    return np.sum(np.tanh(np.dot(v, a)))


def la_dot(u, v):
    return np.dot(u, v) * np.dot(u, u)


def la_outer(u, v):
    return np.sum(np.sin(np.outer(u, v)))


def la_trace(a):
    return np.trace(a @ a)


def la_transpose(a):
    return np.sum(np.sin(a.T) * np.arange(a.shape[0])) + np.sum(np.transpose(a) ** 2)


# ---- shapes ------------------------------------------------------------------------------
def s_reshape(x):
    return np.sum(np.sin(np.reshape(x, (3, 4))) * np.arange(4.0)) + np.sum(x.reshape(-1) ** 2)


def s_newaxis(u, v):
    return np.sum(np.sin(u[:, None] * v[None, :]))


def s_squeeze(x):
    return np.sum(np.sin(np.squeeze(x)) * np.arange(3.0))


def s_concatenate(x, y):
    return np.sum(np.sin(np.concatenate([x, y], axis=0)) * np.arange(5.0)[:, None])


def s_stack(x, y):
    return np.sum(np.sin(np.stack([x, y], axis=1)) * np.arange(2.0))


def s_shape(x):
    n = x.shape[0]
    return np.sum(x) / n + len(x) * x[0, 0] + x.ndim * x.size * 0.0


# ---- creation -----------------------------------------------------------------------------
def c_creation(x):
    z = np.zeros(3) + np.ones((3,)) * 2.0 + np.full(3, 0.5) + np.eye(3)[0]
    return np.sum(x * z + np.ones_like(x) * x + np.zeros_like(x) + np.full_like(x, 2.0) * x)


def c_arange(x):
    return np.sum(x * np.arange(x.shape[0]) + x * np.arange(1, 7, 2))


def c_array(a, b):
    v = np.array([a, b, a * b])
    return np.sum(np.sin(v))


# ---- indexing -------------------------------------------------------------------------------
def i_int(x):
    return x[1, 2] * x[-1, 0] + np.sum(np.sin(x[0]))


def i_slices(x):
    return np.sum(np.sin(x[1:3, ::2])) + np.sum(x[:, -2:] ** 2)


def i_runtime_start(x, i):
    return np.sum(np.sin(x[i:i + 2]))


def i_runtime_int(x, i):
    return x[i] * x[i - 1]


def i_int_array(x, idx):
    return np.sum(np.sin(x[idx]))


def i_compare(x):
    return np.sum(np.where(x >= 0.0, x, 0.0) * np.where(x < x.T, 1.0, 2.0))


# ---- in-place writes ------------------------------------------------------------------------
def w_set_element(x):
    y = np.zeros(3)
    y[0] = x[1] * x[2]
    y[2] = np.sin(x[0])
    return np.sum(y * np.arange(1.0, 4.0))


def w_slice_add(x, v):
    y = np.ones((4, 3))
    y[1:3] += v
    y[0, :] = x
    return np.sum(np.sin(y))


def w_scale_element(x):
    y = np.copy(x)
    y[0, 1] *= 3.0
    y[1, :] -= x[0]
    return np.sum(y**2)


def w_runtime_index(x, i):
    y = np.zeros_like(x)
    y[i] = x[i] ** 2
    y[i:i + 1] += 1.0
    return np.sum(y * x)


def w_argument(x):
    x[0] = 1.0
    return np.sum(x)


def w_view_of_argument(x):
    z = x[1:]
    z[0] = 2.0
    return np.sum(x)


def _first_row(a):
    return a[0]


def w_call_result(x):
    z = _first_row(np.ones((2, 3)))
    z[1] = x[0]
    return np.sum(z)


# ---- float32 ----------------------------------------------------------------------------------
def f32_program(x, w):
    return np.sum(np.tanh(x @ w) * 0.5)


# ---- composite programs -------------------------------------------------------------------
def mlp_loss(w1, b1, w2, b2, x, y):
    h = np.tanh(x @ w1 + b1)
    out = h @ w2 + b2
    return np.mean((out - y) ** 2)


def logsumexp(x):
    m = np.max(x, axis=-1, keepdims=True)
    return np.sum(np.log(np.sum(np.exp(x - m), axis=-1)) + m[:, 0])


def softmax_cross_entropy(logits, labels):
    m = np.max(logits, axis=1, keepdims=True)
    shifted = logits - m
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(np.sum(labels * log_probs, axis=1))


def variance(x):
    mu = np.mean(x, axis=0)
    return np.sum(np.mean((x - mu) ** 2, axis=0))


# ---- rules for numpy functions ------------------------------------------------------------
def uses_np_sin(x):
    return np.sum(np.sin(x) * x)


def np_sin_rule_declining(x):
    if x.shape[0] < 8:  # a static shape: decided while lowering the rule
        return None
    y = np.sin(x)
    c = np.cos(x)

    def pullback(dy):
        return 2.0 * dy * c

    return y, pullback


def broadcast_mix(x, y):
    return np.sum(np.sin(x) * y + x / (1.0 + y * y) - np.maximum(x, y))


def more_ufuncs(x, y):
    a = np.add(x, y) - np.subtract(x, y) + np.multiply(x, y) / np.divide(y, 2.0) - np.negative(np.square(x))
    b = np.arctan(x) + np.sinh(x) * np.cosh(y) + np.log2(y) + np.log10(y) + np.arctan2(x, y)
    return np.sum(a + b) + np.amax(x) - np.amin(y) + np.sum(np.absolute(x))


def more_shapes(m, v):
    r = np.ravel(m) @ np.ravel(m)
    e = np.expand_dims(v, 0) @ m.transpose()
    return r + np.sum(e) + m.dot(v).sum() + np.sum(np.asarray(v) * np.copy(v)) + np.sum(m.astype(np.float64))


def conditional_arrays(x):
    return np.sum(np.where(x > 0.0, x, -x) if np.sum(x) > 0.0 else x * 3.0)


def truth_of_array(x):
    return 1.0 if x > 0.0 else 2.0


def make_reduction(reduce, axis, keepdims):
    """A program reducing with static `axis` and `keepdims` (closure values are baked in)."""

    def reduced(x):
        return np.sum(np.sin(reduce(x, axis=axis, keepdims=keepdims)) * 1.5)

    return reduced


# ---- loops and branches with arrays --------------------------------------------------
def rnn_loop(w, u, xs):
    """A recurrent cell run over a sequence with a loop (tensors on the tape)."""
    h = np.zeros(w.shape[0])
    for t in range(xs.shape[0]):
        h = np.tanh(w @ h + u @ xs[t])
    return np.sum(h**2)


def w_in_loop(x):
    y = np.zeros(4)
    acc = 0.0
    for i in range(4):
        acc = acc + x[i] * x[i]
        y[i] = acc
    return np.sum(y * np.arange(1.0, 5.0))


def w_slices_in_loop(x):
    y = np.ones(6)
    for i in range(3):
        y[2 * i:2 * i + 2] *= x[i]
    return np.sum(y**2)


def w_in_while_with_mask(x):
    y = np.copy(x)
    k = 0
    while k < 3:
        y = np.where(y > 0.0, y * y, -y)  # a bool mask on the tape
        y[k] += 0.5
        k += 1
    return np.sum(y)


def w_in_branches(x, s):
    y = np.zeros(3)
    if s > 0.0:
        y[0] = s * x[0]
    else:
        y[1:] += x[1:] * s
    y[2] *= x[2]
    return np.sum(y) + y[2]


def gather_in_loop(x, ii):
    s = 0.0
    for k in range(3):
        s = s + np.sum(x[ii]) * (k + 1.0)
    return s
