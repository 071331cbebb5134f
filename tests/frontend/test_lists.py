"""Lists that grow and shrink (docs/python-subset.md, "Lists"): append, extend,
insert, pop, item assignment, `+`, `*`, and what reads them (np.stack,
np.array, sum, indexing, iteration, len). Values against the programs run as
numpy, gradients against central differences in float64, on both backends;
what stays refused is an error naming the line, with the rewrite."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irad
from irad.base.errors import RuntimeCheckError
from tests.reference import BACKENDS, check_against_numpy, check_refused, lowered_text


# ---- programs -----------------------------------------------------------------------------------
def rnn_hidden_states(W, U, xs):
    """An RNN that collects its hidden states in a list and stacks them."""
    h = np.zeros(W.shape[0])
    hs = []
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t])
        hs.append(h)
    H = np.stack(hs)  # (T, n)
    return np.sum(H ** 2) + np.sum(hs[-1]) * len(hs)


def lstm_states_as_tuples(Wh, xs):
    """States appended as (h, c) tuples, then unzipped."""
    h, c = np.zeros(2), np.zeros(2)
    states = []
    for x in xs:
        z = Wh @ h + x
        c = 0.5 * c + np.tanh(z)
        h = np.tanh(c) * 0.9
        states.append((h, c))
    hs, cs = zip(*states)
    return np.sum(np.array(hs) * np.array(cs))


PROGRAM = ("x", "y", "*", 2.0, "x", "-", "*", "y", "+")  # x*y*(2-x)+y, reverse Polish


def stack_evaluator(x, y):
    """A stack machine run over a program known while lowering."""
    stack = []
    for token in PROGRAM:
        if token == "x":
            stack.append(x)
        elif token == "y":
            stack.append(y)
        elif token in ("+", "-", "*"):
            b = stack.pop()
            a = stack.pop()
            stack.append(a + b if token == "+" else a - b if token == "-" else a * b)
        else:
            stack.append(token)
    assert len(stack) == 1
    return stack.pop()


def push_pop(a):
    """Tangent's stack test: values pushed and popped around the computation."""
    stack = []
    y = a * a
    stack.append(a)
    aa = stack.pop()
    z = y * aa
    stack.append(z)
    stack.append(aa)
    return stack.pop() * stack.pop()


def append_then_sum(x):
    xs = []
    for i in range(5):
        xs.append(np.sin(x * i))
    return sum(xs) + sum(v * v for v in xs)


def indexed_in_a_loop(x):
    """xs[i] with i known only at run time (an scf.for): the items are stacked."""
    xs = []
    for k in range(4):
        xs.append(x * (k + 1.0))
    s = 0.0
    for i in range(len(xs)):
        s = s + xs[i] * xs[-1 - i]
    return s


def layers_indexed_at_run_time(W1, W2, W3, x):
    Ws = [W1, W2, W3]
    for i in range(3):
        x = np.tanh(Ws[i] @ x)
    return np.sum(x ** 2)


def walk_a_grown_list(x):
    feats = []
    for p in range(1, 4):
        feats.append(x ** p)
    total = 0.0
    for f in feats:
        total = total + np.sum(f)
    return total * len(feats)


def methods_of_lists(x):
    xs = [x[0]]
    xs.extend([x[1], 2.0 * x[2]])
    xs += [x[0] * x[1]]
    xs.insert(1, -x[2])
    last = xs.pop()
    first = xs.pop(0)
    xs.reverse()
    xs[1] = xs[1] * 3.0
    xs[2:] = [x[1], x[2], x[0]]
    ys = xs.copy()
    ys.clear()
    zs = xs + [last] * 2
    return np.sum(np.array(zs) ** 2) * first + len(ys)


def nested_lists_to_array(x):
    rows = []
    for i in range(3):
        row = []
        for j in range(2):
            row.append(x[j] * (i + 1.0) - j)
        rows.append(row)
    return np.sum(np.array(rows) ** 3)


def appended_on_both_paths(x):
    xs = []
    for i in range(4):
        if x[i] > 0.0:
            xs.append(x[i] ** 2)
        else:
            xs.append(-x[i])
    return sum(xs)


def list_of_a_helper(x):
    ys = list(powers(x))  # a copy of the helper's result: this function's own list
    ys.append(x * np.sum(x))
    return np.sum(np.stack(ys[1:]))


def powers(x):
    out = []
    for p in (1.0, 2.0, 3.0):
        out.append(x ** p)
    return out


def list_argument_copied(xs, w):
    ys = list(xs)
    ys.append(w)
    return sum(y * y for y in ys)


