"""An in-place write to an array a call was given, while a variable holds the
call's result that may be that array (irad/frontend/call_aliases.py): numpy
would show the write through the result, irad's result is a value, so it is
refused rather than wrong; a fresh result and a gradient leave the array
writable (checked against numpy and central differences)."""

import numpy as np

import irad
from tests.reference import check_against_numpy, check_refused

W = np.array([1.0, 2.0])
X = np.array([3.0, 4.0])


def same(a):
    return a


def make_dot(w):
    return lambda x: np.sum(w * x)


def returned_argument(w0, x):
    w = w0.copy()
    v = same(w)
    w[0] = 5.0  # <- refused
    return np.sum(v * x)


def returned_closure(w0, x):
    w = w0.copy()
    dot = make_dot(w)
    w += 1.0  # <- refused
    return dot(x)


def carried_by_a_loop(w0, x, n):
    w = w0.copy()
    u = x * 0.0
    for _ in range(n):
        u = same(w)  # the loop carries the call's result out
    w[0] = 5.0  # <- refused
    return np.sum(u * x)


def carried_in_as_a_loops_start(w0, x):
    w = w0.copy()
    u = same(w)
    k = 0
    while k < 2:
        u = u if k > 5 else u
        k += 1
    w[0] = 5.0  # <- refused
    return np.sum(u * x)


def kept_by_a_list(w0, x):
    w = w0.copy()
    us = []
    for _ in range(2):
        us.append(same(w))  # items of a list grown in a loop live in a buffer
    w[0] = 5.0  # <- refused
    return np.sum(us[0] * x)


def summed_in_a_loop(w0, x, n):
    w = w0.copy()
    acc = x * 0.0
    for _ in range(n):
        acc = acc + same(w)  # a new array each time: the write below is fine
    w[0] = 5.0
    return np.sum(acc * x) + np.sum(w * x)


def doubled(a):
    return 2.0 * a


def fresh_in_a_loop(w0, x, n):
    w = w0.copy()
    u = x * 0.0
    for _ in range(n):
        u = doubled(w)
    w[0] = 5.0
    return np.sum(u * x) + np.sum(w * x)


def fresh_result(w0, x):
    w = w0.copy()
    v = doubled(w)
    w[0] = 5.0
    return np.sum(v * x) + np.sum(w * w)


def loss(w):
    return np.sum(w ** 2)


def descent(w0, x):
    w = w0.copy()
    for _ in range(3):
        g = irad.grad(loss)(w)
        w -= 0.1 * g
    return np.sum(w * x)


def test_a_write_the_result_would_show_is_refused():
    check_refused(returned_argument, (W, X), r"in-place write to 'w', whose array the call to same at \S+ was given")
    check_refused(returned_closure, (W, X), r"in-place write to 'w', whose array the call to make_dot")
    # numpy gave 18 and irad 14 before a loop's result counted as what it carried out
    check_refused(carried_by_a_loop, (W, X, 2), r"in-place write to 'w', whose array the call to same")
    check_refused(carried_in_as_a_loops_start, (W, X), r"in-place write to 'w', whose array the call to same")
    check_refused(kept_by_a_list, (W, X), r"in-place write to 'w', whose array the call to same")


def test_fresh_results_and_gradients_leave_it_writable():
    check_against_numpy(fresh_result, (W, X))
    check_against_numpy(descent, (W, X))
    check_against_numpy(fresh_in_a_loop, (W, X, 2))
    check_against_numpy(summed_in_a_loop, (W, X, 3))
