"""Programs that iterate over what has a static length (docs/python-subset.md,
"Iteration"). Each runs as plain numpy too; PROGRAMS pairs it with a maker of
example arguments. Programs marked `unrolled` walk tuple items (one copy of the
body per item); the others lower to one scf.for."""

import numpy as np


def zip_arrays(x, y):
    s = 0.0
    for a, b in zip(x, y):
        s += a * b
    return s


def zip_three_with_range(x, y):
    s = 0.0
    for i, a, b in zip(range(10), x, y):  # zip stops at the shortest
        s += i * a - b * b
    return s


def enumerate_array(x):
    s = 0.0
    for i, a in enumerate(x):
        s += i * a * a
    return s


def enumerate_start(x):
    s = 0.0
    for i, a in enumerate(x, start=2):
        s += a / i
    return s


def enumerate_range(x):
    s = 0.0
    for k, i in enumerate(range(1, 7, 2)):
        s += k * x[i // 2]
    return s


def reversed_range(x):
    s = 0.0
    for i in reversed(range(len(x))):  # Horner: the order matters
        s = s * 0.5 + x[i]
    return s


def reversed_range_step(x, n):
    s = 0.0
    for i in reversed(range(1, n, 2)):  # bounds known at run time
        s = s * x[i] + 1.0
    return s


def reversed_array(X):
    s = np.zeros(X.shape[1])
    for row in reversed(X):
        s = s * 0.5 + row
    return np.sum(s * s)


def rows_of_matrix(X):
    s = 0.0
    for row in X:
        s += np.sum(np.sin(row) ** 2)
    return s


def rows_with_break(X):
    s = 0.0
    for row in X:
        if np.sum(row) > 1.0:
            break
        s += np.prod(row)
    return s


def rows_write_back(X):
    Y = X * 1.0
    for row in Y:  # row is a view: the write changes Y
        row *= 2.0
    return np.sum(Y * X)


def rows_see_writes(X):
    Y = X * 1.0
    s = 0.0
    for row in Y:  # later rows see the write to Y[-1]
        Y[-1] += row
        s += np.sum(row * row)
    return s


def rows_rebound(X):
    Y = X * 1.0
    s = 0.0
    for row in Y:  # rebinding Y does not change what the loop walks
        Y = Y * 2.0
        s += np.sum(row * Y[0])
    return s


def elements_of_vector(x):
    m = x[0]
    for v in x:
        m = max(m, v)
    return m * m


def zip_rows(X, Y):
    s = 0.0
    for a, b in zip(X, Y):
        s += a @ b
    return s


def tuple_of_values(x):  # unrolled: the items differ in type
    s = 0.0
    for v in (x, 2.0 * x, 3):
        s = s * v + 1.0
    return s


def list_of_arrays(x, y):  # unrolled
    s = 0.0
    for v in [x, y, x * y]:
        s += np.sum(v * v)
    return s


def tuple_of_functions(x):  # unrolled: a different function per item
    s = 0.0
    for f in (np.sin, np.cos, np.tanh):
        s += np.sum(f(x))
    return s


def enumerate_tuple(x, y):  # unrolled
    s = 0.0
    for i, v in enumerate((x, y)):
        s += (i + 1) * v
    return s


def zip_tuple_and_array(x):  # unrolled: a tuple forces it
    s = 0.0
    for w, v in zip((1.0, 2.0, 3.0), x):
        s += w * v
    return s


def tuple_with_continue(x, y):  # unrolled, jumps
    s = 0.0
    for v in (x, y, x + y):
        if v < 0.0:
            continue
        s += v * v
    return s


def tuple_with_return(x, y):  # unrolled, return from inside
    for v in (x, y):
        if v > 1.0:
            return v * 3.0
    return x + y


def shape_loop(X):  # unrolled over static ints
    s = 0.0
    for d in X.shape:
        s += d * np.sum(X)
    return s


def sum_generator(x):
    return sum(x[i] ** 2 for i in range(len(x)))


def sum_generator_start(x, c):
    return sum((v * c for v in x), 1.0)


def sum_generator_if(x):
    return sum(v * v for v in x if v > 0.0)  # a run-time condition: a branch in the loop


def sum_nested_generator(X):
    return sum(X[i, j] * (i + j) for i in range(X.shape[0]) for j in range(i, X.shape[1]))


def sum_list_comprehension(x):
    return sum([np.exp(v) for v in x])


def sum_zip_generator(x, y):
    return sum(a * b for a, b in zip(x, y))


def sum_of_tuple(x, y):
    return sum((x, y, x * y))


def sum_of_matrix(X):
    return np.sum(sum(X) ** 2)  # Python's sum adds the rows


def list_comprehension(x):
    ys = [x[i] * (i + 1) for i in range(3)]
    return ys[0] + ys[1] * ys[2]


def list_comprehension_static_if(x):
    ys = [x[i] for i in range(len(x)) if i % 2 == 0]
    return np.prod(np.array(ys))


def list_comprehension_of_rows(X):
    norms = [np.sqrt(np.sum(row * row)) for row in X]
    return np.sum(np.stack(norms) * np.arange(1.0, 4.0))


def tuple_comprehension(x):
    t = tuple(np.sin(v) for v in x)
    a, b, c = t
    return a * b + c


def comprehension_keeps_outer_name(x):
    i = 2
    ys = [x[i] for i in range(3)]  # the comprehension's i is its own
    return ys[0] * x[i]


def list_of_range(x):
    return x[list(range(3))[2]] * len(list(range(4)))


def max_of_generator(x):
    return max(v * v for v in (x, 2.0 - x, 0.5))


PROGRAMS = [
    (zip_arrays, lambda r: (r.normal(size=4), r.normal(size=4))),
    (zip_three_with_range, lambda r: (r.normal(size=3), r.normal(size=5))),
    (enumerate_array, lambda r: (r.normal(size=5),)),
    (enumerate_start, lambda r: (r.normal(size=4),)),
    (enumerate_range, lambda r: (r.normal(size=3),)),
    (reversed_range, lambda r: (r.normal(size=5),)),
    (reversed_range_step, lambda r: (r.normal(size=8), 7)),
    (reversed_array, lambda r: (r.normal(size=(4, 3)),)),
    (rows_of_matrix, lambda r: (r.normal(size=(5, 3)),)),
    (rows_with_break, lambda r: (r.uniform(0.0, 0.6, size=(6, 2)),)),
    (rows_write_back, lambda r: (r.normal(size=(3, 2)),)),
    (rows_see_writes, lambda r: (r.normal(size=(3, 2)),)),
    (rows_rebound, lambda r: (r.normal(size=(3, 2)),)),
    (elements_of_vector, lambda r: (r.normal(size=6),)),
    (zip_rows, lambda r: (r.normal(size=(3, 4)), r.normal(size=(2, 4)))),
    (tuple_of_values, lambda r: (float(r.normal()),)),
    (list_of_arrays, lambda r: (r.normal(size=3), r.normal(size=3))),
    (tuple_of_functions, lambda r: (r.normal(size=3),)),
    (enumerate_tuple, lambda r: (float(r.normal()), float(r.normal()))),
    (zip_tuple_and_array, lambda r: (r.normal(size=5),)),
    (tuple_with_continue, lambda r: (0.7, -0.4)),
    (tuple_with_continue, lambda r: (-0.7, 0.4)),
    (tuple_with_return, lambda r: (0.5, 1.5)),
    (tuple_with_return, lambda r: (0.5, 0.25)),
    (shape_loop, lambda r: (r.normal(size=(2, 3)),)),
    (sum_generator, lambda r: (r.normal(size=4),)),
    (sum_generator_start, lambda r: (r.normal(size=4), 0.5)),
    (sum_generator_if, lambda r: (r.normal(size=6),)),
    (sum_nested_generator, lambda r: (r.normal(size=(3, 4)),)),
    (sum_list_comprehension, lambda r: (r.normal(size=3),)),
    (sum_zip_generator, lambda r: (r.normal(size=4), r.normal(size=4))),
    (sum_of_tuple, lambda r: (1.5, -0.5)),
    (sum_of_matrix, lambda r: (r.normal(size=(3, 2)),)),
    (list_comprehension, lambda r: (r.normal(size=3),)),
    (list_comprehension_static_if, lambda r: (r.normal(size=5),)),
    (list_comprehension_of_rows, lambda r: (r.normal(size=(3, 2)),)),
    (tuple_comprehension, lambda r: (r.normal(size=3),)),
    (comprehension_keeps_outer_name, lambda r: (r.normal(size=3),)),
    (list_of_range, lambda r: (r.normal(size=3),)),
    (max_of_generator, lambda r: (0.3,)),
    (max_of_generator, lambda r: (1.8,)),
]


def range_of_starred(x):
    bounds = (1, len(x))
    return sum(x[i] * i for i in range(*bounds)) + sum(x[i] for i in range(*(0, 4, 2)))


PROGRAMS.append((range_of_starred, lambda r: (r.normal(size=5),)))


def tuple_with_break(x, y):  # unrolled: a break decided at run time skips the items after it
    s = 0.0
    for v in (x, y, x * y, 2.0 * y):
        if v > 1.0:
            break
        s = s * v + v
    return s + 1.0


PROGRAMS += [(tuple_with_break, lambda r: (0.5, 1.5)), (tuple_with_break, lambda r: (0.5, 0.7)),
             (tuple_with_break, lambda r: (1.5, 0.7))]


def zip_reversed_range_rows(X, n):
    s = 0.0
    for i, row in zip(reversed(range(3)), X):  # a reversed range of known length in a zip
        s = s * 0.5 + i * np.sum(row)
    for i, row in zip(reversed(range(n)), X):  # and of a length known at run time
        s = s * 0.5 + i * np.sum(row * row)
    return s


PROGRAMS += [(zip_reversed_range_rows, lambda r: (r.normal(size=(4, 2)), 5))]


# ---- variables a loop known to run creates first thing, kept after it (control_flow.assigned_first) ----
def armijo_step(x, c=1e-4):
    g = 2.0 * x + np.sin(x)
    f0 = np.sum(x * x - np.cos(x))
    t = 1.0
    for _ in range(30):
        candidate = x - t * g
        if np.sum(candidate * candidate - np.cos(candidate)) <= f0 - c * t * (g @ g):
            break
        t = t * 0.5
    else:
        raise ValueError(f"no sufficient decrease after 30 halvings")
    return np.sum(candidate ** 2) + t


def first_row_above(X, cut):
    for row in X:                   # rows of an array: an scf.for
        found = np.sum(row) > cut
        best = row * 2.0
        if found:
            break
    return np.where(found, np.sum(best), -1.0)


def last_of_every_iteration(x):
    for i in range(4):
        scaled = x * (i + 1)
        k = i * 2
        x = np.sin(x)
    return np.sum(scaled) + k


PROGRAMS += [(armijo_step, lambda r: (r.normal(size=3),)), (armijo_step, lambda r: (np.array([2.0, -1.5, 0.5]),)),
             (first_row_above, lambda r: (r.normal(size=(5, 3)), 0.5)),
             (first_row_above, lambda r: (r.normal(size=(5, 3)), 50.0)),
             (last_of_every_iteration, lambda r: (r.normal(size=3),))]