def tuple_grown(x):
    t = ()
    for i in range(3):
        t += (x * i,)
    t = t + (x,)
    return sum(t) * len(t)


def window_of_last_states(x):
    window = [0.0, 0.0]
    for t in range(5):
        window = window[1:] + [window[-1] * 0.5 + x * t]
    return window[0] * window[1]


def stack_inside_a_run_time_loop(X):
    """A list made and changed inside each iteration of an scf.for: not carried."""
    total = 0.0
    for i in range(X.shape[0]):
        row = []
        for j in range(X.shape[1]):
            row.append(X[i, j] * j)
        total = total + sum(row) * row[-1]
    return total


PROGRAMS = [
    (rnn_hidden_states, lambda r: (0.5 * r.normal(size=(3, 3)), r.normal(size=(3, 2)), r.normal(size=(6, 2)))),
    (lstm_states_as_tuples, lambda r: (0.5 * r.normal(size=(2, 2)), r.normal(size=(4, 2)))),
    (stack_evaluator, lambda r: (0.7, -1.3)),
    (push_pop, lambda r: (1.7,)),
    (append_then_sum, lambda r: (0.4,)),
    (indexed_in_a_loop, lambda r: (1.3,)),
    (layers_indexed_at_run_time, lambda r: tuple(0.7 * r.normal(size=(3, 3)) for _ in range(3)) + (r.normal(size=3),)),
    (walk_a_grown_list, lambda r: (r.normal(size=3),)),
    (methods_of_lists, lambda r: (r.normal(size=3),)),
    (nested_lists_to_array, lambda r: (r.normal(size=2),)),
    (appended_on_both_paths, lambda r: (np.array([0.5, -1.0, 2.0, -0.3]),)),
    (list_of_a_helper, lambda r: (r.normal(size=2),)),
    (list_argument_copied, lambda r: ([0.5, r.normal(size=()).item()], 1.5)),
    (tuple_grown, lambda r: (0.8,)),
    (window_of_last_states, lambda r: (0.9,)),
    (stack_inside_a_run_time_loop, lambda r: (r.normal(size=(4, 3)),)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f, make", PROGRAMS, ids=[f.__name__ for f, _ in PROGRAMS])
def test_lists_match_numpy(f, make, backend):
    check_against_numpy(f, make(np.random.default_rng(5)), backend)


def test_a_returned_list_is_a_list():
    out, pullback = irad.vjp(powers, np.array([2.0]))
    assert isinstance(out, list) and [float(v[0]) for v in out] == [2.0, 4.0, 8.0]
    (g,) = pullback([np.ones(1), np.ones(1), np.ones(1)])
    assert np.allclose(g, 1.0 + 2 * 2.0 + 3 * 4.0)


# ---- how loops that change lists lower ------------------------------------------------------------
def collected_then_walked(W, xs):
    """Appends in one loop (a buffer), then the list stacked, summed, walked and indexed."""
    h = np.zeros(2)
    hs = []
    for x in xs:
        h = np.tanh(W @ h + x)
        hs.append(h)
    total = np.sum(np.stack(hs) ** 2) + np.sum(sum(hs)) + np.sum(np.array(hs)[1])
    for g in hs:
        total = total + np.sum(g * g * g)
    for i in range(len(hs) - 1):
        total = total + np.sum(hs[i] * hs[i + 1])
    return total


def items_change_type(x):
    """The first item an int, the others floats: the buffer cannot hold them, so
    the loop is unrolled."""
    s = 0
    xs = []
    for i in range(4):
        xs.append(s)
        s = s + x * i
    return sum(xs) * np.sum(np.array(xs))


def list_carried_beside_a_failed_buffer(x):
    """The buffer for `hs` fails (an int first, then floats) after the attempt
    carried `ys` through an scf.for: unrolled, `ys` is this function's list still."""
    ys = [1.0]
    hs = []
    s = 0
    for t in range(3):
        hs.append(s)
        s = s + x
        if x > t:
            ys = [x * t]
    ys.append(2.0)
    return sum(hs) + sum(ys)


def appended_after_a_first_item(x):
    xs = [x * x]
    for i in range(3):
        xs.append(x + i)
    return np.sum(np.array(xs) ** 2) * xs[0]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f, args", [
    (collected_then_walked, (np.array([[0.5, -0.3], [0.2, 0.9]]), np.arange(12.0).reshape(6, 2) / 10.0)),
    (items_change_type, (0.7,)),
    (appended_after_a_first_item, (0.7,)),
    (list_carried_beside_a_failed_buffer, (1.5,)),
], ids=["collected_then_walked", "items_change_type", "appended_after_a_first_item", "failed_buffer"])
def test_lists_grown_in_loops_match_numpy(f, args, backend):
    check_against_numpy(f, args, backend)


