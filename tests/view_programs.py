"""Programs that write through aliases and views of one numpy array. Each runs
as plain numpy too; irad must give the same value and gradient (tests/frontend/test_views.py)."""

import numpy as np


# ---- the repros ------------------------------------------------------------
def alias_add(x):
    y = x * 2.0
    z = y
    z += x
    return np.sum(y * x)


def row_of_zeros(x):
    Y = np.zeros((2, 2))
    r = Y[0]
    r += x
    return np.sum(Y * Y)


def row_sees_base_write(X):
    Y = np.copy(X)
    row = Y[0]
    Y[0, 1] = 5.0 * X[1, 1]
    return np.sum(row * row)


def euler(x0, v):
    x = np.copy(x0)
    total = 0.0
    for _ in range(3):
        x_prev = x
        x += 0.1 * v * x
        total = total + np.sum(x_prev * v)
    return total


def fresh_after_return(x):
    y = np.zeros(3)
    if x > 0:
        return x
    else:
        y = y * 2.0
    y[0] = x
    return np.sum(y)


# ---- slices, rows, columns, steps --------------------------------------------------------
def step_slice(x):
    y = x * 1.0
    s = y[::2]
    s *= 3.0
    return np.sum(y * x)


def slice_range_write(x):
    y = np.sin(x)
    s = y[1:4]
    s[1] = x[0] * x[4]
    return np.sum(y ** 2) + np.sum(s)


def column_view(X):
    Y = X * 1.0
    c = Y[:, 1]
    c -= X[:, 0]
    return np.sum(Y * X)


def row_slice_view(X):
    Y = np.exp(X)
    r = Y[1, 1:3]
    r /= 2.0
    return np.sum(Y * Y)


def base_write_then_view(X):
    Y = X * 2.0
    c = Y[:, 0]
    Y[1:, :] = X[:2, :] * X[1:, :]
    return np.sum(c * c)


def view_write_then_base(X):
    Y = X + 0.0
    r = Y[2]
    r[0] = X[0, 0] ** 2
    return np.sum(np.sin(Y))


def slice_assign_through_view(X):
    Y = X * 1.0
    r = Y[0]
    r[1:] = X[1, :2] * 3.0
    return np.sum(Y * X)


def two_overlapping_views(x):
    y = x * 1.0
    a = y[0:3]
    b = y[2:5]
    a += 1.0
    b *= x[0:3]
    return np.sum(a * b) + np.sum(y)


def none_axis_view(x):
    y = x * 1.0
    c = y[:, None]
    c[1, 0] = x[2] * x[3]
    return np.sum(y * x)


def runtime_row(X, i):
    Y = X * 1.0
    r = Y[i]
    r *= 2.0
    return np.sum(Y * X)


# ---- transposes and reshapes ---------------------------------------------------------------
def transpose_write(X):
    Y = X * 1.0
    t = Y.T
    t[0] = X[:, 1] * 2.0
    return np.sum(Y * X)


def np_transpose_aug(X):
    Y = np.tanh(X)
    t = np.transpose(Y)
    t += X.T * X.T
    return np.sum(Y)


def reshape_view(X):
    Y = X * 1.0
    flat = Y.reshape(-1)
    flat[1:4] = X[1] ** 2
    return np.sum(Y * X)


def ravel_view(X):
    Y = X * 1.0
    flat = np.ravel(Y)
    flat *= np.arange(6.0)
    return np.sum(Y * Y)


def reshape_of_transpose_copies(X):
    Y = X * 1.0
    flat = Y.T.reshape(-1)  # not contiguous: numpy copies
    flat *= 2.0
    return np.sum(Y * X) + np.sum(flat)


def reshape_back_to_matrix(x):
    y = x * 1.0
    m = y.reshape(2, 3)
    m[1] += x[:3]
    return np.sum(y * x)


def reshape_there_and_back(x):
    # found by the fuzzer: the second reshape folds to the first one's source, which
    # would be recorded as a view of its own view; where no name held that array,
    # the lowering then looped forever
    a = np.zeros((3, 2))
    b = a.reshape(2, 3)
    c = b.reshape(3, 2)
    c[2, 1] = x[0]
    b[0, 0] = 2.0 * x[1]
    d = (np.reshape(np.ones((3, 2)) * x[2], (2, 3))).reshape(3, 2)
    d[1, 0] = x[1] * 3.0
    return np.sum(a * a) + a[0, 0] * c[2, 1] + np.sum(d * x[0])