def test_a_loop_appending_an_item_per_iteration_stays_a_loop():
    rng = np.random.default_rng(0)
    args = (rng.normal(size=(3, 3)), rng.normal(size=(3, 2)), rng.normal(size=(500, 2)))
    text = lowered_text(rnn_hidden_states, *args)
    assert text.count("scf.for") == 1 and text.count("math.tanh") == 1  # the body once
    assert "tensor<500x3xf64>" in text  # the items' buffer
    text = lowered_text(lstm_states_as_tuples, np.eye(2), np.ones((200, 2)))
    assert text.count("scf.for") == 1 and text.count("math.tanh") == 2  # (h, c) tuples: a buffer for each
    text = lowered_text(collected_then_walked, np.eye(2), np.ones((300, 2)))
    assert text.count("scf.for") == 3 and len(text.splitlines()) < 3000  # appends, walk, xs[i]: no 300 copies
    # the module's gradient too: a long loop costs what a short one does
    g = irad.grad(rnn_hidden_states, argnums=(0, 1))(*args)
    assert all(np.all(np.isfinite(v)) for v in g)


def test_a_loop_that_changes_lists_otherwise_is_unrolled():
    text = lowered_text(appended_on_both_paths, np.ones(4))  # appends inside an `if`
    assert "scf.for" not in text
    text = lowered_text(items_change_type, 1.0)
    assert "scf.for" not in text
    text = lowered_text(methods_of_lists, np.ones(3))
    assert "scf.for" not in text


def test_a_list_made_in_each_iteration_needs_no_unrolling():
    text = lowered_text(stack_inside_a_run_time_loop, np.ones((50, 3)))
    assert text.count("scf.for") == 2  # the outer loop, and inside its body the one appending to `row`


def test_a_run_time_index_out_of_range_is_checked():
    def pick(x, i):
        xs = [x, 2.0 * x]
        return xs[i]

    assert irad.grad(pick)(1.0, -1) == 2.0
    with pytest.raises(RuntimeCheckError, match="list index out of range"):
        irad.grad(pick)(1.0, 2)


# ---- any sequence of pushes and pops is Python's ------------------------------------------------------
@settings(max_examples=12, deadline=None)
@given(ops=st.lists(st.sampled_from(["push_x", "push_sq", "pop_mul", "pop_add", "dup", "extend"]), max_size=10),
       x=st.floats(0.2, 2.0))
def test_stack_programs_match_python(ops, x):
    ops = tuple(ops)

    def run(x):
        stack = [x]
        for op in ops:
            if op == "push_x":
                stack.append(x)
            elif op == "push_sq":
                stack.append(stack[-1] * stack[-1])
            elif op == "dup":
                stack.insert(0, stack[0])
            elif op == "extend":
                stack.extend([x * 0.5, stack[-1]])
            elif len(stack) >= 2:
                b = stack.pop()
                a = stack.pop(-1)
                stack.append(a * b if op == "pop_mul" else a + b)
        return sum(stack) * len(stack)

    check_against_numpy(run, (x,))


# ---- refused: an error at the line, with the rewrite ------------------------------------------------
def append_in_run_time_loop(x, n):
    xs = []
    for i in range(n):  # <- refused
        xs.append(x * i)
    return sum(xs)


def append_in_while(x):
    xs = []
    while x < 10.0:  # <- refused
        x = x * 2.0
        xs.append(x)
    return len(xs)


def append_on_one_path(x):
    xs = [x]
    if x > 0.0:
        xs.append(x)
    return sum(xs)  # <- refused


def aliased(x):
    xs = [x]
    ys = xs
    xs.append(x)  # <- refused
    return len(ys)


def held_by_a_tuple(x):
    xs = [x]
    pair = (xs, 1.0)
    xs.append(x)  # <- refused
    return pair[1]


def change_a_parameter(xs):
    xs.append(1.0)  # <- refused
    return xs[0]


def identity(v):
    return v


def given_to_a_call_returning_it(x):
    xs = [x]
    ys = identity(xs)
    xs.append(x)  # <- refused
    return len(ys) * x


def change_while_walking(x):
    xs = [x, x]
    for v in xs:
        xs.append(v)  # <- refused
    return len(xs)


def weighted_count(items, w):
    return len(items) * w