def squeeze_expand_views(x):
    y = x * 1.0
    e = np.expand_dims(y, 0)
    s = np.squeeze(e)
    s[0] = x[1] * 4.0
    return np.sum(y * x) + np.sum(e)


# ---- views of views, aliases of views ---------------------------------------------------------
def view_of_view(X):
    Y = X * 1.0
    r = Y[1:]
    c = r[:, 2]
    c += X[0, 1:]
    return np.sum(Y * X)


def transpose_of_row_block(X):
    Y = X * 1.0
    t = Y[0:2].T
    t[1, 0] = X[2, 2] * 3.0
    return np.sum(Y * Y)


def alias_of_view(X):
    Y = X * 1.0
    r = Y[0]
    q = r
    q -= 1.0
    return np.sum(Y * X) + np.sum(r)


def aug_both_names(x):
    y = x * 1.0
    z = y
    y += x
    z *= x
    return np.sum(y) + np.sum(z)


def rebind_breaks_alias(x):
    y = x * 1.0
    z = y
    z = z * 2.0  # a new array: y is not changed by what follows
    z += x
    return np.sum(y * z)


def base_rebound_view_keeps_old(x):
    y = x * 1.0
    r = y[1:]
    y = x * 3.0  # r still views the first array
    r += 1.0
    return np.sum(r * x[1:]) + np.sum(y)


def tuple_unpacked_aliases(x):
    y = x * 1.0
    a, b = y, y
    a[0] = x[1] * x[2]
    return np.sum(b * x)


def return_view(x):
    y = x * 2.0
    r = y[1:]
    y[2] = x[0] ** 3
    return np.sum(r * x[1:])


def asarray_aliases(x):
    y = x * 1.0
    z = np.asarray(y)
    z += 1.0
    w = np.array(y)  # a copy
    w *= 10.0
    return np.sum(y * x) + np.sum(w)


def fancy_index_copies(x):
    y = x * 1.0
    g = y[np.array([0, 2])]
    g *= 5.0
    return np.sum(y * x) + np.sum(g)


def power_aug(x):
    y = x + 1.0
    z = y[1:]
    z **= 2
    return np.sum(y)


# ---- control flow -------------------------------------------------------------------------------
def alias_through_loop(x):
    y = x * 1.0
    z = y
    for _ in range(3):
        z += 0.5 * y
    return np.sum(y * x)


def row_writes_in_loop(X):
    Y = X * 1.0
    for i in range(3):
        r = Y[i]
        r *= X[i, 0]
    return np.sum(Y)


def view_made_before_loop(X):
    Y = X * 1.0
    r = Y[0]
    for i in range(3):
        Y[0, i] = X[1, i] * r[i]
    return np.sum(r * X[0])


def loop_rebinds_before_writing(x):
    y = x * 1.0
    prev = y * 0.0
    for _ in range(3):
        prev = y  # the same array from here on, in every iteration
        y += 0.5 * x * prev
    return np.sum(prev * x)


def alias_in_while(x):
    y = x * 1.0
    z = y
    k = 0
    while k < 2:
        y[k] = z[k + 1] * x[k]
        k = k + 1
    return np.sum(z * z)


def view_in_branch(x, c):
    y = x * 1.0
    if c > 0.0:
        r = y[0:2]
        r *= c
    else:
        y[1] = c
    return np.sum(y * x)


def same_view_both_branches(x, c):
    y = x * 1.0
    if c > 0.0:
        r = y[1:]
    else:
        r = y[1:]
        r[0] = 2.0 * c
    r += c
    return np.sum(y * x)


def alias_written_in_branch(x, c):
    y = x * 1.0
    z = y
    if c > 0.0:
        z *= c
    return np.sum(y * x)


def anonymous_views_differ(x, c):
    if c > 0.0:
        r = (x * 1.0)[0:2]
    else:
        r = (x * 2.0)[1:3]
    r += c  # on each path r is the only name for its array
    return np.sum(r * x[:2])


def two_names_keep_sharing(x, c):
    y = x * 1.0
    z = y
    w = y * 2.0
    if c > 0.0:
        w = y
    w = x * 3.0  # settles w; y and z still share one array
    z[0] = c
    return np.sum(y * x) + np.sum(w)


def break_keeps_views(x):
    y = x * 1.0
    r = y[1:]
    for i in range(3):
        if x[i] > 10.0:
            break
        r[i] = x[i] * 2.0
    return np.sum(y * x)


def view_after_early_return(x, c):
    y = x * 1.0
    r = x[1:] * 0.0
    if c > 5.0:
        return c
    else:
        r = y[1:]
    r += c
    return np.sum(y * x)


def nested_loops_through_row(X):
    Y = X * 1.0
    for i in range(2):
        r = Y[i]
        for j in range(3):
            r[j] = r[j] * X[i, j] + 1.0
    return np.sum(Y * Y)


def _sum_of_squares(a):
    return np.sum(a * a)


def column_aug_then_views_into_helper(X):
    Y = X * 1.0
    Y[:, 0] += Y[:, 1]
    return _sum_of_squares(Y[1]) + _sum_of_squares(Y.T[0])


def while_with_runtime_slice_views(x):
    y = x * 1.0
    k = 0
    while k < 3:
        r = y[k:k + 1]
        if x[k] > 0.0:
            r *= 2.0
        else:
            y[k] = -1.0
        k = k + 1
    return np.sum(y * x)


def column_views_in_nested_loops(X):
    Y = X * 1.0
    for i in range(2):
        for j in range(2):
            if X[i, j] > 0.0:
                c = Y[:, j]
                c += X[i, j]
    return np.sum(Y * X)


def transpose_round_trip(x):
    y = np.zeros((2, 3))
    y[0] = x
    t = y.T
    t[:, 1] = x * 2.0
    z = t.T
    z *= x
    return np.sum(y * y)


# ---- float32 --------------------------------------------------------------------------------------
def float32_aug_stays_float32(x):
    y = x * 1.0
    r = y[1:]
    r += np.ones(2) * 0.1  # float64 into float32: numpy casts back
    return np.sum(y * x)


def float32_alias(x):
    y = x * 2.0
    z = y
    z *= x
    return np.sum(y)


# found by the fuzzer: widening a float32 array to the float64 of a join kept it
# writable only if the widened value had been marked fresh, which it never was
def float32_widened_at_if(x, c):
    y = np.copy(x)                # float32
    if c > 0.0:
        y = y.astype(np.float64)
    y[0] = c * x[1]               # float64 after the join; writable on both paths
    return np.sum(y * y)


def float32_widened_in_loop(x):
    y = np.zeros(3)
    for i in range(2):
        y = np.full(3, 0.5 * i, dtype=np.float32)
    y[1] = 2.0                    # float32 in numpy, float64 in irad: exact in both
    return np.sum(y * x)


# found by the fuzzer (campaign seed 101): the else of an `if` whose other arm
# jumps runs only where the jump was not taken, so an array it makes is what
# the statements after the `if` write into; irad joined it with the jumping
# arm's (an argument) and refused the write
def else_of_a_continue_writes(x, c):
    B = x
    for i in range(3):
        if c * i > 1.5:
            continue
        else:
            B = B * 2.0
        B[0] = c * B[1]
    return np.sum(B) + np.sum(x)


# the same with the jump one `elif` deeper: the chain without the jumping arm
# runs under the jump's flag (refused as a write into what may be a view before)
def elif_of_a_continue_writes(x, c):
    B = x
    for i in range(4):
        if c * i > 2.5:
            B = B * 1.5
        elif c * i > 1.5:
            continue
        else:
            B = B * 2.0
        B[0] = c * B[1]
    return np.sum(B) + np.sum(x)


def else_of_an_elif_chain_breaks(x, c):
    B = x
    for i in range(5):
        if c * i > 3.5:
            B = B * 1.5
        elif c * i > 2.5:
            B = np.cos(B)
        elif c * i > 1.5:
            B = B - 1.0
        else:
            break
        B[2] = c * B[1]
    return np.sum(B * x)


# found by the fuzzer (seed 3408695422): with two jumping arms the chain joined
# the argument the jumps carry with the array the `else` makes, so the write
# after it was refused; now all the jumps go first and the `else` runs under their flags
def two_jumping_arms_then_a_write(B, c):
    j = 0
    while j < 4:
        j += 1
        if c * j > 2.5:
            break
        elif c * j > 1.5:
            continue
        else:
            B = np.stack([B[0] * c, B[1]])
        B[0, 1] *= c
    return np.sum(B * B)


def a_write_after_arms_that_jump_around_it(x, c):
    B = x
    for i in range(4):
        if c * i > 2.5:
            break
        elif c * i > 1.5:
            B = B * 1.5
        elif c * i > 0.5:
            continue
        else:
            B = np.sin(B)
        B[0] = c * B[1]
    return np.sum(B) + np.sum(x)