def change_inside_an_expression_holding_it(x):
    xs = [x, 2.0 * x]
    return weighted_count(xs, xs.pop())  # <- refused


GLOBAL_LIST = [1.0, 2.0]


def change_a_global_list(x):
    GLOBAL_LIST.append(x)  # <- refused
    return x


def change_inside_a_dict(x):
    d = {"xs": []}
    d["xs"].append(x)  # <- refused
    return x


def pop_from_empty(x):
    xs = [x]
    xs.pop()
    return xs.pop()  # <- refused


def sort_a_list(x):
    xs = [x, 2.0 * x]
    xs.sort()  # <- refused
    return xs[0]


def run_time_index_of_unlike_items(x, i):
    xs = [x, np.ones(2)]
    return xs[i]  # <- refused


def insert_at_run_time_position(x, i):
    xs = [x]
    xs.insert(i, x)  # <- refused
    return xs[0]


def helper_appends(xs, v):
    xs.append(v)  # <- refused
    return 0.0


def helper_changes_callers_list(x):
    xs = [x]
    helper_appends(xs, x)
    return sum(xs)


def appended_array_written_later(x):
    h = np.zeros(2)
    hs = []
    for i in range(3):
        h += x  # <- refused
        hs.append(h)  # Python's list holds h itself, three times: np.stack gives the last h thrice
    return np.sum(np.stack(hs))


def array_in_a_listed_tuple_written(x):
    h = x * 1.0
    states = [(h, 1.0)]
    h[0] = 5.0  # <- refused
    return states[0][0][0]


REFUSED = [
    (append_in_run_time_loop, (1.0, 3), r"this loop changes the list 'xs' .* known only at run time",
     r"preallocate an array"),
    (append_in_while, (1.0,), r"this `while` loop changes the list 'xs'", r"preallocate an array"),
    (append_on_one_path, (1.0,), r"holds a list of 2 items on one path of the branch at .* and of 1 on the other",
     r"change the list alike on every path"),
    (aliased, (1.0,), r"changing the list 'xs', which 'ys' also holds", r"ys = list\(xs\)"),
    (held_by_a_tuple, (1.0,), r"changing the list 'xs', which 'pair' also holds", r"list\(xs\)"),
    (change_a_parameter, ([1.0],), r"changing the list 'xs' .* which the function was given",
     r"xs = list\(xs\) first"),
    (given_to_a_call_returning_it, (1.0,), r"it was given to the call at .*whose result holds a list",
     r"list\(f\(xs\)\)"),
    (change_while_walking, (1.0,), r"changing the list 'xs' while a `for` loop walks it", r"list\(xs\)"),
    (change_inside_an_expression_holding_it, (1.0,), r"changing the list 'xs' inside an expression that holds it",
     r"statement of its own"),
    (change_a_global_list, (1.0,), r"changing the list GLOBAL_LIST, which irad reads while lowering",
     r"list\(GLOBAL_LIST\)"),
    (change_inside_a_dict, (1.0,), r"changing a list that no variable holds", r"build the list in a variable"),
    (pop_from_empty, (1.0,), r"pop from empty list", r"pop only as many"),
    (sort_a_list, (1.0,), r"sorting a list is not supported", r"np.sort"),
    (run_time_index_of_unlike_items, (1.0, 0), r"the items of this list have different types .* indexing it with an int known only at run time",
     r"give the items one type"),
    (insert_at_run_time_position, (1.0, 0), r"the position list.insert\(\) takes must be an int known",
     r"len\(xs\)"),
    (appended_array_written_later, (np.ones(2),), r"in-place write to 'h', whose array the list 'hs' also holds",
     r"np.copy"),
    (array_in_a_listed_tuple_written, (np.ones(2),), r"in-place write to 'h', whose array the list 'states' also holds",
     r"np.copy"),
    (helper_changes_callers_list, (1.0,), r"changing the list 'xs' .*which the function was given",
     r"return xs \+ \[v\]"),
]


@pytest.mark.parametrize("f, args, message, hint", REFUSED, ids=[c[0].__name__ for c in REFUSED])
def test_refused_list_changes_name_the_line(f, args, message, hint):
    if f is helper_changes_callers_list:  # the error is in the helper, at its line
        with pytest.raises(irad.UnsupportedError, match=message) as info:
            irad.lower(f, *args)
        assert "test_lists.py" in str(info.value)
    else:
        check_refused(f, args, message)
    with pytest.raises(irad.UnsupportedError, match=hint):
        irad.lower(f, *args)