def then_of_a_break_writes(x, c):
    B = x
    j = 0
    while j < 3:
        j += 1
        if c * j < 1.5:
            B = np.sin(B)
        else:
            break
        B[1:] += c
    return np.sum(B) + np.sum(x)


# int arrays of constants (np.zeros(3, dtype=np.int64) crashed while lowering: 0.0
# packed as an int), widened by arithmetic, written as float arrays
def int_zeros_made_float(x):
    s = np.zeros(3, dtype=np.int64) + np.ones(3, dtype=np.int64)
    t = s + x
    t[0] = 2.0 * x[1]
    return np.sum(t * x) + np.sum(s)


# an int array on one path and a float one on the other: numpy casts what is
# written to int on the int path, so the write is refused (silently wrong before)
def int_array_widened_at_if(x, c):
    s = np.arange(3)
    if c > 0.0:
        s = s * x
    s[0] = 0.7 * c
    return np.sum(s * x)


def int_array_widened_in_loop(x, n):
    s = np.zeros(3, dtype=np.int64)
    for i in range(n):
        s = s + x
    s[1] += 0.5
    return np.sum(s * x)


PROGRAMS = [
    (int_zeros_made_float, lambda r: (r.normal(size=3),)),
    (else_of_a_continue_writes, lambda r: (r.normal(size=3), 0.7)),
    (else_of_a_continue_writes, lambda r: (r.normal(size=3), -0.4)),
    (elif_of_a_continue_writes, lambda r: (r.normal(size=3), 0.3)),
    (elif_of_a_continue_writes, lambda r: (r.normal(size=3), 0.8)),
    (elif_of_a_continue_writes, lambda r: (r.normal(size=3), 1.7)),
    (else_of_an_elif_chain_breaks, lambda r: (r.normal(size=3), 0.3)),
    (else_of_an_elif_chain_breaks, lambda r: (r.normal(size=3), 0.8)),
    (else_of_an_elif_chain_breaks, lambda r: (r.normal(size=3), 1.7)),
    (two_jumping_arms_then_a_write, lambda r: (r.normal(size=(2, 3)), 0.3)),
    (two_jumping_arms_then_a_write, lambda r: (r.normal(size=(2, 3)), 0.7)),
    (two_jumping_arms_then_a_write, lambda r: (r.normal(size=(2, 3)), 2.0)),
    (two_jumping_arms_then_a_write, lambda r: (r.normal(size=(2, 3)), 3.0)),
    (a_write_after_arms_that_jump_around_it, lambda r: (r.normal(size=3), 0.2)),
    (a_write_after_arms_that_jump_around_it, lambda r: (r.normal(size=3), 0.4)),
    (a_write_after_arms_that_jump_around_it, lambda r: (r.normal(size=3), 0.7)),
    (a_write_after_arms_that_jump_around_it, lambda r: (r.normal(size=3), 1.0)),
    (then_of_a_break_writes, lambda r: (r.normal(size=3), 0.6)),
    (then_of_a_break_writes, lambda r: (r.normal(size=3), -0.3)),
    (alias_add, lambda r: (np.array([1.0, 2.0]),)),
    (row_of_zeros, lambda r: (np.array([1.0, 2.0]),)),
    (row_sees_base_write, lambda r: (np.array([[1.0, 2.0], [3.0, 4.0]]),)),
    (euler, lambda r: (r.normal(size=3), r.normal(size=3))),
    (fresh_after_return, lambda r: (-1.5,)),
    (fresh_after_return, lambda r: (0.5,)),
    (step_slice, lambda r: (r.normal(size=5),)),
    (slice_range_write, lambda r: (r.normal(size=5),)),
    (column_view, lambda r: (r.normal(size=(3, 3)),)),
    (row_slice_view, lambda r: (r.normal(size=(3, 4)),)),
    (base_write_then_view, lambda r: (r.normal(size=(3, 3)),)),
    (view_write_then_base, lambda r: (r.normal(size=(3, 2)),)),
    (slice_assign_through_view, lambda r: (r.normal(size=(2, 3)),)),
    (two_overlapping_views, lambda r: (r.normal(size=5),)),
    (none_axis_view, lambda r: (r.normal(size=4),)),
    (runtime_row, lambda r: (r.normal(size=(3, 2)), 1)),
    (runtime_row, lambda r: (r.normal(size=(3, 2)), -1)),
    (transpose_write, lambda r: (r.normal(size=(3, 2)),)),
    (np_transpose_aug, lambda r: (r.normal(size=(2, 3)),)),
    (reshape_view, lambda r: (r.normal(size=(2, 3)),)),
    (ravel_view, lambda r: (r.normal(size=(3, 2)),)),
    (reshape_of_transpose_copies, lambda r: (r.normal(size=(2, 3)),)),
    (reshape_back_to_matrix, lambda r: (r.normal(size=6),)),
    (reshape_there_and_back, lambda r: (r.normal(size=3),)),
    (squeeze_expand_views, lambda r: (r.normal(size=3),)),
    (view_of_view, lambda r: (r.normal(size=(3, 3)),)),
    (transpose_of_row_block, lambda r: (r.normal(size=(3, 3)),)),
    (alias_of_view, lambda r: (r.normal(size=(2, 3)),)),
    (aug_both_names, lambda r: (r.normal(size=3),)),
    (rebind_breaks_alias, lambda r: (r.normal(size=3),)),
    (base_rebound_view_keeps_old, lambda r: (r.normal(size=3),)),
    (tuple_unpacked_aliases, lambda r: (r.normal(size=3),)),
    (return_view, lambda r: (r.normal(size=3),)),
    (asarray_aliases, lambda r: (r.normal(size=3),)),
    (fancy_index_copies, lambda r: (r.normal(size=3),)),
    (power_aug, lambda r: (r.uniform(0.5, 2.0, size=3),)),
    (alias_through_loop, lambda r: (r.normal(size=3),)),
    (row_writes_in_loop, lambda r: (r.normal(size=(3, 2)),)),
    (view_made_before_loop, lambda r: (r.normal(size=(2, 3)),)),
    (loop_rebinds_before_writing, lambda r: (r.normal(size=3),)),
    (alias_in_while, lambda r: (r.normal(size=3),)),
    (view_in_branch, lambda r: (r.normal(size=3), 0.7)),
    (view_in_branch, lambda r: (r.normal(size=3), -0.7)),
    (same_view_both_branches, lambda r: (r.normal(size=3), 0.7)),
    (same_view_both_branches, lambda r: (r.normal(size=3), -0.7)),
    (alias_written_in_branch, lambda r: (r.normal(size=3), 1.5)),
    (alias_written_in_branch, lambda r: (r.normal(size=3), -1.5)),
    (anonymous_views_differ, lambda r: (r.normal(size=3), 0.5)),
    (anonymous_views_differ, lambda r: (r.normal(size=3), -0.5)),
    (two_names_keep_sharing, lambda r: (r.normal(size=3), 0.5)),
    (two_names_keep_sharing, lambda r: (r.normal(size=3), -0.5)),
    (break_keeps_views, lambda r: (np.array([0.5, 20.0, 1.0, 2.0]),)),
    (break_keeps_views, lambda r: (np.array([0.5, 2.0, 1.0, 2.0]),)),
    (view_after_early_return, lambda r: (r.normal(size=3), 1.0)),
    (view_after_early_return, lambda r: (r.normal(size=3), 6.0)),
    (nested_loops_through_row, lambda r: (r.normal(size=(2, 3)),)),
    (column_aug_then_views_into_helper, lambda r: (r.normal(size=(2, 2)),)),
    (while_with_runtime_slice_views, lambda r: (np.array([1.0, -2.0, 0.5]),)),
    (column_views_in_nested_loops, lambda r: (np.array([[1.0, -2.0], [0.5, 3.0]]),)),
    (transpose_round_trip, lambda r: (r.normal(size=3),)),
    (float32_aug_stays_float32, lambda r: (r.normal(size=3).astype(np.float32),)),
    (float32_alias, lambda r: (r.normal(size=3).astype(np.float32),)),
    (float32_widened_at_if, lambda r: (r.normal(size=3).astype(np.float32), 0.5)),
    (float32_widened_at_if, lambda r: (r.normal(size=3).astype(np.float32), -0.5)),
    (float32_widened_in_loop, lambda r: (r.normal(size=3),)),
]


# ---- refused: numpy's result cannot be followed while lowering ----------------------------------------
def write_argument_by_aug(x):
    x += 1.0
    return np.sum(x)


def write_alias_of_argument(x):
    z = x
    z[0] = 1.0
    return np.sum(x)


def write_view_of_argument(X):
    r = X.T
    r *= 2.0
    return np.sum(X)


def alias_on_one_path(x, c):
    y = x * 1.0
    z = y * 2.0
    if c > 0.0:
        z = y
    z[0] = c
    return np.sum(y)


def different_views_on_paths(x, c):
    y = x * 1.0
    if c > 0.0:
        r = y[0:2]
    else:
        r = y[1:3]
    r += 1.0
    return np.sum(y)


def third_name_on_one_path(x, c):
    y = x * 1.0
    z = y
    w = y * 2.0
    if c > 0.0:
        w = y
    z[0] = c
    return np.sum(w)


def loop_changes_sharing(x, n):
    y = x * 1.0
    z = y
    for _ in range(n):  # a known n: one copy of the body per iteration, numpy's value
        z[0] = 1.0
        z = z * 2.0
    return np.sum(y)


def loop_rebinds_iterated_array(x):
    # the first iteration writes into the array it iterates over; later ones into a
    # copy: lowered once per iteration (tests/frontend/test_known_loops.py)
    a = x * 1.0
    for v in a:
        a[0:1] += v
        a = a * 2.0
    return np.sum(a)


def tuple_holds_array(x):
    y = x * 1.0
    t = (y, 1.0)
    y[0] = 2.0
    return np.sum(t[0])


def write_call_result(x):
    z = _first_row(np.ones((2, 3)))
    z[1] = x[0]
    return np.sum(z)


def _first_row(a):
    return a[0]


def _same(a):
    return a


def loop_leaves_call_result(x):
    # found by the fuzzer: fresh before the loop, but the second iteration writes
    # into what _same returned, which is x itself; irad used to write a copy
    z = np.zeros(3)
    for i in range(2):
        z[0] = 1.0
        z = _same(x)
    return np.sum(z) + np.sum(x)


def argument_written_in_loop(x, n):
    # the first iteration writes into the caller's array (named as "may be a view" before)
    j = 0
    while j < n:
        j += 1
        x[0] *= 2.0
    return np.sum(x)


def argument_or_copy_by_path(x, c):
    if c > 0.5:
        x = x * 2.0
    x[0] = c
    return np.sum(x)


def aug_changes_shape(x):
    y = x * 1.0
    y += np.ones((2, 3))
    return np.sum(y)


REFUSED = [
    (int_array_widened_at_if, (np.ones(3), 1.0), "view_programs.py:[0-9]+:[0-9]+: a write into an array that numpy "
     "holds as ints .* and irad as floats: .*view_programs.py:[0-9]+:[0-9]+: 's' is an int array on one path into "
     "this `if` and a float array on another"),
    (int_array_widened_in_loop, (np.ones(3), 2), "a write into an array that numpy holds as ints .*'s' is an int "
     "array on one path into this loop"),
    (write_argument_by_aug, (np.ones(3),), "in-place write to the argument array 'x'"),
    (write_alias_of_argument, (np.ones(3),), "'z', which is another name for the argument array 'x'"),
    (write_view_of_argument, (np.ones((2, 2)),), "'r', which is a view of the argument array 'X'"),
    (alias_on_one_path, (np.ones(3), 1.0), "'y' and 'z' share one array on one path into the `if` at .*view_programs.py:[0-9]+:[0-9]+ but not on the other"),
    (different_views_on_paths, (np.ones(3), 1.0), "'y' and 'r' share one array on one path into the `if` at"),
    (third_name_on_one_path, (np.ones(3), 1.0), "'y' and 'w' share one array on one path into the `if` at"),
    (loop_changes_sharing, (np.ones(3), 2), "'y' and 'z' share one array on one path into the loop at .*view_programs.py:[0-9]+:[0-9]+ but not on the other"),
    (tuple_holds_array, (np.ones(3),), "in-place write to 'y', whose array the tuple 't' also holds"),
    (write_call_result, (np.ones(3),), "in-place write to 'z', which may be a view of another array"),
    (loop_leaves_call_result, (np.full(3, 2.0),), "in-place write to 'z', which may be a view of another array"),
    (argument_written_in_loop, (np.ones(3), 2), "in-place write to 'x', which may be the argument array 'x' "
     "\\(it is on one path into the loop at .*view_programs.py:[0-9]+:5\\)"),
    (argument_or_copy_by_path, (np.ones(3), 1.0), "in-place write to 'x', which may be the argument array 'x' "
     "\\(it is on one path into the `if` at .*view_programs.py:[0-9]+:5\\)"),
    (aug_changes_shape, (np.ones(3),), "cannot be written into 'y' of shape \\(3,\\)"),
]
